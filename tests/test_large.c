/* SPDX-License-Identifier: MIT */
/* Large blocks: requests above MEDIUM_MAX_USER get a reservation of their own, keep their
 * contents, come zeroed from allocmem, and when freed go into the large cache, from which a
 * later request reuses them; the cache is bounded, given back after two idle periods, by
 * fastmm_release_free_memory and when memory runs short, and then the OS really has the memory
 * back. A block grows in place inside its reservation, and past it by what is free after it
 * (FastMM5 does; it used to move when the free room held the request but not the 25%
 * headroom). The idle thread is off here (fastmm_set_idle_release_interval(0)): every idle
 * period is one call of fastmm_release_idle_memory. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mincore() under -std=c11 */
#endif
#include "prim/prim.h"
#include "test_blocks.h"

#if !defined(_WIN32)
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#define MB ((size_t)1024 * 1024)

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

/* A 64 KB range of address space at exactly `at`, taken from under the manager's feet (NULL
 * when it is not free), and its release. */
static void *take_range(void *at) {
#if defined(_WIN32)
  void *g = VirtualAlloc(at, LARGE_GRANULARITY, MEM_RESERVE, PAGE_NOACCESS);
  if (g != NULL && g != at) {
    VirtualFree(g, 0, MEM_RELEASE);
    g = NULL;
  }
  return g;
#else
  if (!range_unmapped(at, LARGE_GRANULARITY))
    return NULL;
  void *g = mmap(at, LARGE_GRANULARITY, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return g == at ? g : NULL;
#endif
}

static void give_range(void *g) {
#if defined(_WIN32)
  VirtualFree(g, 0, MEM_RELEASE);
#else
  munmap(g, LARGE_GRANULARITY);
#endif
}

/* Address space a block of `committed` bytes reserves (policy.h). */
static size_t reservation_of(size_t committed) {
  size_t times =
      PRIM_CAN_REMAP ? LARGE_RESERVE_AHEAD_TIMES_MOVING : LARGE_RESERVE_AHEAD_TIMES_COPYING;
  size_t ahead = (committed * times) >> LARGE_RESERVE_AHEAD_SHIFT;
  ahead = (ahead + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
  return committed + ahead;
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

/* One block at a time, with an empty cache: the block's memory appears with it, stays kept
 * when it is freed (unless it is bigger than the cache may hold), and goes back to the OS with
 * the cache. */
static void one_at_a_time(void) {
  size_t i;
  for (i = 0; i < N_SIZES; i++) {
    fastmm_state s0, s1, s2, s3;
    void *p;
    size_t bad;
    fastmm_release_free_memory();
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
      tb_state(&s2);
      CHECK_EQ(s2.large.blocks_in_use, s0.large.blocks_in_use);
      CHECK_EQ(s2.large.bytes_in_use, s0.large.bytes_in_use);
      if (len <= LARGE_CACHE_MIN_BYTES) { /* kept, still counted as held */
        CHECK_MSG(s2.os_bytes_reserved == s1.os_bytes_reserved,
                  "size %zu: os_bytes_reserved %zu with the block, %zu kept in the cache", sizes[i],
                  s1.os_bytes_reserved, s2.os_bytes_reserved);
        CHECK_EQ(s2.large.bytes_reserved, s1.large.bytes_reserved);
        CHECK(fastmm_usable_size(p) == 0 && fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER);
      }
      CHECK_EQ(fastmm_check_heap(), 0);
      fastmm_release_free_memory();
      CHECK_MSG(range_unmapped(base, len), "size %zu: memory still mapped after the release",
                sizes[i]);
    }
    tb_state(&s3);
    CHECK_MSG(s3.os_bytes_reserved == s0.os_bytes_reserved,
              "size %zu: os_bytes_reserved %zu before, %zu after free and release", sizes[i],
              s0.os_bytes_reserved, s3.os_bytes_reserved);
    CHECK_EQ(s3.large.bytes_reserved, s0.large.bytes_reserved);
    CHECK(s3.os_unmap_calls > s1.os_unmap_calls);
  }
}

/* The same bound decided when a block is freed, while a live block holds more pages than it
 * uses: a block reused from the cache for a smaller request of a ReallocMem keeps its pages (up
 * to LARGE_CACHE_TRIM_FACTOR times the request). Its spare pages count against the room, so a
 * block freed next goes back to the OS although the cache is empty and well under its share.
 * Runs first: the live blocks' peak (never lowered) must stay below 14 MB until it is done. */
static void cache_room_at_free(void) {
  unsigned char *a, *b, *c;
  const char *c_base;
  size_t c_len;
  fastmm_release_free_memory();
  a = (unsigned char *)fastmm_getmem(8 * MB);
  if (!check_large_block(a, 8 * MB))
    return;
  memset(a, 1, 8 * MB);
  CHECK_EQ(fastmm_freemem(a), FASTMM_OK); /* cached: 8 MB committed */
  /* ReallocMem(nil, 1.5 MB) takes the cached block as it is: 8 MB is below
   * LARGE_CACHE_TRIM_FACTOR times 1.5. */
  b = (unsigned char *)fastmm_reallocmem(NULL, 3 * MB / 2);
  CHECK_MSG(b == a, "1.5 MB: %p, not the cached 8 MB block %p", (void *)b, (void *)a);
  if (b == NULL)
    return;
  /* 9.5 MB live at the peak, 16 MB committed: room for 1.5 MB of cached blocks, not 8. */
  c = (unsigned char *)fastmm_getmem(8 * MB);
  if (!check_large_block(c, 8 * MB))
    return;
  memset(c, 2, 8 * MB);
  c_base = (const char *)c - LARGE_HEADER_SIZE;
  c_len = fastmm_usable_size(c) + LARGE_HEADER_SIZE;
  CHECK_EQ(fastmm_freemem(c), FASTMM_OK);
  CHECK_MSG(range_unmapped(c_base, c_len),
            "a block freed with no room below the peak was cached (the cache was empty)");
  CHECK_EQ(fastmm_freemem(c), FASTMM_ERROR_INVALID_POINTER);
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK_EQ(fastmm_freemem(b), FASTMM_OK);
  fastmm_release_free_memory();
}

/* Memory cached never lifts the large blocks above their own peak by more than
 * LARGE_CACHE_ABOVE_PEAK_BYTES: a block FreeMem cached goes back to the OS as soon as a new block
 * takes the live bytes to their peak. A block a ReallocMem moved away from stays (under the
 * larger bound: it is kept for growth). Runs first, while the live blocks' peak is low. The sizes
 * keep every cached block below 1/LARGE_CACHE_GROW_FACTOR of the new requests, so none is taken
 * and grown for them. */
static void cache_within_peak(void) {
  unsigned char *x, *y, *f, *a, *a2, *v;
  const char *x_base, *a_base;
  size_t x_len, a_len;
  fastmm_release_free_memory();
  x = (unsigned char *)fastmm_getmem(LARGE_CACHE_ABOVE_PEAK_BYTES + MB / 2);
  if (!check_large_block(x, LARGE_CACHE_ABOVE_PEAK_BYTES + MB / 2))
    return;
  memset(x, 1, LARGE_CACHE_ABOVE_PEAK_BYTES + MB / 2);
  x_base = (const char *)x - LARGE_HEADER_SIZE;
  x_len = fastmm_usable_size(x) + LARGE_HEADER_SIZE;
  CHECK_EQ(fastmm_freemem(x), FASTMM_OK);
  CHECK_MSG(!range_unmapped(x_base, x_len), "a block freed at the peak was not cached");
  CHECK_EQ(fastmm_freemem(x), FASTMM_ERROR_INVALID_POINTER); /* cached: a double free */
  /* A new peak, with no room left for the block cached. */
  y = (unsigned char *)fastmm_getmem(24 * MB);
  if (!check_large_block(y, 24 * MB))
    return;
  CHECK(y != x);
  CHECK_MSG(range_unmapped(x_base, x_len),
            "the cached block stayed mapped with the live blocks at their peak");
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK_EQ(fastmm_freemem(y), FASTMM_OK);
  fastmm_release_free_memory();
  /* The live blocks at their peak again (24 MB), one of them shrunk below half by a ReallocMem:
   * it moves, and its old block is cached for growth. */
  f = (unsigned char *)fastmm_getmem(20 * MB);
  a = (unsigned char *)fastmm_getmem(4 * MB);
  if (!check_large_block(f, 20 * MB) || !check_large_block(a, 4 * MB))
    return;
  tu_fill_pattern(a, 4 * MB, 22);
  a_base = (const char *)a - LARGE_HEADER_SIZE;
  a_len = fastmm_usable_size(a) + LARGE_HEADER_SIZE;
  a2 = (unsigned char *)fastmm_reallocmem(a, MB);
  if (!CHECK(a2 != NULL))
    return;
  CHECK(a2 != a);
  CHECK(tu_check_pattern(a2, MB, 22) == (size_t)-1);
  CHECK_MSG(!range_unmapped(a_base, a_len), "the block ReallocMem moved away from was not cached");
  CHECK_EQ(fastmm_freemem(a), FASTMM_ERROR_INVALID_POINTER);
  /* A new peak: the block kept for a ReallocMem stays. */
  v = (unsigned char *)fastmm_getmem(40 * MB);
  if (!check_large_block(v, 40 * MB))
    return;
  CHECK_MSG(!range_unmapped(a_base, a_len),
            "the block kept for a ReallocMem went back when the live blocks grew");
  CHECK_EQ(fastmm_check_heap(), 0);
  /* It serves the next request it holds. */
  x = (unsigned char *)fastmm_getmem(4 * MB);
  CHECK_MSG(x == a, "4 MB: %p, not the cached block %p", (void *)x, (void *)a);
  if (x != NULL)
    memset(x, 3, 4 * MB);
  CHECK_EQ(fastmm_freemem(x), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(v), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(a2), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(f), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
  CHECK(range_unmapped(a_base, a_len));
}

/* All at once: no overlap, every pattern intact, memory back to where it was afterwards. */
static void all_at_once(void) {
  void *p[N_SIZES], *sorted[N_SIZES];
  size_t i, total = 0;
  fastmm_state s0, s1, s2;
  fastmm_release_free_memory();
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
  qsort(sorted, N_SIZES, sizeof(void *), tb_cmp_ptr);
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
  fastmm_release_free_memory();
  tb_state(&s2);
  CHECK_EQ(s2.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s2.large.blocks_in_use, s0.large.blocks_in_use);
  CHECK_EQ(s2.large.bytes_in_use, s0.large.bytes_in_use);
  CHECK_EQ(s2.large.bytes_reserved, s0.large.bytes_reserved);
}

/* allocmem zeroes the requested bytes, also when the block is one just dirtied and freed that
 * comes back from the cache (it is: the same address). */
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
    if (sizes[i] + LARGE_HEADER_SIZE <= LARGE_CACHE_MIN_BYTES)
      CHECK_MSG(q == p, "allocmem(%zu) did not reuse the cached block", sizes[i]);
    CHECK_MSG(tu_all_zero(q, sizes[i]), "allocmem(%zu) not zeroed", sizes[i]);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
  }
}

/* A large block of `size` bytes, every page written, freed into the cache (NULL, with the failure
 * counted, if it could not be had). */
static unsigned char *freed_into_cache(size_t size) {
  unsigned char *p = (unsigned char *)fastmm_getmem(size);
  if (!check_large_block(p, size))
    return NULL;
  memset(p, 1, size);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  return p;
}

/* A freed block is reused from the cache by a request it can hold, without an OS call; a
 * smaller request takes it too: a GetMem gives back the pages past what it asked for, a
 * ReallocMem's request only when the block holds more than LARGE_CACHE_TRIM_FACTOR times it. */
static void cache_reuse(void) {
  /* A block of 2 MB with its header. */
  const size_t top = 2 * MB - LARGE_HEADER_SIZE;
  fastmm_state s0, s1;
  unsigned char *p, *q;
  size_t i;
  fastmm_release_free_memory();
  p = (unsigned char *)fastmm_getmem(top);
  if (!check_large_block(p, top))
    return;
  tu_fill_pattern(p, top, 7);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  tb_state(&s0);
  for (i = 0; i < 100; i++) {
    /* Within the block's last 64 KB: as many pages as it holds. */
    q = (unsigned char *)fastmm_getmem(top - i * 600);
    CHECK_MSG(q == p, "turn %zu: %p, not the cached block %p", i, (void *)q, (void *)p);
    if (q == NULL)
      return;
    q[0] = q[top - i * 600 - 1] = (unsigned char)i;
    CHECK(fastmm_freemem(q) == FASTMM_OK);
  }
  tb_state(&s1);
  CHECK_MSG(s1.os_map_calls == s0.os_map_calls && s1.os_unmap_calls == s0.os_unmap_calls,
            "100 reuses made %zu OS calls",
            s1.os_map_calls - s0.os_map_calls + s1.os_unmap_calls - s0.os_unmap_calls);
  /* Half of it for a GetMem: the same block, its pages past the request given back (kept, they
   * would count against the cache's room as pages nobody uses). */
  q = (unsigned char *)fastmm_getmem(MB);
  CHECK(q == p);
  if (q == NULL)
    return;
  tb_state(&s1);
  CHECK_MSG(s1.os_bytes_reserved + MB - LARGE_GRANULARITY <= s0.os_bytes_reserved,
            "a GetMem of 1 MB from the cached 2 MB block kept %zu bytes committed (from %zu)",
            s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK(fastmm_usable_size(q) >= MB && fastmm_usable_size(q) < MB + LARGE_GRANULARITY);
  tu_fill_pattern(q, MB, 8);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  p = freed_into_cache(2 * MB);
  if (p == NULL)
    return;
  tb_state(&s0);
  /* Half of it for a ReallocMem (of nil: a block that will grow): the same block, as big as the
   * request, with all its pages kept (they would be faulted in again): growing back into them
   * calls the OS for nothing. */
  q = (unsigned char *)fastmm_reallocmem(NULL, MB);
  CHECK(q == p);
  if (q == NULL)
    return;
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK(fastmm_usable_size(q) >= MB && fastmm_usable_size(q) < MB + LARGE_GRANULARITY);
  tu_fill_pattern(q, MB, 8);
  p = (unsigned char *)fastmm_reallocmem(q, 2 * MB);
  CHECK(p == q);
  if (p == NULL)
    return;
  CHECK(fastmm_usable_size(p) >= 2 * MB);
  CHECK(tu_check_pattern(p, MB, 8) == (size_t)-1);
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s1.os_map_calls, s0.os_map_calls);
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  /* An 8 MB block reused for a ReallocMem's request of less than an eighth of it: its tail goes
   * back to the OS. */
  fastmm_release_free_memory();
  p = freed_into_cache(8 * MB);
  if (p == NULL)
    return;
  tb_state(&s0);
  q = (unsigned char *)fastmm_reallocmem(NULL, MEDIUM_MAX_USER + 1);
  CHECK(q == p);
  if (q == NULL)
    return;
  tb_state(&s1);
  CHECK_MSG(s1.os_bytes_reserved + 6 * MB <= s0.os_bytes_reserved,
            "reusing an 8 MB block for 0.5 MB kept %zu bytes committed (from %zu)",
            s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK(fastmm_usable_size(q) < MB);
  memset(q, 1, MEDIUM_MAX_USER + 1);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
}

/* The cache holds at most the larger of LARGE_CACHE_MIN_BYTES and 1/8 of the live large bytes,
 * whatever is freed into it. */
static void cache_bounded(void) {
  enum { N = 48 };
  void *p[N];
  size_t i;
  fastmm_state s0, s1;
  fastmm_release_free_memory();
  tb_state(&s0);
  for (i = 0; i < N; i++) {
    p[i] = fastmm_getmem(MB);
    if (!check_large_block(p[i], MB))
      return;
  }
  for (i = 0; i < N; i++)
    CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  tb_state(&s1);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use);
  CHECK_MSG(s1.large.bytes_reserved - s0.large.bytes_reserved <= LARGE_CACHE_MIN_BYTES,
            "%zu bytes cached after 48 MB were freed", s1.large.bytes_reserved);
  CHECK(s1.large.bytes_reserved > s0.large.bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
}

/* The idle clock: a block cached before the first of two idle periods goes back after the
 * second, not before; a block reused meanwhile is not touched. */
static void cache_idle_release(void) {
  fastmm_state s0, s1;
  void *a, *b;
  const char *base;
  size_t len;
  fastmm_release_free_memory();
  tb_state(&s0);
  a = fastmm_getmem(3 * MB);
  b = fastmm_getmem(5 * MB);
  if (!check_large_block(a, 3 * MB) || !check_large_block(b, 5 * MB))
    return;
  base = (const char *)a - LARGE_HEADER_SIZE;
  len = fastmm_usable_size(a) + LARGE_HEADER_SIZE;
  CHECK(fastmm_freemem(a) == FASTMM_OK);
  fastmm_release_idle_memory();
  tb_state(&s1);
  CHECK_MSG(s1.large.bytes_reserved > s0.large.bytes_reserved + 5 * MB + 3 * MB,
            "one idle period gave the cached block back already");
  fastmm_release_idle_memory();
  tb_state(&s1);
  CHECK_MSG(range_unmapped(base, len), "two idle periods left the cached block mapped");
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use + 1);
  CHECK(fastmm_usable_size(b) >= 5 * MB);
  CHECK(fastmm_freemem(b) == FASTMM_OK);
  fastmm_release_idle_memory();
  fastmm_release_idle_memory();
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s1.large.bytes_reserved, s0.large.bytes_reserved);
}

/* Under the memory usage limit, cached blocks do not stand in the way: a request that needs
 * memory the limit would refuse gets it once the cache is given back. */
static void cache_under_limit(void) {
  enum { N = 3 };
  void *p[N], *q;
  size_t i;
  fastmm_state s0, s1;
  fastmm_release_free_memory();
  for (i = 0; i < N; i++)
    p[i] = fastmm_getmem(MB);
  for (i = 0; i < N; i++)
    if (p[i] != NULL)
      CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  tb_state(&s0);
  CHECK(s0.large.bytes_reserved >= N * MB);
  fastmm_set_memory_usage_limit(s0.os_bytes_reserved + MB / 2);
  /* Bigger than any cached block can hold: a new reservation, which fits only without them. */
  q = fastmm_getmem(3 * MB);
  CHECK_MSG(q != NULL, "getmem(3 MB) failed under a limit that the cache alone exceeded");
  tb_state(&s1);
  CHECK(s1.os_bytes_reserved <= s0.os_bytes_reserved + MB / 2);
  fastmm_set_memory_usage_limit(0);
  if (q != NULL) {
    memset(q, 3, 3 * MB);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
}

/* Growing inside the reservation: in place, one commit, no copy. */
static void grows_in_reservation(void) {
  fastmm_state s0, s1;
  unsigned char *p, *q;
  size_t u;
  fastmm_release_free_memory();
  p = (unsigned char *)fastmm_getmem(MB);
  if (!check_large_block(p, MB))
    return;
  u = fastmm_usable_size(p);
  tu_fill_pattern(p, u, 11);
  tb_state(&s0);
  q = (unsigned char *)fastmm_reallocmem(p, u + 1);
  tb_state(&s1);
  CHECK_MSG(q == p, "a 1 MB block grown by one byte moved (its reservation has room)");
  if (q == NULL)
    return;
  CHECK(fastmm_usable_size(q) >= u + (u >> REALLOC_LARGE_GROWTH_SHIFT));
  CHECK(tu_check_pattern(q, u, 11) == (size_t)-1);
  CHECK_EQ(s1.os_map_calls, s0.os_map_calls + 1);
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  fastmm_release_free_memory();
}

/* The end of p's reservation, if the policy's reservation is what it got (natively it may also
 * have got one without room ahead, when address space was short: not here). */
static char *reservation_end(void *p) {
  return (char *)p - LARGE_HEADER_SIZE + reservation_of(fastmm_usable_size(p) + LARGE_HEADER_SIZE);
}

/* The defect of issue 14: a block whose reservation is used up, with free room after it that
 * covers the request but not the 25% headroom, grows in place by what is free instead of
 * moving (FastMM5 does). Two blocks side by side are made, the upper one freed and given back,
 * and a 64 KB range taken 128 KB after the lower one's reservation: 128 KB is what is free
 * there. When the address space does not fall that way the case is skipped (said so). */
static void grows_by_what_is_free(void) {
  void *a, *b, *first = NULL, *guard;
  unsigned char *q;
  char *end;
  size_t u, to;
  fastmm_release_free_memory();
  a = fastmm_getmem(MB);
  b = fastmm_getmem(MB);
  if (!check_large_block(a, MB) || !check_large_block(b, MB))
    return;
  /* The lower one, if the other lies close after its reservation (the OS placed them side by
   * side, up to its own alignment slack). */
  first = (uintptr_t)a < (uintptr_t)b ? a : b;
  if ((uintptr_t)(first == a ? b : a) - (uintptr_t)reservation_end(first) > MB) {
    printf("  growth by what is free: skipped (the two blocks are far apart)\n");
    CHECK(fastmm_freemem(a) == FASTMM_OK);
    CHECK(fastmm_freemem(b) == FASTMM_OK);
    return;
  }
  CHECK(fastmm_freemem(first == a ? b : a) == FASTMM_OK);
  fastmm_release_free_memory();
  /* Use up the reservation, in place. */
  end = reservation_end(first);
  to = (size_t)(end - (char *)first);
  q = (unsigned char *)fastmm_reallocmem(first, to);
  CHECK_MSG(q == first, "growing to the end of the reservation moved the block");
  if (q != first) {
    fastmm_freemem(q);
    return;
  }
  u = fastmm_usable_size(q);
  CHECK_EQ(u, to);
  guard = take_range(end + 2 * LARGE_GRANULARITY);
  if (guard == NULL || !range_unmapped(end, 2 * LARGE_GRANULARITY)) {
    printf("  growth by what is free: skipped (the address space after the block is taken)\n");
    if (guard)
      give_range(guard);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
    return;
  }
  tu_fill_pattern(q, u, 21);
  /* One byte more: needs one more region, wants 25% more; 128 KB are free. */
  q = (unsigned char *)fastmm_reallocmem(first, u + 1);
  CHECK_MSG(q == first, "a block with room for the request after it moved (issue 14)");
  if (q != NULL) {
    CHECK(fastmm_usable_size(q) >= u + 1);
    CHECK(fastmm_usable_size(q) <= u + 2 * LARGE_GRANULARITY);
    CHECK(tu_check_pattern(q, u, 21) == (size_t)-1);
    CHECK_EQ(fastmm_check_heap(), 0);
    /* Past what is free: it moves (natively without copying), contents kept. */
    first = q;
    q = (unsigned char *)fastmm_reallocmem(first, u + 4 * LARGE_GRANULARITY);
    CHECK(q != NULL && q != first);
    if (q != NULL) {
      CHECK(tu_check_pattern(q, u, 21) == (size_t)-1);
      CHECK(fastmm_usable_size(q) >= u + 4 * LARGE_GRANULARITY);
      CHECK_EQ(fastmm_check_heap(), 0);
      CHECK(fastmm_freemem(q) == FASTMM_OK);
    }
  }
  fastmm_release_free_memory();
  CHECK_MSG(range_unmapped(end, 2 * LARGE_GRANULARITY), "the extension was not given back");
  give_range(guard);
  printf("  growth by what is free: in place\n");
}

/* A block that a ReallocMem moves to a bigger one is freed as FreeMem frees one: with the large
 * blocks within LARGE_CACHE_ABOVE_PEAK_BYTES of their peak (both blocks were live at once) it is
 * cached, its pages serve the next request they hold, and the old pointer is refused. Only where
 * the move copies (Windows): natively the pages move with the block and leave no old one. A
 * 64 KB range taken right after the block's reservation makes it move. */
static void outgrown_block_cached(void) {
#if defined(_WIN32)
  unsigned char *a, *q, *x;
  const char *a_base;
  size_t a_len, to;
  void *guard;
  fastmm_release_free_memory();
  a = (unsigned char *)fastmm_getmem(MB);
  if (!check_large_block(a, MB))
    return;
  tu_fill_pattern(a, MB, 31);
  a_base = (const char *)a - LARGE_HEADER_SIZE;
  a_len = fastmm_usable_size(a) + LARGE_HEADER_SIZE;
  guard = take_range(reservation_end(a));
  if (guard == NULL) {
    printf("  outgrown block cached: skipped (the address space after the block is taken)\n");
    CHECK(fastmm_freemem(a) == FASTMM_OK);
    return;
  }
  to = (size_t)(reservation_end(a) - (char *)a) + 2 * MB;
  q = (unsigned char *)fastmm_reallocmem(a, to);
  if (!check_large_block(q, to)) {
    give_range(guard);
    return;
  }
  CHECK_MSG(q != a, "grown past its reservation with the next 64 KB taken, it stayed");
  CHECK(tu_check_pattern(q, MB, 31) == (size_t)-1);
  CHECK_MSG(!range_unmapped(a_base, a_len), "the block ReallocMem outgrew went back to the OS");
  CHECK_EQ(fastmm_freemem(a), FASTMM_ERROR_INVALID_POINTER);
  CHECK_EQ(fastmm_usable_size(a), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
  x = (unsigned char *)fastmm_getmem(MB);
  CHECK_MSG(x == a, "1 MB: %p, not the cached block %p the ReallocMem left", (void *)x, (void *)a);
  if (x != NULL) {
    memset(x, 5, MB);
    CHECK_EQ(fastmm_freemem(x), FASTMM_OK);
  }
  CHECK(tu_check_pattern(q, MB, 31) == (size_t)-1);
  CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
  CHECK(range_unmapped(a_base, a_len));
  give_range(guard);
  printf("  outgrown block cached and reused\n");
#else
  printf("  outgrown block cached: not here (the pages move with the block)\n");
#endif
}

/* Large blocks grown by realloc (in place when the addresses after them are free, which the
 * manager tries first) go back to the OS whole, every part of the reservation. */
static void grown_then_freed(void) {
  unsigned i, in_place = 0;
  fastmm_state s0, s1;
  fastmm_release_free_memory();
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
    /* Grow twice more, so an in-place block may be made of several reservations. */
    p = (unsigned char *)fastmm_reallocmem(q, to * 2u);
    if (!check_large_block(p, to * 2u))
      return;
    in_place += q == p;
    q = (unsigned char *)fastmm_reallocmem(p, to * 5u);
    if (!check_large_block(q, to * 5u))
      return;
    in_place += q == p;
    CHECK(tu_check_pattern(q, size, i) == (size_t)-1);
    base = (const char *)q - LARGE_HEADER_SIZE;
    len = fastmm_usable_size(q) + LARGE_HEADER_SIZE;
    CHECK(fastmm_freemem(q) == FASTMM_OK);
    fastmm_release_free_memory();
    CHECK_MSG(range_unmapped(base, len), "a %zu-byte block grown to %zu: still mapped after free",
              size, to * 5u);
  }
  tb_state(&s1);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use);
  printf("  %u of 48 large reallocs grew in place\n", in_place);
}

/* Aligned large blocks (fastmm_getmem_aligned: the user pointer up to 64 KB into the block) go
 * through the cache like others: a cached one is no block any more, a plain request reuses it
 * (its user pointer back at 64 bytes in), a stale pointer to where the aligned one was is
 * refused though the old header word is still there, and an aligned request reuses a plain
 * cached block at its own offset, keeping the alignment as it grows. */
static void cache_aligned(void) {
  unsigned char *p, *q, *r, *s;
  char *base;
  fastmm_release_free_memory();
  p = (unsigned char *)fastmm_getmem_aligned(MB, 65536);
  if (!check_large_block(p, MB))
    return;
  CHECK(tu_is_aligned(p, 65536));
  base = (char *)p - 65536; /* the block's header */
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(p), FASTMM_ERROR_INVALID_POINTER);
  CHECK_EQ(fastmm_usable_size(p), 0);
  CHECK_EQ(fastmm_owns_block(p), 0);
  CHECK(fastmm_reallocmem(p, 2 * MB) == NULL);
  q = (unsigned char *)fastmm_getmem(MB);
  CHECK_MSG(q == (unsigned char *)base + LARGE_HEADER_SIZE,
            "a plain request did not reuse the cached aligned block: %p, block at %p", (void *)q,
            (void *)base);
  if (!check_large_block(q, MB))
    return;
  CHECK_EQ(block_header(p), BLOCK_FLAG_LARGE); /* the old word, now inside q's data */
  CHECK_EQ(fastmm_freemem(p), FASTMM_ERROR_INVALID_POINTER);
  CHECK_EQ(fastmm_usable_size(p), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
  tu_fill_pattern(q, MB, 3);
  CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
  r = (unsigned char *)fastmm_getmem_aligned(MB - 8192, 4096);
  CHECK_MSG(r == (unsigned char *)base + 4096, "an aligned request did not reuse the block");
  if (!check_large_block(r, MB - 8192))
    return;
  CHECK_EQ(fastmm_freemem(q), FASTMM_ERROR_INVALID_POINTER);
  tu_fill_pattern(r, MB - 8192, 4);
  s = (unsigned char *)fastmm_reallocmem(r, 3 * MB);
  if (!check_large_block(s, 3 * MB))
    return;
  CHECK(tu_is_aligned(s, 4096));
  CHECK(tu_check_pattern(s, MB - 8192, 4) == (size_t)-1);
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK_EQ(fastmm_freemem(s), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
}

int main(void) {
  void *warm;
  printf("test_large (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  fastmm_set_idle_release_interval(0);
  /* The first large block may bring the manager's own bookkeeping with it (the set of live large
   * blocks is mapped on first use and kept), so the figures below start after one. */
  warm = fastmm_getmem(MEDIUM_MAX_USER + 1);
  CHECK(warm != NULL);
  CHECK_EQ(fastmm_freemem(warm), FASTMM_OK);
  cache_room_at_free();
  if (!tu_failures())
    cache_within_peak();
  if (!tu_failures())
    one_at_a_time();
  if (!tu_failures())
    all_at_once();
  if (!tu_failures())
    allocmem_zeroes();
  if (!tu_failures())
    cache_reuse();
  if (!tu_failures())
    cache_bounded();
  if (!tu_failures())
    cache_idle_release();
  if (!tu_failures())
    cache_under_limit();
  if (!tu_failures())
    grows_in_reservation();
  if (!tu_failures())
    grows_by_what_is_free();
  if (!tu_failures())
    grown_then_freed();
  if (!tu_failures())
    outgrown_block_cached();
  if (!tu_failures())
    cache_aligned();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_large");
}
