/* The mode word and the fast paths' gates (heap_mode.h says why they exist). */
#include "heap_mode.h"

#include "internal.h"

FMM_STATIC_ASSERT(offsetof(fast_gates, region) == FAST_GATES_REGION_OFFSET, "gate layout");
FMM_STATIC_ASSERT(offsetof(fast_gates, l1_bound) == FAST_GATES_L1_BOUND_OFFSET, "gate layout");
FMM_STATIC_ASSERT(REGION_GATE_CLOSED > REGION_LARGE_REST, "a closed gate matches no region");

#define L1_ENTRIES ((uint64_t)1 << PAGE_MAP_L1_BITS)

volatile uint32_t heap_mode;
/* Read on every GetMem and FreeMem, written only when a mode switches: a line of its own. */
FMM_ALIGNED(64) fast_gates heap_gates = {REGION_MEDIUM_SPAN, 0, L1_ENTRIES, SMALL_MAX_USER + 1};

void heap_mode_store(uint32_t mode) {
  int open = mode == 0;
  /* The word first: a thread that finds a gate closed then finds the mode that closed it (or
   * a later one). One that finds a gate closed and the mode already off takes the normal slow
   * path, which is correct too. */
  heap_mode = mode;
  fmm_store_u32_relaxed(&heap_gates.region, open ? REGION_MEDIUM_SPAN : REGION_GATE_CLOSED);
  heap_gates.l1_bound = open ? L1_ENTRIES : 0;
  heap_gates.get_bound = open ? (size_t)SMALL_MAX_USER + 1 : 0;
}
