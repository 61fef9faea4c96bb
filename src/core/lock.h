/* SPDX-License-Identifier: MIT */
/* A one-word lock: a try-lock that costs one exchange, and a wait that spins briefly, then
 * yields the time slice (FastMM5 does the same; a blocked allocator thread holds no other
 * lock of ours that the owner could need). */
#ifndef FASTMM_LOCK_H
#define FASTMM_LOCK_H

#include "atomics.h"
#include "policy.h"
#include "prim/prim.h"

typedef struct fmm_lock {
  uint32_t taken;
} fmm_lock;

static inline int lock_try(fmm_lock *l) {
  return fmm_load_u32_relaxed(&l->taken) == 0 && fmm_xchg_u32(&l->taken, 1u) == 0;
}

static inline void lock_acquire(fmm_lock *l) {
  while (!lock_try(l)) {
    unsigned spins = 0;
    while (fmm_load_u32_relaxed(&l->taken) != 0) {
      if (++spins < LOCK_SPINS_BEFORE_YIELD)
        fmm_cpu_relax();
      else {
        prim_yield();
        spins = 0;
      }
    }
  }
}

/* lock_acquire that gives up after `timeout_ns` (the walk's lock timeout, FastMM5's
 * ALockTimeoutMilliseconds): 1 with the lock held, 0 without it. */
static inline int lock_acquire_within(fmm_lock *l, uint64_t timeout_ns) {
  if (lock_try(l))
    return 1;
  uint64_t start = prim_time_ns();
  for (;;) {
    for (unsigned spins = 0; spins < LOCK_SPINS_BEFORE_YIELD; spins++) {
      if (lock_try(l))
        return 1;
      fmm_cpu_relax();
    }
    if (prim_time_ns() - start > timeout_ns)
      return 0;
    prim_yield();
  }
}

static inline void lock_release(fmm_lock *l) {
  fmm_store_u32_release(&l->taken, 0u);
}

#endif
