/* SPDX-License-Identifier: MIT */
/* The mode gate: the mode word, and how a change of it opens or closes the fast copies the fast
 * paths read in its place (gate.h says why). The copies belong to their owners, which offer to
 * open and close them: GetMem's class table (core/size_class.c, size_class_fast_open: a copy of
 * the minimum alignment's class lookup, heap_class_lookup, which swaps GetMem to the aligned
 * classes at no cost to its fast path) and the page map (core/page_map.c, page_map_fast_open: a
 * copy kept current by page_map_set). Closed, every size maps to the always-empty bin
 * SIZE_CLASS_GATE and the page map's copy holds no region. */
#include "gate.h"

#include "core/aligned.h"
#include "core/heap.h"
#include "core/lock.h"
#include "core/page_map.h"
#include "core/size_class.h"

uint32_t mode_word;
static fmm_lock mode_lock; /* every change of the word */

void mode_set_bit(uint32_t bit, int on) {
  lock_acquire(&mode_lock);
  uint32_t mode = mode_now();
  uint32_t next = on ? (mode | bit) : (mode & ~bit);
  /* The word first, then the tables: a thread that finds a table closed finds the mode. */
  fmm_store_u32_relaxed(&mode_word, next);
  if ((mode == 0) != (next == 0)) {
    size_class_fast_open(next == 0);
    page_map_fast_open(next == 0);
  }
  lock_release(&mode_lock);
}

uint32_t mode_set_minimum_alignment(size_t alignment) {
  uint32_t a = alignment <= ALIGNMENT_MIN ? ALIGNMENT_MIN : alignment <= 32u ? 32u : 64u;
  heap_ensure_initialized(); /* the aligned lookups are made at start-up */
  lock_acquire(&mode_lock);
  heap_set_minimum_alignment(a);
  /* The slow paths obey it from here; GetMem's fast path once its table is refilled (a closed
   * gate is refilled from the new lookup when it opens). */
  if (mode_now() == 0)
    size_class_fast_open(1);
  lock_release(&mode_lock);
  return a;
}
