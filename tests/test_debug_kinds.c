/* SPDX-License-Identifier: MIT */
/* Blocks of either kind are freed correctly in either mode (fastmm.h, debug mode): debug blocks
 * whose outer block is small, medium or large, made in debug mode, are measured, resized and
 * freed after debug mode is left; ordinary blocks of every kind, made outside, are resized and
 * freed in debug mode. Contents survive every resize, nothing is left in use, the heap is
 * consistent. (Found by the fuzzer, tests/fuzz: a debug block inside a large outer block was
 * refused by FreeMem once debug mode was off.) */
#include "test_blocks.h"

static const size_t sizes[] = {0,
                               1,
                               100,
                               1000,
                               SMALL_MAX_USER,
                               5000,
                               100000,
                               MEDIUM_MAX_USER - 200,
                               MEDIUM_MAX_USER,
                               600000,
                               3u * 1024u * 1024u};
#define N (sizeof sizes / sizeof sizes[0])

static void made_in_one_mode_used_in_the_other(int debug_first) {
  void *p[N], *q[N];
  size_t i;
  fastmm_state s0, s1;
  const char *mode =
      debug_first ? "debug blocks after debug mode" : "ordinary blocks in debug mode";
  tb_state(&s0);
  if (debug_first)
    fastmm_enter_debug_mode();
  for (i = 0; i < N; i++) {
    p[i] = fastmm_getmem(sizes[i]);
    q[i] = fastmm_getmem(sizes[i]);
    if (CHECK(p[i] && q[i])) {
      tu_fill_pattern(p[i], sizes[i], (uint32_t)i);
      tu_fill_pattern(q[i], sizes[i], (uint32_t)i + 100u);
      CHECK_EQ(tb_kind(p[i]) == TB_KIND_DEBUG, debug_first != 0);
    }
  }
  if (debug_first)
    fastmm_exit_debug_mode();
  else
    fastmm_enter_debug_mode();
  for (i = 0; i < N; i++) {
    size_t to = sizes[i] * 2 + 10;
    void *r;
    if (!p[i] || !q[i])
      continue;
    CHECK_MSG(fastmm_owns_block(p[i]) == 1, "%s: %zu-byte block not owned", mode, sizes[i]);
    CHECK_MSG(fastmm_usable_size(p[i]) >= sizes[i], "%s: %zu-byte block: usable %zu", mode,
              sizes[i], fastmm_usable_size(p[i]));
    CHECK(tu_check_pattern(p[i], sizes[i], (uint32_t)i) == (size_t)-1);
    CHECK_MSG(fastmm_freemem(p[i]) == FASTMM_OK, "%s: freemem of a %zu-byte block refused", mode,
              sizes[i]);
    r = fastmm_reallocmem(q[i], to);
    CHECK_MSG(r != NULL, "%s: reallocmem of a %zu-byte block to %zu = NULL", mode, sizes[i], to);
    if (r) {
      CHECK(tu_check_pattern(r, sizes[i], (uint32_t)i + 100u) == (size_t)-1);
      CHECK_MSG(fastmm_freemem(r) == FASTMM_OK, "%s: freemem of a resized %zu-byte block refused",
                mode, sizes[i]);
    }
  }
  /* Leaving debug mode frees the quarantine; enter and leave once if it is already off. */
  if (!debug_first)
    fastmm_exit_debug_mode();
  fastmm_enter_debug_mode();
  fastmm_exit_debug_mode();
  tb_state(&s1);
  CHECK_MSG(tb_blocks_in_use(&s1) == tb_blocks_in_use(&s0), "%s: %zu blocks in use, %zu before",
            mode, tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  tb_start_quiet("test_debug_kinds");
  made_in_one_mode_used_in_the_other(1);
  made_in_one_mode_used_in_the_other(0);
  return tu_finish("test_debug_kinds");
}
