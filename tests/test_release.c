/* SPDX-License-Identifier: MIT */
/* Giving memory back: after ~256 MB of mixed blocks are freed and the spare spans released, the
 * manager maps no more than a few MB; a loop that allocates and frees one block of a kind maps
 * nothing after its first turn (policy.h, "Giving memory back"); a large-block loop reuses its
 * block from the large cache and ends where it started once the cache is given back. */
#include "test_blocks.h"

#include "core/medium.h"
#include "fastmm_test.h"

#define MB TB_MB
#define TOTAL_TARGET (256u * MB)
#define SLACK (4u * MB) /* what may stay mapped after a release: "within a few MB" */
#define MAX_BLOCKS 80000
#define LOOP_MAPS 2u /* maps a one-block loop may make: its first turn needs at most a span */

static unsigned char *blocks[MAX_BLOCKS];
static size_t block_sizes[MAX_BLOCKS];

/* Fills the block with the low byte of its index. */
static void fill(unsigned char *p, size_t size, size_t i) {
  memset(p, (int)(i & 0xFF), size);
}

static void big_release(void) {
  size_t have[TB_KINDS], n, i, total;
  rng_state rng;
  fastmm_state s0, s1, kept, s2;
  rng_seed(&rng, 256);
  tb_state(&s0);
  printf("  start: %zu bytes mapped\n", s0.os_bytes_reserved);
  /* A quarter of the bytes in small blocks, half in medium, a quarter in large. */
  n = tb_fill_mixed(&rng, TOTAL_TARGET, 3 * MB, blocks, block_sizes, MAX_BLOCKS, fill, have);
  total = have[TB_SMALL] + have[TB_MEDIUM] + have[TB_LARGE];
  tb_state(&s1);
  printf("  %zu blocks, %zu bytes: %zu bytes mapped, peak %zu\n", n, total, s1.os_bytes_reserved,
         s1.os_bytes_peak);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0) + n);
  CHECK(s1.os_bytes_reserved >= total);
  CHECK(s1.os_bytes_peak >= s1.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
  /* Free in a shuffled order, checking the first and last byte of each. */
  tb_shuffle(&rng, blocks, block_sizes, n);
  for (i = 0; i < n; i++) {
    unsigned char *p = blocks[i];
    CHECK(p[0] == p[block_sizes[i] - 1]);
    CHECK(fastmm_freemem(p) == FASTMM_OK);
  }
  tb_state(&kept);
  fastmm_release_free_memory();
  tb_state(&s2);
  printf("  after free: %zu bytes mapped; after release: %zu\n", kept.os_bytes_reserved,
         s2.os_bytes_reserved);
  /* Freeing 128 MB of medium blocks emptied many spans; the manager keeps at least
   * MEDIUM_SPARE_SPANS of them for reuse (policy.h) and the release gives those back. */
  CHECK_MSG(kept.os_bytes_reserved >=
                s2.os_bytes_reserved +
                    (size_t)MEDIUM_SPARE_SPANS * (MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES),
            "release gave back %zu bytes, a spare span is %u",
            kept.os_bytes_reserved - s2.os_bytes_reserved,
            MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES);
  CHECK_EQ(tb_blocks_in_use(&s2), tb_blocks_in_use(&s0));
  CHECK_EQ(s2.thread_cached_blocks, 0);
  CHECK_EQ(s2.large.bytes_reserved, s0.large.bytes_reserved);
  CHECK_MSG(s2.os_bytes_reserved <= s0.os_bytes_reserved + SLACK,
            "%zu bytes still mapped after releasing everything (started with %zu)",
            s2.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK(s2.os_bytes_peak >= s1.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* One block of `size` allocated and freed `turns` times: maps at most LOOP_MAPS times. */
static void one_block_loop(size_t size, unsigned turns) {
  fastmm_state s0, s1;
  unsigned i;
  tb_state(&s0);
  for (i = 0; i < turns; i++) {
    unsigned char *p = (unsigned char *)fastmm_getmem(size);
    if (!CHECK_MSG(p != NULL, "getmem(%zu), turn %u", size, i))
      return;
    p[0] = (unsigned char)i;
    p[size - 1] = (unsigned char)i;
    CHECK(fastmm_freemem(p) == FASTMM_OK);
  }
  tb_state(&s1);
  CHECK_MSG(s1.os_map_calls - s0.os_map_calls <= LOOP_MAPS,
            "%u turns of a %zu-byte block mapped %zu times", turns, size,
            s1.os_map_calls - s0.os_map_calls);
  CHECK_MSG(s1.os_unmap_calls - s0.os_unmap_calls <= LOOP_MAPS,
            "%u turns of a %zu-byte block unmapped %zu times", turns, size,
            s1.os_unmap_calls - s0.os_unmap_calls);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
}

/* Small and medium in turn: neither kind's span goes back and forth. */
static void mixed_loop(unsigned turns) {
  fastmm_state s0, s1;
  unsigned i;
  tb_state(&s0);
  for (i = 0; i < turns; i++) {
    void *a = fastmm_getmem(200), *b = fastmm_getmem(70000);
    CHECK(a && b);
    CHECK(fastmm_freemem(a) == FASTMM_OK);
    CHECK(fastmm_freemem(b) == FASTMM_OK);
  }
  tb_state(&s1);
  CHECK_MSG(s1.os_map_calls - s0.os_map_calls <= LOOP_MAPS, "mixed loop mapped %zu times",
            s1.os_map_calls - s0.os_map_calls);
}

/* Large blocks are kept in the large cache when freed: a loop of one large block growing by a
 * few KB a turn reserves address space once and commits more of it as the size grows (one
 * call per 64 KB region added at most, never one per turn); two idle periods give everything
 * back, and the loop ends where it started. */
static void large_loop(void) {
  fastmm_state s0, s1;
  unsigned i;
  size_t first_commit = 0;
  fastmm_release_free_memory();
  tb_state(&s0);
  for (i = 0; i < 200; i++) {
    size_t size = MB + (size_t)i * 4099u;
    unsigned char *p = (unsigned char *)fastmm_getmem(size);
    if (!CHECK_MSG(p != NULL, "large getmem(%zu), turn %u", size, i))
      return;
    CHECK_EQ(tb_kind(p), BLOCK_FLAG_LARGE);
    p[0] = 1;
    p[size / 2] = 2;
    p[size - 1] = 3;
    CHECK(p[0] + p[size / 2] + p[size - 1] == 6);
    CHECK(fastmm_freemem(p) == FASTMM_OK);
    if (i == 0) {
      fastmm_get_state(&s1);
      first_commit = s1.os_bytes_reserved - s0.os_bytes_reserved;
    }
  }
  tb_state(&s1);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use);
  CHECK_MSG(s1.os_map_calls - s0.os_map_calls <= 1 + (200u * 4099u) / LARGE_GRANULARITY + 1,
            "200 turns of a growing large block made %zu OS calls",
            s1.os_map_calls - s0.os_map_calls);
  CHECK_MSG(s1.os_bytes_reserved > s0.os_bytes_reserved, "the freed block was not kept");
  CHECK(first_commit >= MB);
  fastmm_release_idle_memory();
  fastmm_release_idle_memory();
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s1.large.bytes_reserved, s0.large.bytes_reserved);
  CHECK(s1.os_unmap_calls - s0.os_unmap_calls >= 1);
}

/* Spans a burst of medium blocks empties while a big heap is live stay mapped as spares, up to
 * 1/8 of the arenas' spans (policy.h, MEDIUM_SPARE_*), and the next burst takes them without a
 * mapping; once everything is freed, no more than MEDIUM_SPARE_SPANS are left. Four blocks of
 * SPAN_QUARTER fill a default span exactly, so a burst's blocks after the first few own their
 * spans. The idle thread is stopped meanwhile: no idle period gives a spare back under the test. */
#define SPAN_QUARTER ((MEDIUM_SPAN_SIZE - MEDIUM_HEADER_SIZE) / 4u - MEDIUM_HEADER_SIZE)
#define LIVE_SPANS 40u /* 80 MB of spans: 5 spares allowed */
#define BURST_SPANS 4u /* at least 3 of them its own */
static void spares_follow_heap(void) {
  static unsigned char *live[LIVE_SPANS * 4u], *burst[BURST_SPANS * 4u];
  fastmm_state s0, s1, s2, s3;
  unsigned interval = fastmm_get_idle_release_interval(), i, round;
  fastmm_set_idle_release_interval(0);
  fastmm_release_free_memory();
  tb_state(&s0);
  for (i = 0; i < LIVE_SPANS * 4u; i++) {
    live[i] = (unsigned char *)fastmm_getmem(SPAN_QUARTER);
    if (!CHECK_MSG(live[i] != NULL, "getmem(%u), block %u", (unsigned)SPAN_QUARTER, i))
      return;
    CHECK_EQ(tb_kind(live[i]), BLOCK_FLAG_MEDIUM);
    fill(live[i], SPAN_QUARTER, i);
  }
  for (round = 0; round < 2; round++) {
    for (i = 0; i < BURST_SPANS * 4u; i++) {
      burst[i] = (unsigned char *)fastmm_getmem(SPAN_QUARTER);
      if (!CHECK_MSG(burst[i] != NULL, "burst getmem, block %u", i))
        return;
      fill(burst[i], SPAN_QUARTER, i + 7u);
    }
    tb_state(&s1);
    if (round == 1)
      CHECK_MSG(s1.os_map_calls == s2.os_map_calls, "the second burst mapped %zu times",
                s1.os_map_calls - s2.os_map_calls);
    for (i = 0; i < BURST_SPANS * 4u; i++) {
      CHECK(burst[i][0] == (unsigned char)(i + 7u) && burst[i][SPAN_QUARTER - 1] == burst[i][0]);
      CHECK(fastmm_freemem(burst[i]) == FASTMM_OK);
    }
    tb_state(&s2);
    CHECK_MSG(s2.os_unmap_calls == s1.os_unmap_calls,
              "freeing the burst unmapped %zu times (round %u)",
              s2.os_unmap_calls - s1.os_unmap_calls, round);
    CHECK_MSG(s2.os_bytes_reserved + MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES >=
                  s1.os_bytes_reserved,
              "freeing the burst gave back %zu bytes", s1.os_bytes_reserved - s2.os_bytes_reserved);
  }
  for (i = 0; i < LIVE_SPANS * 4u; i++) {
    CHECK(live[i][0] == (unsigned char)i && live[i][SPAN_QUARTER - 1] == live[i][0]);
    CHECK(fastmm_freemem(live[i]) == FASTMM_OK);
  }
  tb_state(&s3);
  CHECK_MSG(s3.os_bytes_reserved <=
                s0.os_bytes_reserved +
                    MEDIUM_SPARE_SPANS * (MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES),
            "%zu bytes more mapped than at the start after everything was freed",
            s3.os_bytes_reserved - s0.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_set_idle_release_interval(interval);
}

/* A heap that churns: a burst of medium blocks owning CHURN_SPANS spans, freed and made again
 * while few other spans are live, so that the share bound allows one spare. Spans the burst
 * empties beyond it are unmapped at first; once the heap maps spans again within the churn window
 * (policy.h, MEDIUM_SPARE_CHURN_MS) it keeps them, so that a later burst maps nothing. The window
 * is set to an hour meanwhile (fastmm_test_set_churn_window): under an emulator one round took
 * longer than the default 500 ms, and what is asserted must not depend on the machine's speed.
 * fastmm_release_free_memory ends the allowance: the burst after it is unmapped again. The idle
 * thread is stopped meanwhile. */
#define CHURN_SPANS 6u
#define CHURN_ROUNDS 20u /* the allowance needs three or four; more is a margin, not a timing */
#define CHURN_WINDOW_MS (3600u * 1000u)
static size_t churn_round(unsigned char **burst, fastmm_state *mapped, fastmm_state *freed) {
  unsigned i;
  for (i = 0; i < CHURN_SPANS * 4u; i++) {
    burst[i] = (unsigned char *)fastmm_getmem(SPAN_QUARTER);
    if (!CHECK_MSG(burst[i] != NULL, "churn getmem, block %u", i))
      return 0;
    burst[i][0] = burst[i][SPAN_QUARTER - 1] = (unsigned char)(i + 3u);
  }
  tb_state(mapped);
  for (i = 0; i < CHURN_SPANS * 4u; i++) {
    CHECK(burst[i][0] == (unsigned char)(i + 3u) && burst[i][SPAN_QUARTER - 1] == burst[i][0]);
    CHECK(fastmm_freemem(burst[i]) == FASTMM_OK);
  }
  tb_state(freed);
  return 1;
}

static void churning_heap_keeps_spares(void) {
  static unsigned char *burst[CHURN_SPANS * 4u];
  fastmm_state before, mapped, freed;
  unsigned interval = fastmm_get_idle_release_interval(), round, quiet_round = 0;
  uint32_t window = fastmm_test_set_churn_window(CHURN_WINDOW_MS);
  fastmm_set_idle_release_interval(0);
  fastmm_release_free_memory();
  for (round = 1; round <= CHURN_ROUNDS && quiet_round == 0; round++) {
    tb_state(&before);
    if (!churn_round(burst, &mapped, &freed))
      return;
    if (round == 1)
      CHECK_MSG(freed.os_unmap_calls - before.os_unmap_calls >= CHURN_SPANS - 2u,
                "the first burst's spans were kept (%zu unmapped): the share bound allows one",
                freed.os_unmap_calls - before.os_unmap_calls);
    if (round > 1 && mapped.os_map_calls == before.os_map_calls &&
        freed.os_unmap_calls == mapped.os_unmap_calls)
      quiet_round = round;
  }
  if (CHECK_MSG(quiet_round != 0, "a churning heap mapped or unmapped spans in each of %u rounds",
                CHURN_ROUNDS)) {
    printf("  churn: round %u mapped and unmapped nothing\n", quiet_round);
    /* The explicit release gives the spares back and ends the allowance. */
    fastmm_release_free_memory();
    tb_state(&before);
    CHECK_MSG(before.os_bytes_reserved + (CHURN_SPANS - 1u) * MEDIUM_SPAN_SIZE <=
                  freed.os_bytes_reserved,
              "the release kept the spares (%zu bytes mapped before it, %zu after)",
              freed.os_bytes_reserved, before.os_bytes_reserved);
    if (churn_round(burst, &mapped, &freed))
      CHECK_MSG(freed.os_unmap_calls - mapped.os_unmap_calls >= CHURN_SPANS - 2u,
                "after the release the burst's spans were kept (%zu unmapped)",
                freed.os_unmap_calls - mapped.os_unmap_calls);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK_EQ(fastmm_test_set_churn_window(window), CHURN_WINDOW_MS);
  fastmm_set_idle_release_interval(interval);
}

int main(void) {
  printf("test_release (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  big_release();
  one_block_loop(100, 10000);
  one_block_loop(SMALL_MAX_USER, 10000);
  one_block_loop(100000, 10000);
  one_block_loop(MEDIUM_MAX_USER, 10000);
  mixed_loop(10000);
  large_loop();
  spares_follow_heap();
  churning_heap_keeps_spares();
  /* Once more after an explicit release: the first turn may map, the rest may not. */
  fastmm_release_free_memory();
  one_block_loop(3000, 10000);
  one_block_loop(24, 10000);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_release");
}
