/* The region map's writer: tables are made under a lock; lookups need none (a byte is
 * written before the memory it describes is handed out, and cleared after the last block in
 * it is gone). */
#include "page_map.h"

#include "internal.h"

#if PAGE_MAP_L1_BITS == 0
uint8_t page_map_l2_static[(size_t)1 << PAGE_MAP_L2_BITS];
uint8_t *page_map_l1[1] = {page_map_l2_static};
uint8_t page_map_fast_l2[(size_t)1 << PAGE_MAP_L2_BITS];
#else
uint8_t *page_map_l1[(size_t)1 << PAGE_MAP_L1_BITS];
uint8_t *page_map_fast_l1[(size_t)1 << PAGE_MAP_L1_BITS];
/* The first-level entries ever filled lie in [l1_low, l1_high): a gate switch walks only
 * those. */
static uintptr_t l1_low = (uintptr_t)1 << PAGE_MAP_L1_BITS, l1_high;
#endif
static fmm_lock page_map_lock; /* every write to the map and to its fast copy */
static int gate_open = 1;

int page_map_set(void *base, size_t size, unsigned kind) {
  uintptr_t first = (uintptr_t)base >> PAGE_MAP_REGION_SHIFT;
  uintptr_t count = size >> PAGE_MAP_REGION_SHIFT;
  uintptr_t mask = ((uintptr_t)1 << PAGE_MAP_L2_BITS) - 1u;
  lock_acquire(&page_map_lock);
  for (uintptr_t r = first; r < first + count; r++) {
    if (page_map_l1[r >> PAGE_MAP_L2_BITS] == NULL) {
      if (kind == REGION_NOT_OURS)
        continue;
      /* Not through os_map: these tables are the manager's bookkeeping, not a heap's. */
      uint8_t *l2 = (uint8_t *)prim_map((size_t)1 << PAGE_MAP_L2_BITS);
      if (l2 == NULL) {
        lock_release(&page_map_lock);
        if (r != first)
          page_map_set(base, (size_t)(r - first) << PAGE_MAP_REGION_SHIFT, REGION_NOT_OURS);
        return 0;
      }
      page_map_l1[r >> PAGE_MAP_L2_BITS] = l2;
#if PAGE_MAP_L1_BITS > 0
      uintptr_t i1 = r >> PAGE_MAP_L2_BITS;
      if (i1 < l1_low)
        l1_low = i1;
      if (i1 >= l1_high)
        l1_high = i1 + 1;
      if (gate_open)
        page_map_fast_l1[i1] = l2;
#endif
    }
    unsigned k = kind == REGION_LARGE_START && r != first ? REGION_LARGE_REST : kind;
    page_map_l1[r >> PAGE_MAP_L2_BITS][r & mask] = (uint8_t)k;
#if PAGE_MAP_L1_BITS == 0
    if (gate_open)
      page_map_fast_l2[r] = (uint8_t)k;
#endif
  }
  lock_release(&page_map_lock);
  return 1;
}

void page_map_set_gate(int open) {
  lock_acquire(&page_map_lock);
  gate_open = open;
#if PAGE_MAP_L1_BITS == 0
  for (size_t r = 0; r < sizeof page_map_fast_l2; r++)
    page_map_fast_l2[r] = open ? page_map_l2_static[r] : (uint8_t)REGION_NOT_OURS;
#else
  for (uintptr_t i = l1_low; i < l1_high; i++)
    page_map_fast_l1[i] = open ? page_map_l1[i] : NULL;
#endif
  lock_release(&page_map_lock);
}
