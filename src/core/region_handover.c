/* SPDX-License-Identifier: MIT */
/* Memory changing hands (region_handover.h): a count of the changes under way and a count of
 * those done, read before and after a look at the page map, as a sequence lock reads its
 * sequence: a look that overlapped a change is taken again. */
#include "region_handover.h"

#include "atomics.h"
#include "compiler.h"
#include "page_map.h"
#include "policy.h"
#include "prim/prim.h"

static uint32_t changing_now; /* changes between region_handover_begin and _end */
static uint32_t changes_done; /* region_handover_end calls so far (wraps) */

void region_handover_begin(void) {
  fmm_add_u32_seq_cst(&changing_now, 1u);
}

void region_handover_end(void) {
  /* The count first: a look that saw no range leaving at its end then sees it changed. */
  fmm_add_u32_seq_cst(&changes_done, 1u);
  fmm_add_u32_seq_cst(&changing_now, (uint32_t)-1);
}

static int looks_ours(const void *p, int unreadable_counts) {
  return page_map_get(p) != REGION_NOT_OURS || (unreadable_counts && !prim_readable(p, 1));
}

/* One look, or -1 when a range changed hands while it looked. */
static int look_once(const void *p, int unreadable_counts) {
  uint32_t done = fmm_load_u32_seq_cst(&changes_done);
  if (fmm_load_u32_seq_cst(&changing_now) != 0)
    return -1;
  int ours = looks_ours(p, unreadable_counts);
  if (fmm_load_u32_seq_cst(&changing_now) != 0 || fmm_load_u32_seq_cst(&changes_done) != done)
    return -1;
  return ours;
}

/* Set once a wait ran out: the change it waited for will not finish (its thread is gone), and
 * later questions do not wait for it again (a program ending frees through the records). */
static uint32_t waited_out;

int region_ours(const void *p, int unreadable_counts) {
  int ours = look_once(p, unreadable_counts);
  if (FMM_LIKELY(ours >= 0))
    return ours;
  if (fmm_load_u32_relaxed(&waited_out))
    return looks_ours(p, unreadable_counts);
  uint32_t start = prim_tick_count_ms();
  for (;;) {
    prim_yield();
    ours = look_once(p, unreadable_counts);
    if (ours >= 0)
      return ours;
    if (prim_tick_count_ms() - start >= REGION_HANDOVER_WAIT_MS) {
      fmm_store_u32_relaxed(&waited_out, 1u);
      return looks_ours(p, unreadable_counts);
    }
  }
}
