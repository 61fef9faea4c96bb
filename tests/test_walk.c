/* SPDX-License-Identifier: MIT */
/* The walk of the blocks (fastmm_walk_blocks, FastMM5's FastMM_WalkBlocks):
 *   - every block the test holds is reported once, with its kind, address, usable and block size;
 *   - what the walk finds adds up to fastmm_get_state: blocks and bytes in use per kind, the
 *     memory held by small spans and by medium spans;
 *   - free blocks (freed into the thread cache, freed medium blocks, a large block in the large
 *     cache) are reported free, and only when asked for; a small span's blocks and never-used tail
 * add up to its slots;
 *   - the type mask and the allocation groups filter; a callback that allocates and frees;
 *   - debug blocks: reported at their user pointer with their requested size, and a freed one
 *     (in the quarantine) as free;
 *   - two threads allocate, resize and free every kind of block while the main thread walks, over
 *     and over: each walk is complete, finds every block the main thread holds exactly once, and
 *     the heap stays consistent. */
#include "test_blocks.h"

#define HELD 48

typedef struct seen {
  void *expect[HELD];
  size_t expect_size[HELD];
  unsigned expect_type[HELD];
  unsigned found[HELD];
  size_t count[5], usable[5], block_bytes[5], free_count[5], free_bytes[5];
  void *free_at; /* a freed block looked for among the free ones */
  unsigned free_found;
  size_t entries, bad_type;
  /* the small spans and, separately, the small blocks inside any of them */
  struct span {
    uintptr_t start, end;
    size_t slot, usable, unfed;
    size_t blocks;
  } spans[4096];
  size_t span_count;
  uintptr_t small_blocks[65536];
  size_t small_block_count;
  int allocate_in_callback;
} seen;

static void FASTMM_CDECL collect(const fastmm_block_info *info, void *user_data) {
  seen *s = (seen *)user_data;
  s->entries++;
  if (info->block_type > FASTMM_BLOCK_SMALL) {
    s->bad_type++;
    return;
  }
  if (s->allocate_in_callback) {
    /* The walk holds no lock while it calls back: GetMem and FreeMem of every kind work. */
    void *a = fastmm_getmem(40), *b = fastmm_getmem(9000), *c = fastmm_getmem(700000);
    fastmm_freemem(a);
    fastmm_freemem(b);
    fastmm_freemem(c);
  }
  if (info->block_is_free) {
    s->free_count[info->block_type]++;
    s->free_bytes[info->block_type] += info->block_size;
    s->free_found += info->block_address == s->free_at;
  } else {
    s->count[info->block_type]++;
    s->usable[info->block_type] += info->usable_size;
    s->block_bytes[info->block_type] += info->block_size;
  }
  for (unsigned i = 0; i < HELD; i++)
    if (s->expect[i] == info->block_address && !info->block_is_free) {
      s->found[i]++;
      if (info->block_type != s->expect_type[i] ||
          info->usable_size != fastmm_usable_size(info->block_address))
        s->bad_type++;
    }
  if (info->block_type == FASTMM_BLOCK_SMALL_SPAN && s->span_count < 4096) {
    struct span *sp = &s->spans[s->span_count++];
    sp->start = (uintptr_t)info->block_address;
    sp->end = sp->start + info->block_size - MEDIUM_HEADER_SIZE;
    sp->slot = info->small_block_span_block_size;
    sp->usable = info->usable_size;
    sp->unfed = info->is_sequential_feed_span ? info->sequential_feed_unused_bytes : 0;
    sp->blocks = 0;
    if (info->is_sequential_feed_span != (info->sequential_feed_unused_bytes != 0))
      s->bad_type++;
  }
  if (info->block_type == FASTMM_BLOCK_SMALL && s->small_block_count < 65536)
    s->small_blocks[s->small_block_count++] = (uintptr_t)info->block_address;
}

static seen found;

static void reset(void) {
  void *e[HELD];
  size_t sz[HELD];
  unsigned ty[HELD];
  memcpy(e, found.expect, sizeof e);
  memcpy(sz, found.expect_size, sizeof sz);
  memcpy(ty, found.expect_type, sizeof ty);
  memset(&found, 0, sizeof found);
  memcpy(found.expect, e, sizeof e);
  memcpy(found.expect_size, sz, sizeof sz);
  memcpy(found.expect_type, ty, sizeof ty);
}

static unsigned type_of(size_t size) {
  if (size <= SMALL_MAX_USER)
    return FASTMM_BLOCK_SMALL;
  return size <= MEDIUM_MAX_USER ? FASTMM_BLOCK_MEDIUM : FASTMM_BLOCK_LARGE;
}

static void check_against_state(const char *when) {
  fastmm_state st;
  fastmm_get_state(&st);
  CHECK_MSG(found.count[FASTMM_BLOCK_SMALL] == st.small.blocks_in_use, "%s: small %zu vs %zu", when,
            found.count[FASTMM_BLOCK_SMALL], st.small.blocks_in_use);
  CHECK_EQ(found.usable[FASTMM_BLOCK_SMALL], st.small.bytes_in_use);
  CHECK_EQ(found.count[FASTMM_BLOCK_MEDIUM], st.medium.blocks_in_use);
  CHECK_EQ(found.usable[FASTMM_BLOCK_MEDIUM], st.medium.bytes_in_use);
  CHECK_EQ(found.count[FASTMM_BLOCK_LARGE], st.large.blocks_in_use);
  CHECK_EQ(found.usable[FASTMM_BLOCK_LARGE], st.large.bytes_in_use);
  /* Large blocks free (in the large cache) and used hold what large blocks hold. */
  CHECK_EQ(found.block_bytes[FASTMM_BLOCK_LARGE] + found.free_bytes[FASTMM_BLOCK_LARGE],
           st.large.bytes_reserved);
  CHECK_EQ(found.block_bytes[FASTMM_BLOCK_SMALL_SPAN], st.small.bytes_reserved);
  CHECK_EQ(found.block_bytes[FASTMM_BLOCK_MEDIUM_SPAN],
           st.small.bytes_reserved + st.medium.bytes_reserved);
}

/* ---- the walk while two threads allocate ---------------------------------------------------- */

typedef struct churner {
  int id;
  tu_flag *stop;
  tu_thread_checks chk;
  unsigned long long operations;
  tu_counter progress;
} churner;

/* Mostly small blocks, some medium, a few large: every kind changes under the walk. */
static size_t churn_size(rng_state *r) {
  size_t k = rng_below(r, 100);
  return tb_size_of_kind(r, k < 80 ? TB_SMALL : k < 97 ? TB_MEDIUM : TB_LARGE, 600000);
}

static void churn(void *arg) {
  churner *c = (churner *)arg;
  rng_state r;
  rng_seed(&r, 0xC0FFEEu + (uint64_t)c->id);
  tb_block blocks[64] = {{0}};
  while (!tu_flag_raised(c->stop)) {
    unsigned i = (unsigned)rng_below(&r, 64);
    tb_block *b = &blocks[i];
    if (b->p != NULL) {
      tb_block_verify(&c->chk, b, "churn");
      if (rng_below(&r, 3) == 0) {
        tb_block_resize(&c->chk, b, churn_size(&r), (uint32_t)rng_next(&r), "churn resize");
        continue;
      }
      fastmm_freemem(b->p);
      b->p = NULL;
    } else {
      b->size = churn_size(&r);
      b->seed = (uint32_t)rng_next(&r);
      b->p = (unsigned char *)fastmm_getmem(b->size);
      THREAD_CHECK(&c->chk, b->p != NULL, "GetMem(%zu)", b->size);
      if (b->p)
        tu_fill_pattern(b->p, b->size, b->seed);
    }
    c->operations++;
    tu_counter_add(&c->progress, 1);
  }
  for (unsigned i = 0; i < 64; i++)
    if (blocks[i].p) {
      tb_block_verify(&c->chk, &blocks[i], "churn end");
      fastmm_freemem(blocks[i].p);
    }
  fastmm_flush_thread_cache();
}

int main(void) {
  tb_start_quiet("test_walk");
  static const size_t sizes[HELD] = {
      0,      1,       12,      13,    100,   200,    256,    500,    1000,   2000,
      2556,   2557,    3000,    5000,  10000, 40000,  100000, 300000, 524272, 524273,
      600000, 1000000, 3000000, 33,    64,    77,     130,    250,    1500,   2200,
      2400,   4096,    8192,    16384, 65536, 131072, 262144, 400000, 450000, 9,
      17,     45,      60,      333,   777,   1200,   1800,   2500};
  for (unsigned i = 0; i < HELD; i++) {
    found.expect_size[i] = sizes[i];
    found.expect[i] = fastmm_getmem(sizes[i]);
    found.expect_type[i] = type_of(sizes[i]);
    CHECK(found.expect[i] != NULL);
  }
  fastmm_release_free_memory(); /* no spare span: the medium spans the walk sees are all there is */

  /* Used blocks only: every held block once, and the totals of fastmm_get_state. */
  fastmm_flush_thread_cache();
  reset();
  CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu), 1);
  CHECK_EQ(found.bad_type, 0);
  for (unsigned i = 0; i < HELD; i++)
    CHECK_MSG(found.found[i] == 1, "the %zu-byte block was found %u times", sizes[i],
              found.found[i]);
  for (unsigned t = 0; t < 5; t++)
    CHECK_EQ(found.free_count[t], 0);
  check_against_state("used blocks");

  /* The small spans: each holds exactly its fed slots, all found, plus its never-used tail. */
  reset();
  CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 0, 1000, 0, 0xFFFFFFFFu), 1);
  CHECK(found.span_count > 0);
  for (size_t b = 0; b < found.small_block_count; b++) {
    unsigned in = 0;
    for (size_t s = 0; s < found.span_count; s++)
      if (found.small_blocks[b] >= found.spans[s].start &&
          found.small_blocks[b] < found.spans[s].end) {
        found.spans[s].blocks++;
        in++;
      }
    CHECK_EQ(in, 1);
  }
  for (size_t s = 0; s < found.span_count; s++) {
    const struct span *sp = &found.spans[s];
    CHECK_MSG(sp->blocks * sp->slot + sp->unfed == sp->usable,
              "span %p: %zu blocks of %zu + %zu unfed != %zu", (void *)sp->start, sp->blocks,
              sp->slot, sp->unfed, sp->usable);
    /* The span is its medium block, whose header lies at a multiple of 16 KB. */
    CHECK_MSG((sp->start - 16u) % (16u * 1024u) == 0, "span %p not 16 bytes past 16 KB",
              (void *)sp->start);
  }

  /* Freed blocks: into the thread cache (small) and the bins (medium): free, not used. */
  void *small_freed = found.expect[4], *medium_freed = found.expect[14];
  fastmm_freemem(small_freed);
  fastmm_freemem(medium_freed);
  found.expect[4] = found.expect[14] = NULL;
  reset();
  fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu);
  CHECK(found.free_count[FASTMM_BLOCK_SMALL] == 0 && found.free_count[FASTMM_BLOCK_MEDIUM] == 0);
  check_against_state("after frees (cached block counted free)");
  {
    int small_free = 0, medium_free = 0;
    reset();
    found.expect[4] = small_freed; /* looked for among the free ones below */
    found.expect[14] = medium_freed;
    fastmm_walk_blocks(collect, &found, 0, 0, 1000, 0, 0xFFFFFFFFu);
    small_free = found.found[4] == 0; /* not reported used */
    medium_free = found.found[14] == 0;
    CHECK(small_free && medium_free);
    CHECK(found.free_count[FASTMM_BLOCK_SMALL] > 0);
    found.expect[4] = found.expect[14] = NULL;
  }

  /* A freed large block is kept in the large cache: reported free, at its address, only when
   * free blocks are asked for, its memory counted with the large blocks'. */
  {
    void *large_freed = found.expect[21];
    CHECK_EQ(found.expect_size[21], 1000000);
    CHECK_EQ(fastmm_freemem(large_freed), FASTMM_OK);
    found.expect[21] = NULL;
    reset();
    found.free_at = large_freed;
    CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu), 1);
    CHECK_EQ(found.free_found, 0);
    CHECK_EQ(found.free_count[FASTMM_BLOCK_LARGE], 0);
    reset();
    found.free_at = large_freed;
    CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 0, 1000, 0, 0xFFFFFFFFu), 1);
    CHECK_EQ(found.free_found, 1);
    check_against_state("a large block in the large cache");
    fastmm_release_free_memory(); /* the cache given back: the used-only walks add up again */
    reset();
    found.free_at = large_freed;
    CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 0, 1000, 0, 0xFFFFFFFFu), 1);
    CHECK_EQ(found.free_found, 0);
    check_against_state("the large cache given back");
  }

  /* The type mask: only large blocks. */
  reset();
  fastmm_walk_blocks(collect, &found, FASTMM_WALK_TYPE(FASTMM_BLOCK_LARGE), 1, 1000, 0,
                     0xFFFFFFFFu);
  CHECK(found.count[FASTMM_BLOCK_LARGE] >= 3);
  CHECK_EQ(found.entries, found.count[FASTMM_BLOCK_LARGE]);
  /* Groups above 0: no block outside debug mode is in one, and no span is reported. */
  reset();
  CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 0, 1000, 1, 0xFFFFFFFFu), 1);
  CHECK_EQ(found.entries, 0);
  /* No callback: nothing to do. */
  CHECK_EQ(fastmm_walk_blocks(NULL, NULL, 0, 0, 1000, 0, 0xFFFFFFFFu), 1);

  /* A callback that allocates and frees (every kind) as it goes. */
  reset();
  found.allocate_in_callback = 1;
  CHECK_EQ(fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu), 1);
  for (unsigned i = 0; i < HELD; i++)
    if (found.expect[i])
      CHECK_EQ(found.found[i], 1);
  found.allocate_in_callback = 0;
  CHECK_EQ(fastmm_check_heap(), 0);

  /* Debug blocks: at their user pointer, with the size asked for; a freed one waits in the
   * quarantine and is free. */
  fastmm_enter_debug_mode();
  void *d_small = fastmm_getmem(50), *d_medium = fastmm_getmem(20000), *d_freed = fastmm_getmem(60);
  fastmm_freemem(d_freed);
  fastmm_exit_debug_mode(); /* the quarantine is flushed when the mode ends: walk before */
  fastmm_enter_debug_mode();
  void *d_quarantined = fastmm_getmem(70);
  fastmm_freemem(d_quarantined);
  {
    void *keep[3] = {found.expect[0], found.expect[1], found.expect[2]};
    found.expect[0] = d_small;
    found.expect[1] = d_medium;
    found.expect[2] = d_quarantined;
    found.expect_type[0] = FASTMM_BLOCK_SMALL;
    found.expect_type[1] = FASTMM_BLOCK_MEDIUM;
    reset();
    fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu);
    CHECK_EQ(found.found[0], 1);
    CHECK_EQ(found.found[1], 1);
    CHECK_EQ(found.found[2], 0); /* quarantined: not in use */
    CHECK_EQ(found.bad_type, 0); /* usable_size == the requested size (fastmm_usable_size's) */
    found.expect[0] = keep[0];
    found.expect[1] = keep[1];
    found.expect[2] = keep[2];
    found.expect_type[0] = type_of(sizes[0]);
    found.expect_type[1] = type_of(sizes[1]);
  }
  fastmm_freemem(d_small);
  fastmm_freemem(d_medium);
  fastmm_exit_debug_mode();

  /* The walk while two threads churn. */
  {
    tu_flag stop = {0};
    churner c[2];
    tu_thread t[2];
    for (int i = 0; i < 2; i++) {
      memset(&c[i], 0, sizeof c[i]);
      c[i].id = i;
      c[i].chk.thread = i;
      c[i].stop = &stop;
      CHECK(tu_thread_start(&t[i], churn, &c[i]));
    }
    /* At least 40 walks, and on until each thread has made 1500 calls during them (bounded:
     * at most 20000 walks). */
    while (tu_counter_get(&c[0].progress) == 0 || tu_counter_get(&c[1].progress) == 0)
      tu_yield();
    unsigned walks = 0;
    for (; walks < 20000 && (walks < 40 || tu_counter_get(&c[0].progress) < 1500 ||
                             tu_counter_get(&c[1].progress) < 1500);
         walks++) {
      reset();
      int complete = fastmm_walk_blocks(collect, &found, 0, walks & 1, 1000, 0, 0xFFFFFFFFu);
      CHECK(complete == 1);
      for (unsigned i = 0; i < HELD; i++)
        if (found.expect[i])
          CHECK_MSG(found.found[i] == 1, "walk %u: the %zu-byte block found %u times", walks,
                    sizes[i], found.found[i]);
      CHECK_EQ(found.bad_type, 0);
    }
    tu_flag_raise(&stop);
    for (int i = 0; i < 2; i++) {
      tu_thread_join(&t[i]);
      tu_add_counts(c[i].chk.checks, c[i].chk.failed);
    }
    printf("  %u walks while two threads made %llu + %llu calls\n", walks, c[0].operations,
           c[1].operations);
  }
  CHECK_EQ(fastmm_check_heap(), 0);

  for (unsigned i = 0; i < HELD; i++)
    if (found.expect[i])
      CHECK_EQ(fastmm_freemem(found.expect[i]), FASTMM_OK);
  fastmm_flush_thread_cache();
  reset();
  fastmm_walk_blocks(collect, &found, 0, 1, 1000, 0, 0xFFFFFFFFu);
  CHECK_EQ(found.count[FASTMM_BLOCK_SMALL] + found.count[FASTMM_BLOCK_MEDIUM] +
               found.count[FASTMM_BLOCK_LARGE],
           0);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_walk");
}
