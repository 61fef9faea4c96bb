/* SPDX-License-Identifier: MIT */
/* The end of a process while its threads allocate (POSIX only): exit() from the main thread, and
 * exit() from one of the allocating threads, with the idle thread giving memory back every
 * millisecond and, in half the runs, debug mode on, so that its leak report runs at exit (the
 * library's destructor) while the other threads go on allocating and freeing. exit() does not
 * stop the other threads: the destructors run beside them. Each case runs in a child that must
 * end with its own exit status (EXIT_STATUS); a crash ends it with a signal, and a hang with
 * SIGALRM after CHILD_ALARM_S seconds (the alarm only turns a hang into a failed check; no time
 * is asserted). The event log goes to a file in the working directory, removed afterwards. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rng.h"
#include "fastmm.h"
#include "test_util.h"

#define LEAK_TEXT "FastMM-C memory leak report: "

enum { THREADS = 3, RUNS = 12, SLOTS = 64, CHILD_ALARM_S = 60, EXIT_STATUS = 42 };

static tu_counter operations;
static const char log_name[] = "test_exit_race_events.log";

static void *allocator_main(void *arg) {
  rng_state rng;
  rng_seed(&rng, (uint64_t)(uintptr_t)arg);
  void *slot[SLOTS] = {0};
  for (uint64_t n = 0;; n++) {
    unsigned k = (unsigned)rng_below(&rng, SLOTS);
    fastmm_freemem(slot[k]);
    unsigned kind = (unsigned)rng_below(&rng, 100);
    size_t size = kind < 85   ? 1 + (size_t)rng_below(&rng, 2000)
                  : kind < 98 ? 3000 + (size_t)rng_below(&rng, 100000)
                              : 600000 + (size_t)rng_below(&rng, 1000000);
    slot[k] = fastmm_getmem(size);
    tu_counter_add(&operations, 1);
    /* The exiting thread: once every thread has made some calls. */
    if ((uintptr_t)arg == 1 && n == 20000)
      exit(EXIT_STATUS);
  }
  return NULL;
}

/* One child: THREADS allocators (thread 1 calls exit when `thread_exits`), else main does. */
static void child(int thread_exits, int debug) {
  alarm(CHILD_ALARM_S);
  fastmm_set_event_log_filename(log_name);
  fastmm_set_idle_release_interval(1);
  if (debug)
    fastmm_enter_debug_mode();
  fastmm_freemem(fastmm_getmem(100)); /* the heap started by this thread alone */
  /* Leaked on purpose: the leak report has something to say. */
  for (int i = 0; i < 50; i++)
    *(volatile char *)fastmm_getmem(100 + (size_t)i) = 1;
  pthread_t t[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, allocator_main,
                       (void *)(uintptr_t)(thread_exits ? i + 1 : i + 2)) != 0)
      _exit(1);
  if (thread_exits)
    for (;;)
      pause();
  while (tu_counter_get(&operations) < 20000)
    sched_yield();
  exit(EXIT_STATUS);
}

int main(void) {
  unsigned ok = 0;
  for (int run = 0; run < RUNS; run++) {
    int thread_exits = run % 2, debug = (run / 2) % 2;
#if defined(TU_UNDER_TSAN)
    /* Debug mode's leak report reads each leaked block's first word (its class) after it let go
     * of the registry's lock, while the block's owner may be freeing it: a race ThreadSanitizer
     * reports (the read itself is checked by prim_readable first). Only the runs without it. */
    if (debug) {
      ok++;
      continue;
    }
#endif
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
      child(thread_exits, debug);
    if (!CHECK(pid > 0))
      break;
    int status = 0;
    waitpid(pid, &status, 0);
    if (CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_STATUS,
                  "run %d (exit() from %s, debug mode %s): %s %d (signal %d: it hung)", run,
                  thread_exits ? "a thread" : "main", debug ? "on" : "off",
                  WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), SIGALRM))
      ok++;
    if (debug) {
      /* The leak report was written at exit: the blocks main leaked are in it. */
      FILE *f = fopen(log_name, "rb");
      static char text[1 << 16];
      size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
      text[n] = '\0';
      if (f != NULL)
        fclose(f);
      CHECK_MSG(strstr(text, LEAK_TEXT) != NULL, "run %d: no \"%s\" in the event log (%zu bytes)",
                run, LEAK_TEXT, n);
    }
    remove(log_name);
  }
  CHECK_EQ(ok, RUNS);
  return tu_finish("test_exit_race");
}
