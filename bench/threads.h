/* SPDX-License-Identifier: MIT */
/* The two-thread workloads' plumbing: starting threads and waiting for them all (the OS's
 * threads, threads.c), the job each thread works on, adding the threads' figures up, and the
 * wait of a thread that spins for the other. */
#ifndef FASTMM_BENCH_THREADS_H
#define FASTMM_BENCH_THREADS_H

#include "workload_slots.h"

/* Runs fn(args[i]) on `count` (at most 16) new threads at once and waits for them all. */
void bench_run_threads(int count, void (*fn)(void *), void *const *args);
/* Gives the CPU away (SwitchToThread / sched_yield). */
void bench_yield(void);

/* What one thread of a two-thread workload works on, and its own figures. */
typedef struct thread_job {
  bench_ctx stats; /* live / peak_live / check of this thread */
  uint64_t n, seed;
  uint32_t *sizes;
  slot *pool;
  struct spsc *ring;
} thread_job;

/* `count` zeroed jobs, one page each (no false sharing between the threads' counters), from the
 * OS; JOB(jobs, i) is the i-th. */
thread_job *new_jobs(int count);
#define JOB(jobs, i) ((thread_job *)((char *)(jobs) + (size_t)(i)*4096u))

/* Adds the jobs' peak live bytes and checksums to the run's. */
void sum_jobs(bench_ctx *c, thread_job *jobs, int count);

/* Runs a(ja) and b(jb) on two threads at once. */
void run_pair(void (*a)(void *), void (*b)(void *), thread_job *ja, thread_job *jb);

/* One turn of a spin wait: every 64th turn gives the CPU away, so a thread that waits for the
 * other does not hold the CPU that one needs when both share it. */
static inline void spin_wait(unsigned *spins) {
  if (++*spins >= 64) {
    *spins = 0;
    bench_yield();
  }
}

#endif
