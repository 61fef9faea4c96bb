/* SPDX-License-Identifier: MIT */
/* Everything the core needs from the modes (src/modes/), and the only way it reaches them.
 *
 * The modes (debug mode, the erase modes, scan before every operation) are a second set of
 * slow paths, as FastMM5's debug mode is a second set of entry points
 * (FastMM_SetMemoryManagerEntryPoints). The core never includes a header of src/modes/: it
 * reads the mode word and the gate tables declared here, and calls the functions declared
 * here, which src/modes/ defines.
 *
 * The gate. The mode word is non-zero while any mode is on or debug blocks exist. GetMem,
 * FreeMem and ReallocMem must then leave their fast paths. A test of the word on every call
 * measured up to 9% of small churn on the normal paths, and a comparison with a gate variable
 * about 1% (one more load), so the fast paths read two tables of their own instead, which a
 * mode empties (src/modes/gate.c):
 *
 *   size_class_fast_lookup  GetMem's size -> class table. Closed, every size maps to
 *                           SIZE_CLASS_GATE, a thread-cache bin that is always empty, so GetMem
 *                           finds no block and takes the slow path.
 *   page_map_fast_l1 / _l2  the page map as FreeMem and ReallocMem see it. Closed, it holds no
 *                           region (64-bit: every first-level entry names the empty table), so
 *                           every pointer takes the path of a foreign one: the slow path.
 *
 * The slow paths read the word (heap_mode_now). Open, the tables are copies of the real ones
 * and cost nothing over them. The gate writes the word first and then the tables, so on x86 a
 * thread that finds a table closed finds the mode that closed it; one that finds it closed and
 * the mode already off takes the normal slow path, which is correct too. A call racing with
 * another thread's switch may take the path of the old mode. The tables are read with plain
 * loads (the same instructions as a build without modes) while a switch rewrites them: every
 * entry a reader can see is an old or a new one, each valid (tests/tsan.supp). */
#ifndef FASTMM_MODE_HOOKS_H
#define FASTMM_MODE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "linkage.h"
#include "page_map.h"
#include "size_class.h"

/* ---- the mode word (src/modes/gate.c; its bits in src/modes/gate.h) ------------------------- */
extern FMM_HIDDEN uint32_t heap_mode_word;

/* The mode word, as the slow paths read it (a relaxed atomic load: it changes under them). */
static inline uint32_t heap_mode_now(void) {
  return fmm_load_u32_relaxed(&heap_mode_word);
}

/* ---- the gate tables (src/modes/gate.c) ------------------------------------------------------ */
#define SIZE_CLASS_GATE SMALL_CLASS_COUNT /* a thread-cache bin that is always empty */
/* size_class_lookup while no mode is on; SIZE_CLASS_GATE for every size while one is. */
extern FMM_HIDDEN uint8_t size_class_fast_lookup[SIZE_CLASS_LOOKUP_SIZE];
/* The page map as the fast paths of FreeMem and ReallocMem see it: a copy while no mode is on,
 * empty while one is. 32-bit builds copy their one table. 64-bit builds copy the first level
 * (the second-level tables are shared) in a form that costs the lookup no test and no mask:
 * entry i is the address of its second-level table less i << PAGE_MAP_L2_BITS, so the byte of
 * address a is at page_map_fast_l1[a >> (REGION_SHIFT + L2_BITS)] + (a >> REGION_SHIFT), and an
 * entry with no table (or any entry while the gate is closed) names an all-zero table the same
 * way (page_map_fast_lookup). Every entry is filled when the library loads (heap_on_load), and
 * again by page_map_set's first call if that comes first. */
#if PAGE_MAP_L1_BITS == 0
extern FMM_HIDDEN uint8_t page_map_fast_l2[(size_t)1 << PAGE_MAP_L2_BITS];
#else
extern FMM_HIDDEN uintptr_t page_map_fast_l1[(size_t)1 << PAGE_MAP_L1_BITS];
/* The region kind of address a (below 2^PAGE_MAP_ADDRESS_BITS) in the fast copy. */
static inline unsigned page_map_fast_lookup(uintptr_t a) {
  return *(const uint8_t *)(page_map_fast_l1[a >> (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)] +
                            (a >> PAGE_MAP_REGION_SHIFT));
}
#endif
/* Fills the fast copy's first level (64-bit builds) before any fast path reads it: from the
 * library's load hook (heap_on_load) and from page_map_set. Idempotent; caller single-threaded
 * or holding the page map's lock. */
void mode_gate_start_page_map(void);
/* page_map_set calls this, holding the page map's lock, after it marked `count` regions from
 * `first_region` on: the gate copies them while it is open. */
void mode_gate_page_map_changed(uintptr_t first_region, uintptr_t count);

/* ---- the slow paths while a mode is on (src/modes/mode_paths.c) ------------------------------ */
void *heap_get_special(size_t size, const void *caller);
int heap_free_special(void *p, const void *caller);
void *heap_realloc_special(void *p, size_t size, const void *caller);
/* An aligned block (core/aligned.h) while a mode is on. */
void *heap_get_aligned_special(size_t size, size_t alignment, const void *caller);

/* ---- the debug block kind (src/modes/debug_block.c) -----------------------------------------
 * A header word that says DEBUG sends a block there, in or out of a mode. */
int debug_free(void *p, const void *caller);
void *debug_realloc(void *p, size_t size, const void *caller);
size_t debug_usable(const void *p); /* 0 when p is not a valid live debug block */

/* ---- the debug block kind as the walk of the blocks sees it (src/modes/debug_walk.c) ---------
 * An outer block (small, medium or large, in use) may hold a debug block. */
typedef struct heap_debug_view {
  void *user;         /* the pointer the program holds */
  const void *header; /* FastMM5's debug block header (TFastMM_DebugBlockHeader), or NULL */
  size_t user_size;   /* the size the program asked for */
  uint32_t allocation_group;
  int freed; /* freed and waiting in the quarantine: free in every statistic */
} heap_debug_view;
/* 1 and *view filled when the live block `outer` holds a debug block (live or quarantined); 0
 * at once while no debug block exists. Takes no lock and reads only the block's own bytes: the
 * walk calls it with arena locks held. */
int heap_describe_debug_block(const void *outer, heap_debug_view *view);

/* ---- start-up (src/modes/switches.c): FASTMMC_DEBUG_MODE and the leak report at exit ----------
 */
void modes_init(void);

#endif
