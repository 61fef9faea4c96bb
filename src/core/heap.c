/* The C exports and the slow paths behind the inline fast paths of alloc_fast.h: how a
 * GetMem and a FreeMem travel once the thread cache cannot serve them. */
#include "alloc_fast.h"
#include "modes/debug_block.h"

volatile uint32_t heap_initialized;
static fmm_lock init_lock;

void heap_init_slow(void) {
  lock_acquire(&init_lock);
  if (!heap_initialized) {
    small_init();
    medium_init();
    large_init();
    prim_init(thread_cache_on_thread_exit);
    debug_init_from_environment();
    fmm_store_u32_release(&heap_initialized, 1u);
  }
  lock_release(&init_lock);
}

static thread_cache *current_cache(void) {
  thread_cache *tc = (thread_cache *)prim_tls_get();
  return tc != NULL ? tc : thread_cache_create();
}

/* GetMem's slow path without a mode: a size that is not small, an empty bin, no cache yet. */
static inline void *get_normal(size_t size) {
  if (size <= SMALL_MAX_USER) {
    unsigned c = size_class_of(size);
    thread_cache *tc = current_cache();
    void *list;
    if (tc == NULL) { /* no thread-local storage: serve one block straight from an arena */
      if (small_take_blocks(c, prim_thread_id() % ARENA_COUNT, &list, 1) == 0)
        return NULL;
    } else {
      cache_bin *bin = &tc->bins[c];
      if (bin->head == NULL) {
        uint32_t got = small_take_blocks(c, tc->arena, &list, bin->limit / 2u);
        if (got == 0)
          return NULL;
        bin->head = list;
        bin->count = got;
      }
      list = bin->head;
      bin->head = *(void **)list;
      bin->count--;
    }
    block_set_header(list, block_header(list) & ~BLOCK_FLAG_FREE);
    return list;
  }
  if (size <= MEDIUM_MAX_USER)
    return medium_alloc(size, ARENA_COUNT, 0);
  return large_alloc(size);
}

/* GetMem off the fast path: a mode is on (its table sent every size here), the size is not
 * small, or the bin is empty. */
FMM_NOINLINE void *heap_get_slow(size_t size, const void *caller) {
  if (FMM_UNLIKELY(heap_mode_now() != 0))
    return heap_get_special(size, caller);
  return get_normal(size);
}

FMM_NOINLINE void *heap_get_normal(size_t size) {
  return get_normal(size);
}

/* FreeMem of a pointer whose header word is not in a medium span, or of any pointer while a
 * mode is on. */
FMM_NOINLINE int heap_free_off_span(void *p, const void *caller) {
  if (FMM_UNLIKELY(heap_mode_now() != 0))
    return heap_free_special(p, caller);
  return fast_free_normal(p);
}

FMM_NOINLINE int heap_free_slow(void *p, uint32_t h) {
  if (!heap_kind_fits_region(h, p))
    return FASTMM_ERROR_INVALID_POINTER;
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL: {
    if (!small_block_plausible(p, h))
      return FASTMM_ERROR_INVALID_POINTER;
    thread_cache *tc = current_cache();
    if (tc == NULL) {
      small_return_block(p);
      return FASTMM_OK;
    }
    unsigned c = small_header_class(h);
    cache_bin *bin = &tc->bins[c];
    if (bin->count >= bin->limit)
      thread_cache_flush_bin(tc, c, bin->limit / 2u);
    block_set_header(p, h | BLOCK_FLAG_FREE);
    *(void **)p = bin->head;
    bin->head = p;
    bin->count++;
    return FASTMM_OK;
  }
  case BLOCK_FLAG_MEDIUM:
    if (!medium_block_plausible(p, h))
      return FASTMM_ERROR_INVALID_POINTER;
    return medium_free(p);
  case BLOCK_FLAG_LARGE:
    return large_free(p); /* looked up in the page map before the header is trusted */
  case BLOCK_FLAG_DEBUG:
  case BLOCK_FLAG_DEBUG | BLOCK_FLAG_FREE: /* debug.c reports the double free */
    return debug_free(p, NULL);
  default:
    return FASTMM_ERROR_INVALID_POINTER;
  }
}

void *FASTMM_CDECL fastmm_getmem(size_t size) {
  return fast_get(size);
}

int FASTMM_CDECL fastmm_freemem(void *p) {
  return fast_free(p);
}

#if !defined(FASTMM_ASM_REALLOC)
void *FASTMM_CDECL fastmm_reallocmem(void *p, size_t size) {
  return fast_realloc(p, size);
}
#endif

void *FASTMM_CDECL fastmm_allocmem(size_t size) {
  void *p = fast_get(size);
  /* Fresh large mappings come zeroed from the OS, unless a mode has just filled them. */
  if (p != NULL &&
      ((block_header(p) & BLOCK_KIND_MASK) != BLOCK_FLAG_LARGE || heap_mode_now() != 0))
    fmm_zero(p, size);
  return p;
}

/* The usable size of a live block, or 0. Checks as much as FreeMem does. */
size_t FASTMM_CDECL fastmm_usable_size(const void *p) {
  /* The outer block of a debug block is the manager's, not the caller's. */
  if (FMM_UNLIKELY(heap_mode_now() & (HEAP_MODE_DEBUG | HEAP_MODE_DEBUG_BLOCKS)) &&
      debug_is_outer_block(p))
    return 0;
  return heap_usable_size(p);
}

size_t heap_usable_size(const void *p) {
  if (!heap_header_readable(p))
    return 0;
  uint32_t h = block_header(p);
  if (!heap_kind_fits_region(h, p))
    return 0;
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
    return small_block_plausible(p, h) ? small_header_usable(h) : 0;
  case BLOCK_FLAG_MEDIUM:
    return medium_block_plausible(p, h) ? medium_usable(p) : 0;
  case BLOCK_FLAG_LARGE:
    return large_is_live(p) ? large_usable(p) : 0;
  case BLOCK_FLAG_DEBUG:
    return debug_usable(p);
  default:
    return 0;
  }
}

int FASTMM_CDECL fastmm_owns_block(const void *p) {
  /* A debug block may have 0 usable bytes (GetMem(0) in debug mode) and still be ours. */
  if (heap_header_readable(p) && (block_header(p) & BLOCK_KIND_MASK) == BLOCK_FLAG_DEBUG)
    return debug_owns(p);
  /* fastmm_usable_size answers 0 for a debug block's outer block. */
  return fastmm_usable_size(p) != 0;
}

int FASTMM_CDECL fastmm_heap_contains(const void *p) {
  return page_map_get(p) != REGION_NOT_OURS;
}

int FASTMM_CDECL fastmm_register_expected_leak(void *p) {
  return fastmm_owns_block(p) ? leaks_register(p) : 0;
}

int FASTMM_CDECL fastmm_unregister_expected_leak(void *p) {
  return leaks_unregister(p);
}

size_t FASTMM_CDECL fastmm_small_class_slot_size(size_t class_index) {
  return class_index < SMALL_CLASS_COUNT ? size_class_slot[class_index] : 0;
}
