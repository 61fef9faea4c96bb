/* SPDX-License-Identifier: MIT */
/* The single-thread workloads of fastmm_bench; the two-thread ones are in workloads_threads.c,
 * and workloads.c lists them all. Each one:
 *   - sets up its own tables with bench_os_alloc (not through the allocator under test), then
 *     calls bench_ready (the base memory is taken there);
 *   - runs its timed region between bench_begin and bench_end and sets c->ops;
 *   - keeps c->live / c->peak_live to the bytes it asked for (live_add / live_sub);
 *   - reads back what it wrote (tags) and fails the run when something was lost;
 *   - draws every size and choice from a fixed-seed generator, so every allocator gets the same
 *     requests in the same order.
 * Operation counts are for about 10-30 ms of fastmm-c work natively at --scale 1.
 * README.md describes each workload and which Fastcode MM Challenge group it stands for. */
#include "workloads.h"

/* Delphi objects: instance sizes of typical classes (TObject descendants with a few fields),
 * weighted toward the small ones. */
static size_t pick_object(rng_state *r) {
  static const struct {
    uint16_t size, weight;
  } classes[] = {{16, 10}, {24, 15}, {32, 20}, {40, 12}, {48, 10}, {56, 8},
                 {64, 8},  {80, 6},  {96, 5},  {112, 3}, {128, 3}};
  size_t total = 0;
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
    total += classes[i].weight;
  size_t k = rng_below(r, total);
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
    if (k < classes[i].weight)
      return classes[i].size;
    k -= classes[i].weight;
  }
  return 32;
}

/* ==== The seed's five ReallocMem cases ======================================================= */

/* A 64-byte block resized to 63 bytes and back: stays in place in every manager here. */
void wl_realloc_inplace(bench_ctx *c) {
  uint64_t n = bench_count(c, 1e6);
  bench_ready(c);
  unsigned char *p = (unsigned char *)mm_get(64);
  live_add(c, 64);
  memset(p, 0x5A, 64);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    p = (unsigned char *)mm_realloc(p, 63);
    p = (unsigned char *)mm_realloc(p, 64);
  }
  bench_end(c);
  c->ops = 2 * n;
  if (p[0] != 0x5A || p[62] != 0x5A)
    bench_fail("ReallocMem lost the contents");
  c->check = p[0];
  mm_free(p);
  live_sub(c, 64);
}

/* Forced upsize: a 40-byte block grown to 200 bytes (past its size class, so it moves), then
 * freed. One operation = GetMem + ReallocMem + FreeMem. */
void wl_realloc_upsize(bench_ctx *c) {
  uint64_t n = bench_count(c, 5e5);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    void *p = mm_get(40);
    tag_block(p, 40, (uint32_t)i);
    p = mm_realloc(p, 200);
    if (!tag_ok(p, 40, (uint32_t)i))
      bench_fail("ReallocMem lost the contents");
    mm_free(p);
  }
  bench_end(c);
  c->ops = n;
  c->peak_live = 200;
}

/* Moving downsize: a 1000-byte block shrunk to 40 bytes (below FastMM's keep-in-place limit,
 * so it moves to a smaller class), then freed. One operation = GetMem + ReallocMem + FreeMem. */
void wl_realloc_downsize(bench_ctx *c) {
  uint64_t n = bench_count(c, 5e5);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    void *p = mm_get(1000);
    tag_block(p, 40, (uint32_t)i);
    p = mm_realloc(p, 40);
    if (!tag_ok(p, 40, (uint32_t)i))
      bench_fail("ReallocMem lost the contents");
    mm_free(p);
  }
  bench_end(c);
  c->ops = n;
  c->peak_live = 1000;
}

/* Medium control: a 20000-byte block resized to 19968 and back (in place). */
void wl_realloc_medium(bench_ctx *c) {
  uint64_t n = bench_count(c, 5e5);
  bench_ready(c);
  unsigned char *p = (unsigned char *)mm_get(20000);
  live_add(c, 20000);
  tag_block(p, 19968, 0xC0FFEEu);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    p = (unsigned char *)mm_realloc(p, 19968);
    p = (unsigned char *)mm_realloc(p, 20000);
  }
  bench_end(c);
  c->ops = 2 * n;
  if (!tag_ok(p, 19968, 0xC0FFEEu))
    bench_fail("ReallocMem lost the contents");
  mm_free(p);
  live_sub(c, 20000);
}

/* Large control: a 1 MB block resized to 1 MB - 64 and back (in place). */
void wl_realloc_large(bench_ctx *c) {
  uint64_t n = bench_count(c, 5e4);
  bench_ready(c);
  unsigned char *p = (unsigned char *)mm_get(MB);
  live_add(c, MB);
  touch_pages(p, MB);
  tag_block(p, MB - 64, 0xBEEFu);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    p = (unsigned char *)mm_realloc(p, MB - 64);
    p = (unsigned char *)mm_realloc(p, MB);
  }
  bench_end(c);
  c->ops = 2 * n;
  if (!tag_ok(p, MB - 64, 0xBEEFu))
    bench_fail("ReallocMem lost the contents");
  mm_free(p);
  live_sub(c, MB);
}

/* A 1 MB block allocated and freed, a tag written at each end and read back (the pages in
 * between are not written: this measures the manager, not the page faults of fresh memory).
 * One operation = GetMem + FreeMem. Issue 14 compared this with rpmalloc under Wine. */
void wl_large_alloc_free(bench_ctx *c) {
  uint64_t n = bench_count(c, 2e4);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    unsigned char *p = (unsigned char *)mm_get(MB);
    tag_block(p, MB, (uint32_t)i);
    if (!tag_ok(p, MB, (uint32_t)i))
      bench_fail("a large block lost its tags");
    mm_free(p);
  }
  bench_end(c);
  c->ops = n;
  c->peak_live = MB;
}

/* ==== Small blocks ============================================================================ */

/* Batches of 256 blocks of 8-256 bytes, freed in reverse order. One operation = one GetMem and
 * its FreeMem. */
void wl_small_churn_lifo(bench_ctx *c) {
  enum { BATCH = 256 };
  uint64_t batches = bench_count(c, 1e6 / BATCH);
  uint32_t *sizes = size_table(SIZES, 11, pick_small_8_256);
  slot *s = (slot *)bench_os_alloc(BATCH * sizeof *s);
  size_t k = 0;
  bench_ready(c);
  bench_begin(c);
  for (uint64_t b = 0; b < batches; b++) {
    for (size_t j = 0; j < BATCH; j++, k++)
      fill_slot(c, &s[j], sizes[k & (SIZES - 1)], (uint32_t)k);
    for (size_t j = BATCH; j-- > 0;)
      free_slot(c, &s[j]);
  }
  bench_end(c);
  c->ops = batches * BATCH;
}

/* 4096 live blocks of 8-256 bytes; each operation frees a random one and allocates a new one
 * in its place, so frees come in random order. */
void churn_random(bench_ctx *c, uint64_t n, uint64_t seed, uint32_t *sizes, slot *pool,
                  int own_region) {
  enum { POOL = 4096 };
  rng_state r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < POOL; i++)
    fill_slot(c, &pool[i], sizes[i & (SIZES - 1)], (uint32_t)i);
  if (own_region)
    bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    slot *s = &pool[rng_next(&r) & (POOL - 1)];
    free_slot(c, s);
    fill_slot(c, s, sizes[i & (SIZES - 1)], (uint32_t)i);
  }
  if (own_region)
    bench_end(c);
  free_all(c, pool, POOL);
}

void wl_small_churn_random(bench_ctx *c) {
  uint64_t n = bench_count(c, 6e5);
  uint32_t *sizes = size_table(SIZES, 12, pick_small_8_256);
  slot *pool = (slot *)bench_os_alloc(4096 * sizeof *pool);
  bench_ready(c);
  churn_random(c, n, 12, sizes, pool, 1);
  c->ops = n;
}

/* Objects as a Delphi program makes them: 16-128 bytes, zeroed on creation (InitInstance) and
 * given a class pointer; 60% die within the next 8 creations, 35% live in a set of 8192 that
 * is replaced at random, 5% are long-lived (a set of 65536, replaced at random once full).
 * One operation = one object created (and, in steady state, one freed). */
void wl_object_churn(bench_ctx *c) {
  enum { TEMP = 8, MID = 8192, LONG = 65536 };
  uint64_t n = bench_count(c, 5e5);
  uint32_t *sizes = size_table(SIZES, 13, pick_object);
  slot *temp = (slot *)bench_os_alloc(TEMP * sizeof *temp);
  slot *mid = (slot *)bench_os_alloc(MID * sizeof *mid);
  slot *lng = (slot *)bench_os_alloc(LONG * sizeof *lng);
  size_t long_count = 0;
  rng_state r;
  rng_seed(&r, 13);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = rng_next(&r);
    unsigned life = (unsigned)((x >> 40) % 100u);
    slot *s;
    if (life < 60)
      s = &temp[i & (TEMP - 1)];
    else if (life < 95)
      s = &mid[x & (MID - 1)];
    else if (long_count < LONG)
      s = &lng[long_count++];
    else
      s = &lng[x & (LONG - 1)];
    if (s->p != NULL)
      free_slot(c, s);
    size_t size = sizes[i & (SIZES - 1)];
    s->p = mm_get(size);
    memset(s->p, 0, size);
    s->size = (uint32_t)size;
    s->tag = (uint32_t)i | 1u;
    tag_block(s->p, size, s->tag);
    live_add(c, size);
  }
  bench_end(c);
  c->ops = n;
  free_all(c, temp, TEMP);
  free_all(c, mid, MID);
  free_all(c, lng, LONG);
}

/* ==== Strings and arrays ====================================================================== */

/* One Delphi string grown by appends: each append makes a temporary string of 1-32 characters
 * (as IntToStr or Copy would), ReallocMems the main string to its new exact length (a 16-byte
 * header, the characters, a terminating 0), copies the piece in and frees the temporary. At
 * `max_len` characters the string is checked and freed, and a new one starts. One operation =
 * one append. Used by string_append (1 MB) and, per thread, by fc_string_threads (64 KB). */
void string_builder(bench_ctx *c, uint64_t n, size_t max_len, const uint32_t *chunks) {
  unsigned char *s = NULL;
  size_t len = 0;
  for (uint64_t i = 0; i < n; i++) {
    size_t chunk = chunks[i & (SIZES - 1)];
    unsigned char *piece = (unsigned char *)mm_get(16 + chunk + 1);
    live_add(c, 16 + chunk + 1);
    memset(piece + 16, 'a' + (int)(i % 26u), chunk);
    piece[16 + chunk] = 0;
    size_t old = len ? 16 + len + 1 : 0;
    size_t want = 16 + len + chunk + 1;
    s = s == NULL ? (unsigned char *)mm_get(want) : (unsigned char *)mm_realloc(s, want);
    live_add(c, want);
    live_sub(c, old);
    if (len == 0)
      memcpy(s, "STR", 4);
    memcpy(s + 16 + len, piece + 16, chunk);
    len += chunk;
    s[16 + len] = 0;
    mm_free(piece);
    live_sub(c, 16 + chunk + 1);
    if (len >= max_len) {
      if (memcmp(s, "STR", 4) != 0 || s[16 + len] != 0)
        bench_fail("a string lost its contents");
      c->check += s[16] + s[16 + len - 1];
      mm_free(s);
      live_sub(c, 16 + len + 1);
      s = NULL;
      len = 0;
    }
  }
  if (s != NULL) {
    mm_free(s);
    live_sub(c, 16 + len + 1);
  }
}

void wl_string_append(bench_ctx *c) {
  uint64_t n = bench_count(c, 3e5);
  uint32_t *chunks = size_table(SIZES, 21, pick_chunk_1_32);
  bench_ready(c);
  bench_begin(c);
  string_builder(c, n, MB, chunks);
  bench_end(c);
  c->ops = n;
}

/* Four dynamic arrays of 16-byte records grown by SetLength(A, Length(A) + 1) in turn (a
 * 16-byte header, then the elements), each to 65536 elements (1 MB), then freed and started
 * again. Also the Fastcode "array upsize" group. One operation = one SetLength. */
void wl_array_setlength(bench_ctx *c) {
  enum { ARRAYS = 4, MAX_LEN = 65536 };
  uint64_t n = bench_count(c, 5e5);
  unsigned char *a[ARRAYS] = {NULL, NULL, NULL, NULL};
  size_t len[ARRAYS] = {0, 0, 0, 0};
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    size_t k = i & (ARRAYS - 1);
    size_t old = len[k] ? 16 + len[k] * 16 : 0;
    size_t want = 16 + (len[k] + 1) * 16;
    a[k] = a[k] == NULL ? (unsigned char *)mm_get(want) : (unsigned char *)mm_realloc(a[k], want);
    live_add(c, want);
    live_sub(c, old);
    uint64_t v = i;
    memcpy(a[k] + 16 + len[k] * 16, &v, 8);
    memcpy(a[k] + 16 + len[k] * 16 + 8, &v, 8);
    len[k]++;
    if (len[k] == MAX_LEN) {
      uint64_t first, last;
      memcpy(&first, a[k] + 16, 8);
      memcpy(&last, a[k] + 16 + (MAX_LEN - 1) * 16, 8);
      if (last != v || first > v)
        bench_fail("an array lost its contents");
      c->check += first;
      mm_free(a[k]);
      live_sub(c, want);
      a[k] = NULL;
      len[k] = 0;
    }
  }
  bench_end(c);
  c->ops = n;
  for (size_t k = 0; k < ARRAYS; k++)
    if (a[k] != NULL) {
      mm_free(a[k]);
      live_sub(c, 16 + len[k] * 16);
    }
}

/* ==== A mixed, realistic distribution ========================================================= */

/* 80% of requests 8-256 bytes, 15% 257 B-8 KB, 4.5% 8-256 KB, 0.5% 256 KB-4 MB, log-uniform
 * within each band. */
static size_t pick_mixed(rng_state *r) {
  unsigned band = (unsigned)rng_below(r, 1000);
  if (band < 800)
    return rng_log_range(r, 8, 256);
  if (band < 950)
    return rng_log_range(r, 257, 8 * KB);
  if (band < 995)
    return rng_log_range(r, 8 * KB + 1, 256 * KB);
  return rng_log_range(r, 256 * KB + 1, 4 * MB);
}

/* 8192 live blocks of the mixed distribution (about 80 MB), every page of each written; each
 * operation frees a random block and allocates another. One operation = one allocation (the
 * first 8192 fill the set). */
void wl_mixed(bench_ctx *c) {
  enum { POOL = 8192 };
  uint64_t n = bench_count(c, 1e4);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  rng_state r;
  rng_seed(&r, 31);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < POOL + n; i++) {
    slot *s = i < POOL ? &pool[i] : &pool[rng_next(&r) & (POOL - 1)];
    if (s->p != NULL)
      free_slot(c, s);
    size_t size = pick_mixed(&r);
    s->p = mm_get(size);
    touch_pages(s->p, size);
    s->size = (uint32_t)size;
    s->tag = (uint32_t)i;
    tag_block(s->p, size, s->tag);
    live_add(c, size);
  }
  bench_end(c);
  c->ops = POOL + n;
  free_all(c, pool, POOL);
}

/* ==== Fastcode MM Challenge groups ============================================================ */

/* Random ReallocMem among `count` live blocks with sizes from pick_lo..pick_hi (log-uniform):
 * each operation picks a block and resizes it; the tag must survive. `pages`: write every page
 * of the block after each resize (large blocks). One operation = one ReallocMem. */
static void realloc_mix(bench_ctx *c, uint64_t n, size_t count, size_t lo, size_t hi, uint64_t seed,
                        int pages) {
  slot *pool = (slot *)bench_os_alloc(count * sizeof *pool);
  rng_state r;
  rng_seed(&r, seed);
  bench_ready(c);
  for (size_t i = 0; i < count; i++) {
    size_t size = rng_log_range(&r, lo, hi);
    fill_slot(c, &pool[i], size, (uint32_t)i);
    if (pages) {
      touch_pages(pool[i].p, size);
      tag_block(pool[i].p, size, (uint32_t)i);
    }
  }
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    slot *s = &pool[rng_below(&r, count)];
    size_t size = rng_log_range(&r, lo, hi);
    size_t keep = size < s->size ? size : s->size;
    s->p = mm_realloc(s->p, size);
    if (!tag_ok(s->p, keep, s->tag))
      bench_fail("ReallocMem lost the contents");
    live_add(c, size);
    live_sub(c, s->size);
    s->size = (uint32_t)size;
    if (pages)
      touch_pages(s->p, size);
    s->tag = (uint32_t)i;
    tag_block(s->p, size, s->tag);
  }
  bench_end(c);
  c->ops = n;
  free_all(c, pool, count);
}

void wl_fc_realloc_small(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 7.5e5), 1024, 1, 2000, 51, 0);
}

void wl_fc_realloc_medium(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 1e4), 256, 2600, 256 * KB, 52, 1);
}

void wl_fc_realloc_large(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 150), 16, 256 * KB, 4 * MB, 53, 1);
}

/* Block downsize: a 256 KB block (every page written) shrunk by 1/8 at a time down to 8 bytes,
 * checked, freed, and again. One operation = one ReallocMem. */
void wl_fc_downsize(bench_ctx *c) {
  uint64_t target = bench_count(c, 5e4);
  uint64_t ops = 0;
  uint32_t tag = 1;
  bench_ready(c);
  bench_begin(c);
  while (ops < target) {
    size_t size = 256 * KB;
    void *p = mm_get(size);
    live_add(c, size);
    touch_pages(p, size);
    tag_block(p, 8, tag);
    while (size > 8) {
      size_t next = size - size / 8u;
      if (next < 8)
        next = 8;
      p = mm_realloc(p, next);
      live_sub(c, size - next);
      size = next;
      ops++;
    }
    if (!tag_ok(p, 8, tag))
      bench_fail("ReallocMem lost the contents");
    mm_free(p);
    live_sub(c, size);
    tag++;
  }
  bench_end(c);
  c->ops = ops;
}

/* Small upsize: 256 small blocks, each grown by 1-8 bytes at a time (the new bytes written) in
 * random order; one that passes 2000 bytes is freed and restarts at 1-16 bytes. One operation
 * = one ReallocMem (or restart). */
void wl_fc_small_upsize(bench_ctx *c) {
  enum { POOL = 256 };
  uint64_t n = bench_count(c, 7.5e5);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  rng_state r;
  rng_seed(&r, 55);
  bench_ready(c);
  for (size_t i = 0; i < POOL; i++) {
    size_t size = rng_range(&r, 1, 16);
    pool[i].p = mm_get(size);
    memset(pool[i].p, (int)i, size);
    pool[i].size = (uint32_t)size;
    pool[i].tag = (uint32_t)i & 0xFFu;
    live_add(c, size);
  }
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x = rng_next(&r);
    slot *s = &pool[x & (POOL - 1)];
    unsigned char *p = (unsigned char *)s->p;
    if (p[0] != (unsigned char)s->tag || p[s->size - 1] != (unsigned char)s->tag)
      bench_fail("ReallocMem lost the contents");
    if (s->size > 2000) {
      mm_free(p);
      live_sub(c, s->size);
      size_t size = 1 + ((x >> 8) & 15u);
      p = (unsigned char *)mm_get(size);
      memset(p, (int)s->tag, size);
      s->size = (uint32_t)size;
      live_add(c, size);
    } else {
      size_t grow = 1 + ((x >> 8) & 7u);
      p = (unsigned char *)mm_realloc(p, s->size + grow);
      memset(p + s->size, (int)s->tag, grow);
      s->size += (uint32_t)grow;
      live_add(c, grow);
    }
    s->p = p;
  }
  bench_end(c);
  c->ops = n;
  for (size_t i = 0; i < POOL; i++) {
    mm_free(pool[i].p);
    live_sub(c, pool[i].size);
  }
}

/* Address-space creep: buffers that grow slowly from 4 KB to 2 MB (every page written), 8 alive
 * at a time (the oldest freed), with a small long-lived block (8-64 bytes, the last 16384 kept)
 * allocated after each one to pin the gaps. A manager that cannot reuse freed ranges for the
 * next, slightly larger buffer creeps. One operation = one buffer and one small block. */
void wl_fc_addr_creep(bench_ctx *c) {
  enum { BUFS = 8, PINS = 16384 };
  uint64_t n = bench_count(c, 200);
  slot *bufs = (slot *)bench_os_alloc(BUFS * sizeof *bufs);
  slot *pins = (slot *)bench_os_alloc(PINS * sizeof *pins);
  rng_state r;
  rng_seed(&r, 61);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    slot *b = &bufs[i % BUFS];
    if (b->p != NULL)
      free_slot(c, b);
    size_t size = 4 * KB + (size_t)((double)(2 * MB - 4 * KB) * (double)i / (double)n);
    b->p = mm_get(size);
    touch_pages(b->p, size);
    b->size = (uint32_t)size;
    b->tag = (uint32_t)i;
    tag_block(b->p, size, b->tag);
    live_add(c, size);
    for (int k = 0; k < 16; k++) {
      slot *pin = &pins[(i * 16 + (uint64_t)k) % PINS];
      if (pin->p != NULL)
        free_slot(c, pin);
      fill_slot(c, pin, rng_range(&r, 8, 64), (uint32_t)i);
    }
  }
  bench_end(c);
  c->ops = n;
  free_all(c, bufs, BUFS);
  free_all(c, pins, PINS);
}

/* Fragmentation: rounds that fill the heap to 16 MB live with one size range (16-128 bytes,
 * 256 B-2 KB, or 2-32 KB in turn), every page written, then free a random 80% of all live
 * blocks. The next range must reuse the holes the previous one left. One operation = one
 * allocation or one free. */
void wl_fc_fragmentation(bench_ctx *c) {
  enum { SLOTS = 1 << 19 };
  static const size_t lo[3] = {16, 256, 2 * KB}, hi[3] = {128, 2 * KB, 32 * KB};
  uint64_t rounds = bench_count(c, 3);
  slot *pool = (slot *)bench_os_alloc(SLOTS * sizeof *pool);
  uint32_t *free_slots = (uint32_t *)bench_os_alloc(SLOTS * sizeof *free_slots);
  size_t nfree = SLOTS;
  uint64_t ops = 0;
  rng_state r;
  rng_seed(&r, 71);
  for (size_t i = 0; i < SLOTS; i++)
    free_slots[i] = (uint32_t)(SLOTS - 1 - i);
  bench_ready(c);
  bench_begin(c);
  for (uint64_t round = 0; round < rounds; round++) {
    size_t band = (size_t)(round % 3u);
    while (c->live < 16 * MB && nfree > 0) {
      slot *s = &pool[free_slots[--nfree]];
      size_t size = rng_log_range(&r, lo[band], hi[band]);
      s->p = mm_get(size);
      if (size > 4096)
        touch_pages(s->p, size);
      s->size = (uint32_t)size;
      s->tag = (uint32_t)ops;
      tag_block(s->p, size, s->tag);
      live_add(c, size);
      ops++;
    }
    for (size_t i = 0; i < SLOTS; i++) {
      if (pool[i].p != NULL && rng_below(&r, 10) < 8) {
        free_slot(c, &pool[i]);
        free_slots[nfree++] = (uint32_t)i;
        ops++;
      }
    }
  }
  bench_end(c);
  c->ops = ops;
  free_all(c, pool, SLOTS);
}

/* Replacement churn: `pool` live blocks (a power of two) of sizes from `pick`, every page written,
 * a random one freed and replaced by a new one `n` times. One operation = one replacement. */
static void replacement_churn(bench_ctx *c, size_t pool_size, uint64_t n, uint64_t seed,
                              size_t (*pick)(rng_state *r)) {
  slot *pool = (slot *)bench_os_alloc(pool_size * sizeof *pool);
  rng_state r;
  rng_seed(&r, seed);
  bench_ready(c);
  for (size_t i = 0; i < pool_size; i++)
    fill_written(c, &pool[i], pick(&r), (uint32_t)i);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    slot *s = &pool[rng_next(&r) & (pool_size - 1)];
    free_slot(c, s);
    fill_written(c, s, pick(&r), (uint32_t)i);
  }
  bench_end(c);
  c->ops = n;
  free_all(c, pool, pool_size);
}

static size_t pick_8b_256kb_log(rng_state *r) {
  return rng_log_range(r, 8, 256 * KB);
}

/* Block-size spread: 2048 live blocks with sizes log-uniform over 8 B-256 KB (every small and
 * medium class), every page written, replaced at random. One operation = one replacement. */
void wl_fc_size_spread(bench_ctx *c) {
  replacement_churn(c, 2048, bench_count(c, 5e4), 81, pick_8b_256kb_log);
}

static size_t pick_1kb_64kb(rng_state *r) {
  return rng_range(r, 1 * KB, 64 * KB);
}

/* Medium churn: 512 live blocks of 1-64 KB (uniform), every page written, a random one replaced:
 * the size range where FastMM's medium blocks (and the other managers' large size classes or
 * page runs) serve most requests. One operation = one replacement. */
void wl_medium_churn(bench_ctx *c) {
  replacement_churn(c, 512, bench_count(c, 5e4), 83, pick_1kb_64kb);
}

/* Speed of access to the memory handed out: after 100000 random replacements among 16384 blocks
 * of 8-256 bytes (a used heap), 65536 list nodes of 16-64 bytes are allocated (with a
 * replacement between each two, as a program does other work meanwhile), linked in allocation
 * order; the timed part walks the list 20 times. A manager that hands consecutive requests out
 * close together makes the walk faster. One operation = one node visited. */
typedef struct node {
  struct node *next;
  uint32_t value;
  uint32_t pad;
} node;

void wl_fc_access_speed(bench_ctx *c) {
  enum { POOL = 16384, NODES = 65536 };
  uint64_t walks = bench_count(c, 20);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  node **nodes = (node **)bench_os_alloc(NODES * sizeof *nodes);
  uint32_t *node_sizes = (uint32_t *)bench_os_alloc(NODES * sizeof *node_sizes);
  rng_state r;
  rng_seed(&r, 111);
  bench_ready(c);
  for (size_t i = 0; i < POOL; i++)
    fill_slot(c, &pool[i], rng_range(&r, 8, 256), (uint32_t)i);
  for (size_t i = 0; i < 100000; i++) {
    slot *s = &pool[rng_next(&r) & (POOL - 1)];
    free_slot(c, s);
    fill_slot(c, s, rng_range(&r, 8, 256), (uint32_t)i);
  }
  node *head = NULL, *tail = NULL;
  for (size_t i = 0; i < NODES; i++) {
    size_t size = rng_range(&r, 16, 64);
    node *nd = (node *)mm_get(size);
    nd->next = NULL;
    nd->value = (uint32_t)i;
    nodes[i] = nd;
    node_sizes[i] = (uint32_t)size;
    live_add(c, size);
    if (tail != NULL)
      tail->next = nd;
    else
      head = nd;
    tail = nd;
    slot *s = &pool[rng_next(&r) & (POOL - 1)];
    free_slot(c, s);
    fill_slot(c, s, rng_range(&r, 8, 256), (uint32_t)i);
  }
  uint64_t sum = 0;
  bench_begin(c);
  for (uint64_t w = 0; w < walks; w++)
    for (node *nd = head; nd != NULL; nd = nd->next)
      sum += nd->value;
  bench_end(c);
  c->ops = walks * NODES;
  if (sum != walks * ((uint64_t)NODES * (NODES - 1) / 2))
    bench_fail("the list lost its contents");
  c->check = sum;
  for (size_t i = 0; i < NODES; i++) {
    mm_free(nodes[i]);
    live_sub(c, node_sizes[i]);
  }
  free_all(c, pool, POOL);
}
