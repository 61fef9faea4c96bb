/* SPDX-License-Identifier: MIT */
/* The arenas in use (arena.h). */
#include "arena.h"

#include "atomics.h"
#include "policy.h"
#include "prim/prim.h"

/* ARENA_COUNT until start-up: a thread that allocates before it (none does) may take any. */
uint32_t arena_count = ARENA_COUNT;

uint32_t arena_set_count(uint32_t n) {
  uint32_t old = fmm_load_u32_relaxed(&arena_count);
  if (n < 1u)
    n = 1u;
  if (n > ARENA_COUNT)
    n = ARENA_COUNT;
  fmm_store_u32_relaxed(&arena_count, n);
  return old;
}

void arena_init(void) {
  (void)arena_set_count(prim_cpu_count() / ARENA_CPUS_PER_ARENA);
}
