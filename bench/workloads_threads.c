/* SPDX-License-Identifier: MIT */
/* The two-thread workloads of fastmm_bench (the single-thread ones are in workloads_single.c;
 * workloads.c lists them all). Each starts its threads through threads.h, gives each its own
 * job (its counters, seed and tables) and adds the threads' figures up when they have ended.
 * The rules of workloads_single.c hold here too. */
#include "threads.h"
#include "workloads.h"

static size_t pick_8_512(rng_state *r) {
  return rng_range(r, 8, 512);
}

/* A single-producer single-consumer ring: blocks allocated by one thread, freed by the other. */
#define RING 1024u
typedef struct spsc {
  void *items[RING];
  uint32_t sizes[RING];
  char pad0[64];
  uint64_t head; /* written by the producer */
  char pad1[64];
  uint64_t tail; /* written by the consumer */
  char pad2[64];
  uint64_t freed_bytes; /* written by the consumer */
} spsc;

static void producer(void *arg) {
  thread_job *j = (thread_job *)arg;
  spsc *q = j->ring;
  uint64_t tail = 0;
  uint64_t allocated = 0;
  for (uint64_t i = 0; i < j->n; i++) {
    size_t size = j->sizes[i & (SIZES - 1)];
    void *p = mm_get(size);
    tag_block(p, size, (uint32_t)i);
    allocated += size;
    unsigned spins = 0;
    while (i - tail >= RING) {
      tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
      if (i - tail >= RING)
        spin_wait(&spins);
    }
    q->items[i & (RING - 1)] = p;
    q->sizes[i & (RING - 1)] = (uint32_t)size;
    __atomic_store_n(&q->head, i + 1, __ATOMIC_RELEASE);
    size_t live = (size_t)(allocated - __atomic_load_n(&q->freed_bytes, __ATOMIC_RELAXED));
    if (live > j->stats.peak_live)
      j->stats.peak_live = live;
  }
}

static void consumer(void *arg) {
  thread_job *j = (thread_job *)arg;
  spsc *q = j->ring;
  uint64_t head = 0;
  uint64_t freed = 0;
  for (uint64_t i = 0; i < j->n; i++) {
    unsigned spins = 0;
    while (i >= head) {
      head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
      if (i >= head)
        spin_wait(&spins);
    }
    void *p = q->items[i & (RING - 1)];
    size_t size = q->sizes[i & (RING - 1)];
    if (!tag_ok(p, size, (uint32_t)i))
      bench_fail("a block passed between threads lost its contents");
    j->stats.check += ((unsigned char *)p)[size - 1];
    mm_free(p);
    freed += size;
    __atomic_store_n(&q->freed_bytes, freed, __ATOMIC_RELAXED);
    __atomic_store_n(&q->tail, i + 1, __ATOMIC_RELEASE);
  }
}

/* Producer/consumer: one thread allocates blocks of 8-512 bytes and hands them through a ring
 * of 1024 to a second thread, which checks and frees them. One operation = one block. */
void wl_mt_prodcons(bench_ctx *c) {
  uint64_t n = bench_count(c, 1e5);
  thread_job *jobs = new_jobs(2);
  spsc *q = (spsc *)bench_os_alloc(sizeof(spsc));
  uint32_t *sizes = size_table(SIZES, 41, pick_8_512);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->ring = q;
    JOB(jobs, i)->sizes = sizes;
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(producer, consumer, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = n;
  sum_jobs(c, jobs, 2);
}

static void churn_thread(void *arg) {
  thread_job *j = (thread_job *)arg;
  churn_random(&j->stats, j->n, j->seed, j->sizes, j->pool, 0);
}

/* small_churn_random on two threads at once, each with its own 4096 blocks. One operation =
 * one replacement in either thread. */
void wl_mt_churn(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->seed = 42 + (uint64_t)i;
    JOB(jobs, i)->sizes = size_table(SIZES, 42 + (uint64_t)i, pick_small_8_256);
    JOB(jobs, i)->pool = (slot *)bench_os_alloc(4096 * sizeof(slot));
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(churn_thread, churn_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* Multi-threaded allocation and reallocation: two threads, each with 512 live blocks of 8 B-4 KB;
 * each operation either replaces a random block or ReallocMems it to a new random size. */
static void alloc_realloc_thread(void *arg) {
  enum { POOL = 512 };
  thread_job *j = (thread_job *)arg;
  bench_ctx *c = &j->stats;
  slot *pool = j->pool;
  rng_state r;
  rng_seed(&r, j->seed);
  for (size_t i = 0; i < POOL; i++)
    fill_slot(c, &pool[i], rng_log_range(&r, 8, 4 * KB), (uint32_t)i);
  for (uint64_t i = 0; i < j->n; i++) {
    uint64_t x = rng_next(&r);
    slot *s = &pool[x & (POOL - 1)];
    size_t size = rng_log_range(&r, 8, 4 * KB);
    if (x & 0x100000u) {
      free_slot(c, s);
      fill_slot(c, s, size, (uint32_t)i);
    } else {
      size_t keep = size < s->size ? size : s->size;
      s->p = mm_realloc(s->p, size);
      if (!tag_ok(s->p, keep, s->tag))
        bench_fail("ReallocMem lost the contents");
      live_add(c, size);
      live_sub(c, s->size);
      s->size = (uint32_t)size;
      s->tag = (uint32_t)i;
      tag_block(s->p, size, s->tag);
    }
  }
  free_all(c, pool, POOL);
}

void wl_fc_mt_alloc_realloc(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->seed = 91 + (uint64_t)i;
    JOB(jobs, i)->pool = (slot *)bench_os_alloc(512 * sizeof(slot));
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(alloc_realloc_thread, alloc_realloc_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* String threads: two threads, each building strings by appends (as string_append) up to
 * 64 KB. One operation = one append in either thread. */
static void string_thread(void *arg) {
  thread_job *j = (thread_job *)arg;
  string_builder(&j->stats, j->n, 64 * KB, j->sizes);
}

void wl_fc_string_threads(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->sizes = size_table(SIZES, 101 + (uint64_t)i, pick_chunk_1_32);
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(string_thread, string_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* Short-lived threads: threads started two at a time; each allocates 100 blocks of 8-512 bytes,
 * frees half of them and leaves the other half to the main thread, which frees them after the
 * thread has ended. One operation = one thread. */
typedef struct short_job {
  uint64_t seed;
  void *left[50];
  uint32_t left_size[50];
} short_job;

static void short_thread(void *arg) {
  short_job *j = (short_job *)arg;
  void *mine[50];
  rng_state r;
  rng_seed(&r, j->seed);
  for (int k = 0; k < 100; k++) {
    size_t size = rng_range(&r, 8, 512);
    void *p = mm_get(size);
    tag_block(p, size, (uint32_t)k);
    if (k & 1) {
      j->left[k / 2] = p;
      j->left_size[k / 2] = (uint32_t)size;
    } else {
      mine[k / 2] = p;
    }
  }
  for (int k = 0; k < 50; k++)
    mm_free(mine[k]);
}

void wl_fc_short_threads(bench_ctx *c) {
  uint64_t pairs = bench_count(c, 60);
  short_job *jobs = (short_job *)bench_os_alloc(2 * sizeof(short_job));
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < pairs; i++) {
    jobs[0].seed = 2 * i;
    jobs[1].seed = 2 * i + 1;
    void *args[2] = {&jobs[0], &jobs[1]};
    bench_run_threads(2, short_thread, args);
    for (int t = 0; t < 2; t++)
      for (int k = 0; k < 50; k++) {
        if (!tag_ok(jobs[t].left[k], jobs[t].left_size[k], (uint32_t)(2 * k + 1)))
          bench_fail("a block left by a thread lost its contents");
        mm_free(jobs[t].left[k]);
      }
  }
  bench_end(c);
  c->ops = 2 * pairs;
  c->peak_live = 2 * 100 * 512;
}
