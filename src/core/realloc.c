/* SPDX-License-Identifier: MIT */
/* ReallocMem beyond the in-place small case: FastMM's policy for each block kind (the numbers
 * and their reasons are in policy.h). Every path that fails returns NULL and leaves the old
 * block as it was. Nothing here reads the mode word but the entry, heap_realloc_slow: while a
 * mode is on, the modes' ReallocMem (heap_realloc_special) checks the pointer its way and
 * comes back to heap_realloc_block for the policy. */
#include "heap.h"

#include "aligned.h"
#include "alloc_fast.h"
#include "copy.h"
#include "medium.h"
#include "mode_hooks.h"

/* Allocates `alloc_size`, copies `copy_size` bytes, frees the old block: through GetMem and
 * FreeMem, so a block moved while a mode is on is made and freed the mode's way. A block that
 * keeps an alignment (fastmm_getmem_aligned's) moves to a block aligned as much. */
static void *move_block(void *p, size_t alloc_size, size_t copy_size, const void *caller,
                        uint32_t keep_alignment) {
  void *q = keep_alignment > ALIGNMENT_MIN ? heap_get_aligned(alloc_size, keep_alignment, caller)
                                           : fast_get_for(alloc_size, caller);
  if (q == NULL)
    return NULL;
  fmm_copy(q, p, copy_size);
  fast_free_for(p, caller);
  return q;
}

static void *realloc_small(void *p, uint32_t h, size_t size, const void *caller) {
  size_t usable = small_header_usable(h);
  /* The fast path's in-place case comes here too while a mode is on (mode_hooks.h). */
  if (small_stays_in_place(size, usable))
    return p;
  uint32_t keep = small_keeps_alignment(p, h);
  if (size <= usable) /* shrinks too far: a smaller class */
    return move_block(p, size, size, caller, keep);
  size_t grown = usable * 2u + REALLOC_SMALL_UPSIZE_ADDER;
  return move_block(p, size > grown ? size : grown, usable, caller, keep);
}

static void *realloc_medium(void *p, size_t size, const void *caller) {
  size_t usable = medium_usable(p);
  if (FMM_LIKELY(size <= usable && size >= usable / 2u))
    return p;
  uint32_t keep = medium_header_of(p)->keep_alignment;
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
  if (size >= usable / 2u)
    return p;
  if (size >= REALLOC_MEDIUM_INPLACE_DOWNSIZE_LIMIT) {
    size_t keep_size = size < MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                           ? MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                           : size;
    medium_shrink_in_place(p, keep_size);
    return p;
  }
  return move_block(p, size, size, caller, keep);
}

/* A large block that grows, or shrinks below half its usable size. */
static FMM_NOINLINE void *realloc_large_moves(void *p, size_t size, const void *caller) {
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
     * (fastmm_usable_size says so), so all of them move. The old block goes back to the OS
     * rather than into the large cache: requests have outgrown it. */
    large_outgrown(p);
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

/* FastMM's policy for a large block: it stays where it is while the new size is between half its
 * usable size and all of it (most resizes of an array beyond 512 KB), with no stack frame. */
static inline void *realloc_large(void *p, size_t size, const void *caller) {
  size_t usable = large_usable(p);
  if (FMM_LIKELY(size <= usable && size >= usable / 2u)) {
    large_set_user_size(p, size);
    return p;
  }
  return realloc_large_moves(p, size, caller);
}

/* Is p, whose header word the page map puts in `region`, a live large block for realloc_large
 * (size 0 frees it instead)? */
static inline int large_to_resize(unsigned region, const void *p, size_t size) {
  return region == REGION_LARGE_START && size != 0 && large_has_word_at(p, BLOCK_FLAG_LARGE);
}

static inline void *realloc_block(void *p, uint32_t h, size_t size, const void *caller) {
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
    return small_block_span(p, h) != NULL ? realloc_small(p, h, size, caller) : NULL;
  case BLOCK_FLAG_MEDIUM:
    return medium_block_plausible(p, h) ? realloc_medium(p, size, caller) : NULL;
  case BLOCK_FLAG_LARGE:
    return large_is_live(p) ? realloc_large(p, size, caller) : NULL;
  default: /* a debug block (the debug block kind reports a freed one), or no block at all */
    return block_header_is_debug(h) ? debug_realloc(p, size, NULL) : NULL;
  }
}

void *heap_realloc_block(void *p, uint32_t h, size_t size, const void *caller) {
  return realloc_block(p, h, size, caller);
}

static inline void *realloc_normal(void *p, size_t size, const void *caller) {
  /* Medium and large blocks first, with one page map lookup: strings and arrays of 2.5 KB and
   * more are resized here all the time, mostly in place. */
  unsigned region = heap_header_region(p);
  if (FMM_LIKELY(region == REGION_MEDIUM_SPAN)) {
    uint32_t h = block_header(p);
    if (FMM_LIKELY((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM && size != 0))
      return medium_block_plausible(p, h) ? realloc_medium(p, size, caller) : NULL;
  } else if (large_to_resize(region, p, size)) {
    return realloc_large(p, size, caller);
  }
  if (p == NULL)
    return fast_get_for(size, caller);
  if (size == 0) {
    fast_free_for(p, caller);
    return NULL;
  }
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  if (h == 0 || !heap_kind_fits_region(h, p))
    return NULL;
  return realloc_block(p, h, size, caller);
}

/* ReallocMem off the fast path with the program's return address known (the Pascal records'
 * slow paths; heap_realloc_slow below). */
FMM_NOINLINE void *heap_realloc_slow_for(void *p, size_t size, const void *caller) {
  if (FMM_UNLIKELY(heap_mode_now() != 0))
    return heap_realloc_special(p, size, caller);
  return realloc_normal(p, size, caller);
}

/* ReallocMem off the fast path: every pointer but an in-use small block that stays in place,
 * and every pointer while a mode is on (mode_hooks.h). A medium block that stays where it is
 * (most resizes of a string or an array of 2.5-512 KB: FastMM's policy keeps it while the new
 * size is between half its usable size and all of it) is answered first, checked as FreeMem
 * checks it, with one page map lookup and no stack frame; a live large block goes straight to
 * its policy (mostly in place too, beyond 512 KB), with the same lookup; everything else goes
 * on. The lookup reads the fast paths' copy of the page map, which holds nothing while a mode
 * is on: no mode word to read here (a call racing with a mode switch takes the old mode's path,
 * as on the fast paths). */
FMM_NOINLINE void *heap_realloc_slow(void *p, size_t size) {
  unsigned region = fast_header_region(p);
  if (region == REGION_MEDIUM_SPAN) {
    if (medium_stays_in_place(p, block_header(p), size))
      return p;
  } else if (large_to_resize(region, p, size)) {
    return realloc_large(p, size, FMM_RETURN_ADDRESS());
  }
  return heap_realloc_slow_for(p, size, FMM_RETURN_ADDRESS());
}

#if defined(FASTMM_ASM_REALLOC) && !defined(_WIN64) && defined(__GNUC__)
/* Where src/win32/realloc_fast.asm's register entry goes when the block cannot stay: the
 * same convention, so EAX and EDX arrive as Delphi passed them. */
void *FASTMM_DELPHI_CALL heap_realloc_slow_register(void *p, intptr_t size) {
  return size >= 0 ? heap_realloc_slow(p, (size_t)size) : NULL;
}
#endif
