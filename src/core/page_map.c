/* SPDX-License-Identifier: MIT */
/* The region map's writer: tables are made under a lock; lookups need none (a byte is
 * written before the memory it describes is handed out, and cleared after the last block in
 * it is gone). */
#include "page_map.h"
#include "span_record.h"

#include "atomics.h"
#include "lock.h"
#include "prim/prim.h"

#if PAGE_MAP_L1_BITS == 0
uint8_t page_map_l2_static[(size_t)1 << PAGE_MAP_L2_BITS];
uint8_t *page_map_l1[1] = {page_map_l2_static};
#else
uint8_t *page_map_l1[(size_t)1 << PAGE_MAP_L1_BITS];
#endif
FMM_HIDDEN fmm_lock page_map_lock;

#if PAGE_MAP_L1_BITS == 0
uint8_t page_map_fast_l2[(size_t)1 << PAGE_MAP_L2_BITS];
#else
uintptr_t page_map_fast_l1[(size_t)1 << PAGE_MAP_L1_BITS];
/* What an entry with no region names: zeros, never written (in .bss, so it costs the file
 * nothing and memory only where a foreign pointer's lookup reads it). */
static uint8_t empty_l2[(size_t)1 << PAGE_MAP_L2_BITS];
/* The first-level entries ever filled lie in [l1_low, l1_high): opening or closing walks only
 * those. */
static uintptr_t l1_low = (uintptr_t)1 << PAGE_MAP_L1_BITS, l1_high;
static int fast_l1_started;
page_map_hot page_map_fast_hot = {PAGE_MAP_HOT_NONE, empty_l2, NULL, PAGE_MAP_HOT_NONE};
static uintptr_t hot_slot = (uintptr_t)-1; /* its first-level index, once chosen */

/* Entry i of the fast copy naming second-level table l2 (page_map.h). */
static uintptr_t fast_entry(uintptr_t i, const uint8_t *l2) {
  return (uintptr_t)(l2 != NULL ? l2 : empty_l2) - (i << PAGE_MAP_L2_BITS);
}
#endif
static int fast_open = 1; /* written and read under the page map's lock */

void page_map_fast_start(void) {
#if PAGE_MAP_L1_BITS > 0
  if (fast_l1_started)
    return;
  for (uintptr_t i = 0; i < ((uintptr_t)1 << PAGE_MAP_L1_BITS); i++)
    page_map_fast_l1[i] = fast_entry(i, NULL);
  fast_l1_started = 1;
#endif
}

/* page_map_set marked `count` regions from `first_region` on (its lock held): the fast copy
 * follows while it is open. */
static void fast_copy_changed(uintptr_t first_region, uintptr_t count) {
  if (count == 0)
    return;
#if PAGE_MAP_L1_BITS == 0
  if (fast_open)
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
    if (fast_open && page_map_fast_l1[i1] != entry)
      page_map_fast_l1[i1] = entry;
  }
#endif
}

#if PAGE_MAP_L1_BITS > 0
/* page_map_set marked regions from first_region on as ours (its lock held): the first mapping
 * chooses the hot slot. Its table first, then its base: a fast path that sees the base with
 * the old (all-zero) table finds no region there and takes its slow path, which looks again. */
static void hot_slot_chosen(uintptr_t first_region) {
  if (hot_slot != (uintptr_t)-1)
    return;
  hot_slot = first_region >> PAGE_MAP_L2_BITS;
  fmm_store_ptr_release((void **)&page_map_fast_hot.records, span_record_tables[hot_slot]);
  if (fast_open)
    fmm_store_ptr_release((void **)&page_map_fast_hot.l2, page_map_l1[hot_slot]);
  fmm_store_ptr_release((void **)&page_map_fast_hot.header_base,
                        (void *)((hot_slot << PAGE_MAP_HOT_BITS) + BLOCK_ALIGNMENT));
  fmm_store_ptr_release((void **)&page_map_fast_hot.base, (void *)(hot_slot << PAGE_MAP_HOT_BITS));
}
#endif

void page_map_fast_open(int open) {
  lock_acquire(&page_map_lock);
  fast_open = open;
#if PAGE_MAP_L1_BITS == 0
  for (size_t r = 0; r < sizeof page_map_fast_l2; r++)
    page_map_fast_l2[r] = open ? page_map_l2_static[r] : (uint8_t)REGION_NOT_OURS;
#else
  for (uintptr_t i = l1_low; i < l1_high; i++)
    page_map_fast_l1[i] = fast_entry(i, open ? page_map_l1[i] : NULL);
  if (hot_slot != (uintptr_t)-1)
    fmm_store_ptr_release((void **)&page_map_fast_hot.l2, open ? page_map_l1[hot_slot] : empty_l2);
#endif
  lock_release(&page_map_lock);
}

void page_map_lock_writers(void) {
  lock_acquire(&page_map_lock);
}

void page_map_unlock_writers(void) {
  lock_release(&page_map_lock);
}

/* page_map_lock held: region r's second-level table, made (all REGION_NOT_OURS) when missing;
 * NULL when it could not be mapped. */
static uint8_t *table_made(uintptr_t r) {
  if (page_map_l1[r >> PAGE_MAP_L2_BITS] == NULL)
    /* Not through os_map: these tables are the manager's bookkeeping, not a heap's. */
    page_map_l1[r >> PAGE_MAP_L2_BITS] = (uint8_t *)prim_map((size_t)1 << PAGE_MAP_L2_BITS, 0);
  return page_map_l1[r >> PAGE_MAP_L2_BITS];
}

int page_map_make_tables(const void *base, size_t size) {
  uintptr_t first = (uintptr_t)base >> PAGE_MAP_REGION_SHIFT;
  uintptr_t count = size >> PAGE_MAP_REGION_SHIFT;
  int made = 1;
  lock_acquire(&page_map_lock);
  page_map_fast_start();
  for (uintptr_t r = first; r < first + count && made; r++)
    made = table_made(r) != NULL;
  lock_release(&page_map_lock);
  return made;
}

/* page_map_lock held: the span records of [base, base + size), about to be marked a medium span,
 * reserved and committed (span_record.h). Returns 0 when they could not be. */
static int records_made(const void *base, size_t size) {
  uintptr_t last = ((uintptr_t)base + size - 1u) >> PAGE_MAP_REGION_SHIFT >> PAGE_MAP_L2_BITS;
  for (uintptr_t i1 = (uintptr_t)base >> PAGE_MAP_REGION_SHIFT >> PAGE_MAP_L2_BITS; i1 <= last;
       i1++) {
    if (!span_record_table_make(i1))
      return 0;
#if PAGE_MAP_L1_BITS > 0
    /* Published once, when the hot slot's table is made: its readers read it only where the map
     * says a medium span is, which it marks after this. */
    if (i1 == hot_slot && page_map_fast_hot.records != span_record_tables[i1])
      fmm_store_ptr_release((void **)&page_map_fast_hot.records, span_record_tables[i1]);
#endif
  }
  return span_record_commit(base, size);
}

int page_map_set(void *base, size_t size, unsigned kind) {
  uintptr_t first = (uintptr_t)base >> PAGE_MAP_REGION_SHIFT;
  uintptr_t count = size >> PAGE_MAP_REGION_SHIFT;
  uintptr_t mask = ((uintptr_t)1 << PAGE_MAP_L2_BITS) - 1u;
  lock_acquire(&page_map_lock);
  page_map_fast_start();
  if (kind == REGION_MEDIUM_START && count != 0 && !records_made(base, size)) {
    lock_release(&page_map_lock);
    return 0;
  }
  for (uintptr_t r = first; r < first + count; r++) {
    if (page_map_l1[r >> PAGE_MAP_L2_BITS] == NULL) {
      if (kind == REGION_NOT_OURS)
        continue;
      if (table_made(r) == NULL) {
        fast_copy_changed(first, r - first);
        lock_release(&page_map_lock);
        if (r != first)
          page_map_set(base, (size_t)(r - first) << PAGE_MAP_REGION_SHIFT, REGION_NOT_OURS);
        return 0;
      }
    }
    unsigned k = r == first                    ? kind
                 : kind == REGION_LARGE_START  ? REGION_LARGE_REST
                 : kind == REGION_MEDIUM_START ? REGION_MEDIUM_SPAN
                                               : kind;
    page_map_l1[r >> PAGE_MAP_L2_BITS][r & mask] = (uint8_t)k;
  }
  fast_copy_changed(first, count);
#if PAGE_MAP_L1_BITS > 0
  if (kind != REGION_NOT_OURS && count != 0)
    hot_slot_chosen(first);
#endif
  lock_release(&page_map_lock);
  return 1;
}
