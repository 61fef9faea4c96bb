/* SPDX-License-Identifier: MIT */
/* The hot paths of GetMem, FreeMem and ReallocMem, inlined into both the C exports and the
 * Delphi and Free Pascal entry points (src/api/) so neither pays a second call.
 *
 * GetMem of a small size: read the thread cache pointer, pop the class's bin, clear the
 * block's FREE bit. FreeMem of a small block: look the pointer up in the page map and its span
 * records, check the header word against the record, set the FREE bit, push onto the bin. No lock,
 * no atomic instruction; everything else (empty or full bins, medium and large blocks, bad
 * pointers) leaves through one call, to the slow paths of this folder (dispatch.h), which choose
 * between the modes' paths and the core's normal ones.
 *
 * While a debug or erase mode is on, the tables these paths read (size_class_fast_lookup, the
 * page map's fast copy) send every call to the slow path: the modes cost the normal paths
 * nothing (modes/gate.h). The parts they are built of are the core's (core/inline_paths.h). */
#ifndef FASTMM_ALLOC_FAST_H
#define FASTMM_ALLOC_FAST_H

#include "core/inline_paths.h"
#include "dispatch.h"

FMM_INLINE void *entry_get(size_t size) {
  if (FMM_LIKELY(size <= SMALL_MAX_USER)) {
    void *p = cache_pop(size, FMM_FAST_CLASS_LOOKUP);
    if (FMM_LIKELY(p != NULL))
      return p;
  }
  return entry_get_slow(size, FMM_RETURN_ADDRESS());
}

/* The same, for code that knows the program's return address already (ReallocMem's moves). */
FMM_INLINE void *entry_get_for(size_t size, const void *caller) {
  return fast_get_then(size, caller, entry_get_slow);
}

/* The part of FreeMem after the page map's fast copy said "medium span" (core/inline_paths.h),
 * its slow path this folder's. */
FMM_INLINE int entry_free_in_span(void *p, uintptr_t table, uintptr_t off) {
  return fast_free_in_span_then(p, table, off, entry_free_in_span_slow);
}

FMM_INLINE int entry_free(void *p) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  if (FMM_UNLIKELY(region != REGION_MEDIUM_SPAN))
    return entry_free_slow(p, FMM_RETURN_ADDRESS());
  return entry_free_in_span(p, table, off);
}

FMM_INLINE int entry_free_for(void *p, const void *caller) {
  return fast_free_then(p, caller, entry_free_slow, entry_free_in_span_slow);
}

FMM_INLINE void *entry_realloc(void *p, size_t size) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  if (FMM_LIKELY(fast_realloc_stays_region(p, size, region, table, off)))
    return p;
  return entry_realloc_slow_region(p, size, region);
}

#endif
