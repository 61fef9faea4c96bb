/* SPDX-License-Identifier: MIT */
/* The heap as a whole (heap.c, realloc.c, stats.c, heap_check.c): start-up, the checks every
 * pointer passes before its header word is trusted, and the slow paths behind the inline fast
 * paths of alloc_fast.h.
 *
 * Each operation has one slow-path entry (heap_get_slow, heap_free_slow, heap_realloc_slow)
 * that reads the mode word once: while a mode is on it hands the call to the modes
 * (mode_hooks.h), otherwise to the normal path of this folder, which never reads the word. */
#ifndef FASTMM_HEAP_H
#define FASTMM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "page_map.h"

/* The Windows DLLs take ReallocMem's entry points from NASM (src/win32, src/win64) unless
 * built pure C (FASTMM_PURE_C, the win32-purec and win64-purec presets). */
#if defined(_WIN32) && !defined(FASTMM_PURE_C)
#define FASTMM_ASM_REALLOC 1
#endif

/* ---- start-up ---------------------------------------------------------------------------- */
extern volatile uint32_t heap_initialized;
void heap_init_slow(void);
static inline void heap_ensure_initialized(void) {
  /* Acquire: a thread that finds the heap made by another one must see what it made. */
  if (FMM_UNLIKELY(fmm_load_u32_acquire(&heap_initialized) == 0))
    heap_init_slow();
}

/* ---- what a pointer must pass before its header word is trusted ----------------------------- */

/* May p's header word be read at all? p must be 16-aligned and the 4 bytes before it in a
 * region that holds our spans or large blocks. */
static inline int heap_header_readable(const void *p) {
  return ((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) == 0 && p != NULL &&
         page_map_get((const char *)p - BLOCK_HEADER_SIZE) != REGION_NOT_OURS;
}

/* Small and medium blocks live only in medium-span regions, large ones start only in a large
 * block's first region: a header word that names a kind its region cannot hold is not one. */
static inline int heap_kind_fits(uint32_t h, unsigned region) {
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
  case BLOCK_FLAG_MEDIUM:
    return region == REGION_MEDIUM_SPAN;
  case BLOCK_FLAG_LARGE:
    return region == REGION_LARGE_START;
  default:
    return region != REGION_NOT_OURS;
  }
}

static inline int heap_kind_fits_region(uint32_t h, const void *p) {
  return heap_kind_fits(h, page_map_get((const char *)p - BLOCK_HEADER_SIZE));
}

/* The page map's word on p's header: REGION_NOT_OURS also for NULL and misaligned pointers. */
static inline unsigned heap_header_region(const void *p) {
  if (((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) != 0 || p == NULL)
    return REGION_NOT_OURS;
  return page_map_get((const char *)p - BLOCK_HEADER_SIZE);
}

/* ---- GetMem (heap.c) ------------------------------------------------------------------------
 * `caller` is the program's return address, for debug mode. */
void *heap_get_slow(size_t size, const void *caller); /* mode word, then modes or normal */
void *heap_get_normal(size_t size);

/* ---- FreeMem (heap.c) ---------------------------------------------------------------------- */
/* A pointer the fast path could not place in a medium span (any pointer while a mode is on). */
int heap_free_slow(void *p, const void *caller);
/* A block whose header word h is readable: by its kind (small, medium, large, debug). */
int heap_free_block(void *p, uint32_t h);
/* What FreeMem's fast path could not place in a bin, p's header word h read from a medium span:
 * `live_small` says the validation contract held (a live small block whose thread's bin had no
 * room, or whose thread has no cache yet: into the bin once it has room, else back to its span),
 * else heap_free_block. One call site on the fast path, so that a caller checking the result
 * keeps its hot path free of a stack frame. */
int heap_free_in_span(void *p, uint32_t h, int live_small);

/* ---- ReallocMem (realloc.c) ------------------------------------------------------------------ */
void *heap_realloc_slow(void *p, size_t size); /* mode word, then modes or normal */
/* The same, for code that knows the program's return address already (the Pascal records). */
void *heap_realloc_slow_for(void *p, size_t size, const void *caller);
/* FastMM's policy for a block whose header word h is readable and fits its region. A block
 * that moves is allocated and freed through GetMem and FreeMem, which obey the modes. */
void *heap_realloc_block(void *p, uint32_t h, size_t size, const void *caller);
#if defined(FASTMM_ASM_REALLOC) && !defined(_WIN64)
/* The Win32 assembly's entry for the Delphi record, and the slow path it jumps to. */
void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem(void *p, intptr_t size);
void *FASTMM_DELPHI_CALL heap_realloc_slow_register(void *p, intptr_t size);
#endif

/* ---- queries (heap.c) -------------------------------------------------------------------- */
/* The usable size of a live block (a debug block's too), or 0. Checks as much as FreeMem. The
 * outer block of a debug block is the manager's: 0. */
size_t heap_usable_size(const void *p);
/* The usable size of a live small, medium or large block whose header word has
 * BLOCK_FLAG_DEBUG_OUTER (the outer block of a debug block), checked as heap_usable_size checks;
 * 0 for anything else. */
size_t heap_outer_usable(const void *p);
/* Sets or clears BLOCK_FLAG_DEBUG_OUTER in a live small, medium or large block's header word (a
 * medium block's under its arena's lock, which a neighbour's free holds while it reads it; a
 * large block's under the large lock). */
void heap_set_debug_outer(void *p, int on);

/* ---- the heap as a whole (stats.c, heap_check.c) ------------------------------------------- */
void heap_get_state(fastmm_state *st);
/* Fills out[i] for i < count; returns the number of small classes. */
size_t heap_get_small_class_usage(fastmm_kind_usage *out, size_t count);
/* 0 when consistent, else the code of the first fault (heap_check.c lists them). */
int heap_check(void);

#endif
