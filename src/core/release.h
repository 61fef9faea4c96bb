/* SPDX-License-Identifier: MIT */
/* Memory given back to the OS (release.c): what the manager keeps for reuse (freed large blocks
 * in their cache, the spare medium span) and when it stops keeping it. */
#ifndef FASTMM_RELEASE_H
#define FASTMM_RELEASE_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "idle_clock.h"
#include "large.h"
#include "linkage.h"
#include "medium.h"
#include "policy.h"

void release_init(void); /* lends the idle clock release_start_thread (idle_clock.h) */
/* The keepers (medium.c's spare spans, large.c's cache) never call here: they stamp what they
 * keep with the idle clock (idle_clock.h) and count it, and release.c reads their counts and
 * calls their trims. large.c starts the clock itself after it cached a block
 * (idle_clock_note_kept); a medium span that may have become a spare is asked about by
 * medium_free's callers once it returned (heap.c, small.c: a FreeMem of a medium block, a small
 * span emptied), through release_poll. */
void release_start_thread(void);
static inline void release_poll(void) {
  idle_clock_note_kept(large_cached_bytes_now() + medium_spare_bytes());
}
/* One idle period has passed (the idle clock advances): gives back what has been kept unused
 * since before the previous pass. The idle thread calls it every RELEASE_IDLE_INTERVAL_MS
 * (policy.h); a program (or a test) may call it itself (fastmm_release_idle_memory). */
void release_idle_pass(void);
/* Gives back everything kept for reuse; returns the bytes given back. */
size_t release_all(void);
/* The idle thread's period in ms; 0 stops it (then only the calls above give memory back). */
void release_set_interval(unsigned ms);
unsigned release_interval(void);

/* The lock of a pass that gives memory back, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock release_pass_lock;

#endif
