/* SPDX-License-Identifier: MIT */
/* Span records: what the validation needs of a small span, kept out of band, beside the page map.
 * One 16-byte record per 16 KB granule of the address space, found from a block's address by the
 * page map's own indices (the second-level table of the address's 16 GB picks the record table,
 * 64-bit builds; 32-bit builds have one table): the program cannot reach a record through any
 * block it owns, so a record needs no key, and a block's span, class, slot and liveness come from
 * it with no step through the block's header word.
 *
 * A small span's medium block starts at a multiple of 16 KB and is a multiple of 16 KB long with
 * its header (medium_alloc_small_span), so each granule belongs to at most one span, and each of
 * the span's granules holds a copy of its record. A granule no span holds has header_bits 0, which
 * no small block's header word matches.
 *
 * A record is read only where the page map says a medium span is (REGION_MEDIUM_START or
 * REGION_MEDIUM_SPAN): the record tables are address space reserved with their second-level
 * table, and the records of a medium span's range are committed before the page map marks it
 * (page_map_set), never given back. On Windows that is 2 KB of records per 2 MB span. */
#ifndef FASTMM_SPAN_RECORD_H
#define FASTMM_SPAN_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "block_header.h"
#include "compiler.h"
#include "linkage.h"
#include "page_map.h"

#define SPAN_RECORD_GRANULE_SHIFT 14u
#define SPAN_RECORD_GRANULE ((uintptr_t)1 << SPAN_RECORD_GRANULE_SHIFT)
#define SPAN_RECORD_SHIFT 4u /* log2 sizeof(span_record) */
/* Records per record table: one per granule of a second-level table's address space. */
#define SPAN_RECORD_TABLE_BITS                                                                     \
  (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS - SPAN_RECORD_GRANULE_SHIFT)

typedef struct span_record {
  uint32_t header_bits;  /* kind, class and slot of the span's live blocks (SMALL_HEADER_TAG_MASK
                            of their header words); 0: no small span here */
  uint32_t first_block;  /* the low 32 bits of the span's first user pointer */
  uint32_t slot_divisor; /* small_slot_divisor(slot), small.h */
  uint32_t carved_limit; /* small_slot_step(...) times the slots carved so far; 0 with no span */
} span_record;
FMM_STATIC_ASSERT(sizeof(span_record) == (size_t)1 << SPAN_RECORD_SHIFT, "a record is 16 bytes");

/* The record tables, one per second-level table of the page map (NULL where it has none). */
extern FMM_HIDDEN span_record *span_record_tables[(size_t)1 << PAGE_MAP_L1_BITS];

/* The record of the granule of a, an address in a medium span (the page map said so). */
static inline const span_record *span_record_of(uintptr_t a) {
#if PAGE_MAP_L1_BITS > 0
  return span_record_tables[a >> (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)] +
         ((a >> SPAN_RECORD_GRANULE_SHIFT) & (((uintptr_t)1 << SPAN_RECORD_TABLE_BITS) - 1u));
#else
  return span_record_tables[0] + (a >> SPAN_RECORD_GRANULE_SHIFT);
#endif
}

/* p's distance from the first block of the span record r names (wrapped to 32 bits). */
static inline uint32_t span_record_offset(const span_record *r, const void *p) {
  return (uint32_t)(uintptr_t)p - r->first_block;
}

/* Does record r admit the block `offset` bytes after its span's first block (span_record_offset),
 * with header word h, as a live small block? The bits of h that every live block of a span shares
 * (kind exactly SMALL, class, slot) are the record's, and the offset is a whole number of slots
 * below the span's carved end (small_slot_carved, small.h: one multiply and one compare). The
 * offset is an argument, not an answer through a pointer: a local whose address is taken gets a
 * frame of ASan's fake stack on every call (detect_stack_use_after_return), whose pages
 * test_idle_release counts. */
static inline int span_record_admits(const span_record *r, uint32_t offset, uint32_t h) {
  return (h & SMALL_HEADER_TAG_MASK) == r->header_bits &&
         offset * r->slot_divisor < r->carved_limit;
}

/* span_record_admits with both tests made before the one branch on their answer (the record and
 * the header word are readable either way). MemSize's fast path uses it: its success path then
 * follows the test with no jump taken, which the compiler does not lay out for the short-circuit
 * form (natively the program's MemSize ran 25% faster). FreeMem and ReallocMem keep that form,
 * with which their medium blocks' paths take fewer jumps (a C ReallocMem in place of a medium
 * block ran 18% slower with this one). */
static inline int span_record_admits_unbranched(const span_record *r, uint32_t offset, uint32_t h) {
  return ((h & SMALL_HEADER_TAG_MASK) == r->header_bits) &
         (offset * r->slot_divisor < r->carved_limit);
}

/* The page map made the second-level table l1_index (its lock held): reserves its records.
 * Returns 0 when the address space could not be had. */
int span_record_table_make(uintptr_t l1_index);
/* The page map is about to mark [base, base + size) as a medium span (its lock held, the tables
 * made): commits its records. Returns 0 when the memory could not be committed. */
int span_record_commit(const void *base, size_t size);

/* The record of the granule at `granule` (an address in it), for its writer (small.c, under the
 * span's manager's lock). One granule at a time: a span may straddle a second-level table's
 * boundary (16 GB in a 64-bit build), and the records on either side are in different tables. */
span_record *span_record_at(const void *granule);

#endif
