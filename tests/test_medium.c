/* SPDX-License-Identifier: MIT */
/* Medium blocks: requests SMALL_MAX_USER+1 .. MEDIUM_MAX_USER are medium, 16-aligned and big
 * enough; neighbours coalesce when freed, in every order, so three adjacent blocks become one
 * block that a request of their combined size gets back at the first one's address. */
#include "test_blocks.h"

/* A medium block of this request is exactly 32 KB with its header, and three of them make
 * 96 KB, the lower bound of a medium bin: a good-fit search for 96 KB starts in the bin that
 * holds the coalesced block (policy.h, MEDIUM_BIN_*), so it must be found. */
#define PIECE_BLOCK (32u * 1024u)
#define PIECE_USER (PIECE_BLOCK - MEDIUM_HEADER_SIZE)
#define RUN 5 /* guard, A, B, C, guard */

static int check_medium_block(void *p, size_t size) {
  uint32_t h;
  size_t usable;
  if (!CHECK_MSG(p != NULL, "getmem(%zu) returned NULL", size))
    return 0;
  h = block_header(p);
  usable = fastmm_usable_size(p);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM, "size %zu: header 0x%08lx kind %s", size,
            (unsigned long)h, tb_kind_name(h & BLOCK_KIND_MASK));
  CHECK_MSG((h & (MEDIUM_FLAG_SMALL_SPAN | MEDIUM_FLAG_SENTINEL)) == 0,
            "size %zu: user block flagged as span or sentinel, header 0x%08lx", size,
            (unsigned long)h);
  CHECK_MSG(tu_is_aligned(p, 16), "size %zu: %p", size, p);
  CHECK_MSG(usable >= size, "size %zu: usable %zu", size, usable);
  /* A block is split when the rest could be a block of its own, so it never carries more than
   * a minimal medium block of slack beyond the 16-byte rounding. */
  CHECK_MSG(usable < size + MEDIUM_MIN_BLOCK_SIZE + 16u, "size %zu: usable %zu", size, usable);
  CHECK_MSG(tb_medium_size(p) >= usable + MEDIUM_HEADER_SIZE && tb_medium_size(p) % 16 == 0,
            "size %zu: usable %zu, header size field %lu", size, usable,
            (unsigned long)tb_medium_size(p));
  CHECK(fastmm_owns_block(p) == 1);
  return 1;
}

static void sizes_sweep(void) {
  static void *live[4096];
  static size_t live_size[4096];
  size_t n = 0, size, i, bytes = 0;
  fastmm_state before, during, after;
  tb_state(&before);
  /* Every size just above the small limit, a prime stride through the range, and the top. */
  for (size = SMALL_MAX_USER + 1; size <= MEDIUM_MAX_USER && n < 4096;) {
    void *p = fastmm_getmem(size);
    if (!check_medium_block(p, size))
      return;
    tu_fill_pattern(p, size, (uint32_t)size);
    live[n] = p;
    live_size[n++] = size;
    bytes += fastmm_usable_size(p);
    if (size < SMALL_MAX_USER + 300)
      size++;
    else if (size + 2039 < MEDIUM_MAX_USER - 40)
      size += 2039;
    else if (size < MEDIUM_MAX_USER - 40)
      size = MEDIUM_MAX_USER - 40;
    else
      size++;
  }
  CHECK(live_size[n - 1] == MEDIUM_MAX_USER);
  tb_state(&during);
  CHECK_EQ(during.medium.blocks_in_use, before.medium.blocks_in_use + n);
  CHECK_EQ(during.medium.bytes_in_use, before.medium.bytes_in_use + bytes);
  CHECK_EQ(during.large.blocks_in_use, before.large.blocks_in_use);
  CHECK(during.medium.bytes_reserved >= during.medium.bytes_in_use);
  CHECK_EQ(fastmm_check_heap(), 0);
  for (i = 0; i < n; i++) {
    size_t bad = tu_check_pattern(live[i], live_size[i], (uint32_t)live_size[i]);
    CHECK_MSG(bad == (size_t)-1, "size %zu: pattern broken at %zu", live_size[i], bad);
  }
  /* Free every other block first, then the rest, checking the heap on the way. */
  for (i = 0; i < n; i += 2)
    CHECK(fastmm_freemem(live[i]) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  for (i = 1; i < n; i += 2) {
    size_t bad = tu_check_pattern(live[i], live_size[i], (uint32_t)live_size[i]);
    CHECK_MSG(bad == (size_t)-1, "size %zu: pattern broken at %zu", live_size[i], bad);
    CHECK(fastmm_freemem(live[i]) == FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  tb_state(&after);
  CHECK_EQ(after.medium.blocks_in_use, before.medium.blocks_in_use);
  CHECK_EQ(after.medium.bytes_in_use, before.medium.bytes_in_use);
}

/* Frees A, B, C (the middle three of five adjacent blocks) in the order given (indices 0..2),
 * then asks for their combined size. */
static void coalesce_once(const int order[3], int round) {
  void *run[RUN], *big;
  size_t i;
  size_t combined = 3u * PIECE_BLOCK - MEDIUM_HEADER_SIZE;
  const char *o = round == 0   ? "ACB"
                  : round == 1 ? "ABC"
                  : round == 2 ? "BAC"
                  : round == 3 ? "BCA"
                  : round == 4 ? "CAB"
                               : "CBA";

  if (!CHECK_MSG(tb_adjacent_medium(PIECE_USER, RUN, run),
                 "no five adjacent %u-byte medium blocks among %d", PIECE_BLOCK, TB_ADJACENT_POOL))
    return;
  for (i = 0; i < RUN; i++) {
    check_medium_block(run[i], PIECE_USER);
    CHECK_EQ(tb_medium_size(run[i]), PIECE_BLOCK);
    tu_fill_pattern(run[i], PIECE_USER, (uint32_t)(round * 10 + (int)i));
  }
  /* B follows A, C follows B: each block's size field leads to the next one, and the next
   * one's prev_size field leads back. */
  for (i = 1; i < RUN; i++) {
    CHECK_EQ((uintptr_t)run[i], (uintptr_t)run[i - 1] + tb_medium_size(run[i - 1]));
    CHECK_EQ(tb_medium_prev_size(run[i]), tb_medium_size(run[i - 1]));
  }
  for (i = 0; i < 3; i++) {
    CHECK_MSG(fastmm_freemem(run[1 + order[i]]) == FASTMM_OK, "order %s step %zu", o, i);
    CHECK_MSG(fastmm_check_heap() == 0, "order %s step %zu: check_heap %d", o, i,
              fastmm_check_heap());
  }
  /* The guards around A..C are live, so the free block is exactly A..C. */
  big = fastmm_getmem(combined);
  if (check_medium_block(big, combined)) {
    CHECK_MSG(big == run[1], "order %s: %zu bytes served at %p, A..C starts at %p", o, combined,
              big, run[1]);
    tu_fill_pattern(big, combined, 0xB16u + (uint32_t)round);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  /* The guards were not touched. */
  CHECK(tu_check_pattern(run[0], PIECE_USER, (uint32_t)(round * 10)) == (size_t)-1);
  CHECK(tu_check_pattern(run[4], PIECE_USER, (uint32_t)(round * 10 + 4)) == (size_t)-1);
  if (big) {
    CHECK(tu_check_pattern(big, combined, 0xB16u + (uint32_t)round) == (size_t)-1);
    CHECK(fastmm_freemem(big) == FASTMM_OK);
  }
  CHECK(fastmm_freemem(run[0]) == FASTMM_OK);
  CHECK(fastmm_freemem(run[4]) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

static void coalescing(void) {
  static const int orders[6][3] = {{0, 2, 1}, {0, 1, 2}, {1, 0, 2},
                                   {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int k;
  for (k = 0; k < 6; k++)
    coalesce_once(orders[k], k);
}

/* allocmem clears the requested bytes even when it reuses a block that was dirtied. */
static void allocmem_zeroes(void) {
  static const size_t sizes[] = {SMALL_MAX_USER + 1, 4000, 65536, 200000, MEDIUM_MAX_USER};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = fastmm_getmem(sizes[i]), *q;
    if (!check_medium_block(p, sizes[i]))
      return;
    memset(p, 0xA5, fastmm_usable_size(p));
    CHECK(fastmm_freemem(p) == FASTMM_OK);
    q = fastmm_allocmem(sizes[i]);
    if (!check_medium_block(q, sizes[i]))
      return;
    CHECK_MSG(tu_all_zero(q, sizes[i]), "allocmem(%zu) not zeroed", sizes[i]);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
  }
}

/* Random medium churn with a heap check now and then. */
static void churn(void) {
  enum { LIVE = 64, STEPS = 3000 };
  void *p[LIVE] = {0};
  size_t sz[LIVE] = {0};
  size_t i;
  rng_state rng;
  rng_seed(&rng, 42);
  for (i = 0; i < STEPS; i++) {
    size_t k = rng_below(&rng, LIVE);
    if (p[k]) {
      CHECK(tu_check_pattern(p[k], sz[k], (uint32_t)(k * 31 + sz[k])) == (size_t)-1);
      CHECK(fastmm_freemem(p[k]) == FASTMM_OK);
    }
    sz[k] = rng_below(&rng, 4) ? rng_range(&rng, SMALL_MAX_USER + 1, 40000)
                               : rng_range(&rng, SMALL_MAX_USER + 1, MEDIUM_MAX_USER);
    p[k] = fastmm_getmem(sz[k]);
    if (!check_medium_block(p[k], sz[k]))
      return;
    tu_fill_pattern(p[k], sz[k], (uint32_t)(k * 31 + sz[k]));
    if (i % 500 == 0)
      CHECK_EQ(fastmm_check_heap(), 0);
  }
  for (i = 0; i < LIVE; i++) {
    CHECK(tu_check_pattern(p[i], sz[i], (uint32_t)(i * 31 + sz[i])) == (size_t)-1);
    CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  void *p;
  printf("test_medium (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  /* Both thresholds: the largest small request is small, the next one medium; the largest
   * medium request is medium, the next one large. */
  p = fastmm_getmem(SMALL_MAX_USER);
  CHECK(p && tb_kind(p) == BLOCK_FLAG_SMALL);
  fastmm_freemem(p);
  p = fastmm_getmem(SMALL_MAX_USER + 1);
  CHECK(p && tb_kind(p) == BLOCK_FLAG_MEDIUM);
  fastmm_freemem(p);
  p = fastmm_getmem(MEDIUM_MAX_USER);
  CHECK(p && tb_kind(p) == BLOCK_FLAG_MEDIUM);
  fastmm_freemem(p);
  p = fastmm_getmem(MEDIUM_MAX_USER + 1);
  CHECK(p && tb_kind(p) == BLOCK_FLAG_LARGE);
  fastmm_freemem(p);

  sizes_sweep();
  if (!tu_failures())
    coalescing();
  if (!tu_failures())
    allocmem_zeroes();
  if (!tu_failures())
    churn();
  return tu_finish("test_medium");
}
