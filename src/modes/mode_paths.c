/* GetMem, FreeMem and ReallocMem while a mode is on: the core's slow paths send every call here
 * (core/mode_hooks.h). Debug mode makes debug blocks; the erase modes fill what they hand out
 * or take back; scan-before-every-operation checks every debug block first. Everything else is
 * the normal path's, reached through the *_normal fast paths and heap_realloc_block. */
#include "mode_paths.h"

#include <string.h>

#include "core/aligned.h"
#include "core/alloc_fast.h"
#include "debug_block.h"
#include "debug_report.h"
#include "gate.h"

FMM_NOINLINE void *heap_get_special(size_t size, const void *caller) {
  uint32_t mode = heap_mode_now();
  if (mode & HEAP_MODE_DEBUG)
    return debug_get(size, caller);
  void *p = fast_get_normal(size);
  if (p != NULL && (mode & HEAP_MODE_ERASE_ALLOCATED))
    memset(p, DEBUG_FILL_ALLOCATED, heap_usable_size(p));
  return p;
}

FMM_NOINLINE int heap_free_special(void *p, const void *caller) {
  if (p == NULL)
    return FASTMM_OK;
  uint32_t mode = heap_mode_now();
  if (heap_header_readable(p)) {
    uint32_t h = block_header(p);
    if ((h & BLOCK_KIND_MASK & ~BLOCK_FLAG_FREE) == BLOCK_FLAG_DEBUG)
      return debug_free(p, caller);
    if ((mode & (HEAP_MODE_DEBUG | HEAP_MODE_DEBUG_BLOCKS)) && debug_is_outer_block(p)) {
      debug_report_event(FASTMM_EVENT_DOUBLE_FREE, p, NULL, caller);
      return FASTMM_ERROR_INVALID_POINTER;
    }
    if (mode & HEAP_MODE_ERASE_FREED) {
      size_t usable = caller_usable_size(p);
      if (usable)
        memset(p, DEBUG_FILL_FREED, usable);
    }
  }
  int result = fast_free_normal(p);
  if (result != FASTMM_OK && (mode & HEAP_MODE_DEBUG))
    debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, caller);
  return result;
}

/* Scans first when asked to; refuses a stale pointer to the outer block of a debug block and
 * reports a bad pointer in debug mode; then the policy of the block's kind (the core's), whose
 * moves come back through GetMem and FreeMem and so obey the mode. */
FMM_NOINLINE void *heap_realloc_special(void *p, size_t size, const void *caller) {
  uint32_t mode = heap_mode_now();
  if (mode & HEAP_MODE_SCAN_EVERY_OPERATION)
    debug_scan_blocks();
  if (p == NULL)
    return heap_get_special(size, caller);
  if (size == 0) {
    heap_free_special(p, caller);
    return NULL;
  }
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  int valid = h != 0 && heap_kind_fits_region(h, p);
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
  case BLOCK_FLAG_MEDIUM:
  case BLOCK_FLAG_LARGE:
  case BLOCK_FLAG_DEBUG:
  case BLOCK_FLAG_DEBUG | BLOCK_FLAG_FREE:
    break;
  default:
    valid = 0;
  }
  if (!valid ||
      ((heap_mode_now() & (HEAP_MODE_DEBUG | HEAP_MODE_DEBUG_BLOCKS)) && debug_is_outer_block(p))) {
    if (heap_mode_now() & HEAP_MODE_DEBUG)
      debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, NULL);
    return NULL;
  }
  return heap_realloc_block(p, h, size, caller);
}

/* Today's debug blocks cannot start at a multiple of more than 16 (the header before the user
 * data is 96 bytes after stack traces of any length), so an aligned request gets an ordinary
 * block in debug mode too, filled as debug mode fills new blocks; the scan runs first when asked
 * for. */
FMM_NOINLINE void *heap_get_aligned_special(size_t size, size_t alignment, const void *caller) {
  (void)caller;
  uint32_t mode = heap_mode_now();
  if (mode & HEAP_MODE_SCAN_EVERY_OPERATION)
    debug_scan_blocks();
  void *p = heap_get_aligned_normal(size, alignment);
  if (p != NULL && (mode & (HEAP_MODE_DEBUG | HEAP_MODE_ERASE_ALLOCATED)))
    memset(p, DEBUG_FILL_ALLOCATED, heap_usable_size(p));
  return p;
}

size_t caller_usable_size(const void *p) {
  if (FMM_UNLIKELY(heap_mode_now() & (HEAP_MODE_DEBUG | HEAP_MODE_DEBUG_BLOCKS)) &&
      debug_is_outer_block(p))
    return 0;
  return heap_usable_size(p);
}

int caller_owns_block(const void *p) {
  if (heap_header_readable(p) && (block_header(p) & BLOCK_KIND_MASK) == BLOCK_FLAG_DEBUG)
    return debug_owns(p);
  return caller_usable_size(p) != 0;
}
