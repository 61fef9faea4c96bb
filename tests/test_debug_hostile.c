/* SPDX-License-Identifier: MIT */
/* Hostile input in debug mode (found by the fuzzer, tests/fuzz, and narrowed down here). Debug
 * mode exists to survive a program's memory errors and report them; these must neither crash
 * the manager nor let the error through:
 *
 *   1. An underrun over the whole debug header (the 64 bytes before the block, FastMM's "wild
 *      write before the block"), its header word included: FreeMem and ReallocMem refuse the
 *      block, the usable size is 0, and fastmm_scan_debug_blocks_for_corruption() reports it
 *      (returns 0) without reading through the damaged header's fields (stack depth, size).
 *      Mended, it frees.
 *   2. A pointer the program freed before debug mode whose address now starts the outer block
 *      of a debug block (the debug block sits 64 bytes further in, its header first):
 *      freeing it again is a double free and must be refused, and a ReallocMem of it return
 *      NULL (even for a size the in-place fast paths would keep), whether debug mode is still
 *      on or was left, and whatever the stack depth setting is by then; the debug block stays
 *      live and frees normally.
 *   3. A block left with a damaged header at the end: the leak report that runs when the
 *      process ends must not crash on it (the test's exit code shows it).
 *
 * Events go to no file here (the event log is set to the null device). */
#include "test_blocks.h"

static size_t events(int kind) {
  return fastmm_get_debug_event_count(kind);
}

static void underrun_over_the_header(void) {
  unsigned char saved[64];
  unsigned char *q = (unsigned char *)fastmm_getmem(100);
  size_t before;
  if (!CHECK(q != NULL))
    return;
  CHECK_EQ(tb_kind(q), TB_KIND_DEBUG);
  memset(q, 0x11, 100);
  memcpy(saved, q - sizeof saved, sizeof saved);
  memset(q - sizeof saved, 0xFF, sizeof saved); /* the underrun */
  CHECK_MSG(fastmm_freemem(q) != FASTMM_OK, "a debug block with a damaged header was freed");
  CHECK_MSG(fastmm_reallocmem(q, 5000) == NULL, "a debug block with a damaged header was resized");
  CHECK_EQ(fastmm_usable_size(q), 0);
  before = events(FASTMM_EVENT_HEADER_CORRUPTED);
  fflush(stdout);
  CHECK_MSG(fastmm_scan_debug_blocks_for_corruption() == 0, "the scan missed a damaged header");
  CHECK_MSG(events(FASTMM_EVENT_HEADER_CORRUPTED) > before,
            "the scan did not report the damaged header");
  CHECK_EQ(fastmm_check_heap(), 0);
  /* Mended: it frees, and the scan is clean. */
  memcpy(q - sizeof saved, saved, sizeof saved);
  CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
  CHECK_EQ(fastmm_scan_debug_blocks_for_corruption(), 1);
}

/* A stale pointer p (freed before debug mode) whose address becomes the outer block of a debug
 * block made with `depth` stack entries; the second free of p comes while debug mode is still
 * on (`still_on`) or after it was left, and with the stack depth setting then at
 * `depth_at_free`. In every case it is a double free and must be refused. */
static void stale_pointer_is_an_outer_block(unsigned depth, int still_on, unsigned depth_at_free) {
  size_t n, footer = 4u + 2u * depth * sizeof(void *) + 4u; /* checksum, traces, reserved */
  int found = 0;
  char what[96];
  snprintf(what, sizeof what, "depth %u, freed %s debug mode at depth %u", depth,
           still_on ? "in" : "after", depth_at_free);
  /* Try a few sizes: the outer block must land where the stale block was (a thread cache hands
   * back the block it got last, for a request of the same class). */
  for (n = 40; n <= 2000 && !found; n += 40) {
    size_t outer_size = 64 + n + footer; /* FastMM5's layout: header, data, footer */
    unsigned char *p = (unsigned char *)fastmm_getmem(outer_size), *q;
    if (!CHECK(p != NULL))
      return;
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK); /* p is stale from here on */
    fastmm_set_debug_mode_stack_trace_entry_count(depth);
    fastmm_enter_debug_mode();
    q = (unsigned char *)fastmm_getmem(n);
    if (!CHECK(q != NULL)) {
      fastmm_exit_debug_mode();
      return;
    }
    fastmm_set_debug_mode_stack_trace_entry_count(depth_at_free);
    if (!still_on)
      fastmm_exit_debug_mode();
    if (q == p + 64) {
      fastmm_memory_manager_ex mm;
      void *r;
      fastmm_get_memory_manager(&mm);
      found = 1;
      memset(q, 0x22, n);
      /* A ReallocMem of it is a ReallocMem of a freed block: NULL, even a size the in-place
       * fast paths (C and NASM) would keep. */
      r = fastmm_reallocmem(p, outer_size);
      CHECK_MSG(r == NULL, "%s: reallocmem(%p, %zu) of the stale pointer = %p", what, (void *)p,
                outer_size, r);
      r = mm.realloc_mem(p, (intptr_t)outer_size);
      CHECK_MSG(r == NULL, "%s: Delphi ReallocMem(%p, %zu) of the stale pointer = %p", what,
                (void *)p, outer_size, r);
      CHECK_MSG(fastmm_usable_size(p) == 0, "%s: usable_size of the stale pointer %zu", what,
                fastmm_usable_size(p));
      CHECK_MSG(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER,
                "%s: a second free of %p (freed before debug mode; now the outer block of the "
                "debug block %p) was accepted",
                what, (void *)p, (void *)q);
      CHECK_MSG(fastmm_owns_block(q) == 1, "%s: the debug block %p is no longer live", what,
                (void *)q);
      CHECK_MSG(fastmm_scan_debug_blocks_for_corruption() == 1, "%s: the scan found damage", what);
      CHECK(q[0] == 0x22 && q[n - 1] == 0x22);
      CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
    } else {
      CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
    }
    if (still_on)
      fastmm_exit_debug_mode();
  }
  CHECK_MSG(found, "%s: no debug block reused a stale block's address: the case was not tried",
            what);
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  unsigned char *left;
  tb_start_quiet("test_debug_hostile");
  fastmm_set_debug_mode_stack_trace_entry_count(0);
  fastmm_enter_debug_mode();
  underrun_over_the_header();
  fastmm_exit_debug_mode();
  stale_pointer_is_an_outer_block(0, 1, 0);
  stale_pointer_is_an_outer_block(0, 0, 0);
  stale_pointer_is_an_outer_block(4, 1, 4);
  stale_pointer_is_an_outer_block(4, 1, 0);
  stale_pointer_is_an_outer_block(2, 0, 8);
  /* 3: left damaged; the leak report at exit meets it. */
  fastmm_set_debug_mode_stack_trace_entry_count(0);
  fastmm_enter_debug_mode();
  left = (unsigned char *)fastmm_getmem(100);
  if (CHECK(left != NULL))
    memset(left - 64, 0xFF, 64);
  fastmm_exit_debug_mode();
  printf("  the process now ends with a damaged debug block: the leak report must survive it\n");
  return tu_finish("test_debug_hostile");
}
