/* SPDX-License-Identifier: MIT */
/* The heap as a whole (heap.c, realloc.c, stats.c, heap_check.c): start-up, the checks every
 * pointer passes before its header word is trusted, and the normal slow paths behind the inline
 * fast paths (entry/alloc_fast.h).
 *
 * Each operation has one slow-path entry above the modes (entry/dispatch.c) that reads the mode
 * word once: while a mode is on it hands the call to the modes, otherwise to the normal path of
 * this folder, which never reads the word and never calls up: a debug block's header word gets
 * HEAP_NOT_MINE from every kind switch here, and what the core needs from above (the modes'
 * start-up, GetMem and FreeMem as a program's call goes for a ReallocMem's move, the walk's view
 * of a debug block) it is lent at load time (heap_set_above). */
#ifndef FASTMM_HEAP_H
#define FASTMM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "linkage.h"
#include "page_map.h"

/* ---- what the layers above lend the core ---------------------------------------------------
 * The core calls no function of a layer above it; these routines, which entry/startup.c hands it
 * when the library loads (before any call can reach the core), are how it reaches them, as
 * FastMM5's normal routines reach none of its debug ones but through the record
 * FastMM_SetMemoryManagerEntryPoints fills. */
struct heap_debug_view;
typedef struct heap_above {
  /* Run once by the core's start-up, after its own (the modes': FASTMMC_DEBUG_MODE and the leak
   * report at exit). */
  void (*start)(void);
  /* The slow paths of GetMem and FreeMem as a program's call goes (a mode's way while one is on),
   * and aligned GetMem: a ReallocMem that moves a block makes and frees through the fast paths
   * with these behind them (fast_get_then, fast_free_then), as the program's own calls would.
   * Its GetMem's slow path is GetMem's but for the large block it may take from the large
   * cache, which keeps pages to grow into (large_alloc_resizing). */
  void *(FMM_REGCALL *get_slow_resizing)(size_t size, const void *caller);
  void *(*get_aligned_for)(size_t size, size_t alignment, const void *caller);
  int(FMM_REGCALL *free_slow)(void *p, const void *caller);
  /* ReallocMem of a debug block with no mode on (the debug block kind's, debug_realloc): the
   * normal path hands it on with a tail call, so that it keeps the one stack frame it had when
   * the debug block kind was its own to call (a flag returned to the slow path above, as FreeMem
   * returns HEAP_NOT_MINE, cost a small block's move about 10% more instructions). */
  void *(*realloc_debug_block)(void *p, size_t size);
  /* The walk's view of an outer block (walk.h, heap_debug_view): 1 when it holds a debug block. */
  int (*describe_debug_block)(const void *outer, struct heap_debug_view *view);
} heap_above;
/* Called once, from the library's load hook; `routines` must live as long as the library. */
void heap_set_above(const heap_above *routines);
extern FMM_HIDDEN const heap_above *heap_above_routines;

/* What a kind switch of the core answers for a debug block's header word (a FreeMem result):
 * the debug block kind lies above the core, and the caller above sends the block there. */
#define HEAP_NOT_MINE 2

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
    return region_is_medium(region);
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

/* ---- GetMem (heap.c) ------------------------------------------------------------------------ */
/* GetMem's normal slow path: a size that is not small, an empty bin, no cache yet. */
void *FMM_REGCALL heap_get_slow(size_t size);

/* ---- FreeMem (heap.c) ---------------------------------------------------------------------- */
/* A block whose header word h is readable: by its kind (small, medium, large); HEAP_NOT_MINE for
 * a debug block's word. */
int FMM_REGCALL heap_free_block(void *p, uint32_t h);
/* A block whose header word h (kind MEDIUM, FREE clear) the page map put in a medium span: what
 * heap_free_block does for it, without asking the page map again. */
int FMM_REGCALL heap_free_medium(void *p, uint32_t h);
/* A live small block (the validation contract held): into its thread's bin once that has room,
 * else back to its span. */
int heap_free_live_small(void *p, uint32_t h);
/* What FreeMem's fast path could not place in a bin, p's header word h read from a medium span:
 * `live_small` says the validation contract held (heap_free_live_small), else a medium block's
 * word goes to heap_free_medium's checks and any other to heap_free_block. */
int FMM_REGCALL heap_free_in_span(void *p, uint32_t h, int live_small);

/* ---- ReallocMem (realloc.c) ------------------------------------------------------------------ */
/* ReallocMem with no mode on, from its slow path (entry/dispatch.c): NULL allocates, size 0
 * frees, a live block gets FastMM's policy for its kind, a debug block goes to heap_above's
 * realloc_debug_block. */
void *FMM_REGCALL heap_realloc(void *p, size_t size, const void *caller);
/* The same given `region`, what the fast copy of the page map answered for p's header word
 * (fast_header_region), so that it is not looked up again; REGION_NOT_OURS, which the copy also
 * answers while it is closed (a mode came on and went since), is looked up. */
void *FMM_REGCALL heap_realloc_region(void *p, size_t size, unsigned region, const void *caller);
/* FastMM's policy for a live block whose header word h is readable and fits its region (NULL for
 * anything else; a debug block's word goes to heap_above's realloc_debug_block, which the modes
 * never need: they send a debug block to its kind first). A block that moves is allocated and
 * freed through GetMem's and FreeMem's fast paths with heap_above's slow paths behind them, which
 * obey the modes. */
void *heap_realloc_block(void *p, uint32_t h, size_t size, const void *caller);

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

/* The heap's start-up lock, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock heap_init_lock;

#endif
