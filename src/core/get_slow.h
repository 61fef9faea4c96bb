/* SPDX-License-Identifier: MIT */
/* GetMem's slow path without a mode, inline: the core's heap_get_slow (heap.c) and the entry
 * layer's entry_get_slow and entry_get_slow_resizing (entry/dispatch.c) are all this body, a choice
 * by size that ends in one tail call and keeps no stack frame, so that a large GetMem reaches
 * large_alloc with no frame and no second jump. */
#ifndef FASTMM_GET_SLOW_H
#define FASTMM_GET_SLOW_H

#include "heap.h"
#include "large.h"
#include "linkage.h"
#include "policy.h"

/* A small size the thread's bin could not serve (empty, or no cache yet): refills the bin from
 * the arena (heap.c). Out of line, so that a medium or large GetMem's path keeps no stack frame
 * for it. */
void *FMM_REGCALL heap_get_small(size_t size);

/* A medium size (heap.c): the thread's arena, the minimum alignment. Out of line for the same
 * reason. */
void *FMM_REGCALL heap_get_medium(size_t size);

/* A size that is not small, an empty bin, no cache yet: each kind's path with a tail call, a
 * large size's to `large` (a constant where it is inlined: large_alloc, or for a block a
 * ReallocMem asks for large_alloc_resizing). */
FMM_INLINE void *heap_get_then(size_t size, void *(*large)(size_t size)) {
  if (size <= SMALL_MAX_USER)
    return heap_get_small(size);
  heap_ensure_initialized(); /* before the thread's arena is looked up */
  if (size <= MEDIUM_MAX_USER)
    return heap_get_medium(size);
  return large(size);
}

#endif
