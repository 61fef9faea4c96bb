/* SPDX-License-Identifier: MIT */
/* The header-word contract of src/core/block_header.h: the numeric values against the documented
 * layout, and real blocks of every kind against the values. (The assembly fast paths assemble
 * against the same numbers through the build's layout.inc: tests/test_asm_layout.c.) */
#include "test_blocks.h"

#include "core/small.h" /* the span header the small header names */
#include "fastmm_test.h"

/* A mask of `bits` bits starting at `shift`. */
static uint32_t field(unsigned shift, unsigned bits) {
  return (bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u)) << shift;
}

static unsigned popcount32(uint32_t x) {
  unsigned n = 0;
  for (; x; x &= x - 1)
    n++;
  return n;
}

static void numeric_layout(void) {
  uint32_t kind, cls, slot, off;
  /* bits 0-4: FREE, DEBUG_OUTER, SMALL, MEDIUM, LARGE (FastMM5's numbering). */
  CHECK_EQ(BLOCK_FLAG_FREE, 1u << 0);
  CHECK_EQ(BLOCK_FLAG_DEBUG_OUTER, 1u << 1);
  CHECK_EQ(BLOCK_FLAG_SMALL, 1u << 2);
  CHECK_EQ(BLOCK_FLAG_MEDIUM, 1u << 3);
  CHECK_EQ(BLOCK_FLAG_LARGE, 1u << 4);
  CHECK_EQ(BLOCK_KIND_MASK, BLOCK_FLAG_FREE | BLOCK_FLAG_DEBUG_OUTER | BLOCK_FLAG_SMALL |
                                BLOCK_FLAG_MEDIUM | BLOCK_FLAG_LARGE);
  CHECK_EQ(BLOCK_KINDS, BLOCK_FLAG_SMALL | BLOCK_FLAG_MEDIUM | BLOCK_FLAG_LARGE);
  CHECK_EQ(BLOCK_KIND_MASK, field(0, 5));
  CHECK_EQ(BLOCK_HEADER_SIZE, 4);
  CHECK_EQ(BLOCK_ALIGNMENT, 16);

  /* Small: class in bits 5-10, slot/16 in bits 11-18, slot offset/16 in bits 19-31. */
  CHECK_EQ(SMALL_CLASS_SHIFT, 5);
  CHECK_EQ(SMALL_SLOT_SHIFT, 11);
  CHECK_EQ(SMALL_SPAN_OFFSET_SHIFT, 19);
  CHECK_EQ(SMALL_CLASS_MASK, 0x3F);
  CHECK_EQ(SMALL_SLOT_MASK, 0xFF);
  CHECK_EQ(SMALL_SLOT_UNIT, 16);
  CHECK_EQ(SMALL_SPAN_OFFSET_UNIT, 16);
  kind = BLOCK_KIND_MASK;
  cls = (uint32_t)SMALL_CLASS_MASK << SMALL_CLASS_SHIFT;
  slot = (uint32_t)SMALL_SLOT_MASK << SMALL_SLOT_SHIFT;
  off = field(SMALL_SPAN_OFFSET_SHIFT, 32 - SMALL_SPAN_OFFSET_SHIFT);
  CHECK_EQ(cls, field(5, 6));
  CHECK_EQ(slot, field(11, 8));
  CHECK_EQ(off, field(19, 13));
  /* The fields tile the word: no overlap, no gap. */
  CHECK_EQ(kind & cls, 0);
  CHECK_EQ((kind | cls) & slot, 0);
  CHECK_EQ((kind | cls | slot) & off, 0);
  CHECK_EQ(kind | cls | slot | off, 0xFFFFFFFFu);
  /* The bits a span record holds: every field but the slot offset. */
  CHECK_EQ(SMALL_HEADER_TAG_MASK, kind | cls | slot);
  CHECK_EQ(SMALL_SPAN_HEADER_SIZE, 64);
  CHECK_EQ(SMALL_CLASS_SHIFT, popcount32(kind));
  CHECK_EQ(SMALL_SLOT_SHIFT, SMALL_CLASS_SHIFT + popcount32(cls));
  CHECK_EQ(SMALL_SPAN_OFFSET_SHIFT, SMALL_SLOT_SHIFT + popcount32(slot));
  /* Every policy number fits its field: the classes, the largest slot, the largest span. */
  CHECK(SMALL_CLASS_COUNT - 1 <= SMALL_CLASS_MASK);
  CHECK(SMALL_MAX_SLOT / SMALL_SLOT_UNIT <= SMALL_SLOT_MASK);
  CHECK(SMALL_MAX_SLOT % SMALL_SLOT_UNIT == 0);
  CHECK((uint64_t)(SMALL_SPAN_MAX_BYTES - SMALL_SPAN_HEADER_SIZE) / SMALL_SPAN_OFFSET_UNIT <
        (1ull << 13));
  CHECK(SMALL_SPAN_HEADER_SIZE % BLOCK_ALIGNMENT == 0);
  CHECK(SMALL_SPAN_MIN_BYTES <= SMALL_SPAN_MAX_BYTES);

  /* Round trip through the helpers, at the extremes of each field. */
  {
    uint32_t h = small_header_make(SMALL_CLASS_COUNT - 1, SMALL_MAX_SLOT,
                                   SMALL_SPAN_MAX_BYTES - SMALL_MAX_SLOT);
    CHECK_EQ(h & BLOCK_KIND_MASK, BLOCK_FLAG_SMALL);
    CHECK_EQ(small_header_class(h), SMALL_CLASS_COUNT - 1);
    CHECK_EQ(small_header_slot_size(h), SMALL_MAX_SLOT);
    CHECK_EQ(small_header_usable(h), SMALL_MAX_USER);
    CHECK_EQ(small_header_span_offset(h), SMALL_SPAN_MAX_BYTES - SMALL_MAX_SLOT);
    h = small_header_make(0, 16, SMALL_SPAN_HEADER_SIZE + 8191u * 16u);
    CHECK_EQ(h, 0xFFF80000u | (1u << 11) | BLOCK_FLAG_SMALL);
    CHECK_EQ(small_header_span_offset(h), SMALL_SPAN_HEADER_SIZE + 8191u * 16u);
    CHECK_EQ(small_header_slot_offset(h), 8191u * 16u);
    CHECK_EQ(small_header_usable(h), 12);
    /* The first block of a span: slot offset 0. */
    h = small_header_make(5, 96, SMALL_SPAN_HEADER_SIZE);
    CHECK_EQ(h, BLOCK_FLAG_SMALL | (5u << 5) | (6u << 11));
    CHECK_EQ(h & SMALL_HEADER_TAG_MASK, h);
    h = small_header_make(5, 96, SMALL_SPAN_HEADER_SIZE + 3u * 96u);
    CHECK_EQ(h, BLOCK_FLAG_SMALL | (5u << 5) | (6u << 11) | (18u << 19));
    CHECK_EQ(small_header_slot_offset(h), 3u * 96u);
  }

  /* Medium: 16-byte header; header word flags above the kind bits, arena in bits 8-15. */
  CHECK_EQ(MEDIUM_HEADER_SIZE, 16);
  CHECK_EQ(MEDIUM_FLAG_SMALL_SPAN, 1u << 5);
  CHECK_EQ(MEDIUM_FLAG_SENTINEL, 1u << 6);
  CHECK_EQ(MEDIUM_ARENA_SHIFT, 8);
  CHECK_EQ(MEDIUM_ARENA_MASK, 0xFF);
  CHECK_EQ((MEDIUM_FLAG_SMALL_SPAN | MEDIUM_FLAG_SENTINEL) & BLOCK_KIND_MASK, 0);
  CHECK_EQ(((uint32_t)MEDIUM_ARENA_MASK << MEDIUM_ARENA_SHIFT) &
               (BLOCK_KIND_MASK | MEDIUM_FLAG_SMALL_SPAN | MEDIUM_FLAG_SENTINEL),
           0);
  CHECK(ARENA_COUNT - 1 <= MEDIUM_ARENA_MASK);
  CHECK(MEDIUM_MIN_BLOCK_SIZE % 16 == 0 && MEDIUM_MAX_BLOCK_SIZE % 16 == 0);
  /* The smallest medium block holds the smallest medium request, rounded to 16. */
  CHECK_EQ(MEDIUM_MIN_BLOCK_SIZE, ((SMALL_MAX_USER + 1 + 15) & ~15u) + MEDIUM_HEADER_SIZE);
  CHECK(SMALL_SPAN_MAX_BYTES + MEDIUM_HEADER_SIZE <= MEDIUM_MAX_BLOCK_SIZE);

  /* Large: 64-byte header, header word last. */
  CHECK_EQ(LARGE_HEADER_SIZE, 64);
}

/* small_slot_carved against the remainder and the quotient, for every class, every slot offset
 * the header can hold and every carved count a span of the class can have (the 32-bit form every
 * build and both NASM paths use, and the 64-bit one for comparison). */
static void slot_test(void) {
  unsigned long long wrong = 0, wrong32 = 0, wrong64 = 0, cases = 0;
  for (size_t c = 0; c < SMALL_CLASS_COUNT; c++) {
    uint32_t slot = (uint32_t)fastmm_small_class_slot_size(c);
    int pow2 = (slot & (slot - 1)) == 0;
    uint32_t d = small_slot_divisor(slot), e = small_slot_step(d, slot);
    uint32_t d32 = UINT32_MAX / slot + 1u + (uint32_t)pow2, e32 = d32 * slot;
    uint64_t d64 = UINT64_MAX / slot + 1u + (uint64_t)pow2, e64 = d64 * slot;
    CHECK(d == d32 && e == e32);
    CHECK(e >= 1 && e <= slot && e64 >= 1 && e64 <= slot);
    for (uint32_t carved = 0; carved * slot <= SMALL_SPAN_MAX_BYTES; carved++)
      for (uint32_t off = 0; off < (1u << 17); off += SMALL_SPAN_OFFSET_UNIT) {
        int in = off % slot == 0 && off / slot < carved;
        wrong += small_slot_carved(d, carved * e, off) != in;
        wrong32 += ((uint32_t)(off * d32) < carved * e32) != in;
        wrong64 += ((uint64_t)off * d64 < carved * e64) != in; /* the 64-bit form holds too */
        cases++;
      }
  }
  CHECK(cases > 1000000);
  CHECK_EQ(wrong, 0);
  CHECK_EQ(wrong32, 0);
  CHECK_EQ(wrong64, 0);
}

/* Every word a debug block's header can end with (FastMM5's DebugFeatureFlags 0..3,
 * StackTraceEntryCount 0..64, DebugBlockFlags 32 or 33) is a debug word and nothing else: no
 * kind bit, so the fast paths' small test fails and the slow paths' kind switch falls through;
 * and no word of a small, medium or large block, live, free or outer, is a debug word. */
static void debug_words(void) {
  unsigned f, n, flags, wrong = 0;
  for (flags = DEBUG_WORD_LIVE; flags <= DEBUG_WORD_FREED; flags++)
    for (n = 0; n <= 64; n++)
      for (f = 0; f < 4; f++) {
        uint32_t h = f | n << 8 | flags << DEBUG_WORD_FLAGS_SHIFT;
        if (!block_header_is_debug(h) || (h & BLOCK_KINDS) != 0 ||
            (h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL)
          wrong++;
      }
  CHECK_MSG(wrong == 0, "%u debug header words taken for something else", wrong);
  CHECK(!block_header_is_debug(small_header_make(SMALL_CLASS_COUNT - 1, SMALL_MAX_SLOT,
                                                 SMALL_SPAN_MAX_BYTES - SMALL_MAX_SLOT)));
  CHECK(!block_header_is_debug(small_header_make(0, 16, 64) | BLOCK_FLAG_FREE));
  CHECK(!block_header_is_debug(small_header_make(0, 16, 64) | BLOCK_FLAG_DEBUG_OUTER));
  CHECK(!block_header_is_debug(BLOCK_FLAG_MEDIUM | BLOCK_FLAG_DEBUG_OUTER |
                               (3u << MEDIUM_ARENA_SHIFT)));
  CHECK(!block_header_is_debug(BLOCK_FLAG_LARGE | BLOCK_FLAG_DEBUG_OUTER));
  CHECK(!block_header_is_debug(0));
  /* An outer block's word fails the fast paths' small test, like a free one. */
  CHECK((small_header_make(5, 96, 64) | BLOCK_FLAG_DEBUG_OUTER) != 0 &&
        ((small_header_make(5, 96, 64) | BLOCK_FLAG_DEBUG_OUTER) & BLOCK_KIND_MASK) !=
            BLOCK_FLAG_SMALL);
  /* ... and the validation contract's tag compare: the outer and free bits are in the tag mask. */
  CHECK(((small_header_make(5, 96, 64) | BLOCK_FLAG_DEBUG_OUTER) & SMALL_HEADER_TAG_MASK) !=
        (small_header_make(5, 96, 64) & SMALL_HEADER_TAG_MASK));
  CHECK(((small_header_make(5, 96, 64) | BLOCK_FLAG_FREE) & SMALL_HEADER_TAG_MASK) !=
        (small_header_make(5, 96, 64) & SMALL_HEADER_TAG_MASK));
}

/* A live small block: kind, class, slot and span offset all agree with the class table, and the
 * span the offset names is a medium block flagged as a small span that holds the block. */
static void small_block(size_t size) {
  void *p = fastmm_getmem(size);
  uint32_t h, sh;
  unsigned cls;
  size_t off, slot;
  unsigned char *span;
  if (!CHECK_MSG(p != NULL, "getmem(%zu)", size))
    return;
  h = block_header(p);
  cls = small_header_class(h);
  slot = small_header_slot_size(h);
  off = small_header_span_offset(h);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL, "size %zu: header 0x%08lx", size,
            (unsigned long)h);
  CHECK_MSG((int)cls == tb_small_class_for(size), "size %zu: class %u", size, cls);
  CHECK_EQ(slot, fastmm_small_class_slot_size(cls));
  CHECK_EQ(fastmm_usable_size(p), slot - BLOCK_HEADER_SIZE);
  /* The span offset: past the span header, a whole number of slots in, inside a span. */
  CHECK_MSG(off >= SMALL_SPAN_HEADER_SIZE, "size %zu: span offset %zu", size, off);
  CHECK_MSG((off - SMALL_SPAN_HEADER_SIZE) % slot == 0,
            "size %zu: span offset %zu is not 64 + a multiple of the %zu-byte slot", size, off,
            slot);
  CHECK_MSG(off + slot - BLOCK_HEADER_SIZE <= SMALL_SPAN_MAX_BYTES, "size %zu: span offset %zu",
            size, off);
  span = (unsigned char *)p - off;
  CHECK(tu_is_aligned(span, 16));
  /* The record of the block's 16 KB granule validates it (span_record.h): the header's kind,
   * class and slot, the span's first block, its divisor and carved limit, as the span has them;
   * the span lies a colour into its medium block, which starts at a multiple of 16 KB. */
  {
    const small_span *s = (const small_span *)span;
    uint32_t r[4] = {0, 0, 0, 0};
    CHECK(fastmm_test_span_record(p, r) == 1);
    CHECK_EQ(s->header_bits, h & SMALL_HEADER_TAG_MASK);
    CHECK_EQ(r[0], h & SMALL_HEADER_TAG_MASK);
    CHECK_EQ(r[1], (uint32_t)(uintptr_t)(span + SMALL_SPAN_HEADER_SIZE));
    CHECK_EQ(r[2], s->slot_divisor);
    CHECK_EQ(r[3], s->carved_limit);
    CHECK(small_header_span_offset(h) < s->fed_end);
    CHECK(small_slot_carved(s->slot_divisor, s->carved_limit, small_header_slot_offset(h)));
    CHECK_EQ(s->slot_divisor, small_slot_divisor((uint32_t)slot));
    CHECK_EQ(s->carved_limit, (s->fed_end - SMALL_SPAN_HEADER_SIZE) / slot *
                                  small_slot_step(s->slot_divisor, (uint32_t)slot));
  }
  /* Spans are medium blocks: the span header lies a colour into a medium block's user area. */
  {
    unsigned char *block = (unsigned char *)small_span_block((const small_span *)span);
    size_t colour = (size_t)(span - block);
    CHECK_MSG(small_span_colour_valid(small_span_colour(block)) &&
                  small_span_colour(block) == colour,
              "size %zu: colour %zu", size, colour);
    CHECK(tu_is_aligned(block - MEDIUM_HEADER_SIZE, SMALL_SPAN_MIN_BYTES)); /* its header */
    sh = block_header(block);
    CHECK_MSG((sh & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM && (sh & MEDIUM_FLAG_SMALL_SPAN),
              "size %zu: the span's medium block has header 0x%08lx, not a medium small-span", size,
              (unsigned long)sh);
    if ((sh & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM) {
      CHECK_MSG(colour + off + slot - BLOCK_HEADER_SIZE <=
                    tb_medium_size(block) - MEDIUM_HEADER_SIZE,
                "size %zu: block at %zu..%zu outside its %lu-byte span", size, colour + off,
                colour + off + slot - BLOCK_HEADER_SIZE, (unsigned long)tb_medium_size(block));
      CHECK(((sh >> MEDIUM_ARENA_SHIFT) & MEDIUM_ARENA_MASK) < ARENA_COUNT);
      /* The span is not a block callers own, and freeing it is refused. */
      CHECK(fastmm_owns_block(block) == 0);
      CHECK(fastmm_usable_size(block) == 0);
      CHECK(fastmm_freemem(block) == FASTMM_ERROR_INVALID_POINTER);
      CHECK(fastmm_freemem(span) == FASTMM_ERROR_INVALID_POINTER);
    }
  }
  /* A freed block has the FREE bit set (it sits in this thread's cache now). */
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  CHECK_MSG(block_header(p) & BLOCK_FLAG_FREE, "size %zu: freed block header 0x%08lx", size,
            (unsigned long)block_header(p));
  fastmm_flush_thread_cache();
}

/* Every block a small span hands out, to the last one, lies inside the span's medium block:
 * fill more than one span of each class and check each block against the span it names. */
static void small_spans_filled(void) {
  enum { MAX = SMALL_SPAN_MAX_BYTES / 16u + 64u };
  static void *blocks[MAX];
  size_t c, i;
  for (c = 0; c < SMALL_CLASS_COUNT; c++) {
    size_t slot = fastmm_small_class_slot_size(c), n = SMALL_SPAN_MAX_BYTES / slot + 8u;
    size_t spans = 0;
    const unsigned char *last_span = NULL;
    for (i = 0; i < n; i++) {
      const unsigned char *span;
      size_t off, end;
      blocks[i] = fastmm_getmem(slot - BLOCK_HEADER_SIZE);
      if (!CHECK(blocks[i] != NULL))
        break;
      off = small_header_span_offset(block_header(blocks[i]));
      span = (const unsigned char *)blocks[i] - off;
      if (span != last_span) {
        spans++;
        last_span = span;
      }
      /* The span header lies a colour into its medium block (small.h). */
      off += small_span_colour(small_span_block((const small_span *)span));
      span = (const unsigned char *)small_span_block((const small_span *)span);
      end = off + slot - BLOCK_HEADER_SIZE;
      if (!CHECK_MSG((block_header(span) & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM &&
                         end <= tb_medium_size(span) - MEDIUM_HEADER_SIZE,
                     "class %zu block %zu: bytes %zu..%zu of a span of %lu user bytes", c, i, off,
                     end, (unsigned long)(tb_medium_size(span) - MEDIUM_HEADER_SIZE)))
        break;
      /* The block's last byte is writable without touching the next medium header. */
      memset(blocks[i], 0x5C, slot - BLOCK_HEADER_SIZE);
    }
    CHECK_MSG(spans >= 2, "class %zu: %zu blocks came from %zu span(s)", c, i, spans);
    n = i;
    CHECK_EQ(fastmm_check_heap(), 0);
    for (i = 0; i < n; i++)
      CHECK(fastmm_freemem(blocks[i]) == FASTMM_OK);
  }
  fastmm_flush_thread_cache();
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* A live medium block: kind, flags, arena, and the boundary tags of its neighbours, walking
 * forward to the span's sentinel. */
static void medium_block(size_t size) {
  void *p = fastmm_getmem(size);
  unsigned char *b;
  uint32_t h, sz;
  unsigned steps = 0;
  if (!CHECK_MSG(p != NULL, "getmem(%zu)", size))
    return;
  h = block_header(p);
  sz = tb_medium_size(p);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM, "size %zu: header 0x%08lx", size,
            (unsigned long)h);
  CHECK_EQ(h & (MEDIUM_FLAG_SMALL_SPAN | MEDIUM_FLAG_SENTINEL), 0);
  CHECK(((h >> MEDIUM_ARENA_SHIFT) & MEDIUM_ARENA_MASK) < ARENA_COUNT);
  CHECK_MSG(sz % 16 == 0 && sz >= MEDIUM_MIN_BLOCK_SIZE && sz <= MEDIUM_MAX_BLOCK_SIZE,
            "size %zu: size field %lu", size, (unsigned long)sz);
  CHECK_MSG(fastmm_usable_size(p) >= size && fastmm_usable_size(p) <= sz - MEDIUM_HEADER_SIZE,
            "size %zu: usable %zu, size field %lu", size, fastmm_usable_size(p), (unsigned long)sz);
  /* The block before: its size field leads here. */
  if (tb_medium_prev_size(p) != 0) {
    unsigned char *prev = (unsigned char *)p - tb_medium_prev_size(p);
    CHECK_EQ(tb_medium_size(prev), tb_medium_prev_size(p));
    CHECK(block_header(prev) & BLOCK_FLAG_MEDIUM);
  }
  /* Walk forward: every block's next has prev_size == its size, up to the sentinel. */
  for (b = (unsigned char *)p; steps < 4096; steps++) {
    uint32_t bs = tb_medium_size(b);
    unsigned char *next;
    if (!CHECK_MSG(bs % 16 == 0 && bs >= MEDIUM_HEADER_SIZE && bs <= MEDIUM_SPAN_SIZE,
                   "block %p in the walk from %p: size field %lu", (void *)b, p, (unsigned long)bs))
      break;
    next = b + bs;
    CHECK_MSG(tb_medium_prev_size(next) == bs, "block %p: size %lu, next's prev_size %lu",
              (void *)b, (unsigned long)bs, (unsigned long)tb_medium_prev_size(next));
    if (block_header(next) & MEDIUM_FLAG_SENTINEL)
      break;
    if (!CHECK_MSG(block_header(next) & BLOCK_FLAG_MEDIUM, "block %p: header 0x%08lx", (void *)next,
                   (unsigned long)block_header(next)))
      break;
    b = next;
  }
  CHECK_MSG(steps < 4096, "no sentinel after the medium block of %zu", size);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
}

static void large_block(size_t size) {
  void *p = fastmm_getmem(size);
  uint32_t h;
  if (!CHECK_MSG(p != NULL, "getmem(%zu)", size))
    return;
  h = block_header(p);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE, "size %zu: header 0x%08lx", size,
            (unsigned long)h);
  CHECK(tu_is_aligned(p, 64));
  CHECK(fastmm_usable_size(p) >= size);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
}

int main(void) {
  size_t c;
  printf("test_header_contract (%s, %u-bit pointers)\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8));
  numeric_layout();
  slot_test();
  debug_words();
  for (c = 0; c < SMALL_CLASS_COUNT; c++) {
    small_block(tb_small_usable(c));
    small_block(c ? tb_small_usable(c - 1) + 1 : 0);
  }
  small_spans_filled();
  medium_block(SMALL_MAX_USER + 1);
  medium_block(10000);
  medium_block(MEDIUM_MAX_USER);
  large_block(MEDIUM_MAX_USER + 1);
  large_block(5000000);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_header_contract");
}
