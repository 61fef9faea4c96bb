/* SPDX-License-Identifier: MIT */
/* Small blocks: every request size 0..SMALL_MAX_USER gets the smallest class that fits, a
 * 16-aligned pointer and a header that says so; many live blocks never overlap and keep their
 * contents; the class table is the one policy.h documents. */
#include "test_blocks.h"

#define N_SIZES (SMALL_MAX_USER + 1u)

/* The table policy.h describes: 16-byte steps to 256, then 32 to 512, 64 to 1024, 128 to 2048,
 * 256 to 2560. */
static size_t expected_slot(size_t i) {
  static const struct {
    size_t upto, step;
  } runs[] = {{256, 16}, {512, 32}, {1024, 64}, {2048, 128}, {2560, 256}};
  size_t slot = 0, r, k = 0;
  for (r = 0; r < sizeof runs / sizeof runs[0]; r++)
    while (slot < runs[r].upto) {
      slot += runs[r].step;
      if (k++ == i)
        return slot;
    }
  return 0;
}

static void check_class_table(void) {
  size_t i, prev = 0;
  fastmm_state st;
  for (i = 0; i < SMALL_CLASS_COUNT; i++) {
    size_t slot = fastmm_small_class_slot_size(i);
    CHECK_MSG(slot > prev, "class %zu slot %zu after %zu", i, slot, prev);
    CHECK_MSG(slot % 16 == 0, "class %zu slot %zu", i, slot);
    CHECK_MSG(slot == expected_slot(i), "class %zu slot %zu, documented %zu", i, slot,
              expected_slot(i));
    /* The header's fields must hold every class. */
    CHECK(i <= SMALL_CLASS_MASK);
    CHECK(slot / SMALL_SLOT_UNIT <= SMALL_SLOT_MASK);
    prev = slot;
  }
  CHECK_EQ(fastmm_small_class_slot_size(SMALL_CLASS_COUNT - 1), SMALL_MAX_SLOT);
  CHECK_EQ(fastmm_small_class_slot_size(SMALL_CLASS_COUNT), 0);
  CHECK_EQ(fastmm_small_class_slot_size(SMALL_CLASS_COUNT + 1), 0);
  CHECK_EQ(fastmm_small_class_slot_size((size_t)-1), 0);
  CHECK_EQ(SMALL_MAX_USER, SMALL_MAX_SLOT - BLOCK_HEADER_SIZE);
  fastmm_get_state(&st);
  CHECK_EQ(st.small_class_count, SMALL_CLASS_COUNT);
}

/* Everything that must hold for a fresh small block of `size` bytes. */
static void check_small_block(void *p, size_t size) {
  uint32_t h;
  int cls;
  if (!CHECK_MSG(p != NULL, "getmem(%zu) returned NULL", size))
    return;
  h = block_header(p);
  cls = tb_small_class_for(size);
  CHECK_MSG(tu_is_aligned(p, 16), "size %zu: %p", size, p);
  CHECK_MSG((h & BLOCK_KIND_MASK) == BLOCK_FLAG_SMALL, "size %zu: header 0x%08lx kind %s", size,
            (unsigned long)h, tb_kind_name(h & BLOCK_KIND_MASK));
  CHECK_MSG(fastmm_usable_size(p) >= size, "size %zu: usable %zu", size, fastmm_usable_size(p));
  CHECK_MSG(fastmm_usable_size(p) == small_header_usable(h),
            "size %zu: usable %zu, header says %lu", size, fastmm_usable_size(p),
            (unsigned long)small_header_usable(h));
  CHECK_MSG(cls >= 0 && small_header_class(h) == (unsigned)cls,
            "size %zu: class %u, smallest that fits is %d", size, small_header_class(h), cls);
  CHECK_MSG(small_header_slot_size(h) == fastmm_small_class_slot_size(small_header_class(h)),
            "size %zu: slot %lu, class %u has slot %zu", size,
            (unsigned long)small_header_slot_size(h), small_header_class(h),
            fastmm_small_class_slot_size(small_header_class(h)));
  CHECK(fastmm_owns_block(p) == 1);
}

static const char *span_of(const void *p) {
  return (const char *)p - small_header_span_offset(block_header(p));
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* Allocates every size at once (in the given order), checks each block, fills it, then checks
 * that no two blocks overlap and every pattern survived, then frees in a shuffled order. */
static void round_all_sizes(rng_state *rng, int descending, int zeroed) {
  static void *blocks[N_SIZES];
  static void *sorted[N_SIZES];
  static size_t order[N_SIZES];
  static const char *spans[N_SIZES];
  static size_t span_live[N_SIZES];
  size_t i, bytes = 0, n_spans;
  fastmm_state before, during, after;

  tb_state(&before);
  for (i = 0; i < N_SIZES; i++) {
    size_t size = descending ? N_SIZES - 1 - i : i;
    void *p = zeroed ? fastmm_allocmem(size) : fastmm_getmem(size);
    blocks[size] = p;
    check_small_block(p, size);
    if (!p)
      continue;
    if (zeroed)
      CHECK_MSG(tu_all_zero(p, size), "allocmem(%zu) not zeroed", size);
    tu_fill_pattern(p, fastmm_usable_size(p), (uint32_t)size * 7u + (uint32_t)descending);
    bytes += fastmm_usable_size(p);
  }
  if (tu_failures())
    return; /* a NULL or foreign block would make what follows meaningless */

  tb_state(&during);
  CHECK_EQ(during.small.blocks_in_use, before.small.blocks_in_use + N_SIZES);
  CHECK_EQ(during.small.bytes_in_use, before.small.bytes_in_use + bytes);
  CHECK(during.small.bytes_reserved >= during.small.bytes_in_use);
  CHECK_EQ(fastmm_check_heap(), 0);

  /* No overlap: each block, its 4-byte header included, ends before the next one's header. */
  memcpy(sorted, blocks, sizeof blocks);
  qsort(sorted, N_SIZES, sizeof sorted[0], cmp_ptr);
  for (i = 0; i + 1 < N_SIZES; i++) {
    uintptr_t end = (uintptr_t)sorted[i] + fastmm_usable_size(sorted[i]);
    CHECK_MSG(end + BLOCK_HEADER_SIZE <= (uintptr_t)sorted[i + 1],
              "block %p (usable %zu) overlaps %p", sorted[i], fastmm_usable_size(sorted[i]),
              sorted[i + 1]);
  }
  for (i = 0; i < N_SIZES; i++) {
    size_t bad = tu_check_pattern(blocks[i], fastmm_usable_size(blocks[i]),
                                  (uint32_t)i * 7u + (uint32_t)descending);
    CHECK_MSG(bad == (size_t)-1, "size %zu: pattern broken at offset %zu", i, bad);
  }

  for (i = 0; i < N_SIZES; i++)
    order[i] = i;
  for (i = N_SIZES - 1; i > 0; i--) {
    size_t j = rng_below(rng, i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  /* How many of our blocks each span holds: a freed block is looked at again only while its
   * span holds another live one (an empty span may go back to the OS). */
  n_spans = 0;
  for (i = 0; i < N_SIZES; i++) {
    const char *span = span_of(blocks[i]);
    size_t k;
    for (k = 0; k < n_spans && spans[k] != span; k++) {
    }
    if (k == n_spans) {
      spans[n_spans] = span;
      span_live[n_spans++] = 0;
    }
    span_live[k]++;
  }
  for (i = 0; i < N_SIZES; i++) {
    void *p = blocks[order[i]];
    size_t k;
    for (k = 0; spans[k] != span_of(p); k++) {
    }
    CHECK_MSG(fastmm_freemem(p) == FASTMM_OK, "free of size %zu", order[i]);
    if (--span_live[k] > 0) {
      /* A freed block is no longer a live block. */
      CHECK_MSG(fastmm_owns_block(p) == 0, "size %zu still owned after free", order[i]);
      CHECK_MSG(fastmm_usable_size(p) == 0, "size %zu has a usable size after free", order[i]);
    }
  }
  tb_state(&after);
  CHECK_EQ(after.small.blocks_in_use, before.small.blocks_in_use);
  CHECK_EQ(after.small.bytes_in_use, before.small.bytes_in_use);
  CHECK_EQ(after.thread_cached_blocks, 0);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Reused blocks: one slot freed and taken again, many times, keeps its pattern elsewhere. */
static void churn(rng_state *rng) {
  enum { LIVE = 512, STEPS = 20000 };
  static void *p[LIVE];
  static size_t sz[LIVE];
  static uint32_t seed[LIVE];
  size_t i;
  for (i = 0; i < LIVE; i++)
    p[i] = NULL;
  for (i = 0; i < STEPS; i++) {
    size_t k = rng_below(rng, LIVE);
    if (p[k]) {
      size_t bad = tu_check_pattern(p[k], sz[k], seed[k]);
      CHECK_MSG(bad == (size_t)-1, "step %zu: block of %zu broken at %zu", i, sz[k], bad);
      CHECK(fastmm_freemem(p[k]) == FASTMM_OK);
    }
    sz[k] = rng_below(rng, 8) ? rng_below(rng, 257) : rng_below(rng, N_SIZES);
    seed[k] = (uint32_t)i;
    p[k] = fastmm_getmem(sz[k]);
    check_small_block(p[k], sz[k]);
    if (!p[k])
      return;
    tu_fill_pattern(p[k], sz[k], seed[k]);
  }
  for (i = 0; i < LIVE; i++) {
    CHECK(tu_check_pattern(p[i], sz[i], seed[i]) == (size_t)-1);
    CHECK(fastmm_freemem(p[i]) == FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Blocks a thread's cache takes from a fresh span come in address order: consecutive GetMems of
 * one class land one slot after the other (a list built in them is read forwards). Runs first,
 * while the class has no span yet. */
static void carved_in_address_order(void) {
  enum { COUNT = 16, SIZE = 100 };
  char *p[COUNT];
  size_t i;
  for (i = 0; i < COUNT; i++)
    p[i] = (char *)fastmm_getmem(SIZE);
  size_t slot = fastmm_usable_size(p[0]) + 4u;
  for (i = 1; i < COUNT; i++)
    CHECK_MSG(p[i] == p[i - 1] + slot, "block %zu at %+td bytes from the one before, slot %zu", i,
              p[i] - p[i - 1], slot);
  for (i = 0; i < COUNT; i++)
    CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
}

/* A new small span goes into a free medium block it fits in, not only into one that guarantees a
 * place at a multiple of 16 KB (medium_alloc_small_span): a 24 KB hole between two live medium
 * blocks, with such a place in it, takes the first span of a class whose spans are 16 KB, while
 * the arena's untouched tail is free too. Runs while that class has no span yet. */
static void span_fills_hole(void) {
  enum { POOL = 64, HOLE = 24 * 1024, SIZE = 200, SPAN = 16 * 1024 };
  void *pool[POOL];
  size_t n, hole = POOL;
  for (n = 0; n < POOL; n++) {
    pool[n] = fastmm_getmem(HOLE - MEDIUM_HEADER_SIZE);
    if (!CHECK(pool[n] != NULL && tb_kind(pool[n]) == BLOCK_FLAG_MEDIUM))
      return;
  }
  /* A block with live blocks on both sides, with a place for a 16 KB span: its header at a
   * multiple of 16 KB, the block before it in the hole left free (at least MEDIUM_MIN_BLOCK_SIZE,
   * or none). */
  for (n = 0; n < POOL && hole == POOL; n++) {
    uintptr_t user = (uintptr_t)pool[n];
    uintptr_t span_at =
        ((user + HOLE - SPAN - MEDIUM_HEADER_SIZE) & ~(uintptr_t)(SPAN - 1u)) + MEDIUM_HEADER_SIZE;
    int before = 0, after = 0;
    for (size_t i = 0; i < POOL; i++) {
      before |= (uintptr_t)pool[i] + HOLE == (uintptr_t)pool[n];
      after |= (uintptr_t)pool[i] == (uintptr_t)pool[n] + HOLE;
    }
    if (before && after && tb_medium_size(pool[n]) == HOLE &&
        ((user - MEDIUM_HEADER_SIZE) % SPAN == 0 ||
         (span_at > user && span_at - user >= MEDIUM_MIN_BLOCK_SIZE)))
      hole = n;
  }
  if (CHECK_MSG(hole != POOL, "no 24 KB block between two others with a place for a span")) {
    char *lo = (char *)pool[hole] - MEDIUM_HEADER_SIZE, *hi = lo + HOLE;
    CHECK_EQ(fastmm_freemem(pool[hole]), FASTMM_OK);
    pool[hole] = NULL;
    char *p = (char *)fastmm_getmem(SIZE);
    CHECK_MSG(p >= lo && p < hi, "the new span's first block is at %p, not in the hole [%p, %p)",
              (void *)p, (void *)lo, (void *)hi);
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  }
  for (n = 0; n < POOL; n++)
    if (pool[n] != NULL)
      CHECK_EQ(fastmm_freemem(pool[n]), FASTMM_OK);
}

int main(void) {
  rng_state rng;
  void *a, *b;
  printf("test_small (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  rng_seed(&rng, 1);
  carved_in_address_order();
  span_fills_hole();
  check_class_table();

  /* Size 0 gives a unique minimal block. */
  a = fastmm_getmem(0);
  b = fastmm_getmem(0);
  check_small_block(a, 0);
  check_small_block(b, 0);
  CHECK(a != b);
  CHECK_EQ(fastmm_freemem(a), FASTMM_OK);
  CHECK_EQ(fastmm_freemem(b), FASTMM_OK);

  round_all_sizes(&rng, 0, 0);
  if (!tu_failures())
    round_all_sizes(&rng, 1, 0);
  /* The third round reuses the blocks the first two dirtied: allocmem must clear them. */
  if (!tu_failures())
    round_all_sizes(&rng, 0, 1);
  if (!tu_failures())
    churn(&rng);
  return tu_finish("test_small");
}
