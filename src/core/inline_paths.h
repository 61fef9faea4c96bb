/* SPDX-License-Identifier: MIT */
/* The inline parts of the fast paths that belong to the core: popping and pushing a thread
 * cache's bin, the page map's fast copy as the fast paths look a pointer up in it, the validation
 * contract's fast half, FastMM's in-place rules, the usable size (all fast_*), and the core's
 * own GetMem and FreeMem (heap_get, heap_free), which the modes allocate and free their blocks
 * with. The fast paths of the exports (entry/alloc_fast.h)
 * are built of these; the tables they read (size_class_fast_lookup, the page map's fast copy)
 * are closed while a mode is on, so these parts send every call to a slow path then, and the
 * core's own read the real class lookup (heap_class_lookup). Nothing here calls above the
 * core. */
#ifndef FASTMM_INLINE_PATHS_H
#define FASTMM_INLINE_PATHS_H

#include "aligned.h"
#include "block_header.h"
#include "compiler.h"
#include "heap.h"
#include "large.h"
#include "medium.h"
#include "page_map.h"
#include "prim/prim.h"
#include "size_class.h"
#include "small.h"
#include "span_record.h"
#include "thread_cache.h"

/* FASTMM_NO_MODES builds a DLL whose fast paths read the real tables (modes then do not reach
 * them): only for the benchmark that measures what the fast copies cost the normal paths. On
 * 64-bit builds its page map lookup is the fast copy's too (page_map.h: the real first level
 * has no such form), so there the two builds differ only in GetMem's table. */
#if defined(FASTMM_NO_MODES)
#define FMM_FAST_CLASS_LOOKUP size_class_lookup
#define FMM_FAST_L2 page_map_l2_static
#else
#define FMM_FAST_CLASS_LOOKUP size_class_fast_lookup
#define FMM_FAST_L2 page_map_fast_l2
#endif

/* The bin of a small block's class, straight from its header word: bins are 32 bytes and the
 * class field starts at bit 5, so the field in place is the bin's offset. */
FMM_STATIC_ASSERT(SMALL_CLASS_SHIFT == 5, "the class field in place is the bin's offset");
FMM_INLINE cache_bin *thread_cache_bin_of(thread_cache *tc, uint32_t h) {
  return (cache_bin *)((char *)tc->bins + (h & ((uint32_t)SMALL_CLASS_MASK << SMALL_CLASS_SHIFT)));
}

/* A block from the thread's cache, or NULL: the bin `table` names for size (size <=
 * SMALL_MAX_USER). */
FMM_INLINE void *cache_pop(size_t size, const uint8_t *table) {
  thread_cache *tc = (thread_cache *)prim_tls_get_fast();
  if (FMM_LIKELY(PRIM_TLS_FAST_NEVER_NULL || tc != NULL)) {
    cache_bin *bin = &tc->bins[table[(size + BLOCK_HEADER_SIZE - 1) >> 4]];
    void *p = bin->head;
    if (FMM_LIKELY(p != NULL)) {
      bin->head = *(void **)p;
      bin->count--;
      block_set_header(p, block_header(p) & ~BLOCK_FLAG_FREE);
      return p;
    }
  }
  return NULL;
}

/* GetMem's fast path with the slow path `slow` (a constant where it is inlined: the entry's
 * entry_get_slow, or the same routine as the core is lent it for a ReallocMem's move, heap_above):
 * the block the gated class table names, else `slow`. */
FMM_INLINE void *fast_get_then(size_t size, const void *caller,
                               void *(FMM_REGCALL *slow)(size_t size, const void *caller)) {
  if (FMM_LIKELY(size <= SMALL_MAX_USER)) {
    void *p = cache_pop(size, FMM_FAST_CLASS_LOOKUP);
    if (FMM_LIKELY(p != NULL))
      return p;
  }
  return slow(size, caller);
}

/* GetMem with no mode (the modes allocate the blocks they build on here): the fast path with the
 * core's slow path behind it. */
FMM_INLINE void *heap_get(size_t size) {
  if (FMM_LIKELY(size <= SMALL_MAX_USER)) {
    /* The minimum alignment's classes (modes allocate here: their blocks obey it too). */
    void *p = cache_pop(size, (const uint8_t *)fmm_load_ptr_acquire(&heap_class_lookup));
    if (FMM_LIKELY(p != NULL))
      return p;
  }
  return heap_get_slow(size);
}

/* The span record of the granule at offset `off` into the record table that starts at `table`
 * (uintptr_t arithmetic: a table may not exist yet where the page map names no medium span, and
 * a record is read only where it does). 32-bit builds have one table, read where the record is
 * (`off` is the address itself there, and `table` unused). FAST_RECORD_TABLE: the `table` of
 * address a, with a itself as `off`. */
#if PAGE_MAP_L1_BITS > 0
#define FAST_RECORD_MASK ((((uintptr_t)1 << SPAN_RECORD_TABLE_BITS) - 1u) << SPAN_RECORD_SHIFT)
#define FAST_RECORD_AT(table, off)                                                                 \
  ((const span_record *)((uintptr_t)(table) +                                                      \
                         (((off) >> (SPAN_RECORD_GRANULE_SHIFT - SPAN_RECORD_SHIFT)) &             \
                          FAST_RECORD_MASK)))
#define FAST_RECORD_TABLE(a) ((uintptr_t)span_record_tables[(a) >> PAGE_MAP_HOT_BITS])
#else
#define FAST_RECORD_AT(table, off) ((void)(table), span_record_of(off))
#define FAST_RECORD_TABLE(a) ((void)(a), (uintptr_t)0)
#endif

/* The one lookup of FreeMem's, ReallocMem's and MemSize's fast paths: sets the caller's `region`
 * to what fast_header_region(p) answers, and `table` and `off` to where the span record of p's
 * granule is (FAST_RECORD_AT; span_record.h), which is read only where region is
 * REGION_MEDIUM_SPAN and a small block is tested. p - 16 lies in the region and granule of the
 * header word (p is 16-aligned) and NULL wraps past the map, so one test refuses misaligned
 * pointers, NULL and addresses beyond the map together; the hot slot (page_map.h) is tried first,
 * whose base is 16 GB aligned, so one test asks "in the slot and aligned" of p less the slot's
 * header_base (its base plus 16: p - 16's offset in one subtraction). All three are set in the
 * same branch: in the hot slot the offset is the one the slot's test made, so the record costs
 * three instructions where it is read and no second test of the slot (a medium block's path pays
 * one load, the table's address); elsewhere the slot's record table. A macro that sets scalars, not
 * a function that answers with a struct or through pointers: either became a stack object in the
 * unoptimized sanitizer builds, whose fake stack (detect_stack_use_after_return) then took pages on
 * every FreeMem (test_idle_release). */
#if PAGE_MAP_L1_BITS > 0
#define FAST_HEADER_LOOKUP(p, region, table, off)                                                  \
  do {                                                                                             \
    uintptr_t d_ = (uintptr_t)(p)-page_map_fast_hot.header_base;                                   \
    if (FMM_LIKELY(                                                                                \
            !(d_ & (~(((uintptr_t)1 << PAGE_MAP_HOT_BITS) - 1u) | (BLOCK_ALIGNMENT - 1u))))) {     \
      (region) = page_map_fast_hot.l2[d_ >> PAGE_MAP_REGION_SHIFT];                                \
      (table) = (uintptr_t)page_map_fast_hot.records;                                              \
      (off) = d_;                                                                                  \
    } else if (((uintptr_t)(p)-BLOCK_ALIGNMENT) &                                                  \
               (~(((uintptr_t)1 << PAGE_MAP_ADDRESS_BITS) - 1u) | (BLOCK_ALIGNMENT - 1u))) {       \
      (region) = REGION_NOT_OURS;                                                                  \
      (table) = 0;                                                                                 \
      (off) = 0;                                                                                   \
    } else {                                                                                       \
      uintptr_t a_ = (uintptr_t)(p)-BLOCK_ALIGNMENT;                                               \
      (region) = page_map_fast_lookup(a_);                                                         \
      (table) = FAST_RECORD_TABLE(a_);                                                             \
      (off) = a_;                                                                                  \
    }                                                                                              \
  } while (0)
#else
#define FAST_HEADER_LOOKUP(p, region, table, off)                                                  \
  do {                                                                                             \
    uintptr_t a_ = (uintptr_t)(p)-BLOCK_ALIGNMENT;                                                 \
    if (FMM_UNLIKELY(a_ & (BLOCK_ALIGNMENT - 1u))) {                                               \
      (region) = REGION_NOT_OURS;                                                                  \
      (table) = 0;                                                                                 \
      (off) = 0;                                                                                   \
    } else {                                                                                       \
      (region) = FMM_FAST_L2[a_ >> PAGE_MAP_REGION_SHIFT];                                         \
      (table) = 0;                                                                                 \
      (off) = a_;                                                                                  \
    }                                                                                              \
  } while (0)
#endif

/* The region p's header word lies in as the fast copy of the page map sees it:
 * REGION_NOT_OURS for NULL, misaligned and foreign pointers, and for every pointer while a mode
 * is on. FAST_HEADER_LOOKUP's answer alone (the compiler drops the record's part). */
FMM_INLINE unsigned fast_header_region(const void *p) {
  unsigned region;
  uintptr_t table, off;
  FAST_HEADER_LOOKUP(p, region, table, off);
  (void)table;
  (void)off;
  return region;
}

#if defined(FASTMM_UNCHECKED)
/* FASTMM_UNCHECKED (presets *-unchecked, benchmark only, never shipped) is the yardstick that
 * prices the validation contract: its fast paths trust the header word as FastMM does (kind and
 * FREE bit only), with no page map lookup, no span record and no slot test and no boundary tags.
 * The slow paths are the shipped ones, and get what the shipped fast paths hand them: a pointer
 * that is no small or medium block is looked up, so that the region a slow path is given (a large
 * block's ReallocMem goes straight to its policy with it) is the page map's, as in the shipped
 * build. Modes do not reach its fast paths and bad pointers are not refused there: it runs the
 * benchmark's workloads and nothing else. */
#define FAST_LOOKUP(p, region, table, off)                                                         \
  do {                                                                                             \
    if ((p) != NULL && (block_header(p) & (BLOCK_FLAG_SMALL | BLOCK_FLAG_MEDIUM)) != 0) {          \
      (region) = REGION_MEDIUM_SPAN;                                                               \
      (table) = 0;                                                                                 \
      (off) = 0;                                                                                   \
    } else {                                                                                       \
      FAST_HEADER_LOOKUP(p, region, table, off);                                                   \
    }                                                                                              \
  } while (0)
FMM_INLINE int fast_small_live(const void *p, uint32_t h, uintptr_t table, uintptr_t off) {
  (void)p;
  (void)table;
  (void)off;
  return (h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL; /* the kind, FREE and outer bits */
}
FMM_INLINE int fast_small_live_unbranched(const void *p, uint32_t h, uintptr_t table,
                                          uintptr_t off) {
  return fast_small_live(p, h, table, off);
}
FMM_INLINE int fast_medium_live(const void *p, uint32_t h) {
  (void)p;
  return medium_header_word_live(h);
}
#else
/* The fast paths' lookup (above): REGION_MEDIUM_SPAN where p's header word is in a medium span's
 * blocks (a later region of the span; its first region holds its header alone). */
#define FAST_LOOKUP(p, region, table, off) FAST_HEADER_LOOKUP(p, region, table, off)

#if defined(FASTMM_CONTRACT_FLOOR)
/* FASTMM_CONTRACT_FLOOR (benchmark only, never shipped, built by bench/analysis/contract-floor.sh
 * with FASTMM_PURE_C) keeps the one step every design that refuses a foreign pointer must make
 * before it may read a header word: the page map lookup above. The rest is FASTMM_UNCHECKED's trust
 * in the word. Against the unchecked yardstick it prices that lookup alone, the floor below which
 * no validation can go; against the shipped build, the steps after it. */
FMM_INLINE int fast_small_live(const void *p, uint32_t h, uintptr_t table, uintptr_t off) {
  (void)p;
  (void)table;
  (void)off;
  return (h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL;
}
FMM_INLINE int fast_small_live_unbranched(const void *p, uint32_t h, uintptr_t table,
                                          uintptr_t off) {
  return fast_small_live(p, h, table, off);
}
FMM_INLINE int fast_medium_live(const void *p, uint32_t h) {
  (void)p;
  return medium_header_word_live(h);
}
#else

/* The validation contract's fast half (docs/architecture-reference.md), the test every fast path of
 * FreeMem, ReallocMem and the usable size makes before it trusts a header: after the page map said
 * p's header word h is in a medium span, the record of its granule (FAST_LOOKUP) admits p as a
 * live small block (span_record_admits: the record's bits, the slot test against its first block
 * and carved end), or medium_block_sealed (medium.h) finds a live medium block. False for anything
 * else (a large or debug block, free, interior, forged, foreign, or any pointer while a mode is
 * on), for the slow path to sort out. */
FMM_INLINE int fast_small_live(const void *p, uint32_t h, uintptr_t table, uintptr_t off) {
  const span_record *r = FAST_RECORD_AT(table, off);
  return span_record_admits(r, span_record_offset(r, p), h);
}
/* The same test with no branch between its parts (span_record_admits_unbranched): MemSize's. */
FMM_INLINE int fast_small_live_unbranched(const void *p, uint32_t h, uintptr_t table,
                                          uintptr_t off) {
  const span_record *r = FAST_RECORD_AT(table, off);
  return span_record_admits_unbranched(r, span_record_offset(r, p), h);
}
FMM_INLINE int fast_medium_live(const void *p, uint32_t h) {
  return medium_block_sealed(p, h);
}
#endif
#endif

/* A live small block p with header word h (validated by the caller) onto its bin; when that has
 * no room, `slow` (as in fast_free_in_span_then, below) is told the block is valid. */
FMM_INLINE int fast_free_live_small_then(void *p, uint32_t h,
                                         int(FMM_REGCALL *slow)(void *p, uint32_t h,
                                                                int live_small)) {
  thread_cache *tc = (thread_cache *)prim_tls_get_fast();
  if (FMM_LIKELY(PRIM_TLS_FAST_NEVER_NULL || tc != NULL)) {
    cache_bin *bin = thread_cache_bin_of(tc, h);
    if (FMM_LIKELY(bin->count < bin->limit)) {
      block_set_header(p, h | BLOCK_FLAG_FREE);
      *(void **)p = bin->head;
      bin->head = p;
      bin->count++;
      return FASTMM_OK;
    }
  }
  return slow(p, h, 1);
}

/* The part of FreeMem after the page map said p's header word is in a medium span (table, off:
 * where its granule's span record is, FAST_LOOKUP): a live small block goes onto its bin; when that
 * has no room the slow path is told the block is valid (a thread that frees much more of a class
 * than anyone allocates sends every free of it there, thread_cache.c, and it is validated once);
 * everything else takes the slow path, `slow` (a constant: the entry's FreeMem, which sends a debug
 * block on, or the normal path's, heap_free_in_span). */
FMM_INLINE int fast_free_in_span_then(void *p, uintptr_t table, uintptr_t off,
                                      int(FMM_REGCALL *slow)(void *p, uint32_t h, int live_small)) {
  uint32_t h = block_header(p);
  int live_small = fast_small_live(p, h, table, off);
  if (FMM_LIKELY(live_small))
    return fast_free_live_small_then(p, h, slow);
  return slow(p, h, 0);
}

/* FreeMem's fast path with its slow paths: `outside` for a pointer the page map's fast copy does
 * not put in a medium span (every pointer while a mode is on), `in_span` for a block the bin
 * cannot take (constants where it is inlined, as for fast_get_then). */
FMM_INLINE int fast_free_then(void *p, const void *caller,
                              int(FMM_REGCALL *outside)(void *p, const void *caller),
                              int(FMM_REGCALL *in_span)(void *p, uint32_t h, int live_small)) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  if (FMM_UNLIKELY(region != REGION_MEDIUM_SPAN))
    return outside(p, caller);
  return fast_free_in_span_then(p, table, off, in_span);
}

/* FreeMem with no mode, with the slow paths a block goes on to: `block` for a block by its header
 * word (heap_free_block, or the entry's, which sends a debug block on), `in_span` as in
 * fast_free_in_span_then (constants where it is inlined, so that each is a tail call). */
FMM_INLINE int heap_free_then(void *p, int(FMM_REGCALL *block)(void *p, uint32_t h),
                              int(FMM_REGCALL *in_span)(void *p, uint32_t h, int live_small)) {
  unsigned region = heap_header_region(p);
  if (FMM_UNLIKELY(!region_is_medium(region))) {
    if (region == REGION_NOT_OURS)
      return p == NULL ? FASTMM_OK : FASTMM_ERROR_INVALID_POINTER;
    /* Where a large block would start, its header is read only under the large lock, where a
     * racing second free finds the block gone instead of reading memory the first one
     * unmapped. Elsewhere in a large block's first region p may be an aligned large block
     * (decided under the lock too) or a debug block inside one; further on only the latter. */
    if (((uintptr_t)p & (LARGE_GRANULARITY - 1)) == LARGE_HEADER_SIZE)
      return large_free(p);
    if (region == REGION_LARGE_START) {
      int result = large_free_unaligned_start(p);
      if (result != LARGE_NOT_A_BLOCK)
        return result;
    }
    return block(p, block_header(p));
  }
  uintptr_t a = (uintptr_t)p - BLOCK_ALIGNMENT;
  return fast_free_in_span_then(p, FAST_RECORD_TABLE(a), a, in_span);
}

/* FreeMem with no mode (the modes free the blocks they build on here): HEAP_NOT_MINE for a
 * debug block. */
FMM_INLINE int heap_free(void *p) {
  return heap_free_then(p, heap_free_block, heap_free_in_span);
}

/* FastMM's small policy: a block stays where it is when the new size is not larger than its
 * usable size and new*4 + 64 >= usable. The size is compared unsigned, so a size that was
 * negative never stays. */
FMM_INLINE int small_stays_in_place(size_t size, size_t usable) {
  return size <= usable && size != 0 &&
         (size << REALLOC_SMALL_DOWNSIZE_SHIFT) + REALLOC_SMALL_DOWNSIZE_ADDER >= usable;
}

/* FastMM's medium policy, the sizes that leave a block where it is as it is: from half its usable
 * size to all of it. Every smaller size gets a smaller block (policy.h). */
FMM_INLINE int medium_size_stays(size_t size, size_t usable) {
  return size <= usable && size >= usable / 2u;
}

/* A medium block that stays where it is: p's header word h (in a medium-span region) is a live
 * medium block's (medium_block_sealed: its header word and seal) and the new size is one
 * medium_size_stays keeps. Most resizes of a string or an array of 2.5-512 KB end here. */
FMM_INLINE int medium_stays_in_place(const void *p, uint32_t h, size_t size) {
  if (!fast_medium_live(p, h))
    return 0;
  return medium_size_stays(size, medium_usable(p));
}

/* ReallocMem's in-place test, shared by fastmm_reallocmem and the Pascal records' ReallocMem
 * (src/api/), given FAST_LOOKUP's answers for p (fast_realloc_stays, below, makes the lookup; the
 * C export makes it itself and hands the region on to its slow path): p is a live small block (the
 * validation contract, fast_small_live's test) and size keeps it where it is, or p is a live medium
 * block that stays (medium_stays_in_place). The small size test comes first, on the header word as
 * it reads: a small resize that moves goes to the slow path, which validates the pointer its own
 * way, without paying for it twice. A medium header word fails that size test at once (its slot
 * field reads 0: a usable size just below 2^32, which no size that fits a medium block meets), so a
 * medium block skips the small validation. False for every pointer while a mode is on (a stale one
 * may point into a debug block's outer block: the slow path checks, and scans first when asked to),
 * and the slow path applies the same rules. The NASM entries (src/win32/, src/win64/) make the same
 * two tests in the same order. */
/* fast_realloc_stays_region with the form of its small test chosen (a constant where it is
 * inlined): `unbranched` for fast_small_live_unbranched's. */
FMM_INLINE int fast_realloc_stays_in(const void *p, size_t size, unsigned region, uintptr_t table,
                                     uintptr_t off, int unbranched) {
  if (FMM_LIKELY(region == REGION_MEDIUM_SPAN)) {
    uint32_t h = block_header(p);
    if (FMM_LIKELY(small_stays_in_place(size, small_header_usable(h))))
      return FMM_LIKELY(unbranched ? fast_small_live_unbranched(p, h, table, off)
                                   : fast_small_live(p, h, table, off));
    return medium_stays_in_place(p, h, size);
  }
  return 0;
}
FMM_INLINE int fast_realloc_stays_region(const void *p, size_t size, unsigned region,
                                         uintptr_t table, uintptr_t off) {
  return fast_realloc_stays_in(p, size, region, table, off, 0);
}

/* The same with its own lookup (the Pascal records, whose slow paths take no region). On Win64
 * its small test is made with no branch between its parts (fast_small_live_unbranched): the
 * program's in-place ReallocMem then takes no jump and ran 9% faster; natively the same choice
 * left that workload level and made the program's growing ReallocMem 4% slower (its medium path
 * took one more jump), so there it keeps the short-circuit test. */
#if defined(_WIN64)
#define FAST_PASCAL_REALLOC_UNBRANCHED 1
#else
#define FAST_PASCAL_REALLOC_UNBRANCHED 0
#endif
FMM_INLINE int fast_realloc_stays(const void *p, size_t size) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  return fast_realloc_stays_in(p, size, region, table, off, FAST_PASCAL_REALLOC_UNBRANCHED);
}

/* MemSize's fast path (fastmm_usable_size, the Pascal records' MemSize): the usable size of a
 * live small block (the validation contract), or of a live medium block (its header word and
 * seal: Free Pascal asks for the size of a growing string on every character, and a string past
 * 1,376 bytes is a medium block), in *usable. The header word's SMALL bit chooses which checks
 * run, so a medium block does not fail the small validation first. False sends the caller to its
 * slow path, which answers for every other pointer (and for every pointer while a mode is on).
 * The answer is a flag beside the size, not a size of 0, so that where this is inlined the
 * compiler returns the size at once, with no test of it. */
FMM_INLINE int fast_usable_size(const void *p, size_t *usable) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  if (FMM_LIKELY(region == REGION_MEDIUM_SPAN)) {
    uint32_t h = block_header(p);
    if (FMM_LIKELY(h & BLOCK_FLAG_SMALL)) {
      if (FMM_LIKELY(fast_small_live_unbranched(p, h, table, off))) {
        *usable = small_header_usable(h);
        return 1;
      }
    } else if (fast_medium_live(p, h)) {
      *usable = medium_usable(p);
      return 1;
    }
  }
  return 0;
}

#endif
