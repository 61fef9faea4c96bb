/* SPDX-License-Identifier: MIT */
/* Solo locks, step by step (core/lock.c), natively against the manager linked in statically,
 * where the test can read the solo state: the first thread to take a lock is the solo thread and
 * takes by plain store; the idle thread's guest pass leaves it solo but makes it take by
 * exchange meanwhile; a thread that ends solo mode waits while the solo thread is half way
 * through a take, finds the locks the solo thread holds taken, and from then on nobody is solo.
 * Under ThreadSanitizer solo locks are compiled out and the test says so. */
#include "test_blocks.h"

#include "core/atomics.h"
#include "core/lock.h"
#include "prim/prim.h"

#if FMM_SOLO_LOCKS
static fmm_lock held_by_main, free_lock, guest_lock, ender_lock;
static uint32_t guest_step, ender_done;
static int ender_got_held, ender_got_free;

static void guest(void *arg) {
  (void)arg;
  lock_guest_enter();
  fmm_store_u32_release(&guest_step, 1u);
  while (fmm_load_u32_acquire(&guest_step) != 2u)
    tu_yield();
  /* A guest's take does not end solo mode. */
  CHECK(lock_try(&guest_lock) == 1);
  lock_release(&guest_lock);
  CHECK(fmm_load_ptr_acquire(&lock_solo.owner) != prim_thread_token());
  CHECK_EQ(fmm_load_u32_acquire(&lock_solo.over), 0u);
  lock_guest_leave();
  fmm_store_u32_release(&guest_step, 3u);
}

static void ender(void *arg) {
  (void)arg;
  ender_got_held = lock_try(&held_by_main);
  ender_got_free = lock_try(&ender_lock);
  if (ender_got_free)
    lock_release(&ender_lock);
  fmm_store_u32_release(&ender_done, 1u);
}

static void solo_steps(void) {
  void *me = prim_thread_token();
  /* The heap's start took the first lock on this thread: it is the solo thread. */
  fastmm_freemem(fastmm_getmem(100000));
  CHECK(fmm_load_ptr_acquire(&lock_solo.owner) == me);
  CHECK(lock_try_solo(&free_lock, LOCK_WAIT_FOREVER) == 1);
  CHECK(lock_try_solo(&free_lock, LOCK_WAIT_FOREVER) == 0); /* its own: held */
  lock_release(&free_lock);

  /* A guest in: the solo thread takes by exchange, and is solo again when it leaves. */
  tu_thread t;
  if (!CHECK(tu_thread_start(&t, guest, NULL)))
    return;
  while (fmm_load_u32_acquire(&guest_step) != 1u)
    tu_yield();
  CHECK(lock_try_solo(&free_lock, LOCK_WAIT_FOREVER) == LOCK_BY_EXCHANGE);
  CHECK(lock_try(&free_lock) == 1);
  lock_release(&free_lock);
  fmm_store_u32_release(&guest_step, 2u);
  while (fmm_load_u32_acquire(&guest_step) != 3u)
    tu_yield();
  tu_thread_join(&t);
  CHECK(fmm_load_ptr_acquire(&lock_solo.owner) == me);
  CHECK(lock_try_solo(&free_lock, LOCK_WAIT_FOREVER) == 1);
  lock_release(&free_lock);

  /* Another thread ends solo mode while this one is half way through a take (the announcement
   * held open by hand) and holds a lock: it waits for the take, then finds that lock taken. */
  CHECK(lock_try(&held_by_main) == 1);
  fmm_store_u32_relaxed(&lock_solo.taking, 1u);
  if (!CHECK(tu_thread_start(&t, ender, NULL)))
    return;
  prim_sleep_ms(50);
  CHECK_MSG(fmm_load_u32_acquire(&ender_done) == 0,
            "the other thread took a lock while a plain take was under way");
  fmm_store_u32_release(&lock_solo.taking, 0u);
  tu_thread_join(&t);
  CHECK(fmm_load_u32_acquire(&ender_done) == 1);
  CHECK_EQ(ender_got_held, 0);
  CHECK_EQ(ender_got_free, 1);
  CHECK_EQ(fmm_load_u32_acquire(&lock_solo.over), 1u);
  CHECK(fmm_load_ptr_acquire(&lock_solo.owner) != me);
  /* The former solo thread takes by exchange now: its held lock is released as any other. */
  CHECK(lock_try_solo(&free_lock, LOCK_WAIT_FOREVER) == LOCK_BY_EXCHANGE);
  lock_release(&held_by_main);
  CHECK(lock_try(&held_by_main) == 1);
  lock_release(&held_by_main);
}
#endif

int main(void) {
  tb_start_quiet("test_solo_internals");
#if FMM_SOLO_LOCKS
  solo_steps();
#else
  printf("solo locks are compiled out in this build (ThreadSanitizer)\n");
  CHECK(1);
#endif
  return tu_finish("test_solo_internals");
}
