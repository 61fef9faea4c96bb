/* SPDX-License-Identifier: MIT */
/* Small size classes: the slot table and the request-size lookup (size_class.c). */
#ifndef FASTMM_SIZE_CLASS_H
#define FASTMM_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "linkage.h"
#include "policy.h"

/* Slot size (header included) of each class, ascending. */
extern FMM_HIDDEN const uint16_t size_class_slot[SMALL_CLASS_COUNT];

/* Class for a request, indexed by (size + BLOCK_HEADER_SIZE - 1) / 16, for size <= SMALL_MAX_USER.
 * Entry i serves requests whose (size + 3) / 16 == i: they need a slot of (i + 1) * 16 bytes.
 * The entries are spelled out here because GetMem's fast copy (below) starts as the same table;
 * tests/test_small.c checks that every request gets the smallest class that holds it. */
#define SIZE_CLASS_LOOKUP_SIZE ((SMALL_MAX_USER + BLOCK_HEADER_SIZE - 1) / 16 + 1)
// clang-format off
#define SIZE_CLASS_LOOKUP_INIT \
  { \
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 17, \
  18, 18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 24, 24, 25, 25, 25, 25, \
  26, 26, 26, 26, 27, 27, 27, 27, 28, 28, 28, 28, 29, 29, 29, 29, 30, 30, 30, 30, \
  31, 31, 31, 31, 32, 32, 32, 32, 32, 32, 32, 32, 33, 33, 33, 33, 33, 33, 33, 33, \
  34, 34, 34, 34, 34, 34, 34, 34, 35, 35, 35, 35, 35, 35, 35, 35, 36, 36, 36, 36, \
  36, 36, 36, 36, 37, 37, 37, 37, 37, 37, 37, 37, 38, 38, 38, 38, 38, 38, 38, 38, \
  39, 39, 39, 39, 39, 39, 39, 39, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, \
  40, 40, 40, 40, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41 \
  }
// clang-format on
extern FMM_HIDDEN const uint8_t size_class_lookup[SIZE_CLASS_LOOKUP_SIZE];

/* Makes the lookups of the minimum alignments 32 and 64 (size_class_lookup_for). */
void size_class_init(void);
/* The lookup for a minimum alignment of 16, 32 or 64. */
const uint8_t *size_class_lookup_for(unsigned alignment);

/* ---- the minimum alignment and GetMem's class table -----------------------------------------
 * 16, 32 or 64 (FastMM5's FastMM_EnterMinimumAddressAlignment, aligned.h): the slow paths read
 * these; GetMem's fast path reads its fast copy (below), which is filled from heap_class_lookup. */
extern FMM_HIDDEN uint32_t heap_minimum_alignment;
extern FMM_HIDDEN const uint8_t *heap_class_lookup; /* size_class_lookup_for(the alignment) */
/* Sets both; src/modes/gate.c calls it under its lock and then refills GetMem's fast copy. */
void heap_set_minimum_alignment(uint32_t alignment);

static inline uint32_t heap_minimum_alignment_now(void) {
  return fmm_load_u32_relaxed(&heap_minimum_alignment);
}

/* ---- GetMem's fast copy ----------------------------------------------------------------------
 * GetMem's size -> class table as its fast path reads it. Open, a copy of heap_class_lookup (so
 * the minimum alignment reaches the fast path at no cost to it); closed, every size maps to
 * SIZE_CLASS_GATE, a thread-cache bin that is always empty, so GetMem finds no block and takes
 * its slow path. The mode gate (modes/gate.c) closes it while a mode is on. */
#define SIZE_CLASS_GATE SMALL_CLASS_COUNT /* a thread-cache bin that is always empty */
extern FMM_HIDDEN uint8_t size_class_fast_lookup[SIZE_CLASS_LOOKUP_SIZE];
/* Refills (open: from heap_class_lookup) or closes the fast copy; caller serialises. */
void size_class_fast_open(int open);

static inline unsigned size_class_of(size_t size) {
  return size_class_lookup[(size + BLOCK_HEADER_SIZE - 1) >> 4];
}

#endif
