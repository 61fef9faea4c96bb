/* SPDX-License-Identifier: MIT */
/* Aligned blocks:
 *   - the minimum alignment (fastmm_set_minimum_alignment, FastMM5's
 *     FastMM_EnterMinimumAddressAlignment): while 32 or 64 is in effect, every block of every
 *     kind from every entry point (GetMem, AllocMem, ReallocMem's moves, the Delphi record's
 *     entries, in the erase modes, on another thread) is aligned to it, although the thread's cache
 *     was full of blocks of other classes; afterwards GetMem is back to its own classes;
 *   - fastmm_getmem_aligned: every power of two up to 64 KB, every kind of block; freed, measured
 *     and resized by the ordinary calls, ReallocMem keeping the alignment across kinds with the
 *     data, a second free refused; bad alignments refused;
 *   - all of it mixed with ordinary blocks, the heap consistent and empty at the end.
 * (Debug blocks are not covered: their 96-byte header, after stack traces of any length, cannot
 * keep more than 16; debug blocks laid out as FastMM5's, with a 64-byte header, will.) */
#include "test_blocks.h"

static fastmm_memory_manager_ex mm;

static void check_aligned(const void *p, size_t alignment, size_t size, const char *what) {
  CHECK_MSG(p != NULL && tu_is_aligned(p, alignment), "%s(%zu) = %p is not %zu-aligned", what, size,
            p, alignment);
  if (p != NULL)
    CHECK_MSG(fastmm_usable_size(p) >= size, "%s(%zu): usable %zu", what, size,
              fastmm_usable_size(p));
}

/* Every entry point, a sweep of sizes, resized, while `alignment` is the minimum. */
static void sweep_minimum(size_t alignment, const char *mode) {
  enum { N = 700 };
  static void *blocks[N];
  static size_t sizes[N];
  char what[64];
  size_t n = 0;
  for (size_t size = 0; size <= SMALL_MAX_USER + 8 && n < N; size += size < 300 ? 1 : 17)
    sizes[n++] = size;
  static const size_t bigger[] = {3000, 5000, 20000, 100000, 524272, 524273, 700000, 2500000};
  for (size_t i = 0; i < sizeof bigger / sizeof bigger[0] && n < N; i++)
    sizes[n++] = bigger[i];
  for (size_t i = 0; i < n; i++) {
    switch (i % 4) {
    case 0:
      blocks[i] = fastmm_getmem(sizes[i]);
      snprintf(what, sizeof what, "%s GetMem", mode);
      break;
    case 1:
      blocks[i] = fastmm_allocmem(sizes[i]);
      snprintf(what, sizeof what, "%s AllocMem", mode);
      if (blocks[i])
        CHECK(tu_all_zero(blocks[i], sizes[i]));
      break;
    case 2:
      blocks[i] = mm.get_mem((intptr_t)sizes[i]);
      snprintf(what, sizeof what, "%s record GetMem", mode);
      break;
    default:
      blocks[i] = mm.alloc_mem((intptr_t)sizes[i]);
      snprintf(what, sizeof what, "%s record AllocMem", mode);
      break;
    }
    check_aligned(blocks[i], alignment, sizes[i], what);
    if (blocks[i])
      tu_fill_pattern(blocks[i], sizes[i], (uint32_t)i);
  }
  /* ReallocMem: up and down, across kinds; every move lands aligned with the data. */
  for (size_t i = 0; i < n; i++) {
    if (!blocks[i])
      continue;
    size_t to = i % 3 == 0 ? sizes[i] * 2 + 100 : i % 3 == 1 ? sizes[i] / 5 + 1 : sizes[i] + 3000;
    size_t keep = to < sizes[i] ? to : sizes[i];
    void *q = i % 2 ? fastmm_reallocmem(blocks[i], to) : mm.realloc_mem(blocks[i], (intptr_t)to);
    snprintf(what, sizeof what, "%s ReallocMem %zu ->", mode, sizes[i]);
    check_aligned(q, alignment, to, what);
    if (!q)
      continue;
    CHECK_MSG(tu_check_pattern(q, keep, (uint32_t)i) == (size_t)-1, "%s: data lost", what);
    blocks[i] = q;
    sizes[i] = to;
  }
  for (size_t i = 0; i < n; i++)
    if (blocks[i])
      CHECK_EQ(i % 2 ? fastmm_freemem(blocks[i]) : mm.free_mem(blocks[i]), FASTMM_OK);
}

typedef struct other_thread {
  size_t alignment;
  tu_thread_checks chk;
} other_thread;

static void allocate_elsewhere(void *arg) {
  other_thread *o = (other_thread *)arg;
  void *blocks[300];
  for (unsigned i = 0; i < 300; i++) {
    size_t size = 1 + (size_t)i * 9;
    blocks[i] = fastmm_getmem(size);
    THREAD_CHECK(&o->chk, blocks[i] && tu_is_aligned(blocks[i], o->alignment),
                 "GetMem(%zu) on another thread: %p", size, blocks[i]);
  }
  for (unsigned i = 0; i < 300; i++)
    fastmm_freemem(blocks[i]);
  fastmm_flush_thread_cache();
}

static void test_minimum_alignment(void) {
  CHECK_EQ(fastmm_get_minimum_alignment(), 16);
  CHECK_EQ(fastmm_set_minimum_alignment(0), 16);
  CHECK_EQ(fastmm_set_minimum_alignment(8), 16);
  CHECK_EQ(fastmm_set_minimum_alignment(17), 32);
  CHECK_EQ(fastmm_get_minimum_alignment(), 32);
  CHECK_EQ(fastmm_set_minimum_alignment(33), 64);
  CHECK_EQ(fastmm_set_minimum_alignment(1u << 20), 64);
  CHECK_EQ(fastmm_get_minimum_alignment(), 64);
  CHECK_EQ(fastmm_set_minimum_alignment(16), 16);

  for (size_t alignment = 32; alignment <= 64; alignment *= 2) {
    /* The thread's cache full of blocks of every class first: the fast path must not serve them. */
    void *warm[400];
    for (unsigned i = 0; i < 400; i++)
      warm[i] = fastmm_getmem(1 + (size_t)i * 6);
    for (unsigned i = 0; i < 400; i++)
      fastmm_freemem(warm[i]);
    CHECK_EQ(fastmm_set_minimum_alignment(alignment), alignment);
    sweep_minimum(alignment, "minimum");
    fastmm_begin_erase_allocated_block_content();
    fastmm_begin_erase_freed_block_content();
    sweep_minimum(alignment, "erase modes");
    fastmm_end_erase_freed_block_content();
    fastmm_end_erase_allocated_block_content();
    other_thread o = {alignment, {7, 0, 0}};
    tu_thread t;
    CHECK(tu_thread_start(&t, allocate_elsewhere, &o));
    tu_thread_join(&t);
    tu_add_counts(o.chk.checks, o.chk.failed);
    /* A 40-byte request takes a 64-byte slot (48 would do, but is not a multiple of 32). */
    void *p = fastmm_getmem(40);
    CHECK_EQ(fastmm_usable_size(p), 60);
    fastmm_freemem(p);
  }
  CHECK_EQ(fastmm_set_minimum_alignment(16), 16);
  /* Back to GetMem's own classes: 40 bytes in a 48-byte slot, some of them not 32-aligned. */
  void *blocks[64];
  int some_not_32 = 0;
  for (unsigned i = 0; i < 64; i++) {
    blocks[i] = fastmm_getmem(40);
    CHECK_EQ(fastmm_usable_size(blocks[i]), 44);
    CHECK(tu_is_aligned(blocks[i], 16));
    some_not_32 |= !tu_is_aligned(blocks[i], 32);
  }
  CHECK(some_not_32);
  for (unsigned i = 0; i < 64; i++)
    fastmm_freemem(blocks[i]);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* ---- fastmm_getmem_aligned ------------------------------------------------------------------ */

static void test_getmem_aligned(void) {
  static const size_t sizes[] = {0,    1,     13,     100,    1000,   2556,   2557,
                                 3000, 40000, 200000, 524272, 524273, 700000, 1200000};
  static const size_t resizes[] = {150, 5000, 20, 600000, 2500, 60000, 7};
  for (size_t alignment = 1; alignment <= 65536; alignment *= 2) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t size = sizes[s];
      uint32_t seed = (uint32_t)(alignment * 131 + s);
      unsigned char *p = (unsigned char *)fastmm_getmem_aligned(size, alignment);
      check_aligned(p, alignment < 16 ? 16 : alignment, size, "fastmm_getmem_aligned");
      if (!p)
        continue;
      CHECK(fastmm_owns_block(p));
      tu_fill_pattern(p, size, seed);
      /* ReallocMem keeps the alignment, wherever the block goes. */
      for (size_t r = 0; r < sizeof resizes / sizeof resizes[0]; r++) {
        size_t to = resizes[r], keep = to < size ? to : size;
        unsigned char *q = (unsigned char *)fastmm_reallocmem(p, to);
        CHECK_MSG(q != NULL && tu_is_aligned(q, alignment),
                  "aligned %zu: ReallocMem %zu -> %zu gave %p", alignment, size, to, (void *)q);
        if (!q)
          break;
        CHECK_MSG(tu_check_pattern(q, keep, seed) == (size_t)-1,
                  "aligned %zu: ReallocMem %zu -> %zu lost data", alignment, size, to);
        seed++;
        tu_fill_pattern(q, to, seed);
        p = q;
        size = to;
      }
      CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
      CHECK_EQ(fastmm_freemem(p), FASTMM_ERROR_INVALID_POINTER);
    }
  }
  /* Alignments that are no power of two, or beyond 64 KB. */
  CHECK(fastmm_getmem_aligned(100, 0) == NULL);
  CHECK(fastmm_getmem_aligned(100, 3) == NULL);
  CHECK(fastmm_getmem_aligned(100, 48) == NULL);
  CHECK(fastmm_getmem_aligned(100, 131072) == NULL);
  CHECK(fastmm_getmem_aligned((size_t)-1 / 2, 64) == NULL);
  /* An interior pointer of an aligned large block is refused, the block kept. */
  unsigned char *big = (unsigned char *)fastmm_getmem_aligned(1000000, 4096);
  CHECK(big != NULL && tu_is_aligned(big, 4096));
  if (big) {
    memset(big, 0x5A, 1000000);
    CHECK_EQ(fastmm_freemem(big + 4096), FASTMM_ERROR_INVALID_POINTER);
    CHECK_EQ(fastmm_usable_size(big + 4096), 0);
    CHECK(fastmm_reallocmem(big + 4096, 10) == NULL);
    CHECK(fastmm_usable_size(big) >= 1000000);
    CHECK_EQ(fastmm_freemem(big), FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Aligned and ordinary blocks interleaved, freed in random order. */
static void test_mixed(void) {
  enum { N = 2000 };
  static tb_block blocks[N];
  static size_t alignments[N];
  rng_state r;
  rng_seed(&r, 42);
  for (unsigned i = 0; i < N; i++) {
    size_t size = tb_size_of_kind(&r,
                                  rng_below(&r, 20) == 0  ? TB_LARGE
                                  : rng_below(&r, 4) == 0 ? TB_MEDIUM
                                                          : TB_SMALL,
                                  1500000);
    alignments[i] = rng_below(&r, 2) ? (size_t)1 << rng_range(&r, 5, 16) : 0;
    blocks[i].size = size;
    blocks[i].seed = (uint32_t)i;
    blocks[i].p = (unsigned char *)(alignments[i] ? fastmm_getmem_aligned(size, alignments[i])
                                                  : fastmm_getmem(size));
    check_aligned(blocks[i].p, alignments[i] ? alignments[i] : 16, size, "mixed");
    if (blocks[i].p)
      tu_fill_pattern(blocks[i].p, size, blocks[i].seed);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  for (unsigned k = 0; k < N; k++) {
    unsigned i = (unsigned)rng_below(&r, N);
    if (!blocks[i].p)
      continue;
    CHECK(tu_check_pattern(blocks[i].p, blocks[i].size, blocks[i].seed) == (size_t)-1);
    CHECK_EQ(fastmm_freemem(blocks[i].p), FASTMM_OK);
    blocks[i].p = NULL;
  }
  for (unsigned i = 0; i < N; i++)
    if (blocks[i].p) {
      CHECK(tu_check_pattern(blocks[i].p, blocks[i].size, blocks[i].seed) == (size_t)-1);
      CHECK_EQ(fastmm_freemem(blocks[i].p), FASTMM_OK);
    }
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  tb_start_quiet("test_aligned");
  fastmm_get_memory_manager(&mm);
  test_minimum_alignment();
  test_getmem_aligned();
  test_mixed();
  fastmm_state st;
  tb_state(&st);
  tb_check_nothing_in_use(&st);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_aligned");
}
