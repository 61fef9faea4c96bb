/* SPDX-License-Identifier: MIT */
/* What no export shows, natively, against the manager linked in statically:
 *
 *   - debug_block_describe, the walk's view of a debug block from its outer block (issue 13's
 *     block walk is built on it): live, freed (quarantined), and normal blocks of every kind;
 *   - the thread contention counts (FastMM5's FastMM_*BlockThreadContentionCount), counted into
 *     bound variables: the test holds every arena's lock of a kind, a second thread's GetMem
 *     must find them all taken, count once and wait;
 *   - the registry keeps its word after the headers of its blocks were overwritten. */
#include "test_blocks.h"

#include "core/contention.h"
#include "core/medium.h"
#include "core/size_class.h"
#include "core/small.h"
#include "modes/debug_block.h"
#include "modes/debug_registry.h"

static void describe(void) {
  static const size_t sizes[] = {0, 100, 20000, 700000};
  fastmm_enter_debug_mode();
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = (unsigned char *)fastmm_getmem(sizes[i]);
    debug_block_info info;
    if (!CHECK(p != NULL))
      continue;
    const void *outer = p - 64;
    memset(&info, 0xEE, sizeof info);
    if (CHECK_MSG(debug_block_describe(outer, &info) == 1, "size %zu: not described", sizes[i])) {
      CHECK(info.user == p);
      CHECK((const void *)info.header == outer);
      CHECK_EQ(info.user_size, sizes[i]);
      CHECK_EQ(info.allocation_number, info.header->allocation_number);
      CHECK_EQ(info.allocation_group, 0);
      CHECK_EQ(info.freed, 0);
    }
    /* The user pointer itself, and a normal block, are no outer blocks. */
    CHECK_EQ(debug_block_describe(p, &info), 0);
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    if (CHECK(debug_block_describe(outer, &info) == 1))
      CHECK_EQ(info.freed, 1);
  }
  fastmm_exit_debug_mode(); /* the quarantine is emptied */
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    debug_block_info info;
    void *n = fastmm_getmem(sizes[i] + 64);
    CHECK_EQ(debug_block_describe(n, &info), 0);
    fastmm_freemem(n);
  }
  CHECK_EQ(debug_block_describe(NULL, NULL), 0);
}

static volatile uint32_t waits[CONTENTION_KIND_COUNT];

static void get_one(void *arg) {
  size_t size = *(const size_t *)arg;
  void *p = fastmm_getmem(size); /* a new thread: its cache is empty, it must lock an arena */
  CHECK(p != NULL);
  fastmm_freemem(p);
}

/* Waits for the count to move (the other thread found every lock taken), at most a bound of
 * turns: a count that never moves fails instead of hanging. */
static int count_moved(contention_kind kind, uint32_t from) {
  for (long i = 0; i < 50000000L; i++) {
    if (fmm_load_u32_relaxed(&waits[kind]) != from)
      return 1;
    tu_yield();
  }
  return 0;
}

static void contention(void) {
  volatile uint32_t *const bound[CONTENTION_KIND_COUNT] = {&waits[0], &waits[1], &waits[2]};
  contention_bind(bound);
  /* Medium: every arena locked. */
  size_t size = 10000;
  tu_thread t;
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    lock_acquire(&medium_arenas[a].lock);
  CHECK(tu_thread_start(&t, get_one, &size));
  CHECK_MSG(count_moved(CONTENTION_MEDIUM, 0), "no medium contention counted");
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    lock_release(&medium_arenas[a].lock);
  tu_thread_join(&t);
  CHECK_EQ(waits[CONTENTION_MEDIUM], 1);
  CHECK_EQ(contention_value(CONTENTION_MEDIUM), 1);
  /* Small: every arena's manager of the class locked. */
  size = 100;
  unsigned c = size_class_of(size);
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    lock_acquire(&small_managers[a][c].lock);
  CHECK(tu_thread_start(&t, get_one, &size));
  CHECK_MSG(count_moved(CONTENTION_SMALL, 0), "no small contention counted");
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    lock_release(&small_managers[a][c].lock);
  tu_thread_join(&t);
  CHECK_EQ(waits[CONTENTION_SMALL], 1);
  /* Unbound: the manager's own counters again. */
  contention_bind(NULL);
  CHECK_EQ(contention_value(CONTENTION_MEDIUM), 0);
  contention_count(CONTENTION_LARGE);
  CHECK_EQ(contention_value(CONTENTION_LARGE), 1);
  CHECK_EQ(waits[CONTENTION_LARGE], 0);
}

/* A block whose header was overwritten stays a registered, live block; mended, it frees. */
static void registry_holds(void) {
  fastmm_enter_debug_mode();
  unsigned char *p = (unsigned char *)fastmm_getmem(100);
  unsigned char saved[64];
  memcpy(saved, p - 64, 64);
  memset(p - 64, 0, 64);
  debug_registry_lock();
  CHECK_EQ(debug_registry_state(p - 64), DEBUG_ENTRY_LIVE);
  debug_registry_unlock();
  CHECK(fastmm_freemem(p) != FASTMM_OK);
  memcpy(p - 64, saved, 64);
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  debug_registry_lock();
  CHECK_EQ(debug_registry_state(p - 64), DEBUG_ENTRY_QUARANTINED);
  debug_registry_unlock();
  fastmm_exit_debug_mode();
  debug_registry_lock();
  CHECK_EQ(debug_registry_state(p - 64), DEBUG_ENTRY_NONE);
  CHECK_EQ(debug_registry_count(), 0);
  debug_registry_unlock();
}

int main(void) {
  tb_start_quiet("test_debug_internals");
  describe();
  contention();
  registry_holds();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_debug_internals");
}
