/* SPDX-License-Identifier: MIT */
/* What the library does when it loads (startup.c), callable before then too. */
#ifndef FASTMM_STARTUP_H
#define FASTMM_STARTUP_H

/* Fills the page map's fast copy, lends the core its heap_above record and registers debug
 * mode's text writer: the library's constructor runs it. Running it again changes nothing, so a
 * caller that may be reached before the constructor (the C library's malloc, which the dynamic
 * loader and the C library call while they start) runs it first itself. */
void heap_start_at_load(void);

#endif
