/* SPDX-License-Identifier: MIT */
/* ReallocMem's normal path (realloc.c): the parts the slow path above the modes
 * (entry/dispatch.c) inlines, so that a large block resized in place costs it no stack frame. */
#ifndef FASTMM_REALLOC_H
#define FASTMM_REALLOC_H

#include "heap.h"
#include "large.h"

/* A large block that grows, or shrinks below half its usable size. */
void *FMM_REGCALL heap_realloc_large_moves(void *p, size_t size, const void *caller);

/* FastMM's policy for a large block: it stays where it is while the new size is between half its
 * usable size and all of it (most resizes of an array beyond 512 KB), with no stack frame. */
static inline void *heap_realloc_large(void *p, size_t size, const void *caller) {
  size_t usable = large_usable(p);
  if (FMM_LIKELY(size <= usable && size >= usable / 2u)) {
    large_set_user_size(p, size);
    return p;
  }
  return heap_realloc_large_moves(p, size, caller);
}

/* Is p, whose header word the page map puts in `region`, a live large block for
 * heap_realloc_large (size 0 frees it instead)? */
static inline int heap_large_to_resize(unsigned region, const void *p, size_t size) {
  return region == REGION_LARGE_START && size != 0 && large_has_word_at(p, BLOCK_FLAG_LARGE);
}

#endif
