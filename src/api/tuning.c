/* SPDX-License-Identifier: MIT */
/* The exports that tune the manager as FastMM5's do: the minimum alignment of every block and the
 * optimization strategy (the size of new medium spans, policy.h). */
#include "core/aligned.h"
#include "core/arena.h"
#include "core/heap.h"
#include "core/medium.h"
#include "core/span_record.h"
#include "fastmm_test.h"
#include "modes/gate.h"

size_t FASTMM_CDECL fastmm_set_minimum_alignment(size_t alignment) {
  return mode_set_minimum_alignment(alignment);
}

size_t FASTMM_CDECL fastmm_get_minimum_alignment(void) {
  return heap_minimum_alignment_now();
}

static uint32_t strategy = FASTMM_BALANCED;

void FASTMM_CDECL fastmm_set_optimization_strategy(int new_strategy) {
  uint32_t span_size;
  switch (new_strategy) {
  case FASTMM_OPTIMIZE_FOR_SPEED:
    span_size = MEDIUM_SPAN_SIZE_SPEED;
    break;
  case FASTMM_BALANCED:
    span_size = MEDIUM_SPAN_SIZE_BALANCED;
    break;
  case FASTMM_OPTIMIZE_FOR_LOW_MEMORY:
    span_size = MEDIUM_SPAN_SIZE_LOW_MEMORY;
    break;
  default:
    return; /* not a strategy: nothing changes */
  }
  heap_ensure_initialized();
  medium_set_span_size(span_size);
  fmm_store_u32_relaxed(&strategy, (uint32_t)new_strategy);
}

uint32_t FASTMM_CDECL fastmm_test_set_churn_window(uint32_t ms) {
  heap_ensure_initialized();
  return medium_set_churn_window(ms);
}

uint32_t FASTMM_CDECL fastmm_test_set_arenas(uint32_t count) {
  heap_ensure_initialized();
  return arena_set_count(count);
}

int FASTMM_CDECL fastmm_test_span_record(const void *p, uint32_t out[4]) {
  uintptr_t a = (uintptr_t)p - BLOCK_ALIGNMENT;
  if (((uintptr_t)p & (BLOCK_ALIGNMENT - 1u)) != 0 || p == NULL ||
      !region_is_medium(page_map_get((const void *)a)))
    return 0;
  const span_record *r = span_record_of(a);
  out[0] = r->header_bits;
  out[1] = r->first_block;
  out[2] = r->slot_divisor;
  out[3] = r->carved_limit;
  return 1;
}

int FASTMM_CDECL fastmm_get_optimization_strategy(void) {
  return (int)fmm_load_u32_relaxed(&strategy);
}
