/* SPDX-License-Identifier: MIT */
/* The two-thread workloads' plumbing (threads.h): the OS's threads (Windows threads, POSIX
 * threads), and the jobs the threads of a workload work on. */
#include "threads.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

/* What a new thread runs: the function and its argument, for the OS's one-argument entry. */
typedef struct thread_start {
  void (*fn)(void *);
  void *arg;
} thread_start;

#if defined(_WIN32)
void bench_yield(void) {
  SwitchToThread();
}

static DWORD WINAPI thread_main(LPVOID param) {
  thread_start *s = (thread_start *)param;
  s->fn(s->arg);
  return 0;
}

void bench_run_threads(int count, void (*fn)(void *), void *const *args) {
  HANDLE handles[16];
  thread_start starts[16];
  if (count > 16)
    bench_fail("too many threads");
  for (int i = 0; i < count; i++) {
    starts[i].fn = fn;
    starts[i].arg = args[i];
    handles[i] = CreateThread(NULL, 0, thread_main, &starts[i], 0, NULL);
    if (handles[i] == NULL)
      bench_fail("CreateThread failed");
  }
  for (int i = 0; i < count; i++) {
    WaitForSingleObject(handles[i], INFINITE);
    CloseHandle(handles[i]);
  }
}

#else /* POSIX */

void bench_yield(void) {
  sched_yield();
}

static void *thread_main(void *param) {
  thread_start *s = (thread_start *)param;
  s->fn(s->arg);
  return NULL;
}

void bench_run_threads(int count, void (*fn)(void *), void *const *args) {
  pthread_t threads[16];
  thread_start starts[16];
  if (count > 16)
    bench_fail("too many threads");
  for (int i = 0; i < count; i++) {
    starts[i].fn = fn;
    starts[i].arg = args[i];
    if (pthread_create(&threads[i], NULL, thread_main, &starts[i]) != 0)
      bench_fail("pthread_create failed");
  }
  for (int i = 0; i < count; i++)
    pthread_join(threads[i], NULL);
}
#endif

thread_job *new_jobs(int count) {
  return (thread_job *)bench_os_alloc((size_t)count * 4096u);
}

void sum_jobs(bench_ctx *c, thread_job *jobs, int count) {
  for (int i = 0; i < count; i++) {
    c->peak_live += JOB(jobs, i)->stats.peak_live;
    c->check += JOB(jobs, i)->stats.check;
  }
}

typedef struct fn_arg {
  void (*fn)(void *);
  void *arg;
} fn_arg;

static void fn_arg_entry(void *p) {
  fn_arg *f = (fn_arg *)p;
  f->fn(f->arg);
}

void run_pair(void (*a)(void *), void (*b)(void *), thread_job *ja, thread_job *jb) {
  fn_arg t[2] = {{a, ja}, {b, jb}};
  void *args[2] = {&t[0], &t[1]};
  bench_run_threads(2, fn_arg_entry, args);
}
