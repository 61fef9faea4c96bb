/* SPDX-License-Identifier: MIT */
/* The normal slow paths behind the inline fast paths (entry/alloc_fast.h): how a GetMem and a
 * FreeMem travel once the thread cache cannot serve them and no mode is on, and the heap's
 * start-up. Nothing here reads the mode word or knows the debug block kind: a debug block's
 * header word is answered HEAP_NOT_MINE, for the layer above (entry/dispatch.c) to send on. */
#include "heap.h"

#include "aligned.h"
#include "arena.h"
#include "fork_locks.h"
#include "get_slow.h"
#include "inline_paths.h"
#include "lock.h"
#include "medium.h"
#include "release.h"

volatile uint32_t heap_initialized;
FMM_HIDDEN fmm_lock heap_init_lock;
const heap_above *heap_above_routines;

void heap_set_above(const heap_above *routines) {
  heap_above_routines = routines;
}

void heap_init_slow(void) {
  lock_acquire(&heap_init_lock);
  if (!heap_initialized) {
    size_class_init();
    arena_init();
    small_init();
    medium_init();
    prim_init(thread_cache_on_thread_exit);
    release_init();
    lock_init();
    fork_locks_init(); /* after lock_init: a child resets the solo state, then releases the locks */
    if (heap_above_routines != NULL)
      heap_above_routines->start();
    fmm_store_u32_release(&heap_initialized, 1u);
  }
  lock_release(&heap_init_lock);
}

static thread_cache *current_cache(void) {
  thread_cache *tc = (thread_cache *)prim_tls_get();
  return tc != NULL ? tc : thread_cache_create();
}

FMM_NOINLINE void *FMM_REGCALL heap_get_small(size_t size) {
  const uint8_t *lookup = (const uint8_t *)fmm_load_ptr_acquire(&heap_class_lookup);
  unsigned c = lookup[(size + BLOCK_HEADER_SIZE - 1) >> 4];
  thread_cache *tc = current_cache();
  void *list;
  if (tc == NULL) { /* no thread-local storage: serve one block straight from an arena */
    if (small_take_blocks(c, arena_for(prim_thread_id()), &list, 1) == 0)
      return NULL;
  } else {
    cache_bin *bin = &tc->bins[c];
    if (bin->head == NULL) {
      thread_cache_on_refill(tc, c);
      uint32_t got = small_take_blocks(c, tc->arena, &list, bin->limit / 2u);
      if (got == 0)
        return NULL;
      bin->head = list;
      bin->count = got;
      thread_cache_after_refill(tc, c);
    }
    list = bin->head;
    bin->head = *(void **)list;
    bin->count--;
  }
  block_set_header(list, block_header(list) & ~BLOCK_FLAG_FREE);
  return list;
}

FMM_NOINLINE void *FMM_REGCALL heap_get_medium(size_t size) {
  uint32_t alignment = heap_minimum_alignment_now();
  if (alignment > ALIGNMENT_MIN)
    return medium_alloc_aligned(size, alignment, thread_arena_hint(), 0);
  return medium_alloc(size, thread_arena_hint());
}

FMM_NOINLINE void *FMM_REGCALL heap_get_slow(size_t size) {
  return heap_get_then(size, large_alloc);
}

int heap_free_live_small(void *p, uint32_t h) {
  thread_cache *tc = current_cache();
  if (tc == NULL) {
    small_return_block(p);
    return FASTMM_OK;
  }
  unsigned c = small_header_class(h);
  cache_bin *bin = &tc->bins[c];
  if (bin->count >= bin->limit &&
      (cache_bin_still_stopped(bin, fmm_load_u32_relaxed(&small_span_of(p, h)->manager->taken)) ||
       !thread_cache_make_room(tc, c, p, h))) {
    small_return_block(p);
    return FASTMM_OK;
  }
  block_set_header(p, h | BLOCK_FLAG_FREE);
  *(void **)p = bin->head;
  bin->head = p;
  bin->count++;
  return FASTMM_OK;
}

/* A medium block's FreeMem once the page map put its header word in a medium span: its seal and
 * boundary tags checked (medium_block_plausible), then its arena's free. */
FMM_INLINE int free_medium(void *p, uint32_t h) {
  if (!medium_block_plausible(p, h))
    return FASTMM_ERROR_INVALID_POINTER;
  int result = medium_free(p);
  release_poll(); /* its span may have become a spare */
  return result;
}

FMM_NOINLINE int FMM_REGCALL heap_free_medium(void *p, uint32_t h) {
  return free_medium(p, h);
}

FMM_NOINLINE int FMM_REGCALL heap_free_block(void *p, uint32_t h) {
  if (!heap_kind_fits_region(h, p))
    return FASTMM_ERROR_INVALID_POINTER;
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
    if (small_block_span(p, h) == NULL)
      return FASTMM_ERROR_INVALID_POINTER;
    return heap_free_live_small(p, h);
  case BLOCK_FLAG_MEDIUM:
    return free_medium(p, h);
  case BLOCK_FLAG_LARGE:
    return large_free(p); /* looked up in the page map before the header is trusted */
  default: /* a debug block (the debug block kind's, above: it reports a double free), or no
              block at all; a stale pointer to a debug block's outer block has DEBUG_OUTER and
              lands here */
    return block_header_is_debug(h) ? HEAP_NOT_MINE : FASTMM_ERROR_INVALID_POINTER;
  }
}

FMM_NOINLINE int FMM_REGCALL heap_free_in_span(void *p, uint32_t h, int live_small) {
  if (live_small)
    return heap_free_live_small(p, h);
  if ((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM)
    return free_medium(p, h);
  return heap_free_block(p, h);
}

/* The usable size of p (16-aligned), whose header word h passed heap_kind_fits_region, if p is a
 * live block of the kind h names; else 0. `outer`: p holds a debug block (h read without
 * DEBUG_OUTER; the large list keeps that state apart). */
static size_t live_usable(const void *p, uint32_t h, int outer) {
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
    return small_block_span(p, h) != NULL ? small_header_usable(h) : 0;
  case BLOCK_FLAG_MEDIUM:
    return medium_block_sealed(p, h) ? medium_usable(p) : 0;
  case BLOCK_FLAG_LARGE: /* the region is a large block's first: its header is mapped */
    return large_has_word_at(p,
                             outer ? BLOCK_FLAG_LARGE | BLOCK_FLAG_DEBUG_OUTER : BLOCK_FLAG_LARGE)
               ? large_usable(p)
               : 0;
  default:
    return 0;
  }
}

size_t heap_usable_size(const void *p) {
  unsigned region = heap_header_region(p);
  if (region == REGION_NOT_OURS)
    return 0;
  uint32_t h = block_header(p);
  if (!heap_kind_fits(h, region))
    return 0;
  return live_usable(p, h, 0); /* 0 for a debug block's header word: no kind */
}

void heap_set_debug_outer(void *p, int on) {
  uint32_t h = block_header(p);
  switch (h & BLOCK_KINDS) {
  case BLOCK_FLAG_MEDIUM:
    medium_set_flag(p, BLOCK_FLAG_DEBUG_OUTER, on);
    break;
  case BLOCK_FLAG_LARGE:
    large_set_flag(p, BLOCK_FLAG_DEBUG_OUTER, on);
    break;
  default: /* a live small block's word is its owner's alone */
    block_set_header(p, on ? (h | BLOCK_FLAG_DEBUG_OUTER) : (h & ~BLOCK_FLAG_DEBUG_OUTER));
  }
}

size_t heap_outer_usable(const void *p) {
  if (!heap_header_readable(p))
    return 0;
  uint32_t h = block_header(p);
  if ((h & (BLOCK_FLAG_FREE | BLOCK_FLAG_DEBUG_OUTER)) != BLOCK_FLAG_DEBUG_OUTER)
    return 0;
  h &= ~BLOCK_FLAG_DEBUG_OUTER;
  if (!heap_kind_fits_region(h, p))
    return 0;
  return live_usable(p, h, 1);
}
