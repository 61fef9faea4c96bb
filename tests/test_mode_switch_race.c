/* SPDX-License-Identifier: MIT */
/* Modes switched while other threads allocate: the main thread enters and leaves debug mode and
 * the erase modes over and over while two workers GetMem, ReallocMem and FreeMem blocks of every
 * kind and check their contents. A switch empties or refills the tables the fast paths read
 * (src/modes/gate.h) under the workers' feet, so blocks are made in one mode and resized or
 * freed in another, by the fast path on one call and the slow path on the next. Nothing may be
 * lost, refused or reported: every FreeMem succeeds, every ReallocMem keeps the bytes, no
 * debug-mode event is logged, and the heap checks clean at the end. Under the native-tsan preset
 * this is also the test that shows the switch's races to ThreadSanitizer (tests/tsan.supp). */
#include "test_blocks.h"

#define SLOTS 64
#define SWITCHES 400

typedef struct slot {
  unsigned char *p;
  size_t size;
  uint32_t seed;
} slot;

typedef struct worker {
  tu_thread thread;
  rng_state rng;
  tu_flag *stop;
  tu_counter ops;
  unsigned long long checks, failed;
  int index;
} worker;

static size_t pick_size(rng_state *r) {
  size_t k = rng_below(r, 100);
  if (k < 80)
    return rng_range(r, 1, SMALL_MAX_USER);
  if (k < 97)
    return rng_range(r, SMALL_MAX_USER + 1, 64 * 1024);
  return rng_range(r, MEDIUM_MAX_USER + 1, MEDIUM_MAX_USER + 256 * 1024);
}

#define W_CHECK(w, cond, ...)                                                                      \
  do {                                                                                             \
    (w)->checks++;                                                                                 \
    if (!(cond)) {                                                                                 \
      if ((w)->failed++ < 10) {                                                                    \
        printf("worker %d: ", (w)->index);                                                         \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
      }                                                                                            \
    }                                                                                              \
  } while (0)

static void worker_main(void *arg) {
  worker *w = (worker *)arg;
  slot s[SLOTS];
  memset(s, 0, sizeof s);
  while (!tu_flag_raised(w->stop)) {
    slot *it = &s[rng_below(&w->rng, SLOTS)];
    tu_counter_add(&w->ops, 1);
    if (it->p == NULL) {
      size_t n = pick_size(&w->rng);
      it->p = (unsigned char *)fastmm_getmem(n);
      W_CHECK(w, it->p != NULL, "GetMem(%zu) failed", n);
      if (it->p) {
        it->size = n;
        it->seed = (uint32_t)rng_next(&w->rng);
        tu_fill_pattern(it->p, n, it->seed);
      }
    } else if (rng_below(&w->rng, 3) == 0) {
      size_t bad = tu_check_pattern(it->p, it->size, it->seed);
      W_CHECK(w, bad == (size_t)-1, "block of %zu bytes: byte %zu changed before FreeMem", it->size,
              bad);
      W_CHECK(w, fastmm_freemem(it->p) == FASTMM_OK, "FreeMem of a live %zu-byte block refused",
              it->size);
      it->p = NULL;
    } else {
      size_t n = pick_size(&w->rng);
      unsigned char *q = (unsigned char *)fastmm_reallocmem(it->p, n);
      W_CHECK(w, q != NULL, "ReallocMem(%zu -> %zu) failed", it->size, n);
      if (q == NULL)
        continue;
      size_t keep = n < it->size ? n : it->size;
      size_t bad = tu_check_pattern(q, keep, it->seed);
      W_CHECK(w, bad == (size_t)-1, "ReallocMem(%zu -> %zu): byte %zu lost", it->size, n, bad);
      it->p = q;
      it->size = n;
      it->seed = (uint32_t)rng_next(&w->rng);
      tu_fill_pattern(q, n, it->seed);
    }
  }
  for (size_t i = 0; i < SLOTS; i++)
    if (s[i].p) {
      W_CHECK(w, tu_check_pattern(s[i].p, s[i].size, s[i].seed) == (size_t)-1,
              "a %zu-byte block changed", s[i].size);
      W_CHECK(w, fastmm_freemem(s[i].p) == FASTMM_OK, "final FreeMem refused");
    }
  fastmm_flush_thread_cache();
}

static worker w[2];

/* Waits until each worker has made OPS_PER_MODE more calls, so every mode sees work. */
#define OPS_PER_MODE 16
static void pause_a_little(void) {
  unsigned long long start[2] = {tu_counter_get(&w[0].ops), tu_counter_get(&w[1].ops)};
  for (int i = 0; i < 2; i++)
    while (tu_counter_get(&w[i].ops) < start[i] + OPS_PER_MODE)
      tu_yield();
}

int main(void) {
  tb_start_quiet("test_mode_switch_race");
  fastmm_set_debug_mode_stack_trace_entry_count(4); /* the walk is the slow part of debug mode */
  static const int events[] = {FASTMM_EVENT_HEADER_CORRUPTED, FASTMM_EVENT_GUARD_CORRUPTED,
                               FASTMM_EVENT_WRITE_AFTER_FREE, FASTMM_EVENT_DOUBLE_FREE,
                               FASTMM_EVENT_INVALID_POINTER};
  size_t events_before = 0;
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    events_before += fastmm_get_debug_event_count(events[i]);

  static tu_flag stop;
  for (int i = 0; i < 2; i++) {
    w[i].index = i;
    w[i].stop = &stop;
    rng_seed(&w[i].rng, 0x5EED0000u + (uint64_t)i);
    if (!CHECK(tu_thread_start(&w[i].thread, worker_main, &w[i])))
      return tu_finish("test_mode_switch_race");
  }
  rng_state rng;
  rng_seed(&rng, 42);
  for (int k = 0; k < SWITCHES; k++) {
    switch (rng_below(&rng, 3)) {
    case 0:
      fastmm_enter_debug_mode();
      pause_a_little();
      fastmm_exit_debug_mode();
      break;
    case 1:
      fastmm_begin_erase_freed_block_content();
      pause_a_little();
      fastmm_end_erase_freed_block_content();
      break;
    default:
      fastmm_begin_erase_allocated_block_content();
      pause_a_little();
      fastmm_end_erase_allocated_block_content();
      break;
    }
    pause_a_little();
  }
  tu_flag_raise(&stop);
  unsigned long long ops = 0;
  for (int i = 0; i < 2; i++) {
    tu_thread_join(&w[i].thread);
    tu_add_counts(w[i].checks, w[i].failed);
    ops += tu_counter_get(&w[i].ops);
  }
  printf("%d mode switches, %llu operations by two threads\n", SWITCHES, ops);
  size_t events_after = 0;
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    events_after += fastmm_get_debug_event_count(events[i]);
  CHECK_MSG(events_after == events_before, "%zu debug-mode events were reported",
            events_after - events_before);
  CHECK(!fastmm_debug_mode_active());
  CHECK(!fastmm_erase_freed_block_content_active());
  CHECK(!fastmm_erase_allocated_block_content_active());
  fastmm_release_free_memory();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_mode_switch_race");
}
