/* SPDX-License-Identifier: MIT */
/* Memory given back after an idle spell.
 *
 * The manager keeps memory it may soon need again: freed large blocks in their cache (large.c)
 * and one empty medium span (medium.c); the thread caches keep free small blocks (they shrink
 * by themselves while a thread frees much more than it allocates: thread_cache.c). Kept memory
 * goes back when it has sat unused for a whole idle period, when fastmm_release_free_memory is
 * called, and when a request finds no memory (os_memory.c's pressure handler).
 *
 * "Unused for a whole period" needs something that runs while the program makes no call at all:
 * a program that frees everything and then waits makes none. So a thread of the manager's own
 * counts the periods: it sleeps RELEASE_IDLE_INTERVAL_MS, advances the idle clock and gives
 * back what aged, and ends when nothing has been kept for two periods. It is started after the
 * slow path that sets memory aside (a large block cached, a span made spare) once more than
 * RELEASE_THREAD_MIN_KEPT is kept (idle_clock_note_kept: large.c after it cached a block, through
 * the starter this file lends the idle clock; release_poll, asked by medium_free's callers), and
 * by nothing else, so the fast paths pay nothing for it,
 * and a program that never frees a large block or empties more than one span never has it. Its
 * cost: one wake-up per period while memory is kept, and the memory of a thread (policy.h). */
#include "release.h"

#include "idle_clock.h"
#include "large.h"
#include "lock.h"
#include "medium.h"
#include "os_memory.h"
#include "policy.h"
#include "prim/prim.h"

static uint32_t interval_ms = RELEASE_IDLE_INTERVAL_MS;
FMM_HIDDEN fmm_lock release_pass_lock;

static size_t kept_bytes(void) {
  return large_cached_bytes() + medium_spare_bytes();
}

#if defined(FASTMM_MUTANT_NO_RELEASE)
/* A mutant the tests build (tests/CMakeLists.txt): nothing kept is given back, so the tests of
 * memory returned to the OS are seen to fail when the release does nothing. Never shipped. */
static size_t give_back_up_to(uint32_t tick) {
  (void)tick;
  return 0;
}
#else
static size_t give_back_up_to(uint32_t tick) {
  return large_release_cached(tick) + medium_release_spare(tick);
}
#endif

void release_idle_pass(void) {
  lock_acquire(&release_pass_lock);
  uint32_t now = idle_clock_tick + 1u;
  fmm_store_u32_relaxed(&idle_clock_tick, now);
  give_back_up_to(now - 2u);
  lock_release(&release_pass_lock);
}

size_t release_all(void) {
  medium_end_churn();
  lock_acquire(&release_pass_lock);
  size_t bytes = give_back_up_to(idle_clock_now());
  lock_release(&release_pass_lock);
  return bytes;
}

/* Until nothing has been kept for two passes, or the thread is switched off. */
static void idle_loop(void) {
  unsigned quiet = 0;
  for (;;) {
    unsigned ms = fmm_load_u32_relaxed(&interval_ms);
    if (ms == 0)
      return;
    prim_sleep_ms(ms);
    if (fmm_load_u32_relaxed(&interval_ms) == 0)
      return;
    /* A guest, so that the program's one thread keeps its solo locks (lock.c). */
    lock_guest_enter();
    release_idle_pass();
    lock_guest_leave();
    quiet = kept_bytes() == 0 ? quiet + 1u : 0u;
    if (quiet >= 2u)
      return;
  }
}

static void idle_thread(void) {
  for (;;) {
    idle_loop();
    /* An exchange, a full barrier: a block kept meanwhile is seen below, or its keeper sees the
     * thread gone and starts another (idle_clock_note_kept). */
    fmm_xchg_u32(&idle_clock_running, 0u);
    if (fmm_load_u32_relaxed(&interval_ms) == 0 || kept_bytes() == 0 ||
        fmm_xchg_u32(&idle_clock_running, 1u) != 0)
      return;
  }
}

void release_start_thread(void) {
  if (fmm_load_u32_relaxed(&interval_ms) == 0)
    return;
  /* An exchange after the block was kept (a full barrier), so the idle thread, if it is just
   * ending, sees the block (idle_thread). */
  if (fmm_xchg_u32(&idle_clock_running, 1u) == 0 && !prim_start_thread(idle_thread))
    fmm_store_u32_relaxed(&idle_clock_running, 0u);
}

static size_t on_pressure(void) {
  return release_all();
}

/* A forked child has no idle thread, whatever the parent had. */
static void after_fork(void) {
  idle_clock_running = 0;
}

void release_init(void) {
  idle_clock_lend_starter(release_start_thread);
  os_set_pressure_handler(on_pressure);
  prim_on_fork_child(after_fork);
}

void release_set_interval(unsigned ms) {
  fmm_store_u32_relaxed(&interval_ms, ms);
  if (ms == 0) {
    /* Off means off: wait for a running thread to see it (it does at its next wake-up). */
    while (fmm_load_u32_relaxed(&idle_clock_running) != 0)
      prim_sleep_ms(1);
  } else if (kept_bytes() > RELEASE_THREAD_MIN_KEPT) {
    release_start_thread();
  }
}

unsigned release_interval(void) {
  return fmm_load_u32_relaxed(&interval_ms);
}
