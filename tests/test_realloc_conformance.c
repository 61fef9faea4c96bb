/* SPDX-License-Identifier: MIT */
/* The ReallocMem conformance suite (issue 4). It drives both ReallocMem entry points the DLL
 * hands out, the C export fastmm_reallocmem and the Delphi record's ReallocMem (on Win32 the
 * `register` entry, on Win32 and Win64 the NASM fast path unless built pure C), and checks for
 * each: pointer identity where FastMM's policy keeps a block in place, the class a required
 * move lands in, data preserved byte for byte, dispatch of medium, large and debug-flagged
 * blocks, the documented results for bad pointers and sizes, and a consistent heap after. */
#include "realloc_entries.h"

#define INTACT ((size_t)-1) /* tu_check_pattern: no wrong byte */

static const char *entry_name;

/* What FastMM's small policy says about resizing a block of `usable` bytes to `n`. */
static int stays_in_place(size_t usable, size_t n) {
  return n >= 1 && n <= usable && n * 4 + 64 >= usable;
}

static size_t min_in_place(size_t usable) {
  return usable <= 64 ? 1 : (usable - 64 + 3) / 4;
}

/* Resizes a fresh block of `size` bytes to `n` and checks the result against the policy. */
static void one_resize(realloc_fn resize, size_t size, size_t n) {
  void *p = fastmm_getmem(size);
  CHECK(p != NULL);
  if (!p)
    return;
  size_t usable = fastmm_usable_size(p);
  uint32_t seed = (uint32_t)(size * 7919u + n);
  tu_fill_pattern(p, usable, seed);
  void *q = resize(p, n);
  CHECK_MSG(q != NULL, "%s: %zu -> %zu returned NULL", entry_name, size, n);
  if (!q)
    return;
  size_t kept = n < usable ? n : usable;
  CHECK_MSG(tu_check_pattern(q, kept, seed) == INTACT, "%s: %zu -> %zu lost data", entry_name, size,
            n);
  if (stays_in_place(usable, n)) {
    CHECK_MSG(q == p, "%s: %zu (usable %zu) -> %zu should stay in place", entry_name, size, usable,
              n);
  } else if (n <= usable) {
    /* A moving downsize lands in the class of the new size. */
    CHECK_MSG(q != p, "%s: %zu -> %zu should move", entry_name, size, n);
    CHECK_EQ(fastmm_usable_size(q), tb_small_usable((size_t)tb_small_class_for(n)));
  } else {
    /* An upsize asks for max(2*usable + 32, n), no more than the largest small block when n fits
     * one, and copies the old usable bytes. */
    size_t want = 2 * usable + 32;
    if (want > SMALL_MAX_USER && n <= SMALL_MAX_USER)
      want = SMALL_MAX_USER;
    if (want < n)
      want = n;
    CHECK_MSG(q != p, "%s: %zu -> %zu should move", entry_name, size, n);
    CHECK(fastmm_usable_size(q) >= want);
    if (want <= SMALL_MAX_USER)
      CHECK_EQ(fastmm_usable_size(q), tb_small_usable((size_t)tb_small_class_for(want)));
    else
      CHECK_EQ(tb_kind(q), BLOCK_FLAG_MEDIUM);
    CHECK(tu_check_pattern(q, usable, seed) == INTACT);
  }
  CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
}

static void small_sizes(realloc_fn resize) {
  for (size_t size = 2; size <= 2600; size++) {
    void *probe = fastmm_getmem(size);
    size_t usable = fastmm_usable_size(probe);
    fastmm_freemem(probe);
    if (size > SMALL_MAX_USER) {
      one_resize(resize, size, size); /* medium: same size, same pointer */
      continue;
    }
    size_t lo = min_in_place(usable);
    /* Both policy boundaries on each side, the same size, a halving and a growth. */
    size_t sizes[] = {usable, usable + 1, lo,      lo > 1 ? lo - 1 : 1, size, size / 2 + 1,
                      1,      size + 1,   2 * size};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
      one_resize(resize, size, sizes[i]);
  }
}

static void thresholds(realloc_fn resize) {
  /* small -> medium */
  void *p = fastmm_getmem(SMALL_MAX_USER);
  CHECK_EQ(tb_kind(p), BLOCK_FLAG_SMALL);
  tu_fill_pattern(p, SMALL_MAX_USER, 1);
  void *q = resize(p, SMALL_MAX_USER + 1);
  CHECK_EQ(tb_kind(q), BLOCK_FLAG_MEDIUM);
  CHECK(tu_check_pattern(q, SMALL_MAX_USER, 1) == INTACT);
  /* medium, same and slightly smaller: in place */
  size_t mu = fastmm_usable_size(q);
  CHECK(resize(q, mu) == q);
  CHECK(resize(q, mu / 2 + 1) == q);
  /* medium -> large */
  void *r = resize(q, MEDIUM_MAX_USER + 1);
  CHECK_EQ(tb_kind(r), BLOCK_FLAG_LARGE);
  CHECK(tu_check_pattern(r, SMALL_MAX_USER, 1) == INTACT);
  /* large, same and half: in place; below half: moves */
  size_t lu = fastmm_usable_size(r);
  CHECK(resize(r, lu) == r);
  CHECK(resize(r, lu / 2) == r);
  void *s = resize(r, 100);
  CHECK(s != NULL && s != r);
  CHECK_EQ(tb_kind(s), BLOCK_FLAG_SMALL);
  CHECK(tu_check_pattern(s, 100, 1) == INTACT);
  /* medium well below half the smallest medium block: moves to small */
  void *m = fastmm_getmem(100000);
  tu_fill_pattern(m, 300, 2);
  void *t = resize(m, 300);
  CHECK(t != m);
  CHECK_EQ(tb_kind(t), BLOCK_FLAG_SMALL);
  CHECK(tu_check_pattern(t, 300, 2) == INTACT);
  CHECK_EQ(fastmm_freemem(s), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(t), FASTMM_OK);
}

#if !defined(FASTMM_TEST_UNCHECKED)
/* A word that looks like a debug block's (FastMM5's last header bytes: feature flags, trace
 * entries, DebugBlockFlags), or a small block's with the DEBUG_OUTER or FREE bit, must not be
 * taken for a small block by the fast path: forged inside a block, each is refused (NULL,
 * nothing moved). The freed debug word with feature flags 2 is the one that would pass for a
 * small block under the old numbering (SMALL was bit 1). */
#define DEBUG_WORD(features, entries, flags)                                                       \
  ((uint32_t)(features) | (uint32_t)(entries) << 8 | (uint32_t)(flags) << DEBUG_WORD_FLAGS_SHIFT)
static void debug_flag_dispatch(realloc_fn resize) {
  char *outer = (char *)fastmm_getmem(8192);
  CHECK(outer != NULL);
  uint32_t flags[] = {
      DEBUG_WORD(1, 20, DEBUG_WORD_LIVE),  DEBUG_WORD(2, 0, DEBUG_WORD_FREED),
      DEBUG_WORD(3, 64, DEBUG_WORD_FREED), BLOCK_FLAG_DEBUG_OUTER | BLOCK_FLAG_SMALL,
      BLOCK_FLAG_SMALL | BLOCK_FLAG_FREE,  small_header_make(3, 64, 64) | BLOCK_FLAG_DEBUG_OUTER};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    char *fake = outer + 256;
    block_set_header(fake, flags[i]);
    memset(fake, 0x5A, 64);
    CHECK_MSG(resize(fake, 32) == NULL, "%s: header %#x not refused", entry_name,
              (unsigned)flags[i]);
    CHECK(fake[0] == 0x5A && fake[63] == 0x5A);
  }
  CHECK_EQ(fastmm_freemem(outer), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}
#endif

/* Every small span's medium block starts at a multiple of 16 KB, the span header a colour into it
 * (under 16 KB: medium_alloc_small_span, span_create), so that each 16 KB granule is one span's
 * and its span record names it; a span may cross a 64 KB region's start, and its blocks on either
 * side are found there all the same. Taken after a medium block that moves where the next spans
 * start, every block of thousands, of each size, lies after its span's header in the granules
 * its span covers, and some stay in place when resized. */
static void span_in_own_region(realloc_fn resize) {
  static const size_t sizes[] = {24, 200, 1000, 1500, 2500};
  enum { N = 4096 };
  static void *held[N];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = 0, spans = 0;
    uintptr_t last_span = 0;
    void *spacer = fastmm_getmem(24000);
    CHECK(spacer != NULL);
    for (; n < N; n++) {
      unsigned char *p = (unsigned char *)fastmm_getmem(sizes[i]);
      held[n] = p;
      if (!CHECK(p != NULL))
        break;
      uint32_t h = block_header(p);
      uintptr_t span = (uintptr_t)p - small_header_span_offset(h);
      uintptr_t block = span & ~(uintptr_t)(16u * 1024u - 1u);
      spans += span != last_span;
      last_span = span;
      CHECK_MSG(span - block >= 64u && span - block <= 512u && (uintptr_t)p - block < 64u * 1024u,
                "%s: a %zu-byte block at %p, its span at %p, not a colour past a 16 KB boundary "
                "or too far from it",
                entry_name, sizes[i], (void *)p, (void *)span);
      size_t usable = small_header_usable(h);
      if (n % 61 == 0) {
        tu_fill_pattern(p, usable, 31);
        CHECK_MSG(resize(p, usable) == p, "%s: block %p of a span at %p", entry_name, (void *)p,
                  (void *)span);
        CHECK(tu_check_pattern(p, usable, 31) == INTACT);
      }
    }
    CHECK_MSG(spans > 4, "%zu-byte blocks came from %zu spans", sizes[i], spans);
    while (n > 0)
      CHECK_EQ(fastmm_freemem(held[--n]), FASTMM_OK);
    CHECK_EQ(fastmm_freemem(spacer), FASTMM_OK);
  }
}

#if !defined(FASTMM_TEST_UNCHECKED)
static char static_area[256];

static void bad_input(realloc_fn resize) {
  char stack_area[256];
  void *mate_of_small, *small_block;
  mate_of_small = tb_span_mate(&small_block, 48);
  CHECK(small_block != NULL && mate_of_small != NULL);
  tu_fill_pattern(small_block, 44, 9);
  size_t small_usable = fastmm_usable_size(small_block);

  /* Foreign and interior pointers: NULL, nothing touched. */
  void *foreign[] = {stack_area + 16 - ((uintptr_t)stack_area & 15),
                     static_area + 16 - ((uintptr_t)static_area & 15), (char *)small_block + 16,
                     (char *)small_block + 1, (void *)(uintptr_t)16};
  for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
    CHECK_MSG(resize(foreign[i], 8) == NULL, "%s: foreign pointer %zu accepted", entry_name, i);
  CHECK(tu_check_pattern(small_block, 44, 9) == INTACT);

  /* Huge sizes: NULL, the old block intact and still ours. */
  size_t huge[] = {(size_t)-1, (size_t)-1 / 2, (size_t)-1 - 4096, MAX_REQUEST_SIZE + 1};
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    CHECK_MSG(resize(small_block, huge[i]) == NULL, "%s: huge size %zu", entry_name, huge[i]);
    CHECK(tu_check_pattern(small_block, 44, 9) == INTACT);
    CHECK_EQ(fastmm_usable_size(small_block), small_usable);
  }
  void *m = fastmm_getmem(50000), *l = fastmm_getmem(3u << 20);
  CHECK(resize(m, (size_t)-1) == NULL && fastmm_usable_size(m) >= 50000);
  CHECK(resize(l, (size_t)-1) == NULL && fastmm_usable_size(l) >= (3u << 20));

  /* Freed and double-freed: NULL. */
  CHECK_EQ(fastmm_freemem(small_block), FASTMM_OK);
  CHECK(resize(small_block, 20) == NULL);
  CHECK(fastmm_freemem(small_block) != FASTMM_OK);
  CHECK(resize(small_block, 20) == NULL);
  CHECK_EQ(fastmm_freemem(mate_of_small), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(m), FASTMM_OK);
  void *moved = resize(l, 20); /* moves to small (below half) and frees the large block */
  CHECK(moved != NULL && moved != l);
  CHECK(resize(l, 20) == NULL); /* the large block is gone */
  CHECK_EQ(fastmm_freemem(moved), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}
#endif

static void delphi_meanings(realloc_fn resize) {
  /* realloc(nil, n) allocates; realloc(p, 0) frees and gives nil. */
  void *p = resize(NULL, 40);
  CHECK(p != NULL && fastmm_usable_size(p) >= 40);
  CHECK(resize(p, 0) == NULL);
  CHECK_EQ(fastmm_usable_size(p), 0);
  CHECK(fastmm_freemem(p) != FASTMM_OK); /* already freed by the resize to 0 */
  void *big = resize(NULL, 1u << 20);
  CHECK(big != NULL && tb_kind(big) == BLOCK_FLAG_LARGE);
  CHECK(resize(big, 0) == NULL);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* A medium block shrunk below half its size, by enough that the tail is a block of its own: the
 * same pointer, a smaller block, the data kept (the slow path cuts it; every fast path must
 * leave it there). */
static void medium_shrink_cuts(realloc_fn resize) {
  unsigned char *m = (unsigned char *)fastmm_getmem(20000);
  if (!CHECK(m != NULL))
    return;
  size_t usable = fastmm_usable_size(m);
  tu_fill_pattern(m, 5000, 9);
  void *q = resize(m, 5000);
  CHECK_MSG(q == m, "%s: medium %zu -> 5000 moved", entry_name, usable);
  if (!q)
    return;
  CHECK_MSG(fastmm_usable_size(q) < usable, "%s: medium %zu -> 5000 kept its tail", entry_name,
            usable);
  CHECK(tu_check_pattern(q, 5000, 9) == INTACT);
  CHECK_EQ(fastmm_freemem(q), 0);
}

/* Resizes p one byte at a time from size `from` to size `to`, up or down; growing, it writes each
 * new last byte. Returns the block (NULL when a resize failed) and sets *twice to the first size
 * whose resize moved the block right after the resize before it had moved it (0: none). */
static unsigned char *one_byte_each(realloc_fn resize, unsigned char *p, size_t from, size_t to,
                                    size_t *twice) {
  int moved_last = 0;
  *twice = 0;
  for (size_t n = from; n != to;) {
    n = to > from ? n + 1 : n - 1;
    unsigned char *q = (unsigned char *)resize(p, n);
    if (!CHECK(q != NULL))
      return NULL;
    int moved = q != p;
    if (moved && moved_last && *twice == 0)
      *twice = n;
    moved_last = moved;
    if (to > from)
      q[n - 1] = (unsigned char)(n * 7u);
    p = q;
  }
  return p;
}

/* A block resized one byte at a time from `start` up to 12,000 and back to 1, as Delphi's
 * SetLength does on every character: every byte kept, and a resize that moved the block is never
 * followed by one that moves it again (a block the policy would move back at once: a size that
 * fits a small block grown into a medium one, then moved back by the medium downsize rule). */
static void one_byte_steps(realloc_fn resize, size_t start) {
  unsigned char *p = (unsigned char *)fastmm_getmem(start);
  size_t n, at;
  if (!CHECK(p != NULL))
    return;
  for (n = 0; n < start; n++)
    p[n] = (unsigned char)((n + 1) * 7u);
  p = one_byte_each(resize, p, start, 12000, &at);
  if (p == NULL)
    return;
  CHECK_MSG(at == 0, "%s: one byte up from %zu: moved at %zu and at %zu", entry_name, start, at - 1,
            at);
  for (n = 0; n < 12000; n++)
    if (p[n] != (unsigned char)((n + 1) * 7u))
      break;
  CHECK_MSG(n == 12000, "%s: one byte up to 12000: byte %zu lost", entry_name, n);
  p = one_byte_each(resize, p, 12000, 1, &at);
  if (p == NULL)
    return;
  CHECK_MSG(at == 0, "%s: one byte down: moved at %zu and at %zu", entry_name, at + 1, at);
  CHECK_EQ(p[0], 7u);
  CHECK_EQ(fastmm_freemem(p), 0);
}

static void negative_sizes(void) {
  /* Delphi's Win32 RTL passes negative sizes through: they fail cleanly. */
  void *p = fastmm_getmem(30);
  tu_fill_pattern(p, 30, 4);
  intptr_t neg[] = {-1, -2, -64, INTPTR_MIN, INTPTR_MIN + 1};
  for (size_t i = 0; i < sizeof neg / sizeof neg[0]; i++) {
    CHECK(delphi.realloc_mem(p, neg[i]) == NULL);
    CHECK(tu_check_pattern(p, 30, 4) == INTACT);
  }
  CHECK_EQ(delphi.free_mem(p), 0);
}

int main(void) {
  fastmm_get_memory_manager(&delphi);
  printf("test_realloc_conformance (%s, %d-bit, %s ReallocMem)\n",
#if defined(_WIN32)
         "Windows",
#else
         "native",
#endif
         (int)(sizeof(void *) * 8),
#if defined(_WIN32) && !defined(FASTMM_TEST_PURE_C)
         "NASM"
#else
         "C"
#endif
  );
  for (size_t e = 0; e < REALLOC_ENTRY_COUNT; e++) {
    entry_name = realloc_entries[e].name;
    small_sizes(realloc_entries[e].fn);
    thresholds(realloc_entries[e].fn);
    medium_shrink_cuts(realloc_entries[e].fn);
    /* From 1 the headroom doubles past the sizes where it would reach the medium blocks first. */
    for (size_t start = 1; start <= SMALL_MAX_USER; start += 200)
      one_byte_steps(realloc_entries[e].fn, start);
    span_in_own_region(realloc_entries[e].fn);
#if !defined(FASTMM_TEST_UNCHECKED)
    /* Bad pointers: the unchecked yardstick trusts the header word, as FastMM does. */
    debug_flag_dispatch(realloc_entries[e].fn);
    bad_input(realloc_entries[e].fn);
#endif
    delphi_meanings(realloc_entries[e].fn);
    CHECK_EQ(fastmm_check_heap(), 0);
  }
  negative_sizes();
  fastmm_state st;
  tb_state(&st);
  CHECK_EQ(st.small.blocks_in_use + st.medium.blocks_in_use + st.large.blocks_in_use, 0);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_realloc_conformance");
}
