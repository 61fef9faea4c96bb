/* SPDX-License-Identifier: MIT */
/* Bad input: pointers that are not live blocks are refused with FASTMM_ERROR_INVALID_POINTER and
 * leave the heap as it was; impossible sizes fail with NULL; the manager goes on working
 * (docs/bad-input.md).
 *
 * Freed small and medium blocks are first tried while their span is surely still mapped (a
 * live block shares it); then pointers whose memory is gone: freed large blocks, medium blocks
 * whose spans went back to the OS, memory the test mapped and unmapped itself. The manager
 * looks those up in its page map before it reads a header, so they must be refused too. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#endif
#include "test_blocks.h"

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

static _Alignas(64) unsigned char static_area[256];

/* p is not a live block: every entry point must say so, and the heap must be unchanged. */
static void refused(void *p, const char *what) {
  fastmm_state s0, s1;
  tb_state(&s0);
  CHECK_MSG(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER, "freemem(%s %p) not refused", what,
            p);
  CHECK_MSG(fastmm_reallocmem(p, 100) == NULL, "reallocmem(%s, 100) not refused", what);
  CHECK_MSG(fastmm_usable_size(p) == 0, "usable_size(%s) = %zu", what, fastmm_usable_size(p));
  CHECK_MSG(fastmm_owns_block(p) == 0, "owns_block(%s) = 1", what);
  CHECK_MSG(fastmm_register_expected_leak(p) == 0, "register_expected_leak(%s) accepted", what);
  CHECK_MSG(fastmm_unregister_expected_leak(p) == 0, "unregister_expected_leak(%s) accepted", what);
  CHECK_MSG(fastmm_check_heap() == 0, "after freemem(%s): check_heap %d", what,
            fastmm_check_heap());
  tb_state(&s1);
  CHECK_MSG(tb_blocks_in_use(&s1) == tb_blocks_in_use(&s0), "freemem(%s) changed the block count",
            what);
}

/* The manager still hands out distinct, working blocks of this size. */
static void still_works(size_t size) {
  enum { N = 64 };
  void *p[N], *sorted[N];
  size_t i;
  for (i = 0; i < N; i++) {
    p[i] = fastmm_getmem(size);
    if (!CHECK_MSG(p[i] != NULL, "getmem(%zu) after bad input", size))
      return;
    tu_fill_pattern(p[i], size, (uint32_t)i);
  }
  memcpy(sorted, p, sizeof p);
  qsort(sorted, N, sizeof(void *), tb_cmp_ptr);
  for (i = 0; i + 1 < N; i++)
    CHECK_MSG((uintptr_t)sorted[i] + size <= (uintptr_t)sorted[i + 1],
              "two live %zu-byte blocks overlap: %p, %p", size, sorted[i], sorted[i + 1]);
  for (i = 0; i < N; i++) {
    CHECK(tu_check_pattern(p[i], size, (uint32_t)i) == (size_t)-1);
    CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

static void double_frees(void) {
  static const size_t sizes[] = {
      0, 24, 100, SMALL_MAX_USER, SMALL_MAX_USER + 1, 40000, MEDIUM_MAX_USER};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = NULL, *mate = tb_span_mate(&p, sizes[i]);
    if (!CHECK_MSG(p != NULL && mate != NULL, "no two %zu-byte blocks in one span", sizes[i]))
      continue;
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    refused(p, "freed block"); /* in a thread cache or just binned */
    fastmm_flush_thread_cache();
    refused(p, "freed and flushed block"); /* back in its span */
    still_works(sizes[i]);
    refused(p, "freed block, after reuse"); /* handed out and freed again, perhaps */
    CHECK_EQ(fastmm_freemem(mate), FASTMM_OK);
  }
}

/* A freed medium block merged into a free neighbour no longer has a header of its own; freeing
 * it again must still be refused. */
static void double_free_after_merge(int absorbed_by_prev) {
  void *run[4]; /* guard, A, B, guard */
  const char *what = absorbed_by_prev ? "B merged into free A" : "A absorbing free B";
  if (!CHECK_MSG(tb_adjacent_medium(20000, 4, run), "no four adjacent medium blocks"))
    return;
  tu_fill_pattern(run[0], 20000, 1);
  tu_fill_pattern(run[3], 20000, 4);
  if (absorbed_by_prev) {
    CHECK_EQ(fastmm_freemem(run[1]), FASTMM_OK);
    CHECK_EQ(fastmm_freemem(run[2]), FASTMM_OK);
  } else {
    CHECK_EQ(fastmm_freemem(run[2]), FASTMM_OK);
    CHECK_EQ(fastmm_freemem(run[1]), FASTMM_OK);
  }
  refused(run[2], what);
  refused(run[1], what);
  CHECK(tu_check_pattern(run[0], 20000, 1) == (size_t)-1);
  CHECK(tu_check_pattern(run[3], 20000, 4) == (size_t)-1);
  CHECK_EQ(fastmm_freemem(run[0]), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(run[3]), FASTMM_OK);
  still_works(20000);
}

/* Memory of the test's own, mapped from the OS and given back. */
static void *os_map_test(size_t size) {
#if defined(_WIN32)
  return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
#else
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
#endif
}

static void os_unmap_test(void *p, size_t size) {
#if defined(_WIN32)
  (void)size;
  VirtualFree(p, 0, MEM_RELEASE);
#else
  munmap(p, size);
#endif
}

static void unmapped_pointers(void) {
  static const size_t large[] = {MEDIUM_MAX_USER + 1, 2u * 1024u * 1024u + 3u, 10u * 1024u * 1024u};
  void *medium[8];
  unsigned char *own;
  size_t i;
  /* Freed large blocks: the mapping is gone. */
  for (i = 0; i < sizeof large / sizeof large[0]; i++) {
    unsigned char *p = (unsigned char *)fastmm_getmem(large[i]);
    if (!CHECK(p != NULL))
      continue;
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    refused(p, "freed large block");
    refused(p + 65536, "pointer into a freed large block");
  }
  /* Medium blocks whose spans were emptied and released (the largest medium blocks: three to a
   * span, so eight of them fill three spans). */
  for (i = 0; i < 8; i++) {
    medium[i] = fastmm_getmem(MEDIUM_MAX_USER);
    CHECK(medium[i] != NULL);
  }
  for (i = 0; i < 8; i++)
    CHECK_EQ(fastmm_freemem(medium[i]), FASTMM_OK);
  fastmm_release_free_memory();
  for (i = 0; i < 8; i++)
    refused(medium[i], "medium block of a released span");
  /* Memory the manager never had: mapped by the test, then unmapped. */
  own = (unsigned char *)os_map_test(256u * 1024u);
  if (CHECK(own != NULL)) {
    refused(own + 128, "foreign mapping, zero header");
    memset(own, 0xFF, 256u * 1024u);
    refused(own + 128, "foreign mapping, header all ones");
    os_unmap_test(own, 256u * 1024u);
    refused(own + 128, "unmapped foreign memory");
    refused(own + 65536 + 64, "unmapped foreign memory");
  }
  still_works(MEDIUM_MAX_USER);
  still_works(3000000);
}

/* Pointers into the middle of live blocks whose bytes before them are zero or all ones. */
static void interior_pointers(void) {
  static const size_t sizes[] = {60, 1000, SMALL_MAX_USER, 5000, 200000, 2000000};
  static const size_t offsets[] = {16, 32, 64, 8, 1};
  size_t i, j;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = (unsigned char *)fastmm_allocmem(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    for (j = 0; j < sizeof offsets / sizeof offsets[0]; j++) {
      if (offsets[j] + 8 > sizes[i])
        continue;
      refused(p + offsets[j], "interior pointer into a zeroed block");
    }
    memset(p, 0xFF, sizes[i]);
    for (j = 0; j < sizeof offsets / sizeof offsets[0]; j++) {
      if (offsets[j] + 8 > sizes[i])
        continue;
      refused(p + offsets[j], "interior pointer into a block of 0xFF");
    }
    /* The block itself is untouched and still live. */
    CHECK(fastmm_owns_block(p) == 1);
    CHECK(fastmm_usable_size(p) >= sizes[i]);
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  }
}

static void foreign_pointers(void) {
  _Alignas(64) unsigned char stack_area[256];
  memset(stack_area, 0, sizeof stack_area);
  memset(static_area, 0, sizeof static_area);
  refused(stack_area + 128, "stack address, zero header");
  refused(static_area + 128, "static address, zero header");
  refused(stack_area + 16, "stack address, zero header");
  memset(stack_area, 0xFF, sizeof stack_area);
  refused(stack_area + 128, "stack address, header all ones");
  /* Every entry point takes NULL. */
  CHECK_EQ(fastmm_freemem(NULL), FASTMM_OK);
  CHECK_EQ(fastmm_usable_size(NULL), 0);
  CHECK_EQ(fastmm_owns_block(NULL), 0);
  CHECK_EQ(fastmm_register_expected_leak(NULL), 0);
  CHECK_EQ(fastmm_unregister_expected_leak(NULL), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
}

static void huge_sizes(void) {
  static const size_t huge[] = {
      (size_t)-1,
      (size_t)-1 - 10,
      (size_t)-1 - 4095,
      (size_t)-1 - LARGE_GRANULARITY + 1, /* rounding this up would wrap to 0 */
      (size_t)-1 - 2u * LARGE_GRANULARITY,
      ((size_t)-1) / 2,
      ((size_t)-1) / 2 + 1,
      MAX_REQUEST_SIZE + 1,
  };
  size_t i;
  fastmm_state s0, s1;
  tb_state(&s0);
  for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    void *p = fastmm_getmem(huge[i]);
    CHECK_MSG(p == NULL, "getmem(%zu) = %p", huge[i], p);
    if (p)
      fastmm_freemem(p);
    p = fastmm_allocmem(huge[i]);
    CHECK_MSG(p == NULL, "allocmem(%zu) = %p", huge[i], p);
    if (p)
      fastmm_freemem(p);
    p = fastmm_reallocmem(NULL, huge[i]);
    CHECK_MSG(p == NULL, "reallocmem(NULL, %zu) = %p", huge[i], p);
    if (p)
      fastmm_freemem(p);
  }
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Delphi's sizes are NativeInt: a negative one fails cleanly. */
static void negative_sizes(void) {
  static const intptr_t negative[] = {-1, -2, -16, -100000, INTPTR_MIN, INTPTR_MIN + 1};
  fastmm_memory_manager_ex mm;
  size_t i;
  void *keep;
  memset(&mm, 0, sizeof mm);
  fastmm_get_memory_manager(&mm);
  if (!CHECK(mm.get_mem && mm.free_mem && mm.realloc_mem && mm.alloc_mem))
    return;
  keep = mm.get_mem(100);
  if (!CHECK(keep != NULL))
    return;
  tu_fill_pattern(keep, 100, 9);
  for (i = 0; i < sizeof negative / sizeof negative[0]; i++) {
    void *p = mm.get_mem(negative[i]);
    CHECK_MSG(p == NULL, "GetMem(%lld) = %p", (long long)negative[i], p);
    p = mm.alloc_mem(negative[i]);
    CHECK_MSG(p == NULL, "AllocMem(%lld) = %p", (long long)negative[i], p);
    p = mm.realloc_mem(keep, negative[i]);
    CHECK_MSG(p == NULL, "ReallocMem(p, %lld) = %p", (long long)negative[i], p);
    if (p)
      keep = p;
    CHECK(fastmm_owns_block(keep) == 1);
    CHECK(tu_check_pattern(keep, 100, 9) == (size_t)-1);
  }
  CHECK_EQ(mm.free_mem(keep), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  printf("test_bad_input (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  foreign_pointers();
  huge_sizes();
  negative_sizes();
  double_frees();
  double_free_after_merge(1);
  double_free_after_merge(0);
  interior_pointers();
  unmapped_pointers();
  /* After all of it the manager is whole and works. */
  CHECK_EQ(fastmm_check_heap(), 0);
  still_works(16);
  still_works(3000);
  still_works(1000000);
  return tu_finish("test_bad_input");
}
