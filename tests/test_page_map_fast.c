/* SPDX-License-Identifier: MIT */
/* The page map's fast copy on 64-bit targets (core/page_map.h), natively against the manager
 * linked in statically, where the test can look addresses up the way the fast paths do
 * (fast_header_region): in the hot slot with one load, elsewhere through the two levels, with the
 * same answers; NULL, misaligned and foreign addresses refused on both routes; and nothing found
 * on either while a mode has the copy closed. Regions outside the hot slot are marked in the map
 * by the test itself (page_map_set writes the map only, never the memory it describes). */
#include "test_blocks.h"

#include "core/inline_paths.h"

#if PAGE_MAP_L1_BITS > 0
#define SLOT_BYTES ((uintptr_t)1 << PAGE_MAP_HOT_BITS)

static int in_hot_slot(uintptr_t a) {
  return a - page_map_fast_hot.base < SLOT_BYTES;
}

int main(void) {
  tb_start_quiet("test_page_map_fast");
  void *m = fastmm_getmem(20000);
  void *s = fastmm_getmem(40);
  void *l = fastmm_getmem(1u << 20);
  if (!CHECK(m != NULL && s != NULL && l != NULL))
    return tu_finish("test_page_map_fast");
  if (!CHECK_MSG(page_map_fast_hot.base != PAGE_MAP_HOT_NONE, "no hot slot after three blocks"))
    return tu_finish("test_page_map_fast");
  CHECK_EQ(page_map_fast_hot.base & (SLOT_BYTES - 1u), 0u);
  /* The heap's blocks lie in the hot slot here (one mapping after another) and are found there. */
  CHECK_MSG(in_hot_slot((uintptr_t)m - 16u) && in_hot_slot((uintptr_t)s - 16u),
            "blocks at %p and %p, the hot slot at %p", m, s, (void *)page_map_fast_hot.base);
  CHECK_EQ(fast_header_region(m), REGION_MEDIUM_SPAN);
  CHECK_EQ(fast_header_region(s), REGION_MEDIUM_SPAN);
  /* A medium span's first region holds its header alone (REGION_MEDIUM_START, which the fast paths
   * do not take), so a block's region has one of its span's before it. */
  for (int b = 0; b < 2; b++) {
    uintptr_t r = ((uintptr_t)(b ? s : m) - 16u) >> PAGE_MAP_REGION_SHIFT;
    CHECK(region_is_medium(page_map_get((void *)((r - 1u) << PAGE_MAP_REGION_SHIFT))));
    while (page_map_get((void *)(r << PAGE_MAP_REGION_SHIFT)) == REGION_MEDIUM_SPAN)
      r--;
    CHECK_EQ(page_map_get((void *)(r << PAGE_MAP_REGION_SHIFT)), REGION_MEDIUM_START);
    CHECK_EQ(fast_header_region((void *)((r << PAGE_MAP_REGION_SHIFT) + 4096u)),
             REGION_MEDIUM_START);
  }
  CHECK_EQ(fast_header_region(l), page_map_get((char *)l - 16));
  CHECK(fast_header_region(l) != REGION_MEDIUM_SPAN);
  CHECK_EQ(fast_header_region(NULL), REGION_NOT_OURS);
  CHECK_EQ(fast_header_region((char *)m + 8), REGION_NOT_OURS); /* misaligned */
  static char foreign[64];
  CHECK_EQ(fast_header_region(foreign + 16), REGION_NOT_OURS);

  /* A region in the next slot and one in the slot before (both beyond the hot one), marked as a
   * medium span: found through the two levels; misaligned and neighbouring addresses not. */
  uintptr_t far[2] = {page_map_fast_hot.base + SLOT_BYTES + ((uintptr_t)5 << 16),
                      page_map_fast_hot.base - SLOT_BYTES + ((uintptr_t)7 << 16)};
  for (int i = 0; i < 2; i++) {
    if (page_map_get((void *)far[i]) != REGION_NOT_OURS)
      continue; /* ours already (a heap that spans slots): not the test's to change */
    if (!CHECK(page_map_set((void *)far[i], (size_t)1 << 16, REGION_MEDIUM_SPAN)))
      continue;
    CHECK_MSG(fast_header_region((void *)(far[i] + 16u)) == REGION_MEDIUM_SPAN,
              "a region %s the hot slot not found", i == 0 ? "after" : "before");
    CHECK_EQ(fast_header_region((void *)(far[i] + 24u)), REGION_NOT_OURS);
    CHECK_EQ(fast_header_region((void *)(far[i] + ((uintptr_t)1 << 16) + 16u)), REGION_NOT_OURS);
    /* Closed by a mode: neither route finds anything. */
    fastmm_enter_debug_mode();
    CHECK_EQ(fast_header_region((void *)(far[i] + 16u)), REGION_NOT_OURS);
    CHECK_EQ(fast_header_region(m), REGION_NOT_OURS);
    CHECK_EQ(fast_header_region(s), REGION_NOT_OURS);
    fastmm_exit_debug_mode();
    CHECK_EQ(fast_header_region(m), REGION_MEDIUM_SPAN);
    CHECK_EQ(fast_header_region((void *)(far[i] + 16u)), REGION_MEDIUM_SPAN);
    CHECK(page_map_set((void *)far[i], (size_t)1 << 16, REGION_NOT_OURS));
    CHECK_EQ(fast_header_region((void *)(far[i] + 16u)), REGION_NOT_OURS);
  }
  /* An address of the hot slot that is no region of ours. */
  uintptr_t hole = page_map_fast_hot.base + SLOT_BYTES - ((uintptr_t)3 << 16);
  if (page_map_get((void *)hole) == REGION_NOT_OURS)
    CHECK_EQ(fast_header_region((void *)(hole + 16u)), REGION_NOT_OURS);

  CHECK_EQ(fastmm_freemem(m), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(s), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(l), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_page_map_fast");
}
#else
int main(void) {
  tb_start_quiet("test_page_map_fast");
  printf("test_page_map_fast: 32-bit: one flat table, no hot slot\n");
  return tu_finish("test_page_map_fast");
}
#endif
