/* SPDX-License-Identifier: MIT */
/* How many of the ARENA_COUNT arenas (small-block managers and medium arenas) the process uses:
 * threads are handed arenas below arena_count and move only among those (policy.h). Arenas above
 * it exist and are empty; every walk and count still visits all ARENA_COUNT. */
#ifndef FASTMM_ARENA_H
#define FASTMM_ARENA_H

#include <stdint.h>

#include "atomics.h"
#include "linkage.h"

extern FMM_HIDDEN uint32_t arena_count;

/* One of the arenas in use for the number k (a thread's turn, or its id). */
static inline unsigned arena_for(uint32_t k) {
  return k % fmm_load_u32_relaxed(&arena_count);
}

/* The arena a search from `first` tries at step i of n (the count in use): its own first, then
 * the others in use. */
static inline unsigned arena_try(unsigned first, unsigned i, unsigned n) {
  return i == 0 ? first : (first + i) % n;
}

/* Sets arena_count from the CPUs the process may run on (heap start-up). */
void arena_init(void);
/* Sets it to n (1 .. ARENA_COUNT; others are clamped) and returns the count before: for tests,
 * which cover several arenas on any machine (fastmm_test_set_arenas). Safe at any time: a thread
 * keeps the arena it was handed, and every arena exists. */
uint32_t arena_set_count(uint32_t n);

#endif
