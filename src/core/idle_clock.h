/* SPDX-License-Identifier: MIT */
/* The idle clock: one tick per idle pass (release.c advances it). What the manager keeps for
 * reuse is stamped with the tick it was set aside at (medium.c's spare spans, large.c's cache),
 * and something set aside at tick t is given back by the pass that makes the clock t + 2, so it
 * sat unused for at least one whole period between passes. The clock sits below the keepers and
 * release.c both, so that the keepers read it without calling release.c, which calls them.
 *
 * The clock ticks while release.c's idle thread runs (idle_clock_running). A keeper that has set
 * memory aside while the clock stands starts it (idle_clock_note_kept), through the routine
 * release.c lends the clock when the heap starts (idle_clock_lend_starter): the one call a keeper
 * makes towards release.c, at run time and only when the thread is to start, so that a large
 * block's FreeMem ends in large.c's own code with no call after it. */
#ifndef FASTMM_IDLE_CLOCK_H
#define FASTMM_IDLE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "linkage.h"
#include "policy.h"

extern FMM_HIDDEN uint32_t idle_clock_tick;
/* 1 from the start of the idle thread until it ends (release.c writes it). */
extern FMM_HIDDEN uint32_t idle_clock_running;

static inline uint32_t idle_clock_now(void) {
  return fmm_load_u32_relaxed(&idle_clock_tick);
}

/* Starts the idle thread through the lent routine (nothing before one is lent). */
void idle_clock_start(void);
void idle_clock_lend_starter(void (*start)(void));

/* A keeper set memory aside, and `kept` is all that the keepers keep now: the clock starts when
 * it stands and that is worth a thread (more than RELEASE_THREAD_MIN_KEPT). Inline, no locked
 * instruction: a load and a compare while the clock runs or too little is kept. Starting the
 * thread waits for it to run (prim_start_thread, at most 100 ms), which it cannot while another
 * thread holds the loader lock, as a thread ending in DllMain does while it waits for a heap
 * lock: so a keeper asks after it released the lock it kept the memory under (the medium
 * arena's, the large lock); a small span emptied under its manager's lock is asked about there,
 * which costs at most that wait. The idle thread clears idle_clock_running before it looks at
 * what is kept (an exchange), so if it did so before the keeper's locked section the keeper reads
 * 0 here, and if after, the thread sees the memory. */
static inline void idle_clock_note_kept(size_t kept) {
  if (fmm_load_u32_relaxed(&idle_clock_running) == 0 && kept > RELEASE_THREAD_MIN_KEPT)
    idle_clock_start();
}

#endif
