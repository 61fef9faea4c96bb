/* SPDX-License-Identifier: MIT */
/* Memory given back to the OS (release.c): what the manager keeps for reuse (freed large blocks
 * in their cache, the spare medium span) and when it stops keeping it. */
#ifndef FASTMM_RELEASE_H
#define FASTMM_RELEASE_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "linkage.h"
#include "medium.h"
#include "policy.h"

/* The idle clock: one tick per idle pass (release_idle_pass). Something set aside at tick t is
 * given back by the pass that makes the clock t + 2, so it sat unused for at least one whole
 * period between passes. */
extern FMM_HIDDEN uint32_t release_tick;
static inline uint32_t release_now(void) {
  return fmm_load_u32_relaxed(&release_tick);
}

void release_init(void);
/* Something was set aside for reuse: makes sure the idle thread runs to give it back later,
 * once what is kept is worth a thread (more than RELEASE_THREAD_MIN_KEPT). Starting the thread
 * waits for it to run (prim_start_thread, at most 100 ms), which it cannot while another thread
 * holds the loader lock, as a thread ending in DllMain does while it waits for a heap lock: so
 * the callers note after they release the lock they kept the memory under (the medium arena's;
 * a small span emptied under its manager's lock is noted there, which costs at most that wait). */
void release_note_kept(void);
/* The same for a large block cached under the large lock, `cached` the cache's bytes then;
 * called after that lock is released, on every such FreeMem, so inline: nothing is called while
 * the thread runs or while what is kept is too little for it. No locked instruction while the
 * thread runs: the idle thread clears release_thread_running before it takes the large lock to
 * see what is kept (release.c), so if it did so before the caller's locked section the caller
 * reads 0 here, and if after, the thread sees the block. */
extern FMM_HIDDEN uint32_t release_thread_running;
void release_start_thread(void);
static inline void release_note_large_kept(size_t cached) {
  if (fmm_load_u32_relaxed(&release_thread_running) == 0 &&
      cached + medium_spare_bytes() > RELEASE_THREAD_MIN_KEPT)
    release_start_thread();
}
/* One idle period has passed: gives back what has been kept unused since before the previous
 * pass. The idle thread calls it every RELEASE_IDLE_INTERVAL_MS (policy.h); a program (or a
 * test) may call it itself (fastmm_release_idle_memory). */
void release_idle_pass(void);
/* Gives back everything kept for reuse; returns the bytes given back. */
size_t release_all(void);
/* The idle thread's period in ms; 0 stops it (then only the calls above give memory back). */
void release_set_interval(unsigned ms);
unsigned release_interval(void);

#endif
