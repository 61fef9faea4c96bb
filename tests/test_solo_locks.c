/* SPDX-License-Identifier: MIT */
/* Solo locks (src/core/lock.c): while one thread alone has taken the manager's locks it takes
 * them with plain stores; the idle thread takes its locks as a guest beside it, and the first
 * other thread that wants a lock ends solo mode. Both handovers are checked where they happen:
 *
 *   guest: the main thread churns medium and large blocks (every GetMem and FreeMem of them
 *     takes an arena's or the large lock) while the idle thread, woken every millisecond, gives
 *     cached large blocks and spare medium spans back under the same locks, over and over;
 *   end: the main thread churns on while it starts two threads that churn too and free blocks
 *     the main thread allocated, so the first lock another thread takes lands in the middle of
 *     the main thread's work.
 *
 * Every block holds a pattern of its own (its ring slot and size) from its first to its last
 * byte, checked before it is freed; at the end every block is freed, the heap must check out and
 * what is in use must be what was in use before. A take of the solo thread that overlapped
 * another thread's would hand one block to two owners or link a list twice: a pattern found
 * broken, a refused FreeMem, or the heap check catches it.
 *
 * Bounded by operation counts; nothing is asserted about time. */
#include "test_blocks.h"

#define RING 64u
#define WORKERS 2u

typedef struct ring_slot {
  unsigned char *p;
  size_t size;
} ring_slot;

static unsigned char pattern_byte(unsigned slot, size_t size, size_t i) {
  return (unsigned char)(slot * 31u + size + i * 7u);
}

static void fill(unsigned char *p, unsigned slot, size_t size) {
  for (size_t i = 0; i < size; i += 61u)
    p[i] = pattern_byte(slot, size, i);
  p[size - 1] = pattern_byte(slot, size, size - 1);
}

static int intact(const unsigned char *p, unsigned slot, size_t size) {
  for (size_t i = 0; i < size; i += 61u)
    if (p[i] != pattern_byte(slot, size, i))
      return 0;
  return p[size - 1] == pattern_byte(slot, size, size - 1);
}

/* Medium blocks mostly, a large one now and then (its FreeMem caches it for the idle thread). */
static size_t churn_size(rng_state *r) {
  return rng_below(r, 8u) == 0 ? 600u * 1024u + rng_below(r, 1500u * 1024u)
                               : 3000u + rng_below(r, 60u * 1024u);
}

/* One replacement in a ring: the old block checked and freed, a new one filled. */
static int replace(ring_slot *ring, unsigned slot, rng_state *r) {
  int ok = 1;
  ring_slot *s = &ring[slot];
  if (s->p != NULL) {
    ok = intact(s->p, slot, s->size) && fastmm_freemem(s->p) == FASTMM_OK;
    s->p = NULL;
  }
  size_t size = churn_size(r);
  s->p = (unsigned char *)fastmm_getmem(size);
  if (s->p == NULL)
    return 0;
  s->size = size;
  fill(s->p, slot, size);
  return ok;
}

static int empty_ring(ring_slot *ring) {
  int ok = 1;
  for (unsigned i = 0; i < RING; i++)
    if (ring[i].p != NULL) {
      ok &= intact(ring[i].p, i, ring[i].size) && fastmm_freemem(ring[i].p) == FASTMM_OK;
      ring[i].p = NULL;
    }
  return ok;
}

/* ---- The guest -------------------------------------------------------------------------- */

static void guest_case(void) {
  ring_slot ring[RING];
  memset(ring, 0, sizeof ring);
  rng_state r;
  rng_seed(&r, 7);
  fastmm_set_idle_release_interval(1);
  unsigned broken = 0;
  for (unsigned i = 0; i < 12000u; i++)
    if (!replace(ring, rng_below(&r, RING), &r))
      broken++;
  CHECK_MSG(broken == 0, "%u replacements found a block broken or refused", broken);
  CHECK(empty_ring(ring));
  fastmm_set_idle_release_interval(0);
  CHECK_EQ(fastmm_check_heap(), FASTMM_OK);
}

/* ---- The end of solo mode ------------------------------------------------------------------ */

/* Blocks the main thread allocated, handed to the workers to free. */
static tu_mutex handoff_lock;
static unsigned char *handoff[256];
static size_t handoff_size[256];
static unsigned handoff_count;
static tu_flag main_done;

typedef struct worker {
  tu_thread thread;
  tu_thread_checks checks;
  unsigned seed;
} worker;

static void worker_main(void *arg) {
  worker *w = (worker *)arg;
  ring_slot ring[RING];
  memset(ring, 0, sizeof ring);
  rng_state r;
  rng_seed(&r, w->seed);
  unsigned broken = 0, foreign_broken = 0;
  for (unsigned i = 0; i < 3000u || !tu_flag_raised(&main_done); i++) {
    if (!replace(ring, rng_below(&r, RING), &r))
      broken++;
    unsigned char *p = NULL;
    size_t size = 0;
    tu_mutex_lock(&handoff_lock);
    if (handoff_count > 0) {
      handoff_count--;
      p = handoff[handoff_count];
      size = handoff_size[handoff_count];
    }
    tu_mutex_unlock(&handoff_lock);
    if (p != NULL && !(intact(p, 999u, size) && fastmm_freemem(p) == FASTMM_OK))
      foreign_broken++;
    if (i > 200000u)
      break;
  }
  THREAD_CHECK(&w->checks, broken == 0, "%u of the worker's replacements broken or refused",
               broken);
  THREAD_CHECK(&w->checks, foreign_broken == 0,
               "%u blocks of the main thread's found broken or refused", foreign_broken);
  THREAD_CHECK(&w->checks, empty_ring(ring), "the worker's ring emptied");
}

static void end_case(void) {
  ring_slot ring[RING];
  memset(ring, 0, sizeof ring);
  rng_state r;
  rng_seed(&r, 11);
  tu_mutex_init(&handoff_lock);
  worker workers[WORKERS];
  unsigned started = 0, broken = 0;
  for (unsigned i = 0; i < 10000u; i++) {
    /* The workers start from inside the churn: their first lock meets the main thread's. */
    if (i == 2000u || i == 2001u) {
      worker *w = &workers[started];
      w->checks.thread = (int)started + 1;
      w->checks.checks = w->checks.failed = 0;
      w->seed = 100u + started;
      if (tu_thread_start(&w->thread, worker_main, w))
        started++;
    }
    if (!replace(ring, rng_below(&r, RING), &r))
      broken++;
    if (i >= 2000u && (i & 7u) == 0) {
      size_t size = 3000u + rng_below(&r, 30u * 1024u);
      unsigned char *p = (unsigned char *)fastmm_getmem(size);
      if (p != NULL) {
        fill(p, 999u, size);
        tu_mutex_lock(&handoff_lock);
        if (handoff_count < 256u) {
          handoff[handoff_count] = p;
          handoff_size[handoff_count++] = size;
          p = NULL;
        }
        tu_mutex_unlock(&handoff_lock);
        if (p != NULL)
          CHECK(fastmm_freemem(p) == FASTMM_OK);
      }
    }
  }
  tu_flag_raise(&main_done);
  CHECK_EQ(started, WORKERS);
  for (unsigned i = 0; i < started; i++) {
    tu_thread_join(&workers[i].thread);
    tu_add_counts(workers[i].checks.checks, workers[i].checks.failed);
  }
  CHECK_MSG(broken == 0, "%u of the main thread's replacements broken or refused", broken);
  CHECK(empty_ring(ring));
  while (handoff_count > 0) {
    handoff_count--;
    CHECK(intact(handoff[handoff_count], 999u, handoff_size[handoff_count]));
    CHECK(fastmm_freemem(handoff[handoff_count]) == FASTMM_OK);
  }
  tu_mutex_destroy(&handoff_lock);
  CHECK_EQ(fastmm_check_heap(), FASTMM_OK);
}

int main(void) {
  tb_start_quiet("test_solo_locks");
  fastmm_state before, after;
  tb_state(&before);
  guest_case();
  end_case();
  fastmm_release_free_memory();
  tb_state(&after);
  CHECK_EQ(after.medium.blocks_in_use, before.medium.blocks_in_use);
  CHECK_EQ(after.large.blocks_in_use, before.large.blocks_in_use);
  return tu_finish("test_solo_locks");
}
