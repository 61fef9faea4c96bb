/* SPDX-License-Identifier: MIT */
/* Threads: four threads allocate mixed small, medium and large blocks with their own patterns,
 * hand half of what they free to the next thread through a locked queue (so blocks are freed
 * by a thread that did not allocate them), and run realloc storms. Every block is verified
 * before it is freed or resized. Meanwhile the main thread reads the state and checks the heap,
 * which takes every lock. At the end every thread flushes its cache and the manager must hold
 * no block and no byte in use, and a consistent heap.
 * Then short-lived threads end without flushing: their caches must be returned by themselves
 * (fastmm.h), and blocks they leave behind are freed by the main thread. */
#include "test_blocks.h"

#include "fastmm_test.h"

#define NTHREADS 4
#define SLOTS 64
#define ITERATIONS 6000
#define QUEUE_CAP 1024

typedef tb_block item;

typedef struct queue {
  tu_mutex lock;
  item items[QUEUE_CAP];
  size_t head, count;
} queue;

typedef struct worker {
  int id;
  rng_state rng;
  queue *inbox;  /* what other threads pass to us */
  queue *outbox; /* the next thread's inbox */
  tu_thread_checks chk;
  unsigned long long cross_frees, reallocs, allocs;
} worker;

static queue queues[NTHREADS];
static tu_mutex done_lock;
static int done_count;

static size_t random_size(rng_state *r) {
  size_t k = rng_below(r, 1000);
  if (k < 450)
    return rng_range(r, 1, 256);
  if (k < 750)
    return rng_range(r, 1, SMALL_MAX_USER);
  if (k < 940)
    return rng_range(r, SMALL_MAX_USER + 1, 65536);
  if (k < 985)
    return rng_range(r, SMALL_MAX_USER + 1, MEDIUM_MAX_USER);
  return rng_range(r, MEDIUM_MAX_USER + 1, 2u * 1024u * 1024u);
}

/* Seeds carry the thread id, so a block that ends up in the wrong hands shows. */
static uint32_t next_seed(worker *w) {
  return (uint32_t)w->id << 28 ^ (uint32_t)rng_next(&w->rng);
}

static void verify(worker *w, const item *it, const char *what) {
  tb_block_verify(&w->chk, it, what);
}

static void release(worker *w, item *it, const char *what) {
  verify(w, it, what);
  THREAD_CHECK(&w->chk, fastmm_freemem(it->p) == FASTMM_OK, "%s: free of %p failed", what,
               (void *)it->p);
  it->p = NULL;
}

/* Returns 1 when it put the block in the next thread's inbox, 0 when that is full. */
static int pass_on(worker *w, const item *it) {
  queue *q = w->outbox;
  int ok = 0;
  tu_mutex_lock(&q->lock);
  if (q->count < QUEUE_CAP) {
    q->items[(q->head + q->count) % QUEUE_CAP] = *it;
    q->count++;
    ok = 1;
  }
  tu_mutex_unlock(&q->lock);
  return ok;
}

/* Frees what other threads passed to us; returns how many. */
static size_t drain(worker *w) {
  item batch[64];
  size_t n = 0, i;
  queue *q = w->inbox;
  tu_mutex_lock(&q->lock);
  while (q->count > 0 && n < 64) {
    batch[n++] = q->items[q->head];
    q->head = (q->head + 1) % QUEUE_CAP;
    q->count--;
  }
  tu_mutex_unlock(&q->lock);
  for (i = 0; i < n; i++) {
    release(w, &batch[i], "cross-thread free");
    w->cross_frees++;
  }
  return n;
}

/* A string being appended to, then trimmed: many small reallocs on one block. */
static void realloc_storm(worker *w, item *it) {
  size_t steps = rng_range(&w->rng, 20, 120), i;
  for (i = 0; i < steps; i++) {
    size_t to = i < steps / 2 ? it->size + rng_range(&w->rng, 1, 300)
                              : it->size - it->size / rng_range(&w->rng, 3, 9);
    w->reallocs++;
    if (!tb_block_resize(&w->chk, it, to, next_seed(w), "storm"))
      return;
  }
}

static void worker_main(void *arg) {
  worker *w = (worker *)arg;
  item slot[SLOTS];
  size_t i;
  int all_done = 0;
  memset(slot, 0, sizeof slot);
  for (i = 0; i < ITERATIONS; i++) {
    size_t k = rng_below(&w->rng, SLOTS), op = rng_below(&w->rng, 100);
    item *it = &slot[k];
    if (!it->p) {
      it->size = random_size(&w->rng);
      it->seed = next_seed(w);
      it->p = (unsigned char *)(op < 20 ? fastmm_allocmem(it->size) : fastmm_getmem(it->size));
      w->allocs++;
      THREAD_CHECK(&w->chk, it->p != NULL, "getmem(%zu) gave NULL", it->size);
      if (!it->p)
        continue;
      if (op < 20)
        THREAD_CHECK(&w->chk, tu_all_zero(it->p, it->size), "allocmem(%zu) not zeroed", it->size);
      THREAD_CHECK(&w->chk, tu_is_aligned(it->p, 16), "%p not 16-aligned", (void *)it->p);
      tu_fill_pattern(it->p, it->size, it->seed);
    } else if (op < 35) {
      release(w, it, "own free");
    } else if (op < 60) {
      verify(w, it, "pass on");
      if (pass_on(w, it))
        it->p = NULL;
      else
        release(w, it, "own free (queue full)");
    } else if (op < 90) {
      size_t to = random_size(&w->rng);
      verify(w, it, "before realloc");
      w->reallocs++;
      if (!tb_block_resize(&w->chk, it, to, next_seed(w), "realloc"))
        continue;
    } else if (op < 93) {
      verify(w, it, "before storm");
      realloc_storm(w, it);
    } else {
      verify(w, it, "check");
    }
    if (i % 8 == 0)
      drain(w);
  }
  for (i = 0; i < SLOTS; i++)
    if (slot[i].p)
      release(w, &slot[i], "final own free");

  tu_mutex_lock(&done_lock);
  done_count++;
  tu_mutex_unlock(&done_lock);
  /* Keep freeing what arrives until every thread has stopped sending. */
  while (!all_done) {
    tu_mutex_lock(&done_lock);
    all_done = done_count == NTHREADS;
    tu_mutex_unlock(&done_lock);
    while (drain(w) > 0) {
    }
    if (!all_done)
      tu_yield();
  }
  fastmm_flush_thread_cache();
}

/* Phase 2: a thread that fills its cache and ends without flushing, leaving LEFT blocks alive. */
#define LEFT 100
typedef struct leaver {
  int id;
  void *left[LEFT];
  unsigned long long failed;
} leaver;

static void leaver_main(void *arg) {
  leaver *l = (leaver *)arg;
  void *p[2000];
  size_t i;
  rng_state rng;
  rng_seed(&rng, 77u + (uint64_t)l->id);
  for (i = 0; i < 2000; i++) {
    p[i] = fastmm_getmem(rng_range(&rng, 1, 600));
    if (!p[i])
      l->failed++;
  }
  for (i = 0; i < 2000; i++) {
    if (i < LEFT) {
      l->left[i] = p[i];
      continue;
    }
    if (fastmm_freemem(p[i]) != FASTMM_OK)
      l->failed++;
  }
  /* No fastmm_flush_thread_cache(): the thread's end must do it. */
}

static void exiting_threads(void) {
  static leaver l[NTHREADS];
  static tu_thread t[NTHREADS];
  fastmm_state s;
  int i, j;
  for (i = 0; i < NTHREADS; i++) {
    l[i].id = i;
    if (!CHECK(tu_thread_start(&t[i], leaver_main, &l[i])))
      return;
  }
  for (i = 0; i < NTHREADS; i++)
    tu_thread_join(&t[i]);
  /* No flush here: the main thread has cached nothing, the others have ended. */
  fastmm_get_state(&s);
  CHECK_MSG(s.thread_cached_blocks == 0, "%zu blocks still cached after their threads ended",
            s.thread_cached_blocks);
  CHECK_EQ(s.small.blocks_in_use, (size_t)NTHREADS * LEFT);
  CHECK_EQ(fastmm_check_heap(), 0);
  for (i = 0; i < NTHREADS; i++) {
    CHECK_EQ(l[i].failed, 0);
    for (j = 0; j < LEFT; j++)
      CHECK(fastmm_freemem(l[i].left[j]) == FASTMM_OK);
  }
  tb_state(&s);
  CHECK_EQ(s.small.blocks_in_use, 0);
  CHECK_EQ(s.thread_cached_blocks, 0);
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  static worker w[NTHREADS];
  static tu_thread t[NTHREADS];
  fastmm_state s0, s1;
  int i;
  unsigned long long cross = 0, reallocs = 0, allocs = 0;
  printf("test_threads (%s, %u-bit pointers, %d threads)\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8), NTHREADS);
  tu_mutex_init(&done_lock);
  /* Every arena, whatever the machine's CPUs: blocks cross between arenas' threads. */
  fastmm_test_set_arenas(4);
  tb_state(&s0);
  CHECK_EQ(tb_blocks_in_use(&s0), 0);

  for (i = 0; i < NTHREADS; i++) {
    tu_mutex_init(&queues[i].lock);
    w[i].id = i;
    w[i].chk.thread = i;
    rng_seed(&w[i].rng, 1000u + (uint64_t)i);
    w[i].inbox = &queues[i];
    w[i].outbox = &queues[(i + 1) % NTHREADS];
  }
  for (i = 0; i < NTHREADS; i++)
    if (!CHECK_MSG(tu_thread_start(&t[i], worker_main, &w[i]), "thread %d did not start", i))
      return tu_finish("test_threads");
  /* While they run: the state and the heap check (which takes every lock) must work. */
  {
    unsigned polls = 0, bad_heap = 0;
    int last_fault = 0, running = 1;
    while (running) {
      fastmm_state s;
      int fault;
      fastmm_get_state(&s);
      fault = fastmm_check_heap();
      if (fault) {
        bad_heap++;
        last_fault = fault;
      }
      polls++;
      tu_mutex_lock(&done_lock);
      running = done_count < NTHREADS;
      tu_mutex_unlock(&done_lock);
      tu_yield();
    }
    CHECK_MSG(bad_heap == 0, "fastmm_check_heap() failed %u of %u times while threads ran (%d)",
              bad_heap, polls, last_fault);
    printf("  %u state reads and heap checks while the threads ran\n", polls);
  }
  for (i = 0; i < NTHREADS; i++)
    tu_thread_join(&t[i]);

  for (i = 0; i < NTHREADS; i++) {
    tu_add_counts(w[i].chk.checks, w[i].chk.failed);
    cross += w[i].cross_frees;
    reallocs += w[i].reallocs;
    allocs += w[i].allocs;
    CHECK_EQ(queues[i].count, 0);
  }
  printf("  %llu allocations, %llu reallocs, %llu freed by another thread\n", allocs, reallocs,
         cross);
  /* The workload really crossed threads and really resized. */
  CHECK(cross > 1000);
  CHECK(reallocs > 1000);

  tb_state(&s1);
  tb_check_nothing_in_use(&s1);
  /* Freed large blocks may be kept in the large cache; two idle periods give them back. */
  fastmm_release_idle_memory();
  fastmm_release_idle_memory();
  tb_state(&s1);
  CHECK_EQ(s1.large.bytes_reserved, 0);
  CHECK(s1.os_bytes_peak >= s1.os_bytes_reserved);
  /* Memory went back (a large block reused for a smaller GetMem gives its tail back in a call of
   * its own, so the calls that give back may outnumber those that commit). */
  CHECK(s1.os_unmap_calls > s0.os_unmap_calls);
  CHECK_EQ(fastmm_check_heap(), 0);
  exiting_threads();
  for (i = 0; i < NTHREADS; i++)
    tu_mutex_destroy(&queues[i].lock);
  tu_mutex_destroy(&done_lock);
  return tu_finish("test_threads");
}
