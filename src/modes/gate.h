/* The heap's mode word, and how the fast paths obey it without reading it.
 *
 * The mode word is non-zero while debug mode, an erase mode or scan-before-every-operation is on,
 * or while debug blocks exist (the bits are in debug.h). GetMem, FreeMem and ReallocMem must
 * then leave their fast paths. A test of the word on every call cost the normal paths up to 9%
 * of small churn, and a comparison with a gate variable still about 1% (one more load), so the
 * fast paths read two tables of their own instead, which a mode empties:
 *
 *   size_class_fast_lookup  (size_class.h) GetMem's size -> class table. Closed, every size
 *                           maps to SIZE_CLASS_GATE, a thread-cache bin that is always empty,
 *                           so GetMem finds no block and takes the slow path.
 *   page_map_fast_l1 / _l2  (page_map.h) the page map as FreeMem and ReallocMem see it.
 *                           Closed, it holds no region (64-bit: no second-level table), so
 *                           every pointer takes the path of a foreign one: the slow path.
 *
 * The slow paths read the word (heap_mode_now). Open, the tables are copies of the real ones
 * and cost nothing over them. heap_mode_store writes the word first and then the tables, so on
 * x86 a thread that finds a table closed finds the mode that closed it; one that finds it
 * closed and the mode already off takes the normal slow path, which is correct too. A call
 * racing with another thread's switch may take the path of the old mode. The tables are read
 * with plain loads (the same instructions as a build without modes) while a switch rewrites
 * them: every entry a reader can see is an old or a new one, each valid (tests/tsan.supp).*/
#ifndef FASTMM_HEAP_MODE_H
#define FASTMM_HEAP_MODE_H

#include <stdint.h>

#include "core/atomics.h"
#include "core/linkage.h"

extern FMM_HIDDEN uint32_t heap_mode_word;

/* The mode word, as the slow paths read it (a relaxed atomic load: it changes under them). */
static inline uint32_t heap_mode_now(void) {
  return fmm_load_u32_relaxed(&heap_mode_word);
}

/* Sets the mode word and opens or closes the fast paths' tables to match (callers serialise:
 * debug.c's lock). */
void heap_mode_store(uint32_t mode);

#endif
