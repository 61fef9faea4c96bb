/* SPDX-License-Identifier: MIT */
/* Which 64 KB regions of the address space hold our medium spans and large blocks. Every
 * mapping the manager makes for them is 64 KB aligned and a multiple of 64 KB (VirtualAlloc's
 * granularity; prim_posix.c aligns mmap to match), so one byte per region says exactly whose
 * it is. A pointer is looked up before its header is trusted, so a foreign, freed or interior
 * pointer is refused without reading memory that may not be mapped.
 *
 * Two levels on 64-bit builds: the top of the address picks a second-level table of 256 K bytes
 * (one per 16 GB), made on first use and never freed; they cover 48 bits of address space.
 * 32-bit builds have one static table of 64 K bytes. */
#ifndef FASTMM_PAGE_MAP_H
#define FASTMM_PAGE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "linkage.h"

#define PAGE_MAP_REGION_SHIFT 16u
#define PAGE_MAP_ADDRESS_BITS_64 48u /* user space of x64 Windows and Linux */
#define PAGE_MAP_ADDRESS_BITS_32 32u
#if UINTPTR_MAX > 0xFFFFFFFFu
#define PAGE_MAP_ADDRESS_BITS PAGE_MAP_ADDRESS_BITS_64
/* 2^14 first-level entries: the fast paths' copy of the first level has every entry filled
 * (below), 128 KB written at start-up, so it is kept small. */
#define PAGE_MAP_L2_BITS 18u
#else
#define PAGE_MAP_ADDRESS_BITS PAGE_MAP_ADDRESS_BITS_32
#define PAGE_MAP_L2_BITS 16u
#endif
#define PAGE_MAP_L1_BITS (PAGE_MAP_ADDRESS_BITS - PAGE_MAP_REGION_SHIFT - PAGE_MAP_L2_BITS)

/* Do addresses a and b lie in the same 64 KB region of the map (so one lookup answers for both)? */
static inline int page_map_same_region(uintptr_t a, uintptr_t b) {
  return ((a ^ b) >> PAGE_MAP_REGION_SHIFT) == 0;
}

#define REGION_NOT_OURS 0u
/* A later region of a medium span, where small spans live: the region before it is part of the
 * same span, so memory up to 64 KB before an address here can be read (small_block_span, whose
 * fast paths then need no test of where a span header lies). */
#define REGION_MEDIUM_SPAN 1u
#define REGION_LARGE_START 2u  /* the first region of a large block */
#define REGION_LARGE_REST 3u   /* a later region of a large block */
#define REGION_MEDIUM_START 4u /* the first region of a medium span */

/* Is region kind r part of a medium span (either kind above)? */
static inline int region_is_medium(unsigned r) {
  return r == REGION_MEDIUM_SPAN || r == REGION_MEDIUM_START;
}

extern FMM_HIDDEN uint8_t *page_map_l1[(size_t)1 << PAGE_MAP_L1_BITS];
#if PAGE_MAP_L1_BITS == 0
/* 32-bit builds: the one second-level table is static, so the Win32 assembly can index it
 * without a NULL test. */
extern FMM_HIDDEN uint8_t page_map_l2_static[(size_t)1 << PAGE_MAP_L2_BITS];
#endif

static inline unsigned page_map_get(const void *p) {
  uintptr_t region = (uintptr_t)p >> PAGE_MAP_REGION_SHIFT;
#if PAGE_MAP_ADDRESS_BITS < 64 && UINTPTR_MAX > 0xFFFFFFFFu
  if (region >> (PAGE_MAP_L1_BITS + PAGE_MAP_L2_BITS))
    return REGION_NOT_OURS;
#endif
  const uint8_t *l2 = page_map_l1[region >> PAGE_MAP_L2_BITS];
  return l2 ? l2[region & (((uintptr_t)1 << PAGE_MAP_L2_BITS) - 1u)] : REGION_NOT_OURS;
}

/* Marks [base, base + size) (64 KB aligned) as `kind`: a large block's first region gets
 * REGION_LARGE_START and the rest REGION_LARGE_REST when kind is REGION_LARGE_START, and a
 * medium span's first region REGION_MEDIUM_START and the rest REGION_MEDIUM_SPAN when kind is
 * REGION_MEDIUM_START. Returns 0
 * when a second-level table could not be mapped (nothing is marked then). */
int page_map_set(void *base, size_t size, unsigned kind);
/* Makes the second-level tables [base, base + size) needs, marking nothing: a page_map_set of
 * that range afterwards cannot fail and calls no OS function (so a caller may hold a lock that
 * is never held across one). Returns 0 when a table could not be mapped. */
int page_map_make_tables(const void *base, size_t size);

/* The lock every writer of the map holds: page_map_set, and page_map_fast_open while it refills
 * or empties the fast copy. */
void page_map_lock_writers(void);
void page_map_unlock_writers(void);

/* ---- the fast copy ---------------------------------------------------------------------------
 * The page map as the fast paths of FreeMem, ReallocMem and the usable size see it: a copy while
 * it is open, empty while it is closed. The mode gate (modes/gate.c) closes it while a mode is on,
 * so every pointer takes the path of a foreign one, the slow path, with no test of a mode on the
 * fast paths (a test of the mode word there cost small churn up to 9%). 32-bit builds copy their
 * one table. 64-bit builds copy the first level (the second-level tables are shared) in a form
 * that costs the lookup no test and no mask: entry i is the address of its second-level table
 * less i << PAGE_MAP_L2_BITS, so the byte of address a is at
 * page_map_fast_l1[a >> (REGION_SHIFT + L2_BITS)] + (a >> REGION_SHIFT), and an entry with no
 * table (or any entry while the copy is closed) names an all-zero table the same way
 * (page_map_fast_lookup). Every entry is filled when the library loads (page_map_fast_start),
 * and again by page_map_set's first call if that comes first. The copy is read with plain loads
 * while page_map_fast_open rewrites it: every entry a reader can see is an old or a new one,
 * each valid (tests/tsan.supp). */
/* The hot slot as the fast paths of 64-bit builds read it (below), in one cache line: its base
 * (16 GB aligned), its second-level table, and its span records (span_record.h: read only where
 * the table says a medium span is, so NULL until the slot has one). */
struct span_record;
typedef struct page_map_hot {
  uintptr_t base;
  const uint8_t *l2;
  const struct span_record *records;
  uintptr_t header_base; /* base + BLOCK_ALIGNMENT: a user pointer less this is the offset of the
                            16 bytes before it in the slot, in one subtraction (inline_paths.h) */
} FMM_ALIGNED(32) page_map_hot;
#if PAGE_MAP_L1_BITS == 0
extern FMM_HIDDEN uint8_t page_map_fast_l2[(size_t)1 << PAGE_MAP_L2_BITS];
#else
extern FMM_HIDDEN uintptr_t page_map_fast_l1[(size_t)1 << PAGE_MAP_L1_BITS];
/* The region kind of address a (below 2^PAGE_MAP_ADDRESS_BITS) in the fast copy. */
static inline unsigned page_map_fast_lookup(uintptr_t a) {
  return *(const uint8_t *)(page_map_fast_l1[a >> (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)] +
                            (a >> PAGE_MAP_REGION_SHIFT));
}
/* The hot slot: the first-level entry of the first region the map marked ours, whose 16 GB hold
 * most of a heap's spans and large blocks (the OS maps them near one another). The fast paths look
 * an address there up in one load, its second-level table's byte, with no first-level load before
 * it: the slot's start and its table (page_map_fast_hot, below) are read
 * beside the address's arithmetic, not after it (ReallocMem in place 21-22% faster natively and on
 * Win64, docs/experiments). Until a region is marked the base is PAGE_MAP_HOT_NONE, far from every
 * user address, so no address is in the slot; while the copy is closed the table is the all-zero
 * one. Addresses elsewhere take the two-level lookup above. */
#define PAGE_MAP_HOT_BITS (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)
#define PAGE_MAP_HOT_NONE ((uintptr_t)1 << 63)
extern FMM_HIDDEN page_map_hot page_map_fast_hot;
#endif
/* Fills the fast copy's first level (64-bit builds) before any fast path reads it: from the
 * library's load hook and from page_map_set. Idempotent; caller single-threaded or holding the
 * page map's lock. */
void page_map_fast_start(void);
/* Opens (a copy of the map, kept current by page_map_set) or closes (no region) the fast copy. */
void page_map_fast_open(int open);

/* The page map's writers' lock, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock page_map_lock;

#endif
