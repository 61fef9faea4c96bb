/* SPDX-License-Identifier: MIT */
/* The mode gate: the mode word, every table the fast paths read in its place, and how a mode
 * closes them (core/mode_hooks.h says why the fast paths read tables instead of the word).
 * Open, the tables are copies of the real ones: size_class_fast_lookup of the minimum
 * alignment's class lookup (heap_class_lookup: size_class_lookup, or while 32 or 64 is asked for
 * the lookup of the classes whose slots are multiples of it, which swaps GetMem to them at no
 * cost to its fast path),
 * page_map_fast_l1 (64-bit) or page_map_fast_l2 (32-bit) of the page map, kept current by
 * mode_gate_page_map_changed. Closed, every size maps to the always-empty bin SIZE_CLASS_GATE
 * and the page map's copy holds no region. */
#include "gate.h"

#include "core/aligned.h"
#include "core/heap.h"
#include "core/lock.h"
#include "core/page_map.h"
#include "core/size_class.h"

uint32_t heap_mode_word;
static fmm_lock mode_lock; /* every change of the word */

/* GetMem's table: the same entries as size_class_lookup while no mode is on, so it starts as
 * one. */
uint8_t size_class_fast_lookup[SIZE_CLASS_LOOKUP_SIZE] = SIZE_CLASS_LOOKUP_INIT;

#if PAGE_MAP_L1_BITS == 0
uint8_t page_map_fast_l2[(size_t)1 << PAGE_MAP_L2_BITS];
#else
uintptr_t page_map_fast_l1[(size_t)1 << PAGE_MAP_L1_BITS];
/* What an entry with no region names: zeros, never written (in .bss, so it costs the file
 * nothing and memory only where a foreign pointer's lookup reads it). */
static uint8_t empty_l2[(size_t)1 << PAGE_MAP_L2_BITS];
/* The first-level entries ever filled lie in [l1_low, l1_high): a switch walks only those. */
static uintptr_t l1_low = (uintptr_t)1 << PAGE_MAP_L1_BITS, l1_high;
static int fast_l1_started;

/* Entry i of the fast copy naming second-level table l2 (mode_hooks.h). */
static uintptr_t fast_entry(uintptr_t i, const uint8_t *l2) {
  return (uintptr_t)(l2 != NULL ? l2 : empty_l2) - (i << PAGE_MAP_L2_BITS);
}
#endif
static int page_map_gate_open = 1; /* written and read under the page map's lock */

void mode_gate_start_page_map(void) {
#if PAGE_MAP_L1_BITS > 0
  if (fast_l1_started)
    return;
  for (uintptr_t i = 0; i < ((uintptr_t)1 << PAGE_MAP_L1_BITS); i++)
    page_map_fast_l1[i] = fast_entry(i, NULL);
  fast_l1_started = 1;
#endif
}

void mode_gate_page_map_changed(uintptr_t first_region, uintptr_t count) {
  if (count == 0)
    return;
#if PAGE_MAP_L1_BITS == 0
  if (page_map_gate_open)
    for (uintptr_t r = first_region; r < first_region + count; r++)
      page_map_fast_l2[r] = page_map_l2_static[r];
#else
  uintptr_t last = (first_region + count - 1u) >> PAGE_MAP_L2_BITS;
  for (uintptr_t i1 = first_region >> PAGE_MAP_L2_BITS; i1 <= last; i1++) {
    if (page_map_l1[i1] == NULL)
      continue;
    if (i1 < l1_low)
      l1_low = i1;
    if (i1 >= l1_high)
      l1_high = i1 + 1;
    /* Written only when it changes (a new second-level table): the fast paths read the entry
     * without a lock, and rewriting the same value would race with them for nothing. */
    uintptr_t entry = fast_entry(i1, page_map_l1[i1]);
    if (page_map_gate_open && page_map_fast_l1[i1] != entry)
      page_map_fast_l1[i1] = entry;
  }
#endif
}

static void page_map_set_gate(int open) {
  page_map_lock_writers();
  page_map_gate_open = open;
#if PAGE_MAP_L1_BITS == 0
  for (size_t r = 0; r < sizeof page_map_fast_l2; r++)
    page_map_fast_l2[r] = open ? page_map_l2_static[r] : (uint8_t)REGION_NOT_OURS;
#else
  for (uintptr_t i = l1_low; i < l1_high; i++)
    page_map_fast_l1[i] = fast_entry(i, open ? page_map_l1[i] : NULL);
#endif
  page_map_unlock_writers();
}

static void size_class_set_gate(int open) {
  const uint8_t *lookup = (const uint8_t *)fmm_load_ptr_acquire(&heap_class_lookup);
  for (size_t i = 0; i < sizeof size_class_lookup; i++)
    size_class_fast_lookup[i] = open ? lookup[i] : (uint8_t)SIZE_CLASS_GATE;
}

void heap_mode_set_bit(uint32_t bit, int on) {
  lock_acquire(&mode_lock);
  uint32_t mode = heap_mode_now();
  uint32_t next = on ? (mode | bit) : (mode & ~bit);
  /* The word first, then the tables: a thread that finds a table closed finds the mode. */
  fmm_store_u32_relaxed(&heap_mode_word, next);
  if ((mode == 0) != (next == 0)) {
    size_class_set_gate(next == 0);
    page_map_set_gate(next == 0);
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
  if (heap_mode_now() == 0)
    size_class_set_gate(1);
  lock_release(&mode_lock);
  return a;
}
