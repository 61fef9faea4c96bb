/* SPDX-License-Identifier: MIT */
/* Multi-thread stress: producers hand blocks of every kind to consumers through a shared queue;
 * consumers verify them, resize some of them (a ReallocMem by a thread that did not allocate the
 * block), and either free them or pass them on again, so a block may travel through several
 * threads; realloc-storm threads push their own blocks up and down across the small, medium and
 * large kinds; short-lived threads start, allocate, hand over half of what they made and end
 * without flushing. Every block is verified byte for byte before each resize and before it is
 * freed.
 *
 * Bounded in count and time: every thread runs at least STRESS_MIN_OPS operations and at most
 * STRESS_MAX_OPS, and stops between the two when the run's time is up (FASTMM_STRESS_SECONDS,
 * default 4; nothing is asserted about time).
 *
 * At the end every thread has called fastmm_flush_thread_cache(): no block and no byte may be in
 * use of any kind, no block cached, the heap consistent; after fastmm_release_free_memory()
 * every span is back with the OS (each kind's bytes_reserved is 0) and the OS bytes are where
 * they were at the start. The operation counts are printed. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include "test_blocks.h"

#include "fastmm_test.h"

#define PRODUCERS 3
#define CONSUMERS 2
#define STORMERS 2
#define SHORT_LIVED 24 /* started one after another by the main thread */
#define QUEUE_CAP 512
#define STORM_SLOTS 24
#define PRODUCER_SLOTS 32
#define STRESS_MIN_OPS 1500u
#define STRESS_MAX_OPS 400000u
#define HOPS_MAX 4 /* a block is passed on at most this many times */
#define LARGE_MAX ((size_t)2 * 1024 * 1024)

typedef struct item {
  tb_block b;
  unsigned hops;
} item;

typedef struct stats {
  unsigned long long ops, allocs[TB_KINDS], zeroed, frees, cross_frees, reallocs, cross_reallocs,
      kind_changes, passes, storm_steps;
} stats;

typedef struct worker {
  int id;
  rng_state rng;
  stats st;
  tu_thread_checks chk;
} worker;

/* ---- a shared queue (mutex and ring) ------------------------------------------------------- */

static struct {
  tu_mutex lock;
  item items[QUEUE_CAP];
  size_t head, count;
  int producers_left; /* producers and short-lived threads still running */
} queue;

static int queue_push(const item *it) {
  int ok = 0;
  tu_mutex_lock(&queue.lock);
  if (queue.count < QUEUE_CAP) {
    queue.items[(queue.head + queue.count) % QUEUE_CAP] = *it;
    queue.count++;
    ok = 1;
  }
  tu_mutex_unlock(&queue.lock);
  return ok;
}

/* 1: got an item; 0: empty now; -1: empty and no producer left. */
static int queue_pop(item *it) {
  int r;
  tu_mutex_lock(&queue.lock);
  if (queue.count > 0) {
    *it = queue.items[queue.head];
    queue.head = (queue.head + 1) % QUEUE_CAP;
    queue.count--;
    r = 1;
  } else {
    r = queue.producers_left > 0 ? 0 : -1;
  }
  tu_mutex_unlock(&queue.lock);
  return r;
}

static void producer_done(void) {
  tu_mutex_lock(&queue.lock);
  queue.producers_left--;
  tu_mutex_unlock(&queue.lock);
}

/* ---- time ---------------------------------------------------------------------------------- */

static uint64_t deadline_ms;

/* Go on? At least STRESS_MIN_OPS, at most STRESS_MAX_OPS, in between until the time is up. */
static int keep_going(const worker *w) {
  if (w->st.ops < STRESS_MIN_OPS)
    return 1;
  if (w->st.ops >= STRESS_MAX_OPS)
    return 0;
  return tu_now_ms() < deadline_ms;
}

static int kind_of_size(size_t n) {
  return n <= SMALL_MAX_USER ? TB_SMALL : n <= MEDIUM_MAX_USER ? TB_MEDIUM : TB_LARGE;
}

/* Sizes: mostly small (as Delphi programs allocate), every class edge sometimes, medium, and a
 * few large blocks. */
static size_t random_size(rng_state *r) {
  size_t k = rng_below(r, 1000);
  if (k < 500)
    return rng_range(r, 0, 256);
  if (k < 700)
    return rng_range(r, 1, SMALL_MAX_USER);
  if (k < 760) { /* a class edge: its usable size or one more */
    size_t c = rng_below(r, SMALL_CLASS_COUNT);
    return tb_small_usable(c) + rng_below(r, 2);
  }
  if (k < 940)
    return rng_range(r, SMALL_MAX_USER + 1, 70000);
  if (k < 985)
    return rng_range(r, 70000, MEDIUM_MAX_USER + 1);
  return rng_range(r, MEDIUM_MAX_USER + 1, LARGE_MAX);
}

static uint32_t new_seed(worker *w) {
  return (uint32_t)w->id << 24 ^ (uint32_t)rng_next(&w->rng);
}

/* A new block in it; 0 if the manager said no (a failure: no limit is set here). */
static int make(worker *w, item *it, size_t size) {
  int zeroed = rng_below(&w->rng, 8) == 0;
  it->b.size = size;
  it->b.p = (unsigned char *)(zeroed ? fastmm_allocmem(size) : fastmm_getmem(size));
  it->hops = 0;
  w->st.ops++;
  THREAD_CHECK(&w->chk, it->b.p != NULL, "%s(%zu) = NULL", zeroed ? "allocmem" : "getmem", size);
  if (!it->b.p)
    return 0;
  THREAD_CHECK(&w->chk, tu_is_aligned(it->b.p, BLOCK_ALIGNMENT), "%p not aligned", (void *)it->b.p);
  if (zeroed) {
    THREAD_CHECK(&w->chk, tu_all_zero(it->b.p, size), "allocmem(%zu) not zeroed", size);
    w->st.zeroed++;
  }
  w->st.allocs[kind_of_size(size)]++;
  it->b.seed = new_seed(w);
  tu_fill_pattern(it->b.p, size, it->b.seed);
  return 1;
}

static void destroy(worker *w, item *it, int cross) {
  tb_block_verify(&w->chk, &it->b, cross ? "before a cross-thread free" : "before a free");
  THREAD_CHECK(&w->chk, fastmm_freemem(it->b.p) == FASTMM_OK, "freemem(%p) refused",
               (void *)it->b.p);
  w->st.ops++;
  w->st.frees++;
  w->st.cross_frees += cross != 0;
  it->b.p = NULL;
}

/* Resizes it to `to`, checking that the kept bytes survived; refills with a new seed. */
static void resize(worker *w, item *it, size_t to, int cross) {
  size_t from = it->b.size;
  tb_block_verify(&w->chk, &it->b, "before a realloc");
  w->st.ops++;
  w->st.reallocs++;
  w->st.cross_reallocs += cross != 0;
  /* A refusal leaves the old block ours and intact. */
  if (tb_block_resize(&w->chk, &it->b, to, new_seed(w), "resize"))
    w->st.kind_changes += kind_of_size(from) != kind_of_size(it->b.size);
}

/* ---- the threads --------------------------------------------------------------------------- */

static void producer_main(void *arg) {
  worker *w = (worker *)arg;
  item own[PRODUCER_SLOTS];
  size_t i;
  memset(own, 0, sizeof own);
  while (keep_going(w)) {
    item *it = &own[rng_below(&w->rng, PRODUCER_SLOTS)];
    size_t op = rng_below(&w->rng, 100);
    if (!it->b.p) {
      make(w, it, random_size(&w->rng));
    } else if (op < 55) {
      tb_block_verify(&w->chk, &it->b, "before passing on");
      if (queue_push(it)) {
        w->st.passes++;
        it->b.p = NULL;
      } else {
        destroy(w, it, 0);
      }
    } else if (op < 75) {
      destroy(w, it, 0);
    } else {
      resize(w, it, random_size(&w->rng), 0);
    }
  }
  for (i = 0; i < PRODUCER_SLOTS; i++)
    if (own[i].b.p)
      destroy(w, &own[i], 0);
  fastmm_flush_thread_cache();
  producer_done();
}

static void consumer_main(void *arg) {
  worker *w = (worker *)arg;
  for (;;) {
    item it;
    int r = queue_pop(&it);
    if (r < 0)
      break;
    if (r == 0) {
      tu_yield();
      continue;
    }
    {
      size_t op = rng_below(&w->rng, 100);
      if (op < 30)
        resize(w, &it, random_size(&w->rng), 1);
      if (!it.b.p)
        continue;
      if (op < 50 && it.hops < HOPS_MAX) {
        it.hops++;
        tb_block_verify(&w->chk, &it.b, "before passing on again");
        if (queue_push(&it)) {
          w->st.passes++;
          continue;
        }
      }
      destroy(w, &it, 1);
    }
  }
  fastmm_flush_thread_cache();
}

/* Own blocks pushed up and down: appends (a string growing), trims, and jumps across kinds. */
static void stormer_main(void *arg) {
  worker *w = (worker *)arg;
  item own[STORM_SLOTS];
  size_t i;
  memset(own, 0, sizeof own);
  while (keep_going(w)) {
    item *it = &own[rng_below(&w->rng, STORM_SLOTS)];
    size_t op = rng_below(&w->rng, 100), steps, s;
    if (!it->b.p) {
      make(w, it, rng_range(&w->rng, 1, 64));
      continue;
    }
    if (op < 40) { /* appends */
      steps = rng_range(&w->rng, 5, 60);
      for (s = 0; s < steps && it->b.p && it->b.size < LARGE_MAX; s++) {
        resize(w, it, it->b.size + rng_range(&w->rng, 1, it->b.size / 4 + 16), 0);
        w->st.storm_steps++;
      }
    } else if (op < 70) { /* trims */
      steps = rng_range(&w->rng, 3, 30);
      for (s = 0; s < steps && it->b.size > 1; s++) {
        resize(w, it, it->b.size - rng_range(&w->rng, 1, it->b.size / 3 + 1), 0);
        w->st.storm_steps++;
      }
    } else if (op < 90) { /* a jump to any kind */
      resize(w, it, random_size(&w->rng), 0);
    } else {
      destroy(w, it, 0);
    }
    if (it->b.p && it->b.size > LARGE_MAX)
      resize(w, it, rng_range(&w->rng, 1, 4000), 0);
  }
  for (i = 0; i < STORM_SLOTS; i++)
    if (own[i].b.p)
      destroy(w, &own[i], 0);
  fastmm_flush_thread_cache();
}

/* Allocates, hands over half, frees the rest, and ends without flushing its cache. */
static void short_lived_main(void *arg) {
  worker *w = (worker *)arg;
  enum { N = 200 };
  item own[N];
  size_t i;
  for (i = 0; i < N; i++)
    if (!make(w, &own[i], random_size(&w->rng) % 3000))
      own[i].b.p = NULL;
  for (i = 0; i < N; i++) {
    if (!own[i].b.p)
      continue;
    if (i % 2 == 0 && queue_push(&own[i]))
      w->st.passes++;
    else
      destroy(w, &own[i], 0);
  }
  producer_done();
}

/* ---- the run ------------------------------------------------------------------------------- */

static void add_stats(stats *total, const stats *s) {
  int k;
  total->ops += s->ops;
  for (k = 0; k < TB_KINDS; k++)
    total->allocs[k] += s->allocs[k];
  total->zeroed += s->zeroed;
  total->frees += s->frees;
  total->cross_frees += s->cross_frees;
  total->reallocs += s->reallocs;
  total->cross_reallocs += s->cross_reallocs;
  total->kind_changes += s->kind_changes;
  total->passes += s->passes;
  total->storm_steps += s->storm_steps;
}

/* The worker's operations into the total, its checks into the test's counts. */
static void add_worker(stats *total, const worker *w) {
  add_stats(total, &w->st);
  tu_add_counts(w->chk.checks, w->chk.failed);
}

static unsigned stress_seconds(void) {
  const char *v = getenv("FASTMM_STRESS_SECONDS");
  long s = v ? strtol(v, NULL, 10) : 0;
  return s > 0 && s < 100000 ? (unsigned)s : 4u;
}

int main(void) {
  static worker prod[PRODUCERS], cons[CONSUMERS], storm[STORMERS], shorty[SHORT_LIVED];
  static tu_thread tp[PRODUCERS], tc[CONSUMERS], ts[STORMERS], tsh;
  stats total;
  fastmm_state s0, s1, s2;
  unsigned seconds = stress_seconds();
  int i, started = 1;
  unsigned long long allocs;
  /* Every arena, whatever the machine's CPUs: blocks cross between arenas' threads. */
  fastmm_test_set_arenas(4);

  printf("test_stress (%s, %u-bit pointers): %d producers, %d consumers, %d realloc storms, %d "
         "short-lived threads, %u s\n",
         tu_build_name(), (unsigned)(sizeof(void *) * 8), PRODUCERS, CONSUMERS, STORMERS,
         SHORT_LIVED, seconds);
  tu_mutex_init(&queue.lock);
  memset(&total, 0, sizeof total);
  /* The main thread's cache exists before the baseline (caches are carved once, kept). */
  fastmm_freemem(fastmm_getmem(1));
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s0);
  CHECK_EQ(tb_blocks_in_use(&s0), 0);

  queue.producers_left = PRODUCERS + SHORT_LIVED;
  deadline_ms = tu_now_ms() + (uint64_t)seconds * 1000u;
  for (i = 0; i < PRODUCERS; i++) {
    prod[i].id = i;
    prod[i].chk.thread = prod[i].id;
    rng_seed(&prod[i].rng, 100u + (uint64_t)i);
    started &= CHECK(tu_thread_start(&tp[i], producer_main, &prod[i]));
  }
  for (i = 0; i < CONSUMERS; i++) {
    cons[i].id = 10 + i;
    cons[i].chk.thread = cons[i].id;
    rng_seed(&cons[i].rng, 200u + (uint64_t)i);
    started &= CHECK(tu_thread_start(&tc[i], consumer_main, &cons[i]));
  }
  for (i = 0; i < STORMERS; i++) {
    storm[i].id = 20 + i;
    storm[i].chk.thread = storm[i].id;
    rng_seed(&storm[i].rng, 300u + (uint64_t)i);
    started &= CHECK(tu_thread_start(&ts[i], stormer_main, &storm[i]));
  }
  if (!started)
    return tu_finish("test_stress"); /* the queue would never drain */
  /* Meanwhile: short-lived threads, one after another, and the state read now and then. */
  for (i = 0; i < SHORT_LIVED; i++) {
    fastmm_state s;
    shorty[i].id = 30 + i;
    shorty[i].chk.thread = shorty[i].id;
    rng_seed(&shorty[i].rng, 400u + (uint64_t)i);
    if (CHECK(tu_thread_start(&tsh, short_lived_main, &shorty[i])))
      tu_thread_join(&tsh);
    else
      producer_done();
    fastmm_get_state(&s);
  }
  for (i = 0; i < PRODUCERS; i++)
    tu_thread_join(&tp[i]);
  for (i = 0; i < STORMERS; i++)
    tu_thread_join(&ts[i]);
  for (i = 0; i < CONSUMERS; i++)
    tu_thread_join(&tc[i]);

  for (i = 0; i < PRODUCERS; i++)
    add_worker(&total, &prod[i]);
  for (i = 0; i < CONSUMERS; i++)
    add_worker(&total, &cons[i]);
  for (i = 0; i < STORMERS; i++)
    add_worker(&total, &storm[i]);
  for (i = 0; i < SHORT_LIVED; i++)
    add_worker(&total, &shorty[i]);
  allocs = total.allocs[TB_SMALL] + total.allocs[TB_MEDIUM] + total.allocs[TB_LARGE];
  printf("  %llu operations: %llu allocations (%llu small, %llu medium, %llu large; %llu zeroed), "
         "%llu frees (%llu by another thread), %llu reallocs (%llu by another thread, %llu "
         "across kinds, %llu storm steps), %llu hand-overs\n",
         total.ops, allocs, total.allocs[TB_SMALL], total.allocs[TB_MEDIUM], total.allocs[TB_LARGE],
         total.zeroed, total.frees, total.cross_frees, total.reallocs, total.cross_reallocs,
         total.kind_changes, total.storm_steps, total.passes);

  /* Everything made was freed, every kind was made, and the workload really crossed threads. */
  CHECK_EQ(queue.count, 0);
  CHECK_EQ(total.frees, allocs);
  for (i = 0; i < TB_KINDS; i++)
    CHECK_MSG(total.allocs[i] > 0, "no block of kind %d was made", i);
  CHECK(total.cross_frees > 0);
  CHECK(total.cross_reallocs > 0);
  CHECK(total.kind_changes > 0);

  /* Every thread flushed its cache (the short-lived ones by ending): nothing is in use. */
  tb_state(&s1);
  tb_check_nothing_in_use(&s1);
  CHECK_EQ(fastmm_check_heap(), 0);

  /* And the spans go back. */
  fastmm_release_free_memory();
  tb_state(&s2);
  printf("  OS bytes: %zu at the start, peak %zu, %zu at the end before the release, %zu after\n",
         s0.os_bytes_reserved, s2.os_bytes_peak, s1.os_bytes_reserved, s2.os_bytes_reserved);
  CHECK_EQ(s2.small.bytes_reserved, 0);
  CHECK_EQ(s2.medium.bytes_reserved, 0);
  CHECK_EQ(s2.large.bytes_reserved, 0);
  /* Only thread caches may have been added (carved from 64 KB chunks, kept for reuse). */
  CHECK_MSG(s2.os_bytes_reserved <= s0.os_bytes_reserved + 2u * LARGE_GRANULARITY,
            "%zu bytes still mapped, %zu at the start", s2.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK(s2.os_bytes_peak > s0.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
  tu_mutex_destroy(&queue.lock);
  return tu_finish("test_stress");
}
