/* Small size classes: the slot table and the request-size lookup. */
#ifndef FASTMM_SIZE_CLASS_H
#define FASTMM_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "linkage.h"
#include "policy.h"

/* Slot size (header included) of each class, ascending. */
extern FMM_HIDDEN const uint16_t size_class_slot[SMALL_CLASS_COUNT];
/* Class for a request, indexed by (size + BLOCK_HEADER_SIZE - 1) / 16, for size <= SMALL_MAX_USER.
 */
extern FMM_HIDDEN const uint8_t
    size_class_lookup[(SMALL_MAX_USER + BLOCK_HEADER_SIZE - 1) / 16 + 1];

/* The same for GetMem's fast path, while no mode is on; SIZE_CLASS_GATE for every size while
 * one is (heap_mode.h). */
#define SIZE_CLASS_GATE SMALL_CLASS_COUNT /* a thread-cache bin that is always empty */
extern FMM_HIDDEN uint8_t size_class_fast_lookup[(SMALL_MAX_USER + BLOCK_HEADER_SIZE - 1) / 16 + 1];
void size_class_set_gate(int open);

static inline unsigned size_class_of(size_t size) {
  return size_class_lookup[(size + BLOCK_HEADER_SIZE - 1) >> 4];
}

#endif
