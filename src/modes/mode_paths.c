/* SPDX-License-Identifier: MIT */
/* GetMem, FreeMem and ReallocMem while a mode is on: the slow-path dispatch sends every call here
 * (entry/dispatch.c). Debug mode makes debug blocks; the erase modes fill what they hand out
 * or take back; scan-before-every-operation checks every debug block first. Everything else is
 * the normal path's, reached through the core's heap_get, heap_free and heap_realloc_block.
 * FastMM5's debug entry points (FastMM_DebugGetMem & co.), which make debug blocks in any mode, are
 * here too. */
#include "mode_paths.h"

#include <string.h>

#include "core/aligned.h"
#include "core/inline_paths.h"
#include "debug_block.h"
#include "debug_report.h"
#include "debug_settings.h"
#include "gate.h"

/* Scan before the operation? The manager's own switch (a mode bit), or, while debug mode is on,
 * the program's FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation. */
static void scan_if_wanted(uint32_t mode) {
  if ((mode & MODE_SCAN_EVERY_OPERATION) || ((mode & MODE_DEBUG) && debug_scan_variable_set()))
    debug_scan_blocks();
}

static void *get_in_mode(size_t size, const void *caller, uint32_t mode) {
  if (mode & MODE_DEBUG)
    return debug_get(size, caller, 1);
  void *p = heap_get(size);
  if (p != NULL && (mode & MODE_ERASE_ALLOCATED))
    memset(p, DEBUG_FILL_ALLOCATED, heap_usable_size(p));
  return p;
}

FMM_NOINLINE void *mode_get(size_t size, const void *caller) {
  uint32_t mode = mode_now();
  scan_if_wanted(mode);
  return get_in_mode(size, caller, mode);
}

/* Is p (its header word h readable) a debug block, even one whose header word an underrun
 * overwrote? */
static int is_debug_block(const void *p, uint32_t h) {
  return block_header_is_debug(h) || debug_is_registered(p);
}

static int free_in_mode(void *p, const void *caller, uint32_t mode) {
  if (p == NULL)
    return FASTMM_OK;
  if (heap_header_readable(p)) {
    uint32_t h = block_header(p);
    if (is_debug_block(p, h))
      return debug_free(p, caller);
    if ((h & (BLOCK_FLAG_FREE | BLOCK_FLAG_DEBUG_OUTER)) == BLOCK_FLAG_DEBUG_OUTER) {
      /* A stale pointer to memory a debug block now occupies: freed before, so freed twice. */
      if (mode & MODE_DEBUG)
        debug_report_event(FASTMM_EVENT_DOUBLE_FREE, p, NULL, caller);
      return FASTMM_ERROR_INVALID_POINTER;
    }
    if (mode & MODE_ERASE_FREED) {
      size_t usable = heap_usable_size(p);
      if (usable)
        memset(p, DEBUG_FILL_FREED, usable);
    }
  }
  int result = heap_free(p);
  if (result != FASTMM_OK && (mode & MODE_DEBUG))
    debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, caller);
  return result;
}

FMM_NOINLINE int mode_free(void *p, const void *caller) {
  uint32_t mode = mode_now();
  scan_if_wanted(mode);
  return free_in_mode(p, caller, mode);
}

/* p is not NULL and size not 0. A debug block goes to the debug block kind; anything else that
 * is no live block (a stale pointer to a debug block's outer block among them: its DEBUG_OUTER
 * bit fails every kind) gets NULL, reported in debug mode; a live block gets the policy of its
 * kind, whose moves come back through GetMem and FreeMem and so obey the mode. */
static void *realloc_in_mode(void *p, size_t size, const void *caller, uint32_t mode) {
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  if (h != 0 && is_debug_block(p, h))
    return debug_realloc(p, size, caller);
  int valid = h != 0 && heap_kind_fits_region(h, p);
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
  case BLOCK_FLAG_MEDIUM:
  case BLOCK_FLAG_LARGE:
    break;
  default:
    valid = 0;
  }
  if (!valid) {
    if (mode & MODE_DEBUG)
      debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, caller);
    return NULL;
  }
  return heap_realloc_block(p, h, size, caller);
}

/* fastmm_getmem_aligned while a mode is on: an ordinary aligned block, filled as debug mode fills
 * new blocks (a debug block's outer block comes from GetMem, whose minimum alignment it keeps,
 * but ReallocMem of a debug block would not keep a per-block alignment); the scan runs first
 * when asked for. */
FMM_NOINLINE void *mode_get_aligned(size_t size, size_t alignment, const void *caller) {
  (void)caller;
  uint32_t mode = mode_now();
  scan_if_wanted(mode);
  void *p = heap_get_aligned(size, alignment);
  if (p != NULL && (mode & (MODE_DEBUG | MODE_ERASE_ALLOCATED)))
    memset(p, DEBUG_FILL_ALLOCATED, heap_usable_size(p));
  return p;
}

FMM_NOINLINE void *FMM_REGCALL mode_realloc(void *p, size_t size, const void *caller) {
  uint32_t mode = mode_now();
  scan_if_wanted(mode);
  if (p == NULL)
    return get_in_mode(size, caller, mode);
  if (size == 0) {
    free_in_mode(p, caller, mode);
    return NULL;
  }
  return realloc_in_mode(p, size, caller, mode);
}

size_t mode_usable_size(const void *p) {
  if (heap_header_readable(p) && block_header_is_debug(block_header(p)))
    return debug_usable(p);
  return heap_usable_size(p); /* an outer block's DEBUG_OUTER bit makes it 0 */
}

int mode_owns_block(const void *p) {
  if (heap_header_readable(p) && block_header_is_debug(block_header(p)))
    return debug_owns(p);
  return mode_usable_size(p) != 0;
}

/* ---- FastMM5's debug entry points ----------------------------------------------------------
 * They scan first when the manager's own switch asks. (FastMM5's variable is FastMMC.pas's to
 * act on here: its FastMM_Debug* scan first and raise on damage, as FastMM5's do.) */
static void entry_scan_if_wanted(void) {
  if (mode_now() & MODE_SCAN_EVERY_OPERATION)
    debug_scan_blocks();
}

void *debug_entry_get(size_t size, const void *caller, int zero) {
  heap_ensure_initialized();
  entry_scan_if_wanted();
  void *p = debug_get(size, caller, !zero);
  if (p != NULL && zero)
    memset(p, 0, size);
  return p;
}

int debug_entry_free(void *p, const void *caller) {
  heap_ensure_initialized();
  entry_scan_if_wanted();
  return free_in_mode(p, caller, mode_now());
}

void *debug_entry_realloc(void *p, size_t size, const void *caller) {
  heap_ensure_initialized();
  entry_scan_if_wanted();
  uint32_t mode = mode_now();
  if (p == NULL)
    return debug_get(size, caller, 1);
  if (size == 0) {
    free_in_mode(p, caller, mode);
    return NULL;
  }
  uint32_t h = heap_header_readable(p) ? block_header(p) : 0;
  if (h != 0 && is_debug_block(p, h))
    return debug_realloc(p, size, caller);
  /* A normal block becomes a debug block: min(usable, size) bytes move, the old one is freed
   * (FastMM5's FastMM_DebugReallocMem). */
  size_t usable = h != 0 ? heap_usable_size(p) : 0;
  if (usable == 0)
    return realloc_in_mode(p, size, caller, mode); /* refused, and reported in debug mode */
  void *q = debug_get(size, caller, 0);
  if (q == NULL)
    return NULL;
  memcpy(q, p, usable < size ? usable : size);
  free_in_mode(p, caller, mode);
  return q;
}
