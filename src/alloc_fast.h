/* The hot paths of GetMem, FreeMem and ReallocMem, inlined into both the C exports (api.c)
 * and the Delphi entry points (delphi_api.c) so neither pays a second call.
 *
 * GetMem of a small size: read the thread cache pointer, pop the class's bin, clear the
 * block's FREE bit. FreeMem of a small block: look the pointer up in the page map, check the
 * header word and the span it names, set the FREE bit, push onto the bin. No lock, no atomic
 * instruction; everything else (empty or full bins, medium and large blocks, bad pointers, a
 * debug or erase mode switched on: one word, heap_mode) leaves through one call. */
#ifndef FASTMM_ALLOC_FAST_H
#define FASTMM_ALLOC_FAST_H

#include "internal.h"
#include "size_class.h"

extern volatile uint32_t heap_mode; /* debug.h: non-zero while a debug or erase mode is on */

/* FASTMM_NO_MODES builds a DLL whose GetMem and FreeMem never look at heap_mode (debug and
 * erase modes then do nothing for them): only for the benchmark that measures what the test
 * of that word costs the normal paths. */
#if defined(FASTMM_NO_MODES)
#define FMM_MODE_ON() 0
#else
#define FMM_MODE_ON() FMM_UNLIKELY(heap_mode != 0)
#endif
void *heap_get_special(size_t size, const void *caller);
int heap_free_special(void *p, const void *caller);

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define FMM_INLINE static __forceinline
#define FMM_RETURN_ADDRESS() _ReturnAddress()
#else
#define FMM_INLINE static inline __attribute__((always_inline))
/* Inlined into an exported entry point, this is the return address into the program. */
#define FMM_RETURN_ADDRESS() __builtin_return_address(0)
#endif

FMM_INLINE void *fast_get_normal(size_t size) {
  if (FMM_LIKELY(size <= SMALL_MAX_USER)) {
    thread_cache *tc = (thread_cache *)prim_tls_get();
    if (FMM_LIKELY(tc != NULL)) {
      cache_bin *bin = &tc->bins[size_class_of(size)];
      void *p = bin->head;
      if (FMM_LIKELY(p != NULL)) {
        bin->head = *(void **)p;
        bin->count--;
        block_set_header(p, block_header(p) & ~BLOCK_FLAG_FREE);
        return p;
      }
    }
  }
  return heap_get_slow(size);
}

FMM_INLINE void *fast_get(size_t size) {
  if (FMM_MODE_ON())
    return heap_get_special(size, FMM_RETURN_ADDRESS());
  return fast_get_normal(size);
}

FMM_INLINE int fast_free_normal(void *p) {
  unsigned region = heap_header_region(p);
  if (FMM_UNLIKELY(region != REGION_MEDIUM_SPAN)) {
    if (region == REGION_NOT_OURS)
      return p == NULL ? FASTMM_OK : FASTMM_ERROR_INVALID_POINTER;
    /* Where a large block would start, its header is read only under the large lock, where a
     * racing second free finds the block gone instead of reading memory the first one
     * unmapped. Elsewhere in a large block p can only be a debug block inside it. */
    if (((uintptr_t)p & (LARGE_GRANULARITY - 1)) == LARGE_HEADER_SIZE)
      return large_free(p);
  }
  uint32_t h = block_header(p);
  if (FMM_LIKELY((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL)) {
    thread_cache *tc = (thread_cache *)prim_tls_get();
    if (FMM_LIKELY(tc != NULL && small_block_plausible(p, h))) {
      cache_bin *bin = &tc->bins[small_header_class(h)];
      if (FMM_LIKELY(bin->count < bin->limit)) {
        block_set_header(p, h | BLOCK_FLAG_FREE);
        *(void **)p = bin->head;
        bin->head = p;
        bin->count++;
        return FASTMM_OK;
      }
    }
  }
  return heap_free_slow(p, h);
}

FMM_INLINE int fast_free(void *p) {
  if (FMM_MODE_ON())
    return heap_free_special(p, FMM_RETURN_ADDRESS());
  return fast_free_normal(p);
}

/* In place under the small policy: not larger than the usable size and new*4 + 64 >= usable.
 * The size is compared unsigned, so a size that was negative takes the slow path. */
FMM_INLINE void *fast_realloc(void *p, size_t size) {
  /* While a mode is on, a pointer may be a stale one into a debug block's outer block: the slow
   * path checks for that. */
  if (FMM_LIKELY(!FMM_MODE_ON() && heap_header_region(p) == REGION_MEDIUM_SPAN)) {
    uint32_t h = block_header(p);
    if (FMM_LIKELY((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL)) {
      size_t usable = small_header_usable(h);
      if (size <= usable && size != 0 &&
          (size << REALLOC_SMALL_DOWNSIZE_SHIFT) + REALLOC_SMALL_DOWNSIZE_ADDER >= usable)
        return p;
    }
  }
  return heap_realloc_slow(p, size);
}

#endif
