/* SPDX-License-Identifier: MIT */
/* Memory given back to the OS (release.c): what the manager keeps for reuse (freed large blocks
 * in their cache, the spare medium span) and when it stops keeping it. */
#ifndef FASTMM_RELEASE_H
#define FASTMM_RELEASE_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "large.h"
#include "linkage.h"
#include "medium.h"
#include "policy.h"

void release_init(void);
/* The keepers (medium.c's spare spans, large.c's cache) never call here: they stamp what they
 * keep with the idle clock (idle_clock.h) and count it, and release.c reads their counts and
 * calls their trims. Their callers ask release_poll once medium_free or large_free returned
 * (heap.c, small.c: a FreeMem of a medium or large block, a small span emptied), which starts
 * the idle thread when what is kept is worth one (more than RELEASE_THREAD_MIN_KEPT) and none
 * runs: inline, since a large block's FreeMem asks on every call, and nothing is called while
 * the thread runs or while what is kept is too little for it.
 *
 * Starting the thread waits for it to run (prim_start_thread, at most 100 ms), which it cannot
 * while another thread holds the loader lock, as a thread ending in DllMain does while it waits
 * for a heap lock: so the callers ask after the lock they kept the memory under is released
 * (the medium arena's, the large lock); a small span emptied under its manager's lock is asked
 * about there, which costs at most that wait. No locked instruction while the thread runs: the
 * idle thread clears release_thread_running before it looks at what is kept (under the large
 * lock; the spares' count is changed by locked instructions), so if it did so before the
 * keeper's locked section the caller reads 0 here, and if after, the thread sees the block. */
extern FMM_HIDDEN uint32_t release_thread_running;
void release_start_thread(void);
static inline void release_poll(void) {
  if (fmm_load_u32_relaxed(&release_thread_running) == 0 &&
      large_cached_bytes_now() + medium_spare_bytes() > RELEASE_THREAD_MIN_KEPT)
    release_start_thread();
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

#endif
