/* SPDX-License-Identifier: MIT */
/* The manager's locks held across fork() (fork_locks.h). */
#include "fork_locks.h"

#include "expected_leaks.h"
#include "heap.h"
#include "large.h"
#include "lock.h"
#include "medium.h"
#include "page_map.h"
#include "release.h"
#include "small.h"
#include "thread_cache.h"

/* Each of the core's locks once, in the order the paths nest them: a thread holding one of them
 * only ever waits for one later in the list, so taking them in this order cannot wait on a thread
 * that waits for us. */
static void each_lock(void (*fn)(fmm_lock *l)) {
  fn(&heap_init_lock);
  fn(&release_pass_lock);
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
      fn(&small_managers[a][c].lock);
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
    fn(&small_aligned_managers[c].lock);
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    fn(&medium_arenas[a].lock);
  fn(&large_lock);
  fn(&expected_leaks_lock);
  fn(&thread_cache_registry_lock);
  fn(&page_map_lock);
}

static void take(fmm_lock *l) {
  lock_acquire(l);
}

static void give_back(fmm_lock *l) {
  lock_release(l);
}

static void before_fork(void) {
  each_lock(take);
}

static void after_fork(void) {
  each_lock(give_back);
}

void fork_locks_init(void) {
  prim_on_fork(before_fork, after_fork, after_fork);
}
