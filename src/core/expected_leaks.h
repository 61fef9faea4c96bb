/* SPDX-License-Identifier: MIT */
/* Blocks registered as expected leaks (Delphi's RegisterExpectedMemoryLeak), by pointer. */
#ifndef FASTMM_EXPECTED_LEAKS_H
#define FASTMM_EXPECTED_LEAKS_H

int expected_leaks_add(void *p);    /* 1 when added, 0 when already there or out of memory */
int expected_leaks_remove(void *p); /* 1 when it was there */
int expected_leaks_contains(const void *p);

#endif
