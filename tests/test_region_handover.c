/* SPDX-License-Identifier: MIT */
/* Memory changing hands between the OS and the heap (core/region_handover.h), natively against
 * the manager linked in statically: while a change is under way the page map and the OS's
 * mappings disagree (mapped but not yet marked, unmarked but not yet unmapped), and the
 * question the bound Pascal records ask ("ours, or unreadable?") must wait it out rather than
 * answer "the previous manager's". A second thread asks while this one holds a change open; the
 * answer it gives once the change is done must be "ours", in both directions. */
#include "test_blocks.h"

#include "core/atomics.h"
#include "core/page_map.h"
#include "core/region_handover.h"
#include "prim/prim.h"

static const void *asked_about;
static uint32_t answered, answer;

static void ask(void *arg) {
  (void)arg;
  uint32_t a = (uint32_t)region_ours(asked_about, 1);
  fmm_store_u32_relaxed(&answer, a);
  fmm_store_u32_release(&answered, 1u);
}

/* Starts the question on another thread while a change is open, gives it time to be asked (it
 * must not be answered while the change is open, however long that is), then lets `finish`
 * complete the change and returns the answer. */
static int asked_during_change(const void *p, void (*finish)(void *), void *base) {
  tu_thread t;
  asked_about = p;
  fmm_store_u32_relaxed(&answered, 0u);
  region_handover_begin();
  if (!CHECK(tu_thread_start(&t, ask, NULL))) {
    region_handover_end();
    return -1;
  }
  prim_sleep_ms(50);
  CHECK_MSG(fmm_load_u32_acquire(&answered) == 0, "answered %u while the change was under way",
            (unsigned)answer);
  finish(base);
  region_handover_end();
  tu_thread_join(&t);
  CHECK(fmm_load_u32_acquire(&answered) == 1);
  return (int)answer;
}

static void mark(void *base) {
  CHECK(page_map_set(base, 64 * 1024, REGION_LARGE_START) == 1);
}

static void unmap(void *base) {
  prim_unmap(base, 128 * 1024);
}

int main(void) {
  tb_start_quiet("test_region_handover");
  /* Mapped, readable, not yet in the page map: the arrival of a large block. */
  char *base = (char *)prim_reserve(128 * 1024, 0);
  if (!CHECK(base != NULL) || !CHECK(prim_commit(base, 64 * 1024)))
    return tu_finish("test_region_handover");
  CHECK(region_ours(base + 64, 1) == 0); /* no change under way: readable and not ours */
  CHECK_MSG(asked_during_change(base + 64, mark, base) == 1, "arrival: not ours once marked");
  CHECK(region_ours(base + 64, 0) == 1);
  /* Out of the page map, still mapped: the departure of the same block. */
  page_map_set(base, 64 * 1024, REGION_NOT_OURS);
  CHECK_MSG(asked_during_change(base + 64, unmap, base) == 1,
            "departure: a pointer into memory given back is not ours");
  CHECK(region_ours(base + 64, 0) == 0);
  return tu_finish("test_region_handover");
}
