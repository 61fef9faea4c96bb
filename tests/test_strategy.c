/* SPDX-License-Identifier: MIT */
/* The optimization strategy (fastmm_set_optimization_strategy, FastMM5's
 * FastMM_SetOptimizationStrategy): the size of the medium spans mapped from then on, 4 MB for
 * speed, 2 MB balanced (the default), 1 MB for low memory; spans already mapped keep theirs, other
 * values change nothing. A new span is forced by filling every span with the largest medium
 * blocks; the walk then shows the new span's size, and the state the memory it added. */
#include "test_blocks.h"

static size_t newest_span;
static void *known_spans[4096];
static size_t known_count;

static void FASTMM_CDECL find_new_span(const fastmm_block_info *info, void *user_data) {
  (void)user_data;
  if (info->block_type != FASTMM_BLOCK_MEDIUM_SPAN)
    return;
  for (size_t i = 0; i < known_count; i++)
    if (known_spans[i] == info->block_address)
      return;
  newest_span = info->block_size;
  if (known_count < 4096)
    known_spans[known_count++] = info->block_address;
}

/* Allocates largest medium blocks until a span appears that was not there; returns its size. */
static size_t size_of_next_span(void **held, size_t *count) {
  newest_span = 0;
  fastmm_walk_blocks(find_new_span, NULL, FASTMM_WALK_TYPE(FASTMM_BLOCK_MEDIUM_SPAN), 0, 1000, 0,
                     0xFFFFFFFFu);
  newest_span = 0;
  while (newest_span == 0 && *count < 256) {
    held[(*count)++] = fastmm_getmem(MEDIUM_MAX_USER);
    fastmm_walk_blocks(find_new_span, NULL, FASTMM_WALK_TYPE(FASTMM_BLOCK_MEDIUM_SPAN), 0, 1000, 0,
                       0xFFFFFFFFu);
  }
  return newest_span;
}

int main(void) {
  tb_start_quiet("test_strategy");
  void *held[256];
  size_t count = 0;
  CHECK_EQ(fastmm_get_optimization_strategy(), FASTMM_BALANCED);
  fastmm_release_free_memory(); /* no spare span to reuse */
  CHECK_EQ(size_of_next_span(held, &count), MEDIUM_SPAN_SIZE_BALANCED + MEDIUM_SPAN_HEAD_BYTES);

  fastmm_set_optimization_strategy(FASTMM_OPTIMIZE_FOR_SPEED);
  CHECK_EQ(fastmm_get_optimization_strategy(), FASTMM_OPTIMIZE_FOR_SPEED);
  fastmm_state before, after;
  fastmm_get_state(&before);
  CHECK_EQ(size_of_next_span(held, &count), MEDIUM_SPAN_SIZE_SPEED + MEDIUM_SPAN_HEAD_BYTES);
  fastmm_get_state(&after);
  CHECK_EQ(after.medium.bytes_reserved + after.small.bytes_reserved - before.medium.bytes_reserved -
               before.small.bytes_reserved,
           MEDIUM_SPAN_SIZE_SPEED + MEDIUM_SPAN_HEAD_BYTES);

  fastmm_set_optimization_strategy(FASTMM_OPTIMIZE_FOR_LOW_MEMORY);
  CHECK_EQ(fastmm_get_optimization_strategy(), FASTMM_OPTIMIZE_FOR_LOW_MEMORY);
  CHECK_EQ(size_of_next_span(held, &count), MEDIUM_SPAN_SIZE_LOW_MEMORY + MEDIUM_SPAN_HEAD_BYTES);

  /* Not strategies: nothing changes. */
  fastmm_set_optimization_strategy(3);
  fastmm_set_optimization_strategy(-1);
  CHECK_EQ(fastmm_get_optimization_strategy(), FASTMM_OPTIMIZE_FOR_LOW_MEMORY);
  CHECK_EQ(size_of_next_span(held, &count), MEDIUM_SPAN_SIZE_LOW_MEMORY + MEDIUM_SPAN_HEAD_BYTES);

  /* Spans of three sizes side by side: blocks everywhere, the heap consistent. */
  CHECK_EQ(fastmm_check_heap(), 0);
  for (size_t i = 0; i < count; i++)
    CHECK_EQ(fastmm_freemem(held[i]), FASTMM_OK);
  fastmm_set_optimization_strategy(FASTMM_BALANCED);
  CHECK_EQ(fastmm_get_optimization_strategy(), FASTMM_BALANCED);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
  fastmm_state end;
  tb_state(&end);
  tb_check_nothing_in_use(&end);
  CHECK_EQ(end.medium.bytes_reserved, 0);
  return tu_finish("test_strategy");
}
