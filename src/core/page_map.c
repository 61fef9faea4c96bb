/* SPDX-License-Identifier: MIT */
/* The region map's writer: tables are made under a lock; lookups need none (a byte is
 * written before the memory it describes is handed out, and cleared after the last block in
 * it is gone). */
#include "page_map.h"

#include "lock.h"
#include "mode_hooks.h"
#include "prim/prim.h"

#if PAGE_MAP_L1_BITS == 0
uint8_t page_map_l2_static[(size_t)1 << PAGE_MAP_L2_BITS];
uint8_t *page_map_l1[1] = {page_map_l2_static};
#else
uint8_t *page_map_l1[(size_t)1 << PAGE_MAP_L1_BITS];
#endif
static fmm_lock page_map_lock;

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
  mode_gate_start_page_map();
  for (uintptr_t r = first; r < first + count && made; r++)
    made = table_made(r) != NULL;
  lock_release(&page_map_lock);
  return made;
}

int page_map_set(void *base, size_t size, unsigned kind) {
  uintptr_t first = (uintptr_t)base >> PAGE_MAP_REGION_SHIFT;
  uintptr_t count = size >> PAGE_MAP_REGION_SHIFT;
  uintptr_t mask = ((uintptr_t)1 << PAGE_MAP_L2_BITS) - 1u;
  lock_acquire(&page_map_lock);
  mode_gate_start_page_map();
  for (uintptr_t r = first; r < first + count; r++) {
    if (page_map_l1[r >> PAGE_MAP_L2_BITS] == NULL) {
      if (kind == REGION_NOT_OURS)
        continue;
      if (table_made(r) == NULL) {
        mode_gate_page_map_changed(first, r - first);
        lock_release(&page_map_lock);
        if (r != first)
          page_map_set(base, (size_t)(r - first) << PAGE_MAP_REGION_SHIFT, REGION_NOT_OURS);
        return 0;
      }
    }
    unsigned k = kind == REGION_LARGE_START && r != first ? REGION_LARGE_REST : kind;
    page_map_l1[r >> PAGE_MAP_L2_BITS][r & mask] = (uint8_t)k;
  }
  mode_gate_page_map_changed(first, count);
  lock_release(&page_map_lock);
  return 1;
}
