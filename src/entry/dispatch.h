/* SPDX-License-Identifier: MIT */
/* The slow paths of GetMem, FreeMem and ReallocMem as a program's call reaches them
 * (dispatch.c): each reads the mode word once and chooses, above both, between the modes' path
 * (a mode is on: modes/mode_paths.h) and the core's normal path (core/heap.h), and sends a
 * debug block, which the core answers HEAP_NOT_MINE, to the debug block kind. `caller` is the
 * program's return address, for debug mode. */
#ifndef FASTMM_DISPATCH_H
#define FASTMM_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/heap.h"
#include "core/linkage.h"
#include "fastmm.h"

/* GetMem off the fast path: a mode is on (its table sent every size here), the size is not
 * small, or the bin is empty. */
void *FMM_REGCALL entry_get_slow(size_t size, const void *caller);
/* The same for a block a ReallocMem asks for (a move, or ReallocMem of nil): a large block keeps
 * more of the cached pages it is given (large_alloc_resizing). */
void *FMM_REGCALL entry_get_slow_resizing(size_t size, const void *caller);
/* One block whose user pointer is a multiple of `alignment` (a power of two, 32 .. ALIGNED_MAX):
 * the mode's way while one is on, else the core's (heap_get_aligned). */
void *entry_get_aligned(size_t size, size_t alignment, const void *caller);

/* FreeMem of a pointer the fast path could not place in a medium span (any pointer while a mode
 * is on). */
int FMM_REGCALL entry_free_slow(void *p, const void *caller);
/* What FreeMem's fast path could not place in a bin, p's header word h read from a medium span:
 * `live_small` says the validation contract held. One call site on the fast path, so that a
 * caller checking the result keeps its hot path free of a stack frame. */
int FMM_REGCALL entry_free_in_span_slow(void *p, uint32_t h, int live_small);

/* ReallocMem off the fast path (the NASM entries jump here with their arguments untouched). */
void *FMM_REGCALL entry_realloc_slow(void *p, size_t size);
/* entry_realloc_slow, for code that knows the program's return address already (the Pascal
 * records). */
void *FMM_REGCALL entry_realloc_slow_for(void *p, size_t size, const void *caller);
/* entry_realloc_slow where the fast path has looked p's header word up in the fast copy of the page
 * map already (`region`, fast_header_region's answer): no second lookup. */
void *FMM_REGCALL entry_realloc_slow_region(void *p, size_t size, unsigned region);
/* entry_realloc_slow_for where the caller has read the mode word already (`mode`: the Pascal
 * records' slow paths read it for their rare cases): with no mode on, the core's ReallocMem
 * straight away, without a second read of the word and a call between. */
FMM_INLINE void *entry_realloc_slow_in(uint32_t mode, void *p, size_t size, const void *caller) {
  if (FMM_UNLIKELY(mode != 0))
    return entry_realloc_slow_for(p, size, caller);
  return heap_realloc(p, size, caller); /* a debug block comes back to its kind */
}
/* A debug block's ReallocMem with no mode on (the core is lent it: core/heap.h). */
void *entry_realloc_debug_block(void *p, size_t size);
#if defined(FMM_ASM_REALLOC_REGISTER)
/* The Win32 assembly's entry for the Delphi record, and the slow path it jumps to. */
void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem(void *p, intptr_t size);
void *FASTMM_DELPHI_CALL entry_realloc_slow_register(void *p, intptr_t size);
#endif

#endif
