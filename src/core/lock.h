/* SPDX-License-Identifier: MIT */
/* A one-word lock: a try-lock that costs one exchange, and a wait that spins briefly, then
 * yields the time slice (FastMM5 does the same; a blocked allocator thread holds no other
 * lock of ours that the owner could need).
 *
 * While a single thread has ever taken the manager's locks, it takes them with plain loads and
 * stores instead of the exchange: the solo thread (lock.c says why and how the first other
 * thread ends it). Releasing is the same store either way. */
#ifndef FASTMM_LOCK_H
#define FASTMM_LOCK_H

#include "atomics.h"
#include "compiler.h"
#include "linkage.h"
#include "policy.h"
#include "prim/prim.h"

typedef struct fmm_lock {
  uint32_t taken;
} fmm_lock;

/* Solo locks are off under ThreadSanitizer, which cannot see the barrier that orders them
 * (its reports would be about the plain stores, not about the heap). */
#if !defined(FMM_SOLO_LOCKS)
#if defined(__SANITIZE_THREAD__)
#define FMM_SOLO_LOCKS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FMM_SOLO_LOCKS 0
#endif
#endif
#endif
#if !defined(FMM_SOLO_LOCKS)
#define FMM_SOLO_LOCKS 1
#endif

#if FMM_SOLO_LOCKS
/* The solo state, on a cache line of its own: every lock_try reads it, so a counter that shared
 * its line would make each take wait for that line (measured: a producer/consumer pair 5% slower
 * while the contention counts beside it were written). */
typedef struct lock_solo_state {
  /* 1 once every thread takes every lock by exchange, for the rest of the process. */
  uint32_t over;
  /* 1 while the solo thread is between announcing a plain take and making it (its only writer). */
  uint32_t taking;
  /* 1 while the idle thread takes locks as a guest (release.c), which the solo thread then takes
   * by exchange too. */
  uint32_t guest;
  /* The solo thread's prim_thread_token, or NULL before any thread took a lock, or one of lock.c's
   * markers once there is none. */
  void *owner;
} FMM_ALIGNED(64) lock_solo_state;
extern FMM_HIDDEN lock_solo_state lock_solo;

#define LOCK_BY_EXCHANGE (-1)
#define LOCK_TIMED_OUT (-2)
#define LOCK_WAIT_FOREVER UINT64_MAX

/* For a caller that is not the solo thread while solo mode may be on: claims it (1, the caller
 * is the solo thread now), or ends it, or finds it ended, and waits until the solo thread is
 * not half way through a plain take (0: take by exchange); LOCK_TIMED_OUT when that wait
 * outlasted timeout_ns. */
int lock_solo_settle(void *me, uint64_t timeout_ns);

/* The solo thread's take, by the thread `me` that was the owner when it last looked: 1 taken, 0
 * held (by itself: another thread takes nothing while it is solo), LOCK_BY_EXCHANGE when solo
 * mode ended or a guest is in. The take is announced in lock_solo.taking before the owner is
 * read again: a thread that ends solo mode stores its marker, makes every thread pass a barrier
 * and then waits for lock_solo.taking to read 0, so either it sees the announcement and waits,
 * or the solo thread's second read sees the marker. Always inline, as lock_try_quick: in the
 * unoptimised ASan build every function that holds an atomic's temporary gets a fake stack frame
 * (detect_stack_use_after_return), and one more such frame on each lock's path committed 2.3 MB
 * more of the fake stack, which test_idle_release counts. */
FMM_INLINE int lock_take_solo(fmm_lock *l, void *me) {
  fmm_store_u32_relaxed(&lock_solo.taking, 1u);
  fmm_compiler_fence();
  int result = LOCK_BY_EXCHANGE;
  if (fmm_load_ptr_acquire(&lock_solo.owner) == me && fmm_load_u32_acquire(&lock_solo.guest) == 0) {
    result = fmm_load_u32_relaxed(&l->taken) == 0;
    if (result)
      fmm_store_u32_relaxed(&l->taken, 1u);
  }
  fmm_store_u32_release(&lock_solo.taking, 0u);
  return result;
}

/* lock_take_solo for any caller: one that is not the solo thread settles solo mode first, and
 * gets what lock_solo_settle said when it did not become the solo thread. */
static inline int lock_try_solo(fmm_lock *l, uint64_t timeout_ns) {
  void *me = prim_thread_token();
  if (fmm_load_ptr_acquire(&lock_solo.owner) != me) {
    int settled = lock_solo_settle(me, timeout_ns);
    if (settled != 1)
      return settled == 0 ? LOCK_BY_EXCHANGE : LOCK_TIMED_OUT;
  }
  return lock_take_solo(l, me);
}
#endif

static inline int lock_try_exchange(fmm_lock *l) {
  return fmm_load_u32_relaxed(&l->taken) == 0 && fmm_xchg_u32(&l->taken, 1u) == 0;
}

static inline int lock_try(fmm_lock *l) {
#if FMM_SOLO_LOCKS
  if (fmm_load_u32_relaxed(&lock_solo.over) == 0) {
    int result = lock_try_solo(l, LOCK_WAIT_FOREVER);
    if (result != LOCK_BY_EXCHANGE)
      return result;
  }
#endif
  return lock_try_exchange(l);
}

/* lock_try's common cases, with no call and no frame: the solo thread's plain take, or the
 * exchange once solo mode is over. 0 (not taken) also for a caller that is not the solo thread
 * while solo mode may be on: lock_try settles that, out of line. */
FMM_INLINE int lock_try_quick(fmm_lock *l) {
#if FMM_SOLO_LOCKS
  if (fmm_load_u32_relaxed(&lock_solo.over) == 0) {
    void *me = prim_thread_token();
    if (fmm_load_ptr_acquire(&lock_solo.owner) != me)
      return 0;
    int result = lock_take_solo(l, me);
    if (result != LOCK_BY_EXCHANGE)
      return result;
  }
#endif
  return lock_try_exchange(l);
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
#if FMM_SOLO_LOCKS
  if (fmm_load_u32_relaxed(&lock_solo.over) == 0) {
    int result = lock_try_solo(l, timeout_ns);
    if (result == 1)
      return 1;
    if (result == LOCK_TIMED_OUT)
      return 0;
  }
#endif
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

/* The idle thread's pass (release.c) takes locks as a guest: between these two, the solo
 * thread (if any) takes its locks by exchange too, and afterwards it is solo again, so a
 * program's one thread does not lose solo mode to the thread that gives memory back for it. */
void lock_guest_enter(void);
void lock_guest_leave(void);
/* Registers what a forked child must reset (the heap's start calls it). */
void lock_init(void);

#endif
