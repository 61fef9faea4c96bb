/* SPDX-License-Identifier: MIT */
/* The numbers the assembly fast paths (src/win32/, src/win64/) assemble against, by name: the
 * block header contract (core/block_header.h), the fields of a span record that validate a pointer
 * (core/span_record.h), the page map's shape (core/page_map.h) and the in-place rule of
 * ReallocMem and the number of the Pascal records' slots (core/policy.h). The build computes each
 * with the C compiler (layout.c) into layout.inc, and tests/test_asm_layout.c checks that file
 * against this list, so the assembly cannot assemble against a number the C code no longer uses. A
 * name the assembly needs is added here. */
#ifndef FASTMM_ASM_LAYOUT_VALUES_H
#define FASTMM_ASM_LAYOUT_VALUES_H

#include <stddef.h>

#include "core/block_header.h"
#include "core/medium.h"
#include "core/page_map.h"
#include "core/policy.h"
#include "core/small.h"
#include "core/span_record.h"

/* Where the fields the validation contract reads sit in a span record (span_record.h), and the
 * hot slot's fields in its line (page_map.h). */
#define SPAN_RECORD_BITS_OFFSET offsetof(span_record, header_bits)
#define SPAN_RECORD_FIRST_OFFSET offsetof(span_record, first_block)
#define SPAN_RECORD_DIVISOR_OFFSET offsetof(span_record, slot_divisor)
#define SPAN_RECORD_LIMIT_OFFSET offsetof(span_record, carved_limit)
#define PAGE_MAP_HOT_HEADER_BASE_OFFSET offsetof(page_map_hot, header_base)
#define PAGE_MAP_HOT_L2_OFFSET offsetof(page_map_hot, l2)
#define PAGE_MAP_HOT_RECORDS_OFFSET offsetof(page_map_hot, records)
/* How far below a medium block's user pointer its size and seal sit (medium.h). */
#define MEDIUM_SIZE_BELOW (MEDIUM_HEADER_SIZE - offsetof(medium_header, size))
#define MEDIUM_SEAL_BELOW (MEDIUM_HEADER_SIZE - offsetof(medium_header, seal))
/* The seal's multiplier is above INT_MAX: the assembly multiplies by minus this, the same number
 * modulo 2^32. */
#define MEDIUM_SEAL_MULTIPLIER_NEGATED (0x100000000ll - MEDIUM_SEAL_MULTIPLIER)

// clang-format off
#define ASM_LAYOUT_VALUES(X) \
  X(BLOCK_HEADER_SIZE) \
  X(BLOCK_ALIGNMENT) \
  X(BLOCK_FLAG_FREE) \
  X(BLOCK_FLAG_SMALL) \
  X(BLOCK_FLAG_MEDIUM) \
  X(BLOCK_FLAG_LARGE) \
  X(BLOCK_FLAG_DEBUG_OUTER) \
  X(BLOCK_KIND_MASK) \
  X(SMALL_CLASS_SHIFT) \
  X(SMALL_CLASS_MASK) \
  X(SMALL_SLOT_SHIFT) \
  X(SMALL_SLOT_MASK) \
  X(SMALL_SLOT_UNIT) \
  X(SMALL_SPAN_OFFSET_SHIFT) \
  X(SMALL_SPAN_OFFSET_UNIT) \
  X(SMALL_HEADER_TAG_MASK) \
  X(SMALL_SPAN_HEADER_SIZE) \
  X(SPAN_RECORD_BITS_OFFSET) \
  X(SPAN_RECORD_FIRST_OFFSET) \
  X(SPAN_RECORD_DIVISOR_OFFSET) \
  X(SPAN_RECORD_LIMIT_OFFSET) \
  X(SPAN_RECORD_GRANULE_SHIFT) \
  X(SPAN_RECORD_SHIFT) \
  X(SPAN_RECORD_TABLE_BITS) \
  X(PAGE_MAP_HOT_HEADER_BASE_OFFSET) \
  X(PAGE_MAP_HOT_L2_OFFSET) \
  X(PAGE_MAP_HOT_RECORDS_OFFSET) \
  X(SMALL_MAX_USER) \
  X(MEDIUM_HEADER_SIZE) \
  X(MEDIUM_FLAG_SMALL_SPAN) \
  X(MEDIUM_FLAG_SENTINEL) \
  X(MEDIUM_ARENA_SHIFT) \
  X(MEDIUM_ARENA_MASK) \
  X(MEDIUM_HEADER_VARIABLE_BITS) \
  X(MEDIUM_SIZE_BELOW) \
  X(MEDIUM_SEAL_BELOW) \
  X(MEDIUM_SEAL_MULTIPLIER_NEGATED) \
  X(LARGE_HEADER_SIZE) \
  X(PAGE_MAP_REGION_SHIFT) \
  X(PAGE_MAP_L2_BITS) \
  X(PAGE_MAP_ADDRESS_BITS_64) \
  X(PAGE_MAP_ADDRESS_BITS_32) \
  X(REGION_NOT_OURS) \
  X(REGION_MEDIUM_SPAN) \
  X(REGION_LARGE_START) \
  X(REGION_LARGE_REST) \
  X(REALLOC_SMALL_DOWNSIZE_SHIFT) \
  X(REALLOC_SMALL_DOWNSIZE_ADDER) \
  X(PASCAL_SLOT_COUNT)
// clang-format on

#define ASM_LAYOUT_ONE(name) +1
/* How many values the list holds. */
enum { ASM_LAYOUT_COUNT = 0 ASM_LAYOUT_VALUES(ASM_LAYOUT_ONE) };

#endif
