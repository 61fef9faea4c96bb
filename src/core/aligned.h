/* SPDX-License-Identifier: MIT */
/* Aligned blocks (aligned.c): the minimum alignment every block gets while it is in effect
 * (FastMM5's FastMM_EnterMinimumAddressAlignment), and single blocks aligned coarser
 * (fastmm_getmem_aligned), whose alignment ReallocMem keeps. policy.h says how each kind is
 * aligned. */
#ifndef FASTMM_ALIGNED_H
#define FASTMM_ALIGNED_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "linkage.h"

/* 16, 32 or 64. The slow paths read these; GetMem's fast path reads its own table
 * (size_class_fast_lookup), which src/modes/gate.c fills from heap_class_lookup. */
extern FMM_HIDDEN uint32_t heap_minimum_alignment;
extern FMM_HIDDEN const uint8_t *heap_class_lookup; /* size_class_lookup_for(the alignment) */
/* Sets both; src/modes/gate.c calls it under its lock and then refills GetMem's table. */
void heap_set_minimum_alignment(uint32_t alignment);

static inline uint32_t heap_minimum_alignment_now(void) {
  return fmm_load_u32_relaxed(&heap_minimum_alignment);
}

/* One block whose user pointer is a multiple of `alignment` (a power of two, 32 .. ALIGNED_MAX),
 * made while a mode is on the mode's way (mode_hooks.h), else by heap_get_aligned_normal. */
void *heap_get_aligned(size_t size, size_t alignment, const void *caller);
void *heap_get_aligned_normal(size_t size, size_t alignment);

#endif
