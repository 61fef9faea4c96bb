/* SPDX-License-Identifier: MIT */
/* fastmm_reallocmem against the whole ReallocMem policy of src/core/policy.h:
 *   small:  downsize in place iff new*4 + 64 >= old usable, else move to the right class;
 *           upsize moves to a block of max(2*old usable + 32, new), copying the old usable bytes
 *   medium: nothing moves unless new < old usable / 2; upsize grows into a free next neighbour
 *           (by at least 25%) or moves with 25% headroom; a downsize below half gets a block the
 *           new size fills at least half of: in place, the tail freed, when the tail makes a
 *           free block, alone or with a free next neighbour (to no less than the smallest medium
 *           block), else a small block; below 1,280 (half the smallest medium block) always a
 *           small block
 *   large:  downsize in place while new >= old/2, moves below; upsize grows by at least 25%
 *           (in place: by what is free after the block when that is less)
 * and the generic cases: realloc(NULL, n), realloc(p, 0), and a failing realloc. */
#include "test_blocks.h"

static uint32_t kind_for(size_t size) {
  return size <= SMALL_MAX_USER    ? BLOCK_FLAG_SMALL
         : size <= MEDIUM_MAX_USER ? BLOCK_FLAG_MEDIUM
                                   : BLOCK_FLAG_LARGE;
}

/* A live block of the kind a fresh request of `size` gets, holding at least `size` bytes; for a
 * small size also of the smallest class that fits. `what` says where we came from. */
static int check_block(const void *p, size_t size, const char *what) {
  uint32_t k;
  if (!CHECK_MSG(p != NULL, "%s: NULL for size %zu", what, size))
    return 0;
  k = tb_kind(p);
  CHECK_MSG(k == kind_for(size), "%s: size %zu got a %s block, expected %s", what, size,
            tb_kind_name(k), tb_kind_name(kind_for(size)));
  CHECK_MSG(fastmm_usable_size(p) >= size, "%s: size %zu, usable %zu", what, size,
            fastmm_usable_size(p));
  CHECK_MSG(tu_is_aligned(p, 16), "%s: %p", what, p);
  if (k == BLOCK_FLAG_SMALL && kind_for(size) == BLOCK_FLAG_SMALL)
    CHECK_MSG((int)small_header_class(block_header(p)) == tb_small_class_for(size),
              "%s: size %zu in class %u, expected %d", what, size,
              small_header_class(block_header(p)), tb_small_class_for(size));
  return 1;
}

/* Checks the first n bytes against the pattern; prints the context on failure. */
static void check_kept(const void *p, size_t n, uint32_t seed, const char *what, size_t from,
                       size_t to) {
  size_t bad = tu_check_pattern(p, n, seed);
  CHECK_MSG(bad == (size_t)-1, "%s %zu -> %zu: byte %zu of %zu not preserved", what, from, to, bad,
            n);
}

/* ---- Small ------------------------------------------------------------------------------- */

/* Realloc of a fresh block of class c (usable u) to `to`; checks where it went. */
static void small_resize(size_t c, size_t to) {
  size_t u = tb_small_usable(c);
  uint32_t seed = (uint32_t)(c * 7919u + to);
  void *p = fastmm_getmem(u), *q;
  if (!check_block(p, u, "small getmem"))
    return;
  CHECK_EQ(small_header_class(block_header(p)), c);
  tu_fill_pattern(p, u, seed);
  q = fastmm_reallocmem(p, to);
  if (to <= u) {
    int in_place = to * 4u + REALLOC_SMALL_DOWNSIZE_ADDER >= u;
    if (!CHECK_MSG(q != NULL, "small downsize %zu -> %zu gave NULL", u, to))
      return;
    if (in_place) {
      CHECK_MSG(q == p, "small downsize %zu -> %zu moved (in place while new*4+64 >= old)", u, to);
      CHECK_MSG(fastmm_usable_size(q) == u, "small in-place %zu -> %zu: usable now %zu", u, to,
                fastmm_usable_size(q));
    } else {
      CHECK_MSG(q != p, "small downsize %zu -> %zu stayed (moves when new*4+64 < old)", u, to);
      check_block(q, to, "small downsize move");
    }
    check_kept(q, to, seed, "small downsize", u, to);
  } else {
    size_t want = 2u * u + REALLOC_SMALL_UPSIZE_ADDER;
    /* A size a small block holds stays in one. */
    if (want > SMALL_MAX_USER && to <= SMALL_MAX_USER)
      want = SMALL_MAX_USER;
    if (want < to)
      want = to;
    if (!CHECK_MSG(q != NULL, "small upsize %zu -> %zu gave NULL", u, to))
      return;
    CHECK_MSG(q != p, "small upsize %zu -> %zu did not move", u, to);
    /* The new block is the one a request of max(2*old + 32, new) gets. */
    check_block(q, want, "small upsize");
    CHECK_MSG(fastmm_usable_size(q) >= want, "small upsize %zu -> %zu: usable %zu < %zu", u, to,
              fastmm_usable_size(q), want);
    check_kept(q, u, seed, "small upsize", u, to);
  }
  CHECK(fastmm_freemem(q) == FASTMM_OK);
}

static void small_policy(void) {
  size_t c;
  for (c = 0; c < SMALL_CLASS_COUNT; c++) {
    size_t u = tb_small_usable(c);
    /* Smallest size that stays in place: new*4 + 64 >= u. */
    size_t keep =
        u > REALLOC_SMALL_DOWNSIZE_ADDER ? (u - REALLOC_SMALL_DOWNSIZE_ADDER + 3u) / 4u : 1u;
    if (keep == 0)
      keep = 1;
    small_resize(c, u);     /* same size */
    small_resize(c, u - 1); /* one less */
    small_resize(c, keep);  /* the last size that stays */
    if (keep > 1)
      small_resize(c, keep - 1); /* the first that moves */
    small_resize(c, 1);
    small_resize(c, u + 1);               /* upsize by one: max(2u+32, u+1) = 2u+32 */
    small_resize(c, 2u * u + 32u);        /* exactly the upsize target */
    small_resize(c, 2u * u + 33u);        /* beyond it: the request itself */
    small_resize(c, SMALL_MAX_USER + 1);  /* into medium */
    small_resize(c, MEDIUM_MAX_USER + 1); /* into large */
  }
}

/* ---- Medium ------------------------------------------------------------------------------ */

/* Two medium blocks of `size` back to back (lo, then hi right after it), with a live guard
 * block right before lo. */
static int adjacent_pair(size_t size, void **guard, void **lo, void **hi) {
  void *run[3];
  if (!CHECK_MSG(tb_adjacent_medium(size, 3, run),
                 "no three adjacent medium blocks of %zu among %d", size, TB_ADJACENT_POOL))
    return 0;
  *guard = run[0];
  *lo = run[1];
  *hi = run[2];
  return 1;
}

static void medium_no_move_above_half(size_t size) {
  size_t u, tos[6], i;
  void *p = fastmm_getmem(size);
  if (!check_block(p, size, "medium getmem"))
    return;
  u = fastmm_usable_size(p);
  tos[0] = u;
  tos[1] = u - 1;
  tos[2] = size;
  tos[3] = u / 2 + 1;
  tos[4] = (u + 1) / 2; /* the smallest size that is not below half */
  tos[5] = u * 3 / 4;
  for (i = 0; i < 6; i++) {
    void *q;
    tu_fill_pattern(p, u, (uint32_t)i);
    q = fastmm_reallocmem(p, tos[i]);
    CHECK_MSG(q == p, "medium %zu -> %zu moved (nothing moves unless new < old/2)", u, tos[i]);
    if (!q)
      return;
    p = q;
    CHECK_MSG(fastmm_usable_size(p) == u,
              "medium %zu -> %zu: usable became %zu (no action unless new < old/2)", u, tos[i],
              fastmm_usable_size(p));
    check_kept(p, tos[i], (uint32_t)i, "medium no-op", u, tos[i]);
  }
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* new < old/2, >= 1,280 and a tail that is a block of its own: same pointer, smaller block, the
 * tail freed and reusable. */
static void medium_shrink_in_place(size_t size, size_t to) {
  size_t u, u2;
  fastmm_state s0, s1;
  void *p = fastmm_getmem(size), *q;
  if (!check_block(p, size, "medium getmem"))
    return;
  u = fastmm_usable_size(p);
  tu_fill_pattern(p, u, 0x51u);
  tb_state(&s0);
  q = fastmm_reallocmem(p, to);
  CHECK_MSG(q == p,
            "medium shrink %zu -> %zu moved (in place when new >= %u and the tail is a block)", u,
            to, REALLOC_MEDIUM_TO_SMALL_BELOW);
  if (!q)
    return;
  u2 = fastmm_usable_size(q);
  CHECK_EQ(tb_kind(q), BLOCK_FLAG_MEDIUM);
  CHECK_MSG(u2 >= to && u2 >= MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE,
            "medium shrink %zu -> %zu: usable %zu", u, to, u2);
  /* The tail is cut off when it is a block of its own. */
  if (u - (to > MEDIUM_MIN_BLOCK_SIZE ? to : MEDIUM_MIN_BLOCK_SIZE) >= 2u * MEDIUM_MIN_BLOCK_SIZE)
    CHECK_MSG(u2 < u, "medium shrink %zu -> %zu: usable still %zu, tail not freed", u, to, u2);
  check_kept(q, to, 0x51u, "medium shrink", u, to);
  tb_state(&s1);
  CHECK_EQ(s1.medium.blocks_in_use, s0.medium.blocks_in_use);
  CHECK_EQ(s1.medium.bytes_in_use + (u - u2), s0.medium.bytes_in_use);
  CHECK_EQ(fastmm_check_heap(), 0);
  /* The freed tail follows the block: growing back to the old size happens in place. */
  p = fastmm_reallocmem(q, u);
  CHECK_MSG(p == q, "medium regrow %zu -> %zu after shrink moved: the tail was not reusable", u2,
            u);
  if (!p)
    return;
  CHECK(fastmm_usable_size(p) >= u);
  check_kept(p, to, 0x51u, "medium regrow", u2, u);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* A downsize below half of a medium block, whose next neighbour is live or free: below 1,280
 * bytes it moves to a small block; from 1,280 it shrinks in place when what it cuts off makes a
 * free block (on its own, or merged into the free neighbour), else it moves to a small block.
 * Either way the new size fills at least half of what MemSize then says, so a caller that
 * shrinks by halves (Free Pascal's SetLength) does not ask again at once. */
static void medium_to_small(size_t size, size_t to, int neighbour_free) {
  size_t u, keep, block;
  int cuts;
  void *guard, *p, *next, *q;
  if (!adjacent_pair(size, &guard, &p, &next))
    return;
  if (neighbour_free)
    CHECK(fastmm_freemem(next) == FASTMM_OK);
  u = fastmm_usable_size(p);
  tu_fill_pattern(p, u, 0x77u);
  keep = to < MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
             ? MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE
             : to;
  block = (keep + MEDIUM_HEADER_SIZE + 15u) & ~(size_t)15u;
  cuts = neighbour_free || u + MEDIUM_HEADER_SIZE >= block + MEDIUM_MIN_BLOCK_SIZE;
  q = fastmm_reallocmem(p, to);
  if (!CHECK_MSG(q != NULL, "medium %zu -> %zu gave NULL", u, to))
    return;
  if (to >= u / 2u) {
    CHECK_MSG(q == p && fastmm_usable_size(q) == u, "medium %zu -> %zu (half or more) changed", u,
              to);
  } else if (to >= REALLOC_MEDIUM_TO_SMALL_BELOW && cuts) {
    CHECK_MSG(q == p, "medium %zu -> %zu (neighbour %s) moved: in place when a free block is cut",
              u, to, neighbour_free ? "free" : "live");
    CHECK_EQ(tb_kind(q), BLOCK_FLAG_MEDIUM);
    CHECK_EQ(fastmm_usable_size(q), block - MEDIUM_HEADER_SIZE);
  } else if (to >= REALLOC_MEDIUM_TO_SMALL_BELOW && to > SMALL_MAX_USER) {
    CHECK_MSG(q == p && fastmm_usable_size(q) == u, "medium %zu -> %zu changed (nothing to cut)", u,
              to);
  } else {
    CHECK_MSG(q != p,
              "medium %zu -> %zu (neighbour %s) stayed: moves below %u or when nothing "
              "can be cut",
              u, to, neighbour_free ? "free" : "live", REALLOC_MEDIUM_TO_SMALL_BELOW);
    check_block(q, to, "medium to small");
  }
  if (to >= REALLOC_MEDIUM_TO_SMALL_BELOW && to <= SMALL_MAX_USER)
    CHECK_MSG(fastmm_usable_size(q) <= 2u * to,
              "medium %zu -> %zu: usable %zu, over twice the size", u, to, fastmm_usable_size(q));
  check_kept(q, to, 0x77u, "medium downsize", u, to);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  if (!neighbour_free)
    CHECK(fastmm_freemem(next) == FASTMM_OK);
  CHECK(fastmm_freemem(guard) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Growth into a free next neighbour stays in place and grows by at least 25%. */
static void medium_grow_into_neighbour(size_t size, size_t extra) {
  void *a, *b, *guard, *q;
  size_t u, to, want;
  if (!adjacent_pair(size, &guard, &a, &b))
    return;
  tu_fill_pattern(guard, fastmm_usable_size(guard), 0x6Au);
  u = fastmm_usable_size(a);
  tu_fill_pattern(a, u, 0x61u);
  CHECK(fastmm_freemem(b) == FASTMM_OK);
  to = u + extra;
  want = u + (u >> REALLOC_MEDIUM_GROWTH_SHIFT);
  if (want < to)
    want = to;
  q = fastmm_reallocmem(a, to);
  CHECK_MSG(q == a, "medium %zu -> %zu with a free %zu-byte neighbour moved", u, to, size);
  if (!q)
    return;
  CHECK_EQ(tb_kind(q), BLOCK_FLAG_MEDIUM);
  CHECK_MSG(fastmm_usable_size(q) >= want, "medium grow %zu -> %zu: usable %zu < %zu", u, to,
            fastmm_usable_size(q), want);
  check_kept(q, u, 0x61u, "medium grow in place", u, to);
  CHECK(tu_check_pattern(guard, fastmm_usable_size(guard), 0x6Au) == (size_t)-1);
  CHECK_EQ(fastmm_check_heap(), 0);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  CHECK(fastmm_freemem(guard) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Growth with a live next neighbour moves, with 25% headroom. */
static void medium_grow_moves(size_t size, size_t extra) {
  void *a, *b, *guard, *q;
  size_t u, to, want;
  if (!adjacent_pair(size, &guard, &a, &b))
    return;
  u = fastmm_usable_size(a);
  tu_fill_pattern(a, u, 0x62u);
  tu_fill_pattern(b, fastmm_usable_size(b), 0x63u);
  to = u + extra;
  want = u + (u >> REALLOC_MEDIUM_GROWTH_SHIFT);
  if (want < to)
    want = to;
  q = fastmm_reallocmem(a, to);
  CHECK_MSG(q != a && q != NULL, "medium %zu -> %zu with a live neighbour did not move", u, to);
  if (!q || q == a)
    return;
  check_block(q, want, "medium grow move");
  CHECK_MSG(fastmm_usable_size(q) >= want, "medium grow move %zu -> %zu: usable %zu < %zu", u, to,
            fastmm_usable_size(q), want);
  CHECK(fastmm_owns_block(a) == 0);
  check_kept(q, u, 0x62u, "medium grow move", u, to);
  CHECK(tu_check_pattern(b, fastmm_usable_size(b), 0x63u) == (size_t)-1);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  CHECK(fastmm_freemem(b) == FASTMM_OK);
  CHECK(fastmm_freemem(guard) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

static void medium_policy(void) {
  static const size_t sizes[] = {SMALL_MAX_USER + 1, 5000, 12000, 100000, 300000, MEDIUM_MAX_USER};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    medium_no_move_above_half(sizes[i]);
    for (int free_next = 0; free_next < 2; free_next++) {
      medium_to_small(sizes[i], REALLOC_MEDIUM_TO_SMALL_BELOW, free_next);
      medium_to_small(sizes[i], REALLOC_MEDIUM_TO_SMALL_BELOW - 1, free_next);
      medium_to_small(sizes[i], (sizes[i] - 1) / 2, free_next);
      medium_to_small(sizes[i], 644, free_next);
      medium_to_small(sizes[i], 100, free_next);
      medium_to_small(sizes[i], 1, free_next);
    }
  }
  medium_shrink_in_place(100000, 100000 / 2 - 100);
  medium_shrink_in_place(100000, 20000);
  medium_shrink_in_place(300000, 3000);
  medium_shrink_in_place(300000, REALLOC_MEDIUM_TO_SMALL_BELOW + 56);
  medium_shrink_in_place(MEDIUM_MAX_USER, REALLOC_MEDIUM_TO_SMALL_BELOW);
  medium_grow_into_neighbour(20000, 1);
  medium_grow_into_neighbour(20000, 10000);
  medium_grow_into_neighbour(SMALL_MAX_USER + 1, 16);
  medium_grow_into_neighbour(100000, 90000);
  medium_grow_moves(20000, 1);
  medium_grow_moves(20000, 15000);
  medium_grow_moves(100000, 1);
  /* 25% headroom past the medium limit makes a large block. */
  medium_grow_moves(MEDIUM_MAX_USER - 1000, 2000);
}

/* ---- Large ------------------------------------------------------------------------------- */

static void large_resize(size_t size, size_t to_num, size_t to_den, long to_add) {
  size_t u, to;
  void *p = fastmm_getmem(size), *q;
  if (!check_block(p, size, "large getmem"))
    return;
  u = fastmm_usable_size(p);
  to = (size_t)((long long)(u * to_num / to_den) + to_add);
  tu_fill_pattern(p, u, (uint32_t)to);
  q = fastmm_reallocmem(p, to);
  if (!CHECK_MSG(q != NULL, "large %zu -> %zu gave NULL", u, to))
    return;
  if (to <= u) {
    if (to >= u / 2u) {
      CHECK_MSG(q == p, "large downsize %zu -> %zu moved (in place while new >= old/2)", u, to);
    } else {
      CHECK_MSG(q != p, "large downsize %zu -> %zu stayed (moves below old/2)", u, to);
      check_block(q, to, "large downsize move");
    }
    CHECK(fastmm_usable_size(q) >= to);
    check_kept(q, to, (uint32_t)to, "large downsize", u, to);
  } else {
    size_t want = u + (u >> REALLOC_LARGE_GROWTH_SHIFT);
    if (want < to)
      want = to;
    CHECK_EQ(tb_kind(q), BLOCK_FLAG_LARGE);
    /* 25% headroom, except in place where the address space after the block holds the request
     * but not the headroom (FastMM5 grows by what is free then). */
    CHECK_MSG(fastmm_usable_size(q) >= (q == p ? to : want),
              "large grow %zu -> %zu (%s): usable %zu < %zu", u, to, q == p ? "in place" : "moved",
              fastmm_usable_size(q), q == p ? to : want);
    check_kept(q, u, (uint32_t)to, "large grow", u, to);
  }
  if (q != p)
    CHECK(fastmm_owns_block(q) == 1);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
}

static void large_policy(void) {
  static const size_t sizes[] = {MEDIUM_MAX_USER + 1, 1024u * 1024u, 3u * 1024u * 1024u + 100,
                                 6u * 1024u * 1024u};
  size_t i;
  fastmm_state s0, s1;
  tb_state(&s0);
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    large_resize(sizes[i], 1, 1, 0);      /* same size */
    large_resize(sizes[i], 1, 1, -1);     /* one less */
    large_resize(sizes[i], 1, 2, 1);      /* just above half */
    large_resize(sizes[i], 1, 2, 0);      /* exactly half: stays */
    large_resize(sizes[i], 1, 2, -1);     /* just below half: moves */
    large_resize(sizes[i], 1, 4, 0);      /* a quarter */
    large_resize(sizes[i], 0, 1, 100000); /* down to medium */
    large_resize(sizes[i], 0, 1, 1000);   /* down to small */
    large_resize(sizes[i], 1, 1, 1);      /* grow by one byte: 25% */
    large_resize(sizes[i], 2, 1, 0);      /* double */
  }
  /* Freed large blocks stay in the large cache until it is given back. */
  fastmm_release_free_memory();
  tb_state(&s1);
  CHECK_MSG(s1.os_bytes_reserved <= s0.os_bytes_reserved,
            "large reallocs left %zu bytes mapped (from %zu)", s1.os_bytes_reserved,
            s0.os_bytes_reserved);
  CHECK_EQ(s1.large.blocks_in_use, s0.large.blocks_in_use);
}

/* ---- Generic ----------------------------------------------------------------------------- */

static void generic_cases(void) {
  static const size_t sizes[] = {1, 100, SMALL_MAX_USER, 5000, MEDIUM_MAX_USER, 2000000};
  static const size_t huge[] = {((size_t)-1) / 2, (size_t)-1 - 10, (size_t)-1,
                                MAX_REQUEST_SIZE + 1};
  size_t i, j;
  fastmm_state s0, s1;
  tb_state(&s0);
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = fastmm_reallocmem(NULL, sizes[i]), *q;
    size_t u;
    if (!check_block(p, sizes[i], "realloc(NULL, n)"))
      continue;
    u = fastmm_usable_size(p);
    tu_fill_pattern(p, u, (uint32_t)i);
    for (j = 0; j < sizeof huge / sizeof huge[0]; j++) {
      q = fastmm_reallocmem(p, huge[j]);
      CHECK_MSG(q == NULL, "realloc(%zu-byte block, %zu) did not fail", u, huge[j]);
      if (q) {
        p = q;
        break;
      }
      CHECK(fastmm_owns_block(p) == 1);
      CHECK_EQ(fastmm_usable_size(p), u);
      check_kept(p, u, (uint32_t)i, "failed realloc", u, huge[j]);
    }
    CHECK_EQ(fastmm_check_heap(), 0);
    {
      /* realloc(p, 0) frees: one block fewer in use. (p itself is not looked at again: its
       * memory may be back with the OS.) */
      fastmm_state a, b;
      tb_state(&a);
      q = fastmm_reallocmem(p, 0);
      tb_state(&b);
      CHECK_MSG(q == NULL, "realloc(p, 0) of a %zu-byte block returned %p", u, q);
      CHECK_MSG(tb_blocks_in_use(&b) + 1 == tb_blocks_in_use(&a),
                "realloc(p, 0) of a %zu-byte block did not free it", u);
    }
  }
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_EQ(s1.small.bytes_in_use + s1.medium.bytes_in_use + s1.large.bytes_in_use,
           s0.small.bytes_in_use + s0.medium.bytes_in_use + s0.large.bytes_in_use);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* A random walk through every kind, one block per slot; the common prefix must survive. */
static void storm(void) {
  enum { SLOTS = 32, STEPS = 6000 };
  void *p[SLOTS] = {0};
  size_t sz[SLOTS] = {0};
  uint32_t seed[SLOTS] = {0};
  size_t i;
  rng_state rng;
  rng_seed(&rng, 7);
  for (i = 0; i < STEPS; i++) {
    size_t k = rng_below(&rng, SLOTS), r = rng_below(&rng, 100), to, keep;
    void *q;
    if (r < 60)
      to = rng_range(&rng, 1, SMALL_MAX_USER);
    else if (r < 90)
      to = rng_range(&rng, 1, 200000);
    else if (r < 99)
      to = rng_range(&rng, 1, MEDIUM_MAX_USER);
    else
      to = rng_range(&rng, MEDIUM_MAX_USER, 3000000);
    q = fastmm_reallocmem(p[k], to);
    if (!CHECK_MSG(q != NULL, "storm step %zu: realloc %zu -> %zu gave NULL", i, sz[k], to))
      return;
    keep = sz[k] < to ? sz[k] : to;
    check_kept(q, keep, seed[k], "storm", sz[k], to);
    CHECK(fastmm_usable_size(q) >= to);
    seed[k] = (uint32_t)(i * 2654435761u);
    p[k] = q;
    sz[k] = to;
    tu_fill_pattern(q, to, seed[k]);
    if (i % 1000 == 0)
      CHECK_EQ(fastmm_check_heap(), 0);
  }
  for (i = 0; i < SLOTS; i++) {
    check_kept(p[i], sz[i], seed[i], "storm end", sz[i], sz[i]);
    CHECK(fastmm_reallocmem(p[i], 0) == NULL);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  fastmm_state s0, s1;
  printf("test_realloc (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  tb_state(&s0);
  small_policy();
  medium_policy();
  large_policy();
  generic_cases();
  storm();
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_realloc");
}
