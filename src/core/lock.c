/* SPDX-License-Identifier: MIT */
/* Solo locks. Why: a locked exchange waits until every store the thread made before it has
 * left the processor's store buffer. A program that writes the memory it was just given and
 * then frees another medium or large block pays for the last of those writes there, on every
 * free (about half of the medium-block churn's time in a profile), although no other thread
 * could ever contend. FastMM takes no lock at all while Delphi's IsMultiThread is False; this
 * does the same for any program, with no flag to trust: while one thread alone has taken the
 * manager's locks, it takes them with a plain load and store.
 *
 * How another thread ends it (the asymmetric half of a store-then-load handshake): the solo
 * thread announces each plain take in lock_solo.taking and then reads the owner again (no fence:
 * that is the point); a thread that wants a lock while another is solo stores an "ended" marker
 * as the owner, makes every thread of the process pass a full barrier (prim_barrier_other_threads,
 * one system call or two, once per process) and then waits until lock_solo.taking reads 0.
 * Either the solo thread's announcement was visible after the barrier (the waiter waits for the
 * take to finish, and then sees the lock word it stored), or its second read came after the
 * barrier and saw the marker (it takes by exchange from then on). Locks the solo thread holds
 * at that moment are held by their word, as any other: the others find them taken. From then on
 * every lock is taken by exchange.
 *
 * The idle thread (release.c) is a guest instead: it announces itself in lock_solo.guest, makes
 * the barrier, waits as above, takes its locks by exchange, and withdraws when its pass is done;
 * meanwhile the solo thread takes its locks by exchange too (it reads lock_solo.guest in the same
 * announced window). A program's one thread stays solo however often memory is given back. */
#include "lock.h"

#include "prim/prim.h"

#if FMM_SOLO_LOCKS
/* Owner markers: no thread is solo any more, or none can be (no barrier on this system). */
static char marker_ended, marker_never;
#define SOLO_ENDED ((void *)&marker_ended)
#define SOLO_NEVER ((void *)&marker_never)

lock_solo_state lock_solo;
/* Written once or seldom, read on the way out of solo mode only. */
static void *guest_token;
static void *former_owner; /* the thread that was solo, once one ended it */
static uint32_t barrier_done;

/* Waits for `ready` to hold, with the lock's spin-then-yield; 0 when timeout_ns passed first. */
static int wait_for(int (*ready)(void), uint64_t timeout_ns) {
  uint64_t start = 0;
  for (unsigned spins = 0; !ready(); spins++) {
    if (spins < LOCK_SPINS_BEFORE_YIELD) {
      fmm_cpu_relax();
      continue;
    }
    if (timeout_ns != LOCK_WAIT_FOREVER) {
      if (start == 0)
        start = prim_time_ns();
      else if (prim_time_ns() - start > timeout_ns)
        return 0;
    }
    prim_yield();
  }
  return 1;
}

static int barrier_is_done(void) {
  return fmm_load_u32_acquire(&barrier_done) != 0;
}

static int no_take_under_way(void) {
  return fmm_load_u32_acquire(&barrier_done) != 0 && fmm_load_u32_acquire(&lock_solo.taking) == 0;
}

int lock_solo_settle(void *me, uint64_t timeout_ns) {
  if (fmm_load_u32_acquire(&lock_solo.guest) != 0 && fmm_load_ptr_acquire(&guest_token) == me)
    return 0;
  void *owner = fmm_load_ptr_acquire(&lock_solo.owner);
  if (owner == NULL) {
    void *claim = prim_barrier_ready() ? me : SOLO_NEVER;
    if (fmm_cas_ptr(&lock_solo.owner, NULL, claim)) {
      if (claim == me)
        return 1;
      fmm_store_u32_relaxed(&lock_solo.over, 1u); /* nobody was ever solo: nothing to wait for */
      return 0;
    }
    owner = fmm_load_ptr_acquire(&lock_solo.owner);
  }
  if (owner == me)
    return 1;
  if (owner == SOLO_NEVER)
    return 0;
  if (owner != SOLO_ENDED && fmm_cas_ptr(&lock_solo.owner, owner, SOLO_ENDED)) {
    fmm_store_ptr_release(&former_owner, owner);
    prim_barrier_other_threads();
    fmm_store_u32_release(&barrier_done, 1u);
  }
  /* The former solo thread is not half way through a take of its own here. */
  if (fmm_load_ptr_acquire(&former_owner) == me) {
    if (!wait_for(barrier_is_done, timeout_ns))
      return LOCK_TIMED_OUT;
  } else if (!wait_for(no_take_under_way, timeout_ns)) {
    return LOCK_TIMED_OUT;
  }
  fmm_store_u32_relaxed(&lock_solo.over, 1u);
  return 0;
}

static int taking_done(void) {
  return fmm_load_u32_acquire(&lock_solo.taking) == 0;
}

void lock_guest_enter(void) {
  if (fmm_load_u32_relaxed(&lock_solo.over) != 0 || !prim_barrier_ready())
    return;
  fmm_store_ptr_release(&guest_token, prim_thread_token());
  fmm_store_u32_release(&lock_solo.guest, 1u);
  prim_barrier_other_threads();
  wait_for(taking_done, LOCK_WAIT_FOREVER);
}

void lock_guest_leave(void) {
  fmm_store_u32_release(&lock_solo.guest, 0u);
}

/* A forked child's only thread is the one that forked: a take another thread of the parent was
 * half way through will never finish there. */
static void after_fork(void) {
  lock_solo.taking = 0;
  lock_solo.guest = 0; /* the idle thread is not there either */
}

void lock_init(void) {
  prim_on_fork_child(after_fork);
}
#else
void lock_guest_enter(void) {
}
void lock_guest_leave(void) {
}
void lock_init(void) {
}
#endif
