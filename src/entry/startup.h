/* SPDX-License-Identifier: MIT */
/* The library's start-up (startup.c), which the loader runs when the library loads. */
#ifndef FASTMM_ENTRY_STARTUP_H
#define FASTMM_ENTRY_STARTUP_H

/* Runs the start-up once; later calls do nothing. The load hook calls it; so does
 * fastmm_run_startup, for a program linked with the static library by a start-up that runs no
 * constructors. */
void entry_startup(void);

#endif
