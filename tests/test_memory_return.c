/* SPDX-License-Identifier: MIT */
/* Memory back to the OS, measured: 1 GB in mixed sizes (a quarter of the bytes in small blocks,
 * half in medium, a quarter in large), every page written, then everything freed in a shuffled
 * order. After the thread cache is flushed and fastmm_release_free_memory() called:
 *   - the manager's OS bytes (fastmm_get_state's os_bytes_reserved) are back within 4 MB of
 *     where they started;
 *   - the process's committed memory is back within 8 MB of where it started: natively VmRSS
 *     from /proc/self/status, on Windows GetProcessMemoryInfo's PrivateUsage (PagefileUsage);
 *     both must first have grown by at least 90% of what was allocated, so the measure is seen
 *     to work.
 * Sizes: 1 GB natively and on Win64; 512 MB on Win32 (a 32-bit process has 2 GB of address
 * space, and Wine's own mappings take part of it); 256 MB under ThreadSanitizer (its shadow
 * memory costs several bytes per byte written). The figures are printed. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "test_blocks.h"

#define MB TB_MB
#if defined(TU_UNDER_TSAN)
#define TOTAL (256 * MB)
#elif defined(_WIN32) && !defined(_WIN64)
#define TOTAL (512 * MB)
#else
#define TOTAL (1024 * MB)
#endif
#define OS_SLACK (4 * MB)
#define COMMIT_SLACK (8 * MB)
#define MAX_BLOCKS 400000

static unsigned char *blocks[MAX_BLOCKS];
static size_t sizes[MAX_BLOCKS];

static int untouched_marks(const unsigned char *p, size_t size, size_t i) {
  return (size == 1 || p[0] == (unsigned char)i) && p[size - 1] == (unsigned char)(i * 3);
}

int main(void) {
  size_t have[TB_KINDS], n, total, i, bad = 0;
  size_t c0, c1, c2, c3;
  fastmm_state s0, s1, s2, s3;
  rng_state rng;

  printf("test_memory_return (%s, %u-bit pointers): %zu MB in mixed sizes\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8), TOTAL / MB);
  /* The test's own tables are written before the start is measured; the thread cache is made. */
  memset(blocks, 0, sizeof blocks);
  memset(sizes, 0, sizeof sizes);
  fastmm_freemem(fastmm_getmem(1));
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s0);
  c0 = tu_committed_bytes();
  CHECK_MSG(c0 > 0, "the process's committed memory cannot be read");

  rng_seed(&rng, 1024);
  n = tb_fill_mixed(&rng, TOTAL, 4 * MB, blocks, sizes, MAX_BLOCKS, tu_touch_pages, have);
  total = have[TB_SMALL] + have[TB_MEDIUM] + have[TB_LARGE];
  tb_state(&s1);
  c1 = tu_committed_bytes();
  printf("  %zu blocks, %zu MB (%zu MB small, %zu MB medium, %zu MB large)\n", n, total / MB,
         have[0] / MB, have[1] / MB, have[2] / MB);
  printf("  OS bytes reserved: %.1f MB at the start, %.1f MB with everything allocated\n",
         (double)s0.os_bytes_reserved / (double)MB, (double)s1.os_bytes_reserved / (double)MB);
  printf("  %s: %.1f MB at the start, %.1f MB with everything allocated\n", tu_committed_name(),
         (double)c0 / (double)MB, (double)c1 / (double)MB);
  CHECK_EQ(tb_blocks_in_use(&s1), n);
  CHECK(s1.os_bytes_reserved >= total);
  CHECK_MSG(c1 >= c0 + total / 10 * 9, "%s grew by %zu MB for %zu MB allocated: not measured",
            tu_committed_name(), (c1 - c0) / MB, total / MB);
  CHECK_EQ(fastmm_check_heap(), 0);

  for (i = 0; i < n; i++)
    bad += !untouched_marks(blocks[i], sizes[i], i);
  CHECK_MSG(bad == 0, "%zu blocks lost their marks while the heap grew", bad);
  bad = 0;
  tb_shuffle(&rng, blocks, sizes, n); /* then freed in that order */
  for (i = 0; i < n; i++) {
    bad += fastmm_usable_size(blocks[i]) < sizes[i];
    bad += fastmm_freemem(blocks[i]) != FASTMM_OK;
  }
  CHECK_MSG(bad == 0, "%zu blocks were wrong or refused when freed", bad);
  fastmm_flush_thread_cache();
  tb_state(&s2);
  c2 = tu_committed_bytes();
  fastmm_release_free_memory();
  tb_state(&s3);
  c3 = tu_committed_bytes();
  printf("  OS bytes reserved: %.1f MB after freeing, %.1f MB after fastmm_release_free_memory "
         "(start %+.1f MB); peak %.1f MB\n",
         (double)s2.os_bytes_reserved / (double)MB, (double)s3.os_bytes_reserved / (double)MB,
         ((double)s3.os_bytes_reserved - (double)s0.os_bytes_reserved) / (double)MB,
         (double)s3.os_bytes_peak / (double)MB);
  printf("  %s: %.1f MB after freeing, %.1f MB after the release (start %+.1f MB)\n",
         tu_committed_name(), (double)c2 / (double)MB, (double)c3 / (double)MB,
         ((double)c3 - (double)c0) / (double)MB);
  CHECK_EQ(tb_blocks_in_use(&s3), 0);
  CHECK_EQ(s3.small.bytes_reserved, 0);
  CHECK_EQ(s3.medium.bytes_reserved, 0);
  CHECK_EQ(s3.large.bytes_reserved, 0);
  CHECK_MSG(s3.os_bytes_reserved <= s0.os_bytes_reserved + OS_SLACK,
            "%zu bytes still mapped by the manager, %zu at the start", s3.os_bytes_reserved,
            s0.os_bytes_reserved);
  CHECK_MSG(c3 <= c0 + COMMIT_SLACK,
            "%s is %.1f MB after everything was freed, %.1f MB at the "
            "start",
            tu_committed_name(), (double)c3 / (double)MB, (double)c0 / (double)MB);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_memory_return");
}
