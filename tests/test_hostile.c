/* SPDX-License-Identifier: MIT */
/* Hostile input: what the manager does with pointers and sizes a correct program never passes.
 * Each case below states its documented result (README.md "Bad input", tests/README.md) and
 * checks it, and checks that the heap stays consistent (fastmm_check_heap() == 0) and that the
 * manager goes on working. tests/test_bad_input.c has the first cases; this file adds:
 *
 *   never allocated: stack, static, another heap's (the C library's malloc, and HeapAlloc on
 *     Windows), and an OS mapping of our own in which a perfect small, medium or large header
 *     has been forged          -> refused (FASTMM_ERROR_INVALID_POINTER / NULL / 0): the page map
 *                                 says the memory is not the manager's before a header is read
 *   interior pointers of every kind, misaligned or 16-aligned, into blocks filled with bytes
 *     that look like header kinds (0x00, 0xFF, 0x02 small, 0x04 medium, 0x08 large, 0x10 debug),
 *     and into a large block's own 64-byte header                           -> refused
 *   freed pointers of every kind (in a thread cache, flushed, merged, unmapped), and a
 *     second free and a ReallocMem of each                                  -> refused / NULL
 *   (a double free racing another thread's free: test_double_free_race.c)
 *   negative sizes through the Delphi record (GetMem, AllocMem, ReallocMem with a live block of
 *     each kind, ReallocMem of NULL)                          -> nil, the old block intact
 *   sizes near the address-space limit, through the C exports and the Delphi record, and
 *     ReallocMem of a live block of each kind to them   -> NULL, nothing mapped, block intact
 *
 * Headers forged by the program inside its own blocks: tests/test_forged_headers.c. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#endif
#include "test_blocks.h"

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

static _Alignas(64) unsigned char static_area[512];

/* p is not a live block: every entry point refuses it and nothing changes. */
static void refused(void *p, const char *what) {
  fastmm_state s0, s1;
  fastmm_memory_manager_ex mm;
  fastmm_get_memory_manager(&mm);
  tb_state(&s0);
  CHECK_MSG(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER, "freemem(%s %p) not refused", what,
            p);
  CHECK_MSG(mm.free_mem(p) != 0, "Delphi FreeMem(%s %p) not refused", what, p);
  CHECK_MSG(fastmm_reallocmem(p, 100) == NULL, "reallocmem(%s %p, 100) not refused", what, p);
  CHECK_MSG(mm.realloc_mem(p, 5000) == NULL, "Delphi ReallocMem(%s %p, 5000) not refused", what, p);
  CHECK_MSG(fastmm_usable_size(p) == 0, "usable_size(%s %p) = %zu", what, p, fastmm_usable_size(p));
  CHECK_MSG(fastmm_owns_block(p) == 0, "owns_block(%s %p) = 1", what, p);
  CHECK_MSG(fastmm_register_expected_leak(p) == 0, "register_expected_leak(%s) accepted", what);
  tb_state(&s1);
  CHECK_MSG(tb_blocks_in_use(&s1) == tb_blocks_in_use(&s0), "%s: block count %zu -> %zu", what,
            tb_blocks_in_use(&s0), tb_blocks_in_use(&s1));
  CHECK_MSG(s1.os_bytes_reserved == s0.os_bytes_reserved, "%s: OS bytes %zu -> %zu", what,
            s0.os_bytes_reserved, s1.os_bytes_reserved);
  {
    int fault = fastmm_check_heap();
    CHECK_MSG(fault == 0, "after %s: check_heap %d", what, fault);
  }
}

/* The manager still hands out working blocks of this size. */
static void still_works(size_t size) {
  unsigned char *p = (unsigned char *)fastmm_getmem(size);
  if (!CHECK_MSG(p != NULL, "getmem(%zu) after hostile input", size))
    return;
  tu_fill_pattern(p, size, 77);
  CHECK(fastmm_usable_size(p) >= size);
  CHECK(tu_check_pattern(p, size, 77) == (size_t)-1);
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
}

/* ---- memory that was never ours ------------------------------------------------------------ */

/* 64 KB of the OS, 64 KB aligned, that the manager did not map: where headers are forged. */
static unsigned char *os_region(size_t size) {
#if defined(_WIN32)
  return (unsigned char *)VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
#else
  size_t padded = size + 65536u;
  unsigned char *p = (unsigned char *)mmap(NULL, padded, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == (unsigned char *)MAP_FAILED)
    return NULL;
  return (unsigned char *)(((uintptr_t)p + 65535u) & ~(uintptr_t)65535u);
#endif
}

static void never_allocated(void) {
  _Alignas(64) unsigned char stack_area[512];
  static const unsigned char fills[] = {0x00, 0xFF, 0x02, 0x04, 0x08, 0x10};
  size_t f;
  unsigned char *heap_block;
  for (f = 0; f < sizeof fills; f++) {
    char what[64];
    memset(stack_area, fills[f], sizeof stack_area);
    memset(static_area, fills[f], sizeof static_area);
    snprintf(what, sizeof what, "stack pointer (bytes 0x%02x)", fills[f]);
    refused(stack_area + 256, what);
    snprintf(what, sizeof what, "static pointer (bytes 0x%02x)", fills[f]);
    refused(static_area + 256, what);
  }
  /* Another heap's blocks: the C library's, and the Windows process heap. */
  heap_block = (unsigned char *)malloc(4096);
  if (CHECK(heap_block != NULL)) {
    refused(heap_block, "malloc'd block");
    free(heap_block);
  }
#if defined(_WIN32)
  heap_block = (unsigned char *)HeapAlloc(GetProcessHeap(), 0, 4096);
  if (CHECK(heap_block != NULL)) {
    refused(heap_block, "HeapAlloc'd block");
    HeapFree(GetProcessHeap(), 0, heap_block);
  }
#endif
  /* An OS mapping of our own with perfect headers forged in it. */
  {
    unsigned char *r = os_region(4u * 65536u);
    if (!CHECK(r != NULL))
      return;
    /* A small block: span header with the span magic at r, the block's header at r + 60. */
    memset(r, 0, 65536);
    *(uint32_t *)r = 0x5350414Eu; /* SMALL_SPAN_MAGIC */
    block_set_header(
        r + SMALL_SPAN_HEADER_SIZE,
        small_header_make(0, (unsigned)fastmm_small_class_slot_size(0), SMALL_SPAN_HEADER_SIZE));
    refused(r + SMALL_SPAN_HEADER_SIZE, "forged small block in foreign memory");
    /* A medium block: prev_size, size, flags, and the next header naming it. */
    memset(r, 0, 65536);
    {
      unsigned char *p = r + 64;
      ((uint32_t *)p)[-4] = 0;
      ((uint32_t *)p)[-3] = 4096;
      ((uint32_t *)p)[-1] = BLOCK_FLAG_MEDIUM;
      ((uint32_t *)(p + 4096))[-4] = 4096;
      refused(p, "forged medium block in foreign memory");
    }
    /* A large block: 64-byte header at a 64 KB boundary, the user pointer 64 bytes in. */
    memset(r + 65536, 0, 65536);
    block_set_header(r + 65536 + LARGE_HEADER_SIZE, BLOCK_FLAG_LARGE);
    ((size_t *)(r + 65536))[2] = 65536; /* size */
    refused(r + 65536 + LARGE_HEADER_SIZE, "forged large block in foreign memory");
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* ---- interior pointers --------------------------------------------------------------------- */

static void interior(void) {
  static const size_t sizes[] = {40,    700,    SMALL_MAX_USER,      SMALL_MAX_USER + 1,
                                 20000, 300000, MEDIUM_MAX_USER + 1, 3u * 1024u * 1024u};
  static const unsigned char fills[] = {0x00, 0xFF, 0x02, 0x04, 0x08, 0x10};
  size_t i, f, k;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = (unsigned char *)fastmm_getmem(sizes[i]);
    size_t usable;
    if (!CHECK(p != NULL))
      continue;
    usable = fastmm_usable_size(p);
    for (f = 0; f < sizeof fills; f++) {
      size_t offsets[8];
      size_t n = 0;
      memset(p, fills[f], sizes[i]);
      offsets[n++] = 1;
      offsets[n++] = 4;
      offsets[n++] = 8;
      offsets[n++] = 16;
      offsets[n++] = 48;
      if (usable > 64)
        offsets[n++] = (usable / 2) & ~(size_t)15;
      if (usable > 32)
        offsets[n++] = (usable - 16) & ~(size_t)15;
      if (usable > 65536 + 128)
        offsets[n++] = 65536 + LARGE_HEADER_SIZE; /* where a large block's pointer would sit */
      for (k = 0; k < n; k++) {
        char what[96];
        if (offsets[k] == 0 || offsets[k] >= sizes[i])
          continue;
        snprintf(what, sizeof what, "interior pointer +%zu of a %zu-byte block of 0x%02x",
                 offsets[k], sizes[i], fills[f]);
        refused(p + offsets[k], what);
      }
    }
    /* Still live, still the same size. */
    CHECK_EQ(fastmm_usable_size(p), usable);
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  }
  /* Pointers into a large block's own header (the manager's words before the block). */
  {
    unsigned char *p = (unsigned char *)fastmm_getmem(MEDIUM_MAX_USER + 100);
    if (CHECK(p != NULL) && CHECK_EQ(tb_kind(p), BLOCK_FLAG_LARGE)) {
      refused(p - 16, "pointer into a large block's header (-16)");
      refused(p - 32, "pointer into a large block's header (-32)");
      refused(p - 48, "pointer into a large block's header (-48)");
      CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    }
  }
}

/* ---- freed pointers ------------------------------------------------------------------------ */

static void freed(void) {
  static const size_t sizes[] = {
      0, 100, SMALL_MAX_USER, SMALL_MAX_USER + 1, 50000, MEDIUM_MAX_USER};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = NULL, *mate = tb_span_mate(&p, sizes[i]);
    if (!CHECK_MSG(p && mate, "no two %zu-byte blocks in one span", sizes[i]))
      continue;
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    refused(p, "freed block (in a thread cache or binned)");
    fastmm_flush_thread_cache();
    refused(p, "freed block (flushed back to its span)");
    CHECK_EQ(fastmm_freemem(mate), FASTMM_OK);
    fastmm_flush_thread_cache();
    still_works(sizes[i]);
  }
  /* Large: the mapping is gone; the page map says so before any header is read. */
  {
    void *p = fastmm_getmem(5u * 1024u * 1024u);
    if (CHECK(p != NULL)) {
      CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
      refused(p, "freed large block (unmapped)");
    }
  }
  /* A block moved away by ReallocMem: the old pointer is freed. */
  {
    unsigned char *p = (unsigned char *)fastmm_getmem(100), *q;
    void *keep = fastmm_getmem(100); /* keeps the span */
    if (CHECK(p != NULL && keep != NULL)) {
      q = (unsigned char *)fastmm_reallocmem(p, 100000);
      if (CHECK(q != NULL && q != p)) {
        refused(p, "pointer a ReallocMem moved away from");
        CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
      }
    }
    fastmm_freemem(keep);
  }
  /* ReallocMem(p, 0) frees: p is then refused. */
  {
    void *p = fastmm_getmem(3000), *keep = fastmm_getmem(3000);
    if (CHECK(p && keep)) {
      CHECK(fastmm_reallocmem(p, 0) == NULL);
      refused(p, "block freed by ReallocMem(p, 0)");
    }
    fastmm_freemem(keep);
  }
}

/* ---- sizes --------------------------------------------------------------------------------- */

/* Live blocks of each kind, with patterns: every impossible request must leave them intact. */
#define KEPT 4
static unsigned char *kept[KEPT];
static const size_t kept_size[KEPT] = {24, 2000, 60000, 700000};

static void keep_blocks(void) {
  size_t i;
  for (i = 0; i < KEPT; i++) {
    kept[i] = (unsigned char *)fastmm_getmem(kept_size[i]);
    if (CHECK(kept[i] != NULL))
      tu_fill_pattern(kept[i], kept_size[i], (uint32_t)(i + 40));
  }
}

static void kept_intact(const char *what) {
  size_t i;
  for (i = 0; i < KEPT; i++) {
    if (!kept[i])
      continue;
    CHECK_MSG(fastmm_usable_size(kept[i]) >= kept_size[i], "%s: block %zu lost", what, i);
    CHECK_MSG(tu_check_pattern(kept[i], kept_size[i], (uint32_t)(i + 40)) == (size_t)-1,
              "%s: block %zu changed", what, i);
  }
}

static void free_kept(void) {
  size_t i;
  for (i = 0; i < KEPT; i++)
    if (kept[i])
      CHECK_EQ(fastmm_freemem(kept[i]), FASTMM_OK);
}

static void negative_sizes(void) {
  static const intptr_t negative[] = {-1,
                                      -2,
                                      -15,
                                      -16,
                                      -4096,
                                      -(intptr_t)SMALL_MAX_USER,
                                      -(intptr_t)MEDIUM_MAX_USER,
                                      INTPTR_MIN / 2,
                                      INTPTR_MIN,
                                      INTPTR_MIN + 1};
  fastmm_memory_manager_ex mm;
  size_t i, k;
  fastmm_state s0, s1;
  fastmm_get_memory_manager(&mm);
  keep_blocks();
  tb_state(&s0);
  for (i = 0; i < sizeof negative / sizeof negative[0]; i++) {
    intptr_t n = negative[i];
    void *p = mm.get_mem(n);
    CHECK_MSG(p == NULL, "GetMem(%lld) = %p", (long long)n, p);
    p = mm.alloc_mem(n);
    CHECK_MSG(p == NULL, "AllocMem(%lld) = %p", (long long)n, p);
    p = mm.realloc_mem(NULL, n);
    CHECK_MSG(p == NULL, "ReallocMem(nil, %lld) = %p", (long long)n, p);
    for (k = 0; k < KEPT; k++) {
      if (!kept[k])
        continue;
      p = mm.realloc_mem(kept[k], n);
      CHECK_MSG(p == NULL, "ReallocMem(%zu-byte block, %lld) = %p", kept_size[k], (long long)n, p);
      if (p)
        kept[k] = (unsigned char *)p;
    }
  }
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
  kept_intact("negative sizes");
  free_kept();
  CHECK_EQ(fastmm_check_heap(), 0);
}

static void address_space_limit(void) {
  static const size_t huge[] = {
    (size_t)-1,
    (size_t)-1 - 1,
    (size_t)-1 - 15,
    (size_t)-1 - 63,
    (size_t)-1 - LARGE_GRANULARITY + 1,
    (size_t)-1 - LARGE_GRANULARITY - LARGE_HEADER_SIZE,
    (size_t)-1 / 2 + 1,
    (size_t)-1 / 2,
    MAX_REQUEST_SIZE + 1,
    MAX_REQUEST_SIZE,
    (size_t)-1 / 4 * 3,
#if UINTPTR_MAX > 0xFFFFFFFFu
    (size_t)1 << 47, /* the whole user address space of x64 */
    (size_t)1 << 46,
#else
    (size_t)0xFFFF0000u,
    (size_t)0xC0000000u,
    (size_t)0x80000000u,
    (size_t)0x7FFF0000u, /* more than a 32-bit process's 2 GB can hold */
#endif
  };
  fastmm_memory_manager_ex mm;
  size_t i, k;
  fastmm_state s0, s1;
  fastmm_get_memory_manager(&mm);
  keep_blocks();
  /* A request that fails first gives back what the manager keeps for reuse (and tries again):
   * with nothing kept, the OS bytes must not move at all. */
  fastmm_release_free_memory();
  tb_state(&s0);
  for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    size_t n = huge[i];
    void *p = fastmm_getmem(n);
    CHECK_MSG(p == NULL, "getmem(%zu) = %p", n, p);
    p = fastmm_allocmem(n);
    CHECK_MSG(p == NULL, "allocmem(%zu) = %p", n, p);
    p = fastmm_reallocmem(NULL, n);
    CHECK_MSG(p == NULL, "reallocmem(NULL, %zu) = %p", n, p);
    if (n <= (size_t)INTPTR_MAX) {
      p = mm.get_mem((intptr_t)n);
      CHECK_MSG(p == NULL, "Delphi GetMem(%zu) = %p", n, p);
      p = mm.alloc_mem((intptr_t)n);
      CHECK_MSG(p == NULL, "Delphi AllocMem(%zu) = %p", n, p);
    }
    for (k = 0; k < KEPT; k++) {
      if (!kept[k])
        continue;
      p = fastmm_reallocmem(kept[k], n);
      CHECK_MSG(p == NULL, "reallocmem(%zu-byte block, %zu) = %p", kept_size[k], n, p);
      if (p)
        kept[k] = (unsigned char *)p;
      if (n <= (size_t)INTPTR_MAX && kept[k]) {
        p = mm.realloc_mem(kept[k], (intptr_t)n);
        CHECK_MSG(p == NULL, "Delphi ReallocMem(%zu-byte block, %zu) = %p", kept_size[k], n, p);
        if (p)
          kept[k] = (unsigned char *)p;
      }
    }
  }
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_MSG(s1.os_bytes_reserved == s0.os_bytes_reserved, "impossible sizes mapped %zu bytes",
            s1.os_bytes_reserved - s0.os_bytes_reserved);
  kept_intact("sizes near the address-space limit");
  free_kept();
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  printf("test_hostile (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  never_allocated();
  interior();
  freed();
  negative_sizes();
  address_space_limit();
  CHECK_EQ(fastmm_check_heap(), 0);
  still_works(16);
  still_works(3000);
  still_works(1000000);
  return tu_finish("test_hostile");
}
