/* SPDX-License-Identifier: MIT */
/* Aligned blocks. A minimum alignment changes which small classes GetMem uses (those whose slots
 * are multiples of it) and where medium blocks are placed; large blocks are 64-aligned anyway.
 * A single aligned block comes from the small classes' aligned managers (small.h), from a medium
 * block placed at a multiple of the alignment, or from a large block whose user pointer sits that
 * far into its mapping; each remembers the alignment (its span's manager, its header's
 * keep_alignment) so that ReallocMem keeps it (realloc.c). */
#include "aligned.h"

#include "heap.h"
#include "large.h"
#include "medium.h"
#include "policy.h"
#include "size_class.h"
#include "small.h"
#include "thread_cache.h"

void *heap_get_aligned(size_t size, size_t alignment) {
  heap_ensure_initialized();
  if (size > MAX_REQUEST_SIZE)
    return NULL;
  if (size <= SMALL_MAX_USER && alignment <= ALIGNMENT_SMALL_MAX)
    return small_take_aligned(
        size_class_lookup_for((unsigned)alignment)[(size + BLOCK_HEADER_SIZE - 1) >> 4]);
  if (size <= MEDIUM_MAX_USER)
    return medium_alloc_aligned(size, alignment, thread_arena_hint(), (uint32_t)alignment);
  return large_alloc_aligned(size, alignment, (uint32_t)alignment);
}
