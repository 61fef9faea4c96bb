/* SPDX-License-Identifier: MIT */
/* Thread contention counts: the manager's own counters until a program binds its variables. */
#include "contention.h"

#include "atomics.h"

static uint32_t own_counts[CONTENTION_KIND_COUNT];
static volatile uint32_t *counters[CONTENTION_KIND_COUNT] = {&own_counts[0], &own_counts[1],
                                                             &own_counts[2]};

void contention_count(contention_kind kind) {
  volatile uint32_t *c = (volatile uint32_t *)fmm_load_ptr_acquire((void **)&counters[kind]);
  fmm_inc_u32(c);
}

void contention_bind(volatile uint32_t *const bound[CONTENTION_KIND_COUNT]) {
  for (unsigned k = 0; k < CONTENTION_KIND_COUNT; k++) {
    volatile uint32_t *c = bound != NULL && bound[k] != NULL ? bound[k] : &own_counts[k];
    fmm_store_ptr_release((void **)&counters[k], (void *)(uintptr_t)c);
  }
}

uint32_t contention_value(contention_kind kind) {
  volatile uint32_t *c = (volatile uint32_t *)fmm_load_ptr_acquire((void **)&counters[kind]);
  return fmm_load_u32_relaxed(c);
}
