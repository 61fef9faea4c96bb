/* ReallocMem beyond the in-place small case: FastMM's policy for each block kind (the numbers
 * and their reasons are in policy.h). Every path that fails returns NULL and leaves the old
 * block as it was. */
#include "alloc_fast.h"
#include "modes/debug_block.h"

/* Copies and zeroes written out here rather than taken from the CRT: on Win64 the Delphi
 * entry points must leave XMM4 and XMM5 alone (the build fixes them for our code, which the
 * CRT's memcpy does not promise), and a call into the CRT is not needed for what are mostly
 * short, 16-byte aligned copies. Natively the C library's versions are used. */
void fmm_copy(void *dst, const void *src, size_t n) {
#if defined(_WIN32)
  uint64_t *d = (uint64_t *)dst;
  const uint64_t *s = (const uint64_t *)src;
  size_t words = n / 8u;
  for (size_t i = 0; i < words; i++)
    d[i] = s[i];
  for (size_t i = words * 8u; i < n; i++)
    ((char *)dst)[i] = ((const char *)src)[i];
#else
  memcpy(dst, src, n);
#endif
}

void fmm_zero(void *dst, size_t n) {
#if defined(_WIN32)
  uint64_t *d = (uint64_t *)dst;
  size_t words = n / 8u;
  for (size_t i = 0; i < words; i++)
    d[i] = 0;
  for (size_t i = words * 8u; i < n; i++)
    ((char *)dst)[i] = 0;
#else
  memset(dst, 0, n);
#endif
}

/* Allocates `alloc_size`, copies `copy_size` bytes, frees the old block. */
static void *move_block(void *p, size_t alloc_size, size_t copy_size) {
  void *q = fast_get(alloc_size);
  if (q == NULL)
    return NULL;
  fmm_copy(q, p, copy_size);
  fast_free(p);
  return q;
}

static void *realloc_small(void *p, uint32_t h, size_t size) {
  size_t usable = small_header_usable(h);
  /* The fast path's in-place case comes here too while a mode is on (heap_mode.h). */
  if (small_stays_in_place(size, usable))
    return p;
  if (size <= usable) /* shrinks too far: a smaller class */
    return move_block(p, size, size);
  size_t grown = usable * 2u + REALLOC_SMALL_UPSIZE_ADDER;
  return move_block(p, size > grown ? size : grown, usable);
}

static void *realloc_medium(void *p, size_t size) {
  size_t usable = medium_usable(p);
  if (size > usable) {
    if (size > MAX_REQUEST_SIZE)
      return NULL;
    size_t grown = usable + (usable >> REALLOC_MEDIUM_GROWTH_SHIFT);
    size_t want = size > grown ? size : grown;
    if (size <= MEDIUM_MAX_USER &&
        medium_grow_in_place(p, size, want <= MEDIUM_MAX_USER ? want : MEDIUM_MAX_USER))
      return p;
    void *q = move_block(p, want, usable);
    if (q != NULL && (block_header(q) & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE)
      large_set_user_size(q, size);
    return q;
  }
  if (size >= usable / 2u)
    return p;
  if (size >= REALLOC_MEDIUM_INPLACE_DOWNSIZE_LIMIT) {
    size_t keep = size < MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                      ? MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
                      : size;
    medium_shrink_in_place(p, keep);
    return p;
  }
  return move_block(p, size, size);
}

static void *realloc_large(void *p, size_t size) {
  size_t usable = large_usable(p);
  if (size > usable) {
    if (size > MAX_REQUEST_SIZE)
      return NULL;
    size_t grown = usable + (usable >> REALLOC_LARGE_GROWTH_SHIFT);
    size_t want = size > grown ? size : grown;
    if (large_extend_in_place(p, want)) {
      large_set_user_size(p, size);
      return p;
    }
    /* FastMM copies only the size last asked for; a caller may use every usable byte
     * (fastmm_usable_size says so), so all of them move. */
    void *q = move_block(p, want, usable);
    if (q != NULL && (block_header(q) & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE)
      large_set_user_size(q, size);
    return q;
  }
  if (size >= usable / 2u) {
    large_set_user_size(p, size);
    return p;
  }
  return move_block(p, size, size);
}

FMM_NOINLINE void *heap_realloc_slow(void *p, size_t size) {
  /* Every ReallocMem comes here while a mode is on (heap_mode.h). */
  if (FMM_UNLIKELY(heap_mode_now() & HEAP_MODE_SCAN_EVERY_OPERATION))
    fastmm_scan_debug_blocks_for_corruption();
  if (p == NULL)
    return fast_get(size);
  if (size == 0) {
    fast_free(p);
    return NULL;
  }
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  if (h == 0 || !heap_kind_fits_region(h, p) ||
      ((heap_mode_now() & (HEAP_MODE_DEBUG | HEAP_MODE_DEBUG_BLOCKS)) && debug_is_outer_block(p))) {
    if (heap_mode_now() & HEAP_MODE_DEBUG)
      debug_report_event(DEBUG_EVENT_INVALID_POINTER, p, NULL, NULL);
    return NULL;
  }
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
    return small_block_plausible(p, h) ? realloc_small(p, h, size) : NULL;
  case BLOCK_FLAG_MEDIUM:
    return medium_block_plausible(p, h) ? realloc_medium(p, size) : NULL;
  case BLOCK_FLAG_LARGE:
    return large_is_live(p) ? realloc_large(p, size) : NULL;
  case BLOCK_FLAG_DEBUG:
  case BLOCK_FLAG_DEBUG | BLOCK_FLAG_FREE: /* debug.c reports a realloc of a freed block */
    return debug_realloc(p, size, NULL);
  default:
    if (heap_mode_now() & HEAP_MODE_DEBUG)
      debug_report_event(DEBUG_EVENT_INVALID_POINTER, p, NULL, NULL);
    return NULL;
  }
}

#if defined(FASTMM_ASM_REALLOC) && !defined(_WIN64) && defined(__GNUC__)
/* Where src/win32/realloc_fast.asm's register entry goes when the block cannot stay: the
 * same convention, so EAX and EDX arrive as Delphi passed them. */
void *FASTMM_DELPHI_CALL heap_realloc_slow_register(void *p, intptr_t size) {
  return size >= 0 ? heap_realloc_slow(p, (size_t)size) : NULL;
}
#endif
