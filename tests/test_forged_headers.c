/* SPDX-License-Identifier: MIT */
/* The validation contract (docs/architecture-reference.md): a pointer whose 4 bytes before it look
 * like the header of a live small block, but which is not where a live block of ours begins, is
 * refused by every entry point: FreeMem (C export and Delphi record), ReallocMem (C export, Delphi
 * record; on Windows both are the NASM fast path unless the build is pure C; natively also the
 * Win64 NASM path assembled as ELF64), the usable size and ownership. The heap is unchanged.
 *
 * The pointers (issue 14's defect and its variations):
 *   - inside a block of any kind whose data repeat a 32-bit word that reads as a small header
 *     (the issue's two cases: a 1000-byte block of bytes 2 resized to 300 at p + 16, a block of
 *     ints equal to 2 resized to 1 GB at &a[4]), small, medium and large;
 *   - inside a live small block, under a header naming that block's own span with its class,
 *     slot and the right distance back: everything matches but the slot boundary;
 *   - at a slot boundary of a real span past its carved end (the uncarved tail), under the
 *     header a block there would have;
 *   - at a slot boundary past a span's last slot, inside a medium block that follows the span;
 *   - inside a free block (in the thread cache, and given back to its span);
 *   - under a span header forged in the program's own block, with the span magic of old;
 *   - under a header naming a span before its medium span (no real span lies there);
 *   - under a medium header forged in a medium block, one boundary-tag check broken each time.
 * ReallocMem is asked for sizes that the forged header's own numbers would keep in place, so an
 * entry that trusts the header answers with the pointer itself. */
#include "realloc_entries.h"

#include "core/medium.h"
#include "core/small.h"

static uint32_t checksum(const unsigned char *p, size_t n) {
  uint32_t x = 2166136261u;
  for (size_t i = 0; i < n; i++)
    x = (x ^ p[i]) * 16777619u;
  return x;
}

/* Sizes the header word before p would keep in place if it were trusted: its usable size (slot
 * - 4, wrapping to 4 GB - 4 for a slot field of 0), the smallest that stays, and the issue's. */
static size_t in_place_sizes(const void *p, size_t out[4]) {
  uint32_t h = block_header(p);
  size_t n = 0;
  out[n++] = 300;
  out[n++] = (size_t)1 << 30;
  if ((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL) {
    uint32_t usable = small_header_usable(h); /* wraps as an unchecked fast path would */
    size_t u = usable > (1u << 30) ? (size_t)1 << 30 : usable;
    out[n++] = u != 0 ? u : 1;
    out[n++] = usable <= 64 ? 1 : (usable - 64 + 3) / 4;
  } else if ((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM) {
    /* The medium rule keeps a block whose new size is between half its usable size and all of
     * it: both ends, as the forged size field reads. */
    uint32_t usable;
    memcpy(&usable, (const char *)p - MEDIUM_HEADER_SIZE + 4, 4); /* the header's size field */
    usable -= MEDIUM_HEADER_SIZE;
    out[n++] = usable != 0 ? usable : 1;
    out[n++] = usable / 2u + 1u;
  }
  return n;
}

/* p (inside `container`, `length` bytes the test owns) is no live block: every entry refuses
 * it, the container's bytes and the heap stay as they were. A FreeMem that accepts p has put
 * memory the program owns on a free list: the test stops there. */
static void refused(void *p, const void *container, size_t length, const char *what) {
  fastmm_state s0, s1;
  size_t sizes[4], n = in_place_sizes(p, sizes);
  uint32_t before = checksum((const unsigned char *)container, length);
  uint32_t header = block_header(p);
  tb_state(&s0);
  for (size_t e = 0; e < REALLOC_ENTRY_COUNT; e++)
    for (size_t i = 0; i < n; i++) {
      void *q = realloc_entries[e].fn(p, sizes[i]);
      CHECK_MSG(q == NULL, "%s: %s(%p, %zu) = %p, not NULL (header 0x%08lx)", what,
                realloc_entries[e].name, p, sizes[i], q, (unsigned long)header);
    }
  CHECK_MSG(fastmm_usable_size(p) == 0, "%s: usable_size(%p) = %zu", what, p,
            fastmm_usable_size(p));
  CHECK_MSG(fastmm_owns_block(p) == 0, "%s: owns_block(%p) = 1", what, p);
  CHECK_MSG(checksum((const unsigned char *)container, length) == before,
            "%s: the block around it changed", what);
  int c = fastmm_freemem(p);
  int d = c == FASTMM_OK ? 0 : delphi.free_mem(p);
  if (!CHECK_MSG(c == FASTMM_ERROR_INVALID_POINTER && d != 0,
                 "%s: freemem(%p) = %d, Delphi FreeMem = %d (header 0x%08lx)", what, p, c, d,
                 (unsigned long)header)) {
    fprintf(stderr, "%s: FreeMem took memory the program owns; stopping here\n", what);
    exit(tu_finish("test_forged_headers"));
  }
  tb_state(&s1);
  CHECK_MSG(tb_blocks_in_use(&s1) == tb_blocks_in_use(&s0), "%s: blocks in use %zu -> %zu", what,
            tb_blocks_in_use(&s0), tb_blocks_in_use(&s1));
  CHECK_MSG(checksum((const unsigned char *)container, length) == before,
            "%s: the block around it changed", what);
  int fault = fastmm_check_heap();
  CHECK_MSG(fault == 0, "%s: check_heap %d", what, fault);
}

/* ---- the issue's two cases ------------------------------------------------------------------ */

/* The issue's cases, with the fill value `v`: 2 as the issue wrote them (the SMALL kind bit of
 * the numbering of then; DEBUG_OUTER in FastMM5's, which the header contract has now), and
 * BLOCK_FLAG_SMALL, which reads as a live small header today. With bytes of BLOCK_FLAG_SMALL the
 * slot field reads 2048 or more, so 300 would move: refused() also asks for the sizes such a
 * header keeps in place. */
static void issue_cases_with(unsigned char v) {
  unsigned char *p = (unsigned char *)fastmm_getmem(1000);
  int32_t *a = (int32_t *)fastmm_getmem(400);
  char what_p[80], what_a[80];
  if (!CHECK(p != NULL && a != NULL))
    return;
  memset(p, v, 1000);
  for (size_t i = 0; i < 100; i++)
    a[i] = v;
  for (size_t e = 0; e < REALLOC_ENTRY_COUNT; e++) {
    CHECK_MSG(realloc_entries[e].fn(p + 16, 300) == NULL, "%s(p + 16, 300) on bytes %u",
              realloc_entries[e].name, v);
    CHECK_MSG(realloc_entries[e].fn(&a[4], (size_t)1 << 30) == NULL,
              "%s(&a[4], 1 << 30) on ints %u", realloc_entries[e].name, v);
  }
  snprintf(what_p, sizeof what_p, "p + 16 of a 1000-byte block of bytes %u", v);
  snprintf(what_a, sizeof what_a, "&a[4] of a 400-byte block of ints %u", v);
  refused(p + 16, p, 1000, what_p);
  refused(&a[4], a, 400, what_a);
  CHECK_EQ(fastmm_usable_size(p), tb_small_usable((size_t)tb_small_class_for(1000)));
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(a), FASTMM_OK);
}

static void issue_cases(void) {
  issue_cases_with(2);
  issue_cases_with((unsigned char)BLOCK_FLAG_SMALL);
}

/* ---- blocks of every kind filled with a word that reads as a small header ---------------------
 */

static void filled_blocks(void) {
  static const size_t sizes[] = {48, 400, 1000, SMALL_MAX_USER, 5000, 100000, MEDIUM_MAX_USER + 1};
  uint32_t words[6];
  words[0] = BLOCK_FLAG_SMALL;                        /* slot 0: usable wraps to 4 GB */
  words[1] = 0x01010101u * BLOCK_FLAG_SMALL;          /* the issue's bytes, today's SMALL */
  words[2] = small_header_make(16, 1024, 64);         /* a perfect header, span 64 back */
  words[3] = small_header_make(0, 16, 64 + 16 * 100); /* class 0, 100 slots in */
  words[4] = small_header_make(SMALL_CLASS_COUNT - 1, SMALL_MAX_SLOT, 64 + SMALL_MAX_SLOT);
  words[5] = 0x02020202u; /* the issue's bytes as written (SMALL was 2 then; DEBUG_OUTER now) */
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    uint32_t *p = (uint32_t *)fastmm_getmem(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    size_t usable = fastmm_usable_size(p), n = sizes[i] / 4;
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
      for (size_t k = 0; k < n; k++)
        p[k] = words[w];
      size_t offsets[] = {16, 32, 64, 256, (usable / 2) & ~(size_t)15, (usable - 16) & ~(size_t)15};
      for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        char what[128];
        if (offsets[k] < 16 || offsets[k] + 16 > sizes[i])
          continue;
        snprintf(what, sizeof what, "+%zu in a %zu-byte block of words 0x%08lx", offsets[k],
                 sizes[i], (unsigned long)words[w]);
        refused((char *)p + offsets[k], p, sizes[i], what);
      }
    }
    CHECK_EQ(fastmm_usable_size(p), usable);
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  }
}

/* ---- headers that name a real span ---------------------------------------------------------- */

static unsigned char *span_of(const void *p) {
  return (unsigned char *)p - small_header_span_offset(block_header(p));
}

/* The bytes from span header s to the end of the medium block that holds it, where the header
 * lies a colour in (small.h). */
static size_t span_block_bytes(const unsigned char *s) {
  const unsigned char *block = (const unsigned char *)small_span_block((const small_span *)s);
  return (size_t)tb_medium_size(block) - MEDIUM_HEADER_SIZE - (size_t)(s - block);
}

/* Inside a live small block, a header that names the block's own span, class and slot, with the
 * exact distance back to the span: only the slot boundary is wrong. */
static void interior_naming_own_span(void) {
  static const size_t sizes[] = {40, 100, 250, 700, 1500, SMALL_MAX_USER};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *q = (unsigned char *)fastmm_getmem(sizes[i]);
    if (!CHECK(q != NULL))
      continue;
    uint32_t h = block_header(q);
    unsigned cls = small_header_class(h);
    uint32_t slot = small_header_slot_size(h);
    size_t usable = small_header_usable(h);
    unsigned char *span = span_of(q);
    memset(q, 0xA5, usable);
    for (size_t d = 16; d + 16 <= usable; d += d < 128 ? 16 : 112) {
      char what[128];
      unsigned char *p = q + d;
      block_set_header(p, small_header_make(cls, slot, (unsigned)(p - span)));
      snprintf(what, sizeof what, "+%zu in a live %zu-byte block under a header naming its span", d,
               sizes[i]);
      refused(p, q, usable, what);
    }
    CHECK_EQ(block_header(q), h);
    CHECK_EQ(fastmm_usable_size(q), usable);
    CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
  }
}

/* The span's slots past its carved end hold whatever the memory held before (a stale header of
 * an earlier span of the same class there, say): a perfect header in the last slot of a span
 * fresh enough that its tail is not carved yet. */
static void uncarved_tail(void) {
  static const size_t sizes[] = {2000, 1000, 200};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    enum { N = 512 };
    void *held[N];
    size_t n = 0;
    unsigned char *first = NULL;
    /* The first block of a new span: its span offset is the span header's size. */
    while (n < N) {
      held[n] = fastmm_getmem(sizes[i]);
      if (!held[n])
        break;
      if (small_header_span_offset(block_header(held[n])) == SMALL_SPAN_HEADER_SIZE) {
        first = (unsigned char *)held[n++];
        break;
      }
      n++;
    }
    if (CHECK_MSG(first != NULL, "no new span for %zu-byte blocks", sizes[i])) {
      uint32_t h = block_header(first);
      uint32_t slot = small_header_slot_size(h);
      unsigned char *span = span_of(first);
      /* The slots the span holds, as its header counts them. */
      size_t slots = ((const small_span *)span)->block_count;
      unsigned char *last = span + SMALL_SPAN_HEADER_SIZE + (slots - 1) * slot;
      uint32_t saved = block_header(last);
      block_set_header(last,
                       small_header_make(small_header_class(h), slot, (unsigned)(last - span)));
      refused(last, last - BLOCK_HEADER_SIZE, slot, "the last slot of a new span (uncarved)");
      block_set_header(last, saved);
    }
    while (n > 0)
      CHECK_EQ(fastmm_freemem(held[--n]), FASTMM_OK);
  }
}

/* A header at a slot boundary past a span's last slot, in a medium block after the span: the
 * span, class, slot and boundary all match; the block count does not. The layout is made: a hole
 * between two live 5000-byte medium blocks, which a new span of the 48-byte class goes into (a
 * span placed in its free block's highest place at a multiple of 16 KB), so that the live block
 * after the hole (or one allocated into what the span left of it) lies within reach after it. */
static void past_the_span(void) {
  enum { RUN = 12, SMALLS = 4096, N = 64 };
  void *run[RUN];
  static void *smalls[SMALLS];
  unsigned char *medium[N + 1];
  size_t n = 0, found = 0, k = 0;
  unsigned char *small = NULL, *span = NULL;
  /* The thread's cache first: it chooses the arena the medium blocks come from, as the spans. */
  CHECK_EQ(fastmm_freemem(fastmm_getmem(8)), FASTMM_OK);
  if (!CHECK_MSG(tb_adjacent_medium(5000, RUN, run), "no %d adjacent 5000-byte blocks", RUN))
    return;
  unsigned char *hole_lo = (unsigned char *)run[1] - MEDIUM_HEADER_SIZE;
  unsigned char *hole_hi = (unsigned char *)run[RUN - 1] - MEDIUM_HEADER_SIZE;
  for (size_t i = 1; i + 1 < RUN; i++)
    CHECK_EQ(fastmm_freemem(run[i]), FASTMM_OK);
  /* New spans of the class go into the smallest free blocks they fit: the hole, once the holes
   * smaller than it are taken. */
  for (k = 0; k < SMALLS && small == NULL; k++) {
    smalls[k] = fastmm_getmem(48);
    if (!CHECK(smalls[k] != NULL))
      break;
    unsigned char *s = span_of(smalls[k]);
    if (s >= hole_lo && s < hole_hi) {
      small = (unsigned char *)smalls[k];
      span = s;
    }
  }
  if (CHECK_MSG(small != NULL, "no span of the 48-byte class went into a %td-byte hole",
                hole_hi - hole_lo)) {
    uint32_t h = block_header(small);
    uint32_t slot = small_header_slot_size(h);
    size_t span_end = span_block_bytes(span); /* to the end of the span's medium block */
    medium[n++] = (unsigned char *)run[RUN - 1];
    for (size_t i = 0; i < N; i++) {
      medium[n] = (unsigned char *)fastmm_getmem(5000);
      if (!medium[n])
        break;
      n++;
    }
    for (size_t i = 0; i < n; i++) {
      unsigned char *m = medium[i];
      if (m < span + span_end || (size_t)(m - span) + 5000 > 8191u * 16u)
        continue;
      /* The first slot boundary (counted from the span's first block) 16 bytes or more into m. */
      size_t first = SMALL_SPAN_HEADER_SIZE +
                     ((size_t)(m + 16 - span) - SMALL_SPAN_HEADER_SIZE + slot - 1) / slot * slot;
      for (size_t at = first; span + at + 16 <= m + 5000; at += slot) {
        char what[96];
        unsigned char *p = span + at;
        memset(m, 0x3C, 5000);
        block_set_header(p, small_header_make(small_header_class(h), slot, (unsigned)at));
        snprintf(what, sizeof what, "a slot boundary %zu bytes past the span, in a medium block",
                 at - span_end);
        refused(p, m, 5000, what);
        found++;
      }
    }
    CHECK_MSG(found > 0, "no medium block within reach after the small span");
    while (n > 1)
      CHECK_EQ(fastmm_freemem(medium[--n]), FASTMM_OK);
  }
  while (k > 0)
    CHECK_EQ(fastmm_freemem(smalls[--k]), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(run[0]), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(run[RUN - 1]), FASTMM_OK);
}

/* Inside a free block: the data left in it hold a header naming the block's span (as a copy of
 * a real header would), in the thread cache and after it went back to the span. */
static void inside_free_blocks(void) {
  void *block = NULL, *mate = tb_span_mate(&block, 700);
  if (!CHECK(block != NULL && mate != NULL))
    return;
  unsigned char *q = (unsigned char *)block;
  uint32_t h = block_header(q);
  unsigned char *span = span_of(q);
  size_t usable = small_header_usable(h);
  CHECK_EQ(fastmm_freemem(q), FASTMM_OK);
  for (int flushed = 0; flushed < 2; flushed++) {
    if (flushed)
      fastmm_flush_thread_cache();
    for (size_t d = 64; d + 16 <= usable; d += 160) {
      char what[96];
      block_set_header(q + d, small_header_make(small_header_class(h), small_header_slot_size(h),
                                                (unsigned)(q + d - span)));
      snprintf(what, sizeof what, "+%zu in a free block (%s)", d,
               flushed ? "back in its span" : "in the thread cache");
      refused(q + d, q + d - BLOCK_HEADER_SIZE, BLOCK_HEADER_SIZE, what);
    }
  }
  CHECK_EQ(fastmm_freemem(mate), FASTMM_OK);
}

/* A header whose span offset reaches back out of its block's region. A medium span's first 64 KB
 * region holds its header alone; its first block starts 16 bytes into the next region.
 *   - In that first block, a header naming a span up to 128 KB back (the field's 13 bits) names
 *     memory in the span's first region, or before the span. The validation never reads what the
 *     offset names: the record of the pointer's own granule (span_record.h) has no span there,
 *     and the header is refused.
 *   - In the span's first region (a forged header where no block is), a header naming a span
 *     before the medium span: the fast paths do not take that region (REGION_MEDIUM_START), the
 *     slow paths read the granule's record, committed with the span, which holds no span; the
 *     header is refused.
 * Nothing before the medium span is read in either case. */
static void span_before_the_medium_span(void) {
  enum { N = 256 };
  unsigned char *held[N];
  size_t n = 0, tried = 0;
  for (; n < N && tried == 0; n++) {
    unsigned char *m = (unsigned char *)fastmm_getmem(20000);
    held[n] = m;
    if (!CHECK(m != NULL))
      break;
    if (((uintptr_t)m & 0xFFFFu) != MEDIUM_HEADER_SIZE)
      continue;
    unsigned char *p = m + 4096;
    for (unsigned offset = 8191u * 16u; offset > 4096u + 64u; offset -= 4096u) {
      char what[96];
      memset(m, 0x6B, 20000);
      block_set_header(p, small_header_make(3, fastmm_small_class_slot_size(3), offset));
      snprintf(what, sizeof what,
               "a header naming a span %u bytes back, in its medium span's "
               "first region or before it",
               offset);
      refused(p, m, 20000, what);
      tried++;
    }
    /* The span's first region, past its header: no block lies there. */
    unsigned char *first_region = m - MEDIUM_HEADER_SIZE - MEDIUM_SPAN_BLOCKS_OFFSET;
    unsigned char *q = first_region + 8192;
    for (unsigned offset = 4095u * 16u; offset > 8192u; offset -= 4096u) {
      char what[96];
      block_set_header(q, small_header_make(3, fastmm_small_class_slot_size(3), offset));
      snprintf(what, sizeof what,
               "a header in a medium span's first region naming a span %u "
               "bytes back, before the medium span",
               offset);
      refused(q, q - BLOCK_HEADER_SIZE, BLOCK_HEADER_SIZE, what);
      tried++;
    }
    block_set_header(q, 0);
  }
  CHECK_MSG(tried > 0, "no medium block first in its medium span (%zu taken)", n);
  while (n > 0)
    CHECK_EQ(fastmm_freemem(held[--n]), FASTMM_OK);
}

/* A span header forged in the program's own block, laid out as the manager's was before the
 * validation contract (magic "SPAN", class, slot and carved end: what used to pass) and as its
 * keyed tag was later (with the key a program could read in the source), and a block header
 * naming it. The validation reads the span records, which no block reaches, so neither passes. */
static void forged_span(void) {
  unsigned char *m = (unsigned char *)fastmm_getmem(20000);
  if (!CHECK(m != NULL))
    return;
  for (int layout = 0; layout < 2; layout++)
    for (unsigned cls = 0; cls < SMALL_CLASS_COUNT; cls += 5) {
      uint32_t slot = (uint32_t)fastmm_small_class_slot_size(cls);
      uint32_t tag = small_header_make(cls, slot, SMALL_SPAN_HEADER_SIZE);
      uint32_t magic = 0x5350414Eu, key = 0xD350414Eu, big = 0xFFFFFFF0u;
      uint16_t cls16 = (uint16_t)cls;
      unsigned char *fake = m + 256, *p = fake + SMALL_SPAN_HEADER_SIZE + slot;
      char what[96];
      memset(m, 0, 20000);
      if (layout == 0) {
        memcpy(fake, &magic, 4);
        memcpy(fake + 4, &cls16, 2);
        memcpy(fake + 48, &slot, 4);
        memcpy(fake + 52, &big, 4);
      } else {
        memcpy(fake, &tag, 4);
        memcpy(fake + 4, &key, 4);
        memset(fake + 8, 0xFF, 8); /* a divisor every offset passes */
        memcpy(fake + 16, &big, 4);
      }
      block_set_header(p, small_header_make(cls, slot, SMALL_SPAN_HEADER_SIZE + slot));
      snprintf(what, sizeof what, "a block of a span forged in a medium block (%s, class %u)",
               layout == 0 ? "old layout" : "new layout, default key", cls);
      refused(p, m, 20000, what);
    }
  CHECK_EQ(fastmm_freemem(m), FASTMM_OK);
}

/* ---- medium headers forged inside a medium block ----------------------------------------------
 * ReallocMem keeps a medium block in place on its fast path (the C export, the Delphi and Free
 * Pascal records): a header word that reads MEDIUM inside the program's own block, with sizes
 * that look right, is refused: it carries no seal of its place (medium_block_sealed), and FreeMem
 * also wants the boundary tags to agree (medium_block_plausible). Each case
 * breaks one thing: no tag after the block, a wrong tag, a size that is no multiple of 16, a size
 * beyond a span, a flag beside the kind, a predecessor beyond a span. */
static void forged_medium(void) {
  unsigned char *m = (unsigned char *)fastmm_getmem(60000);
  if (!CHECK(m != NULL))
    return;
  static const char *const cases[] = {"no tag after it",       "a wrong tag after it",
                                      "a size not of 16",      "a size beyond a span",
                                      "a FREE flag beside it", "a predecessor beyond a span"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (uint32_t size = MEDIUM_MIN_BLOCK_SIZE; size <= 32768; size *= 4) {
      unsigned char *p = m + 4096;
      /* A medium header: the predecessor's size, its own, the alignment it keeps, the word. */
      uint32_t fake[4] = {4096, size, 0, BLOCK_FLAG_MEDIUM};
      uint32_t tag = c == 1 ? size + 16 : size;
      char what[96];
      memset(m, 0, 60000);
      if (c == 2)
        fake[1] = size + 8;
      else if (c == 3)
        fake[1] = (uint32_t)MEDIUM_SPAN_MAX_SIZE + 16u;
      else if (c == 4)
        fake[3] |= BLOCK_FLAG_FREE;
      else if (c == 5)
        fake[0] = (uint32_t)MEDIUM_SPAN_MAX_SIZE + 16u;
      memcpy(p - MEDIUM_HEADER_SIZE, fake, sizeof fake);
      if (c != 0) /* the next block's prev_size, where a real block's tag would be */
        memcpy(p + size - MEDIUM_HEADER_SIZE, &tag, 4);
      snprintf(what, sizeof what, "a medium header of %u bytes forged in a medium block: %s",
               (unsigned)size, cases[c]);
      refused(p, m, 60000, what);
    }
  CHECK_EQ(fastmm_freemem(m), FASTMM_OK);
}

/* ---- a real medium header copied into a medium block -------------------------------------------
 * The header of a live medium block of the program's, its 16 bytes as they are, copied into
 * another medium block, with the boundary tag after it that its size calls for: everything the
 * boundary tags can say agrees. It is refused all the same, because a live block's seal names its
 * own address (medium_seal): the copy stands elsewhere. The real block is accepted first, so the
 * case cannot pass on a header the manager would refuse anyway. */
static void copied_medium(void) {
  unsigned char *m = (unsigned char *)fastmm_getmem(60000);
  unsigned char *b = (unsigned char *)fastmm_getmem(8000);
  if (!CHECK(m != NULL && b != NULL))
    return;
  if (!CHECK(tb_kind(b) == BLOCK_FLAG_MEDIUM))
    return;
  size_t usable = fastmm_usable_size(b);
  CHECK(usable >= 8000);
  CHECK(fastmm_reallocmem(b, usable) == b); /* stays: the real header is a live block's */
  for (size_t at = 4096; at <= 4096 + 16 * 3; at += 16) {
    unsigned char *p = m + at;
    uint32_t size = tb_medium_size(b);
    char what[96];
    memset(m, 0, 60000);
    memcpy(p - MEDIUM_HEADER_SIZE, b - MEDIUM_HEADER_SIZE, MEDIUM_HEADER_SIZE);
    memcpy(p + size - MEDIUM_HEADER_SIZE, &size, 4); /* the next block's prev_size */
    snprintf(what, sizeof what, "a live medium block's header copied %zu bytes into a block", at);
    refused(p, m, 60000, what);
  }
  CHECK_EQ(fastmm_usable_size(b), usable);
  CHECK_EQ(fastmm_freemem(b), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(m), FASTMM_OK);
}

static const struct {
  const char *name;
  void (*run)(void);
} sections[] = {
    {"issue", issue_cases},
    {"filled", filled_blocks},
    {"own-span", interior_naming_own_span},
    {"uncarved", uncarved_tail},
    {"past-span", past_the_span},
    {"free-block", inside_free_blocks},
    {"forged-span", forged_span},
    {"span-before", span_before_the_medium_span},
    {"forged-medium", forged_medium},
    {"copied-medium", copied_medium},
};

/* With an argument, only the section of that name runs (to see one case fail by itself). */
int main(int argc, char **argv) {
  fastmm_get_memory_manager(&delphi);
  printf("test_forged_headers (%s, %u-bit, ReallocMem entries:", tu_build_name(),
         (unsigned)(sizeof(void *) * 8));
  for (size_t e = 0; e < REALLOC_ENTRY_COUNT; e++)
    printf(" %s", realloc_entries[e].name);
  printf(")\n");
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (argc < 2 || strcmp(argv[1], sections[i].name) == 0)
      sections[i].run();
  fastmm_state st;
  tb_state(&st);
  CHECK_EQ(tb_blocks_in_use(&st), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_forged_headers");
}
