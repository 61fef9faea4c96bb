/* Large blocks: requests above MEDIUM_MAX_USER are mapped by themselves, keep their contents,
 * come zeroed from allocmem and go back to the OS when freed. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mincore() under -std=c11 */
#endif
#include "test_blocks.h"

#if !defined(_WIN32)
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

/* 1 when no byte of [p, p + len) is mapped any more: the OS really got the memory back (the
 * manager's own figures cannot show a reservation it forgot, e.g. the second part of a block
 * grown in place). p is the start of a former large mapping. */
static int range_unmapped(const void *p, size_t len) {
  const char *cur = (const char *)p, *end = (const char *)p + len;
#if defined(_WIN32)
  while (cur < end) {
    MEMORY_BASIC_INFORMATION mbi;
    if (VirtualQuery(cur, &mbi, sizeof mbi) == 0)
      return 0;
    if (mbi.State != MEM_FREE)
      return 0;
    cur = (const char *)mbi.BaseAddress + mbi.RegionSize;
  }
  return 1;
#else
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char vec;
  for (; cur < end; cur += page)
    if (mincore((void *)(uintptr_t)cur, page, &vec) == 0 || errno != ENOMEM)
      return 0;
  return 1;
#endif
}

static int check_large_block(void *p, size_t size) {
  uint32_t h;
  if (!CHECK_MSG(p != NULL, "getmem(%zu) returned NULL", size))
    return 0;
  h = block_header(p);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE, "size %zu: header 0x%08lx kind %s", size,
            (unsigned long)h, tb_kind_name(h & BLOCK_KIND_MASK));
  CHECK_MSG(tu_is_aligned(p, 64), "size %zu: %p not 64-aligned", size, p);
  CHECK_MSG(fastmm_usable_size(p) >= size, "size %zu: usable %zu", size, fastmm_usable_size(p));
  CHECK(fastmm_owns_block(p) == 1);
  return 1;
}

static const size_t sizes[] = {
    MEDIUM_MAX_USER + 1,  MEDIUM_MAX_USER + 16,
    MEDIUM_MAX_USER + 17, 600000,
    1024u * 1024u - 1,    1024u * 1024u,
    1024u * 1024u + 1,    3u * 1024u * 1024u + 7,
    10u * 1024u * 1024u,  24u * 1024u * 1024u + 4095,
    40u * 1024u * 1024u,
};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* One block at a time: the OS mapping appears with the block and goes with it. */
static void one_at_a_time(void) {
  size_t i;
  for (i = 0; i < N_SIZES; i++) {
    fastmm_state s0, s1, s2;
    void *p;
    size_t bad;
    tb_state(&s0);
    p = fastmm_getmem(sizes[i]);
    if (!check_large_block(p, sizes[i]))
      return;
    tb_state(&s1);
    CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use + 1);
    CHECK_EQ(s1.large.bytes_in_use, s0.large.bytes_in_use + fastmm_usable_size(p));
    CHECK(s1.large.bytes_reserved >= s0.large.bytes_reserved + sizes[i]);
    CHECK_MSG(s1.os_bytes_reserved >= s0.os_bytes_reserved + sizes[i],
              "size %zu: os_bytes_reserved %zu -> %zu", sizes[i], s0.os_bytes_reserved,
              s1.os_bytes_reserved);
    CHECK(s1.os_bytes_peak >= s1.os_bytes_reserved);
    CHECK(s1.os_map_calls > s0.os_map_calls);
    tu_fill_pattern(p, sizes[i], (uint32_t)i);
    bad = tu_check_pattern(p, sizes[i], (uint32_t)i);
    CHECK_MSG(bad == (size_t)-1, "size %zu: pattern broken at %zu", sizes[i], bad);
    CHECK_EQ(fastmm_check_heap(), 0);
    {
      const char *base = (const char *)p - LARGE_HEADER_SIZE;
      size_t len = fastmm_usable_size(p) + LARGE_HEADER_SIZE;
      CHECK(fastmm_freemem(p) == FASTMM_OK);
      CHECK_MSG(range_unmapped(base, len), "size %zu: memory still mapped after free", sizes[i]);
    }
    tb_state(&s2);
    CHECK_MSG(s2.os_bytes_reserved == s0.os_bytes_reserved,
              "size %zu: os_bytes_reserved %zu before, %zu after free", sizes[i],
              s0.os_bytes_reserved, s2.os_bytes_reserved);
    CHECK_EQ(s2.large.blocks_in_use, s0.large.blocks_in_use);
    CHECK_EQ(s2.large.bytes_in_use, s0.large.bytes_in_use);
    CHECK_EQ(s2.large.bytes_reserved, s0.large.bytes_reserved);
    CHECK(s2.os_unmap_calls > s1.os_unmap_calls);
  }
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* All at once: no overlap, every pattern intact, memory back to where it was afterwards. */
static void all_at_once(void) {
  void *p[N_SIZES], *sorted[N_SIZES];
  size_t i, total = 0;
  fastmm_state s0, s1, s2;
  tb_state(&s0);
  for (i = 0; i < N_SIZES; i++) {
    p[i] = fastmm_getmem(sizes[i]);
    if (!check_large_block(p[i], sizes[i]))
      return;
    tu_fill_pattern(p[i], sizes[i], (uint32_t)(100 + i));
    total += sizes[i];
  }
  tb_state(&s1);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use + N_SIZES);
  CHECK(s1.os_bytes_reserved >= s0.os_bytes_reserved + total);
  CHECK(s1.os_bytes_peak >= s0.os_bytes_reserved + total);
  memcpy(sorted, p, sizeof p);
  qsort(sorted, N_SIZES, sizeof(void *), cmp_ptr);
  for (i = 0; i + 1 < N_SIZES; i++)
    CHECK_MSG((uintptr_t)sorted[i] + fastmm_usable_size(sorted[i]) <= (uintptr_t)sorted[i + 1],
              "%p (usable %zu) overlaps %p", sorted[i], fastmm_usable_size(sorted[i]),
              sorted[i + 1]);
  for (i = 0; i < N_SIZES; i++) {
    size_t bad = tu_check_pattern(p[i], sizes[i], (uint32_t)(100 + i));
    CHECK_MSG(bad == (size_t)-1, "size %zu: pattern broken at %zu", sizes[i], bad);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  for (i = N_SIZES; i-- > 0;)
    CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  tb_state(&s2);
  CHECK_EQ(s2.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s2.large.blocks_in_use, s0.large.blocks_in_use);
  CHECK_EQ(s2.large.bytes_in_use, s0.large.bytes_in_use);
}

/* allocmem zeroes the requested bytes, also after the same sizes were dirtied and freed. */
static void allocmem_zeroes(void) {
  size_t i;
  for (i = 0; i < N_SIZES; i++) {
    void *p = fastmm_getmem(sizes[i]), *q;
    if (!check_large_block(p, sizes[i]))
      return;
    memset(p, 0x5A, fastmm_usable_size(p));
    CHECK(fastmm_freemem(p) == FASTMM_OK);
    q = fastmm_allocmem(sizes[i]);
    if (!check_large_block(q, sizes[i]))
      return;
    CHECK_MSG(tu_all_zero(q, sizes[i]), "allocmem(%zu) not zeroed", sizes[i]);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
  }
}

/* Large blocks grown by realloc (in place when the addresses after them are free, which the
 * manager tries first) go back to the OS whole when freed. */
static void grown_then_freed(void) {
  unsigned i, in_place = 0;
  fastmm_state s0, s1;
  tb_state(&s0);
  for (i = 0; i < 16; i++) {
    size_t size = 1024u * 1024u + i * 70000u, to = size + size / 3u;
    unsigned char *p = (unsigned char *)fastmm_getmem(size), *q;
    const char *base;
    size_t len, bad;
    if (!check_large_block(p, size))
      return;
    tu_fill_pattern(p, size, i);
    q = (unsigned char *)fastmm_reallocmem(p, to);
    if (!check_large_block(q, to))
      return;
    in_place += q == p;
    bad = tu_check_pattern(q, size, i);
    CHECK_MSG(bad == (size_t)-1, "grow %zu -> %zu: byte %zu lost", size, to, bad);
    /* Grow once more, so an in-place block is made of three parts. */
    p = (unsigned char *)fastmm_reallocmem(q, to * 2u);
    if (!check_large_block(p, to * 2u))
      return;
    in_place += q == p;
    CHECK(tu_check_pattern(p, size, i) == (size_t)-1);
    base = (const char *)p - LARGE_HEADER_SIZE;
    len = fastmm_usable_size(p) + LARGE_HEADER_SIZE;
    CHECK(fastmm_freemem(p) == FASTMM_OK);
    CHECK_MSG(range_unmapped(base, len), "a %zu-byte block grown to %zu: still mapped after free",
              size, to * 2u);
  }
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use);
  printf("  %u of 32 large reallocs grew in place\n", in_place);
}

int main(void) {
  void *warm;
  printf("test_large (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  /* The first large block may bring the manager's own bookkeeping with it (the set of live large
   * blocks is mapped on first use and kept), so the figures below start after one. */
  warm = fastmm_getmem(MEDIUM_MAX_USER + 1);
  CHECK(warm != NULL);
  CHECK_EQ(fastmm_freemem(warm), FASTMM_OK);
  one_at_a_time();
  if (!tu_failures())
    all_at_once();
  if (!tu_failures())
    allocmem_zeroes();
  if (!tu_failures())
    grown_then_freed();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_large");
}
