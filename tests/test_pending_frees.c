/* SPDX-License-Identifier: MIT */
/* fastmm_process_all_pending_frees() does what fastmm.h says: afterwards the calling thread's
 * cache holds nothing, every arena's pending frees are back in their spans and the quarantine
 * of freed debug blocks is empty, so fastmm_release_free_memory() can give everything back.
 *
 * Each round two threads churn small blocks (and a few medium ones) while a third enters and
 * leaves debug mode, so debug blocks are made and freed into the quarantine in between; after
 * the three are joined, with nothing live: fastmm_flush_thread_cache(),
 * fastmm_process_all_pending_frees(), then no block cached by any thread
 * (fastmm_get_state's thread_cached_blocks) and none in use; and after
 * fastmm_release_free_memory() no small or medium span left. Bounded by its round and
 * operation counts. */
#include "common/rng.h"
#include "test_blocks.h"

enum { ROUNDS = 8, CHURNERS = 2, OPS = 12000, SLOTS = 64, TOGGLES = 150 };

typedef struct churner {
  tu_thread thread;
  tu_thread_checks checks;
  uint64_t seed;
} churner;

static tu_flag churn_done;

static void churner_main(void *arg) {
  churner *c = (churner *)arg;
  rng_state rng;
  rng_seed(&rng, c->seed);
  void *slot[SLOTS] = {0};
  for (unsigned i = 0; i < OPS; i++) {
    unsigned k = (unsigned)rng_below(&rng, SLOTS);
    if (slot[k] != NULL) {
      THREAD_CHECK(&c->checks, fastmm_freemem(slot[k]) == FASTMM_OK, "freemem");
      slot[k] = NULL;
    } else {
      size_t size =
          rng_below(&rng, 16) == 0 ? rng_range(&rng, 3000, 20000) : rng_range(&rng, 1, 600);
      slot[k] = fastmm_getmem(size);
      THREAD_CHECK(&c->checks, slot[k] != NULL, "getmem(%zu)", size);
    }
  }
  for (unsigned k = 0; k < SLOTS; k++)
    if (slot[k] != NULL)
      THREAD_CHECK(&c->checks, fastmm_freemem(slot[k]) == FASTMM_OK, "freemem at the end");
}

static void toggler_main(void *arg) {
  (void)arg;
  for (unsigned i = 0; i < TOGGLES && !tu_flag_raised(&churn_done); i++) {
    fastmm_enter_debug_mode();
    for (int spin = 0; spin < 50; spin++)
      tu_yield();
    fastmm_exit_debug_mode();
    tu_yield();
  }
}

int main(void) {
  fastmm_set_idle_release_interval(0); /* nothing goes back by itself meanwhile */
  unsigned long long left_cached = 0;
  for (unsigned round = 0; round < ROUNDS; round++) {
    churner c[CHURNERS];
    tu_thread toggler;
    churn_done.value = 0;
    for (int i = 0; i < CHURNERS; i++) {
      memset(&c[i], 0, sizeof c[i]);
      c[i].checks.thread = i + 1;
      c[i].seed = 0xCAC4E000u + round * 16u + (uint64_t)i;
      CHECK(tu_thread_start(&c[i].thread, churner_main, &c[i]));
    }
    CHECK(tu_thread_start(&toggler, toggler_main, NULL));
    for (int i = 0; i < CHURNERS; i++) {
      tu_thread_join(&c[i].thread);
      tu_add_counts(c[i].checks.checks, c[i].checks.failed);
    }
    tu_flag_raise(&churn_done);
    tu_thread_join(&toggler);

    fastmm_flush_thread_cache();
    fastmm_process_all_pending_frees();
    fastmm_state s;
    fastmm_get_state(&s);
    CHECK_MSG(s.thread_cached_blocks == 0,
              "round %u: %zu blocks cached after fastmm_process_all_pending_frees", round,
              s.thread_cached_blocks);
    left_cached += s.thread_cached_blocks;
    CHECK_EQ(tb_blocks_in_use(&s), 0);
    fastmm_release_free_memory();
    fastmm_get_state(&s);
    CHECK_MSG(s.small.bytes_reserved == 0 && s.medium.bytes_reserved == 0,
              "round %u: after fastmm_release_free_memory %zu small and %zu medium bytes held",
              round, s.small.bytes_reserved, s.medium.bytes_reserved);
    CHECK_EQ(fastmm_check_heap(), 0);
  }
  printf("test_pending_frees: %llu blocks left cached over %d rounds\n", left_cached, ROUNDS);
  CHECK_EQ(fastmm_get_debug_event_count(FASTMM_EVENT_INVALID_POINTER), 0);
  return tu_finish("test_pending_frees");
}
