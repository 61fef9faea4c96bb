/* SPDX-License-Identifier: MIT */
/* ReallocMem beyond the in-place small case: FastMM's policy for each block kind (the numbers
 * and their reasons are in policy.h). Every path that fails returns NULL and leaves the old
 * block as it was. Nothing here reads the mode word: the slow path above (entry/dispatch.c) sends
 * the call here with no mode on, and while one is on the modes' ReallocMem checks the pointer
 * its way and comes back to heap_realloc_block for the policy. */
#include "realloc.h"

#include "aligned.h"
#include "copy.h"
#include "inline_paths.h"
#include "medium.h"

/* Allocates `alloc_size`, copies `copy_size` bytes, frees the old block: through GetMem and
 * FreeMem, so a block moved while a mode is on is made and freed the mode's way. A block that
 * keeps an alignment (fastmm_getmem_aligned's) moves to a block aligned as much. */
/* The slow paths of a move's GetMem and FreeMem: the ones the core is lent (heap_above), read
 * only when a fast path fails. */
static FMM_NOINLINE void *FMM_REGCALL move_get_slow(size_t size, const void *caller) {
  return heap_above_routines->get_slow_resizing(size, caller);
}

static FMM_NOINLINE int FMM_REGCALL move_free_slow(void *p, const void *caller) {
  return heap_above_routines->free_slow(p, caller);
}

FMM_INLINE void *move_block_inline(void *p, size_t alloc_size, size_t copy_size, const void *caller,
                                   uint32_t keep_alignment, uint32_t live_word) {
  void *q = keep_alignment > ALIGNMENT_MIN
                ? heap_above_routines->get_aligned_for(alloc_size, keep_alignment, caller)
                : fast_get_then(alloc_size, caller, move_get_slow);
  if (q == NULL)
    return NULL;
  fmm_copy(q, p, copy_size);
  /* p is no debug block (the debug block kind moves its own): the normal in-span path. A small
   * block the normal path validated (live_word: its header word, 0 for any other block) goes onto
   * its bin without a second lookup and validation. */
  if (live_word != 0)
    fast_free_live_small_then(p, live_word, heap_free_in_span);
  else
    fast_free_then(p, caller, move_free_slow, heap_free_in_span);
  return q;
}

/* Any block but a small one the normal path validated. */
static void *move_block(void *p, size_t alloc_size, size_t copy_size, const void *caller,
                        uint32_t keep_alignment) {
  return move_block_inline(p, alloc_size, copy_size, caller, keep_alignment, 0);
}

/* A live small block's resize (the caller validated p: s is its span). `normal`, a constant where
 * it is inlined: the caller is the normal path, with no mode on, so the old block goes straight
 * onto its bin once moved; else it is freed through FreeMem, the mode's way when one is on. */
FMM_INLINE void *realloc_small(void *p, uint32_t h, const small_span *s, size_t size,
                               const void *caller, int normal) {
  size_t usable = small_header_usable(h);
  /* The fast path's in-place case comes here too while a mode is on (its gate is closed). */
  if (small_stays_in_place(size, usable))
    return p;
  uint32_t keep = s->manager->keep_alignment;
  uint32_t live_word = normal ? h : 0;
  if (size <= usable) /* shrinks too far: a smaller class */
    return move_block_inline(p, size, size, caller, keep, live_word);
  size_t grown = usable * 2u + REALLOC_SMALL_UPSIZE_ADDER;
  /* A size a small block holds stays in one: the headroom ends at the largest class. In a
   * medium block (which may come larger than asked: a remainder too small to be a block stays
   * with it) the next resize would be a downsize below half, which moves (policy.h). */
  if (grown > SMALL_MAX_USER && size <= SMALL_MAX_USER)
    grown = SMALL_MAX_USER;
  return move_block_inline(p, size > grown ? size : grown, usable, caller, keep, live_word);
}

static void *realloc_medium(void *p, size_t size, const void *caller) {
  size_t usable = medium_usable(p);
  if (FMM_LIKELY(medium_size_stays(size, usable)))
    return p;
  uint32_t keep = medium_keep_alignment(block_header(p));
  if (size > usable) {
    if (size > MAX_REQUEST_SIZE)
      return NULL;
    size_t grown = usable + (usable >> REALLOC_MEDIUM_GROWTH_SHIFT);
    size_t want = size > grown ? size : grown;
    if (size <= MEDIUM_MAX_USER &&
        medium_grow_in_place(p, size, want <= MEDIUM_MAX_USER ? want : MEDIUM_MAX_USER))
      return p;
    void *q = move_block(p, want, usable, caller, keep);
    if (q != NULL && (block_header(q) & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE)
      large_set_user_size(q, size);
    return q;
  }
  /* Below half (medium_size_stays kept the rest): in place when what is cut off makes a free
   * block (medium_shrink_in_place); else a small block, whose usable size the new size fills more
   * than half of. A few sizes just above the small blocks, in a block that cannot be cut, stay: a
   * medium block allocated for them could be as large again. */
  if (size >= REALLOC_MEDIUM_TO_SMALL_BELOW) {
    size_t keep_size = size < MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                           ? MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                           : size;
    if (medium_shrink_in_place(p, keep_size) || size > SMALL_MAX_USER)
      return p;
  }
  return move_block(p, size, size, caller, keep);
}

/* A large block that grows, or shrinks below half its usable size. */
FMM_NOINLINE void *FMM_REGCALL heap_realloc_large_moves(void *p, size_t size, const void *caller) {
  size_t usable = large_usable(p);
  uint32_t keep = large_header_of(p)->keep_alignment;
  if (size > usable) {
    if (size > MAX_REQUEST_SIZE)
      return NULL;
    size_t grown = usable + (usable >> REALLOC_LARGE_GROWTH_SHIFT);
    size_t want = size > grown ? size : grown;
    /* In place: commits more of the block's reservation, extended by what is free after it
     * when it is not enough; FastMM5 too grows by what is free when that covers the request
     * but not the headroom. */
    if (large_grow_in_place(p, size, want)) {
      large_set_user_size(p, size);
      return p;
    }
    /* Where the OS can move pages (Linux), the block moves without a byte copied. */
    void *q = large_grow_by_remap(p, size, want);
    if (q != NULL) {
      large_set_user_size(q, size);
      return q;
    }
    /* FastMM copies only the size last asked for; a caller may use every usable byte
     * (fastmm_usable_size says so), so all of them move. The old block is freed as FreeMem
     * frees one: cached under the bound that keeps the large blocks near their peak
     * (LARGE_CACHE_ABOVE_PEAK_BYTES, policy.h), so that a program resizing several blocks up and
     * down reuses its pages instead of faulting fresh ones in, while one that only grows a block
     * keeps no more than that bound of its old copies. */
    q = move_block(p, want, usable, caller, keep);
    if (q != NULL && (block_header(q) & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE)
      large_set_user_size(q, size);
    return q;
  }
  /* Its pages stay cached for the next growth, beyond what FreeMem's blocks may keep: a
   * program that resizes blocks grows them again (large.c). */
  large_resized(p);
  return move_block(p, size, size, caller, keep);
}

FMM_INLINE void *realloc_block(void *p, uint32_t h, size_t size, const void *caller) {
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL: {
    const small_span *s = small_block_span(p, h);
    return s != NULL ? realloc_small(p, h, s, size, caller, 0) : NULL;
  }
  case BLOCK_FLAG_MEDIUM:
    return medium_block_sealed(p, h) ? realloc_medium(p, size, caller) : NULL;
  case BLOCK_FLAG_LARGE:
    return large_is_live(p) ? heap_realloc_large(p, size, caller) : NULL;
  default: /* a debug block (the debug block kind's, above: the modes send theirs there before
              they come here), or no block at all */
    return block_header_is_debug(h) ? heap_above_routines->realloc_debug_block(p, size) : NULL;
  }
}

void *heap_realloc_block(void *p, uint32_t h, size_t size, const void *caller) {
  return realloc_block(p, h, size, caller);
}

/* heap_realloc's body, given p's region (heap_header_region's answer). Medium and large blocks
 * first: strings and arrays of 2.5 KB and more are resized here all the time, mostly in place. */
static inline void *realloc_in_region(void *p, size_t size, unsigned region, const void *caller) {
  if (FMM_LIKELY(region_is_medium(region))) {
    uint32_t h = block_header(p);
    if (FMM_LIKELY(size != 0)) {
      if (FMM_LIKELY((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM))
        return medium_block_sealed(p, h) ? realloc_medium(p, size, caller) : NULL;
      /* A small block that moves (the fast path kept the ones that stay): validated once, with
       * the lookup just made, and freed onto its bin without another. */
      if ((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL) {
        const small_span *s = small_block_span(p, h);
        return s != NULL ? realloc_small(p, h, s, size, caller, 1) : NULL;
      }
    }
  } else if (heap_large_to_resize(region, p, size)) {
    return heap_realloc_large(p, size, caller);
  }
  if (p == NULL)
    return fast_get_then(size, caller, move_get_slow);
  if (size == 0) {
    heap_above_routines->free_slow(p, caller);
    return NULL;
  }
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  if (h == 0 || !heap_kind_fits_region(h, p))
    return NULL;
  return realloc_block(p, h, size, caller);
}

FMM_NOINLINE void *FMM_REGCALL heap_realloc(void *p, size_t size, const void *caller) {
  return realloc_in_region(p, size, heap_header_region(p), caller);
}

FMM_NOINLINE void *FMM_REGCALL heap_realloc_region(void *p, size_t size, unsigned region,
                                                   const void *caller) {
  if (region == REGION_NOT_OURS)
    region = heap_header_region(p);
  return realloc_in_region(p, size, region, caller);
}
