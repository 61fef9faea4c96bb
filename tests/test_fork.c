/* SPDX-License-Identifier: MIT */
/* fork() while other threads allocate (POSIX only). Threads allocate and free blocks of every
 * kind (small, medium, large) without a pause while the main thread forks FORKS times; each child,
 * whose only thread is the one that forked, allocates and frees blocks of every kind, checks the
 * heap and exits 0. The manager takes its locks before the fork and releases them in parent and
 * child (core/fork_locks.c): without that a child forked while another thread held an arena's
 * lock would wait for it for ever. A child that has not finished its work after CHILD_ALARM_S
 * seconds is ended by SIGALRM, which the parent counts as a failure: no timing is asserted, the
 * alarm only turns a hang into a failed check.
 *
 * Built twice: with the fastmm_* calls (test_fork, linked to libfastmmc.so) and, with
 * FORK_TEST_MALLOC, with malloc and free (tests/malloc: linked to libfastmmc-malloc.so, and
 * under LD_PRELOAD). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rng.h"
#include "test_util.h"

#if defined(FORK_TEST_MALLOC)
#include <dlfcn.h>
static void *(*volatile get)(size_t) = malloc;
static void (*volatile put)(void *) = free;
static int (*check_heap)(void);
#define TEST_NAME "test_malloc_fork"
#else
#include "fastmm.h"
static void *get(size_t size) {
  return fastmm_getmem(size);
}
static void put(void *p) {
  fastmm_freemem(p);
}
static int (*check_heap)(void) = fastmm_check_heap;
#define TEST_NAME "test_fork"
#endif

enum { THREADS = 3, FORKS = 80, SLOTS = 64, CHILD_ALARM_S = 60 };

static volatile int stop;

/* A size of each kind in turn: mostly small, some medium, a few large. */
static size_t some_size(rng_state *rng) {
  unsigned k = (unsigned)rng_below(rng, 100);
  if (k < 80)
    return 1 + (size_t)rng_below(rng, 2000);
  if (k < 97)
    return 3000 + (size_t)rng_below(rng, 200000);
  return 600000 + (size_t)rng_below(rng, 2000000);
}

static void *allocator_main(void *arg) {
  rng_state rng;
  rng_seed(&rng, (uint64_t)(uintptr_t)arg);
  void *slot[SLOTS] = {0};
  uintptr_t failed = 0;
  while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
    unsigned k = (unsigned)rng_below(&rng, SLOTS);
    put(slot[k]);
    slot[k] = get(some_size(&rng));
    if (slot[k] == NULL)
      failed++;
    else
      *(volatile char *)slot[k] = 1;
  }
  for (unsigned k = 0; k < SLOTS; k++)
    put(slot[k]);
  return (void *)failed;
}

/* The child's work: blocks of every kind made, written, checked and freed. 0 when all went well. */
static int child_work(uint64_t seed) {
  alarm(CHILD_ALARM_S);
  rng_state rng;
  rng_seed(&rng, seed);
  unsigned char *p[40];
  size_t n[40];
  for (unsigned i = 0; i < 40; i++) {
    n[i] = some_size(&rng);
    p[i] = get(n[i]);
    if (p[i] == NULL)
      return 1;
    tu_fill_pattern(p[i], n[i], (uint32_t)i);
  }
  for (unsigned i = 0; i < 40; i++) {
    if (tu_check_pattern(p[i], n[i], (uint32_t)i) != SIZE_MAX)
      return 2;
    put(p[i]);
  }
  if (check_heap != NULL && check_heap() != 0)
    return 3;
  return 0;
}

int main(void) {
#if defined(FORK_TEST_MALLOC)
  *(void **)&check_heap = dlsym(RTLD_DEFAULT, "fastmm_check_heap");
  if (!CHECK_MSG(check_heap != NULL, "fastmm_check_heap not found: the library is not loaded"))
    return tu_finish(TEST_NAME);
#endif
  /* The heap started by this thread alone: the threads below test fork, not the start-up. */
  put(get(100));
#if defined(TU_UNDER_TSAN) && !defined(FORK_TEST_MALLOC)
  /* ThreadSanitizer ends a forked child of a threaded process that starts a thread, and a child
   * that frees a large block starts the idle thread: off here. */
  fastmm_set_idle_release_interval(0);
#endif
  pthread_t t[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    CHECK(pthread_create(&t[i], NULL, allocator_main, (void *)(uintptr_t)(i + 1)) == 0);
  unsigned ok = 0;
  for (unsigned f = 0; f < FORKS; f++) {
#if !defined(FORK_TEST_MALLOC)
    /* The second half in debug mode: debug blocks' registry is held across the fork too. */
    if (f == FORKS / 2)
      fastmm_enter_debug_mode();
#endif
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
      _exit(child_work(1000u + f));
    if (!CHECK(pid > 0))
      break;
    int status = 0;
    waitpid(pid, &status, 0);
    if (CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %u: %s %d (exit 1: no memory, 2: data changed, 3: the heap check "
                  "failed; signal %d: it hung)",
                  f, WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), SIGALRM))
      ok++;
  }
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < THREADS; i++) {
    void *failed;
    pthread_join(t[i], &failed);
    CHECK_EQ((uintptr_t)failed, 0);
  }
  CHECK_EQ(ok, FORKS);
  CHECK_EQ(check_heap(), 0);
  return tu_finish(TEST_NAME);
}
