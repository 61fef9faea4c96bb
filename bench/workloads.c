/* The workloads of fastmm_bench. Each one:
 *   - sets up its own tables with bench_os_alloc (not through the allocator under test), then
 *     calls bench_ready (the base memory is taken there);
 *   - runs its timed region between bench_begin and bench_end and sets c->ops;
 *   - keeps c->live / c->peak_live to the bytes it asked for (live_add / live_sub);
 *   - reads back what it wrote (tags) and fails the run when something was lost;
 *   - draws every size and choice from a fixed-seed generator, so every allocator gets the same
 *     requests in the same order.
 * Operation counts are for about 10-30 ms of fastmm-c work natively at --scale 1.
 * README.md describes each workload and which Fastcode MM Challenge group it stands for. */
#include "bench.h"

#define MB ((size_t)1024u * 1024u)
#define KB ((size_t)1024u)

typedef struct slot {
  void *p;
  uint32_t size;
  uint32_t tag;
} slot;

/* A table of `count` (a power of two) sizes drawn by `pick`. */
typedef size_t (*size_picker)(rng *r);
static uint32_t *size_table(size_t count, uint64_t seed, size_picker pick) {
  uint32_t *t = (uint32_t *)bench_os_alloc(count * sizeof *t);
  rng r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < count; i++)
    t[i] = (uint32_t)pick(&r);
  return t;
}

static size_t pick_small_8_256(rng *r) {
  return rng_range(r, 8, 256);
}

static size_t pick_chunk_1_32(rng *r) {
  return rng_range(r, 1, 32);
}

static size_t pick_8_512(rng *r) {
  return rng_range(r, 8, 512);
}

/* Delphi objects: instance sizes of typical classes (TObject descendants with a few fields),
 * weighted toward the small ones. */
static size_t pick_object(rng *r) {
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

static void free_slot(bench_ctx *c, slot *s) {
  if (!tag_ok(s->p, s->size, s->tag))
    bench_fail("a block lost its contents");
  c->check += ((const unsigned char *)s->p)[s->size - 1];
  mm_free(s->p);
  live_sub(c, s->size);
  s->p = NULL;
}

static void fill_slot(bench_ctx *c, slot *s, size_t size, uint32_t tag) {
  s->p = mm_get(size);
  s->size = (uint32_t)size;
  s->tag = tag;
  tag_block(s->p, size, tag);
  live_add(c, size);
}

/* fill_slot, with every page of the block written. */
static void fill_written(bench_ctx *c, slot *s, size_t size, uint32_t tag) {
  s->p = mm_get(size);
  touch_pages(s->p, size);
  s->size = (uint32_t)size;
  s->tag = tag;
  tag_block(s->p, size, tag);
  live_add(c, size);
}

static void free_all(bench_ctx *c, slot *slots, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (slots[i].p != NULL)
      free_slot(c, &slots[i]);
}

/* ==== The seed's five ReallocMem cases ======================================================= */

/* A 64-byte block resized to 63 bytes and back: stays in place in every manager here. */
static void wl_realloc_inplace(bench_ctx *c) {
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
static void wl_realloc_upsize(bench_ctx *c) {
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
static void wl_realloc_downsize(bench_ctx *c) {
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
static void wl_realloc_medium(bench_ctx *c) {
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
static void wl_realloc_large(bench_ctx *c) {
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

/* ==== Small blocks ============================================================================ */

#define SIZES 4096u /* entries of a size table (a power of two) */

/* Batches of 256 blocks of 8-256 bytes, freed in reverse order. One operation = one GetMem and
 * its FreeMem. */
static void wl_small_churn_lifo(bench_ctx *c) {
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
static void churn_random(bench_ctx *c, uint64_t n, uint64_t seed, uint32_t *sizes, slot *pool,
                         int own_region) {
  enum { POOL = 4096 };
  rng r;
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

static void wl_small_churn_random(bench_ctx *c) {
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
static void wl_object_churn(bench_ctx *c) {
  enum { TEMP = 8, MID = 8192, LONG = 65536 };
  uint64_t n = bench_count(c, 5e5);
  uint32_t *sizes = size_table(SIZES, 13, pick_object);
  slot *temp = (slot *)bench_os_alloc(TEMP * sizeof *temp);
  slot *mid = (slot *)bench_os_alloc(MID * sizeof *mid);
  slot *lng = (slot *)bench_os_alloc(LONG * sizeof *lng);
  size_t long_count = 0;
  rng r;
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
static void string_builder(bench_ctx *c, uint64_t n, size_t max_len, const uint32_t *chunks) {
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

static void wl_string_append(bench_ctx *c) {
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
static void wl_array_setlength(bench_ctx *c) {
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
static size_t pick_mixed(rng *r) {
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
static void wl_mixed(bench_ctx *c) {
  enum { POOL = 8192 };
  uint64_t n = bench_count(c, 1e4);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  rng r;
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

/* ==== Two threads ============================================================================= */

typedef struct thread_job {
  bench_ctx stats; /* live / peak_live / check of this thread */
  uint64_t n, seed;
  uint32_t *sizes;
  slot *pool;
  struct spsc *ring;
} thread_job;

static thread_job *new_jobs(int count) {
  /* One page each: no false sharing between the threads' counters. */
  thread_job *jobs = (thread_job *)bench_os_alloc((size_t)count * 4096u);
  return jobs;
}
#define JOB(jobs, i) ((thread_job *)((char *)(jobs) + (size_t)(i)*4096u))

static void sum_jobs(bench_ctx *c, thread_job *jobs, int count) {
  for (int i = 0; i < count; i++) {
    c->peak_live += JOB(jobs, i)->stats.peak_live;
    c->check += JOB(jobs, i)->stats.check;
  }
}

/* A single-producer single-consumer ring: blocks allocated by one thread, freed by the other. */
#define RING 1024u
typedef struct spsc {
  void *items[RING];
  uint32_t sizes[RING];
  char pad0[64];
  uint64_t head; /* written by the producer */
  char pad1[64];
  uint64_t tail; /* written by the consumer */
  char pad2[64];
  uint64_t freed_bytes; /* written by the consumer */
} spsc;

static void spin_wait(unsigned *spins) {
  if (++*spins >= 64) {
    *spins = 0;
    bench_yield();
  }
}

static void producer(void *arg) {
  thread_job *j = (thread_job *)arg;
  spsc *q = j->ring;
  uint64_t tail = 0;
  uint64_t allocated = 0;
  for (uint64_t i = 0; i < j->n; i++) {
    size_t size = j->sizes[i & (SIZES - 1)];
    void *p = mm_get(size);
    tag_block(p, size, (uint32_t)i);
    allocated += size;
    unsigned spins = 0;
    while (i - tail >= RING) {
      tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
      if (i - tail >= RING)
        spin_wait(&spins);
    }
    q->items[i & (RING - 1)] = p;
    q->sizes[i & (RING - 1)] = (uint32_t)size;
    __atomic_store_n(&q->head, i + 1, __ATOMIC_RELEASE);
    size_t live = (size_t)(allocated - __atomic_load_n(&q->freed_bytes, __ATOMIC_RELAXED));
    if (live > j->stats.peak_live)
      j->stats.peak_live = live;
  }
}

static void consumer(void *arg) {
  thread_job *j = (thread_job *)arg;
  spsc *q = j->ring;
  uint64_t head = 0;
  uint64_t freed = 0;
  for (uint64_t i = 0; i < j->n; i++) {
    unsigned spins = 0;
    while (i >= head) {
      head = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
      if (i >= head)
        spin_wait(&spins);
    }
    void *p = q->items[i & (RING - 1)];
    size_t size = q->sizes[i & (RING - 1)];
    if (!tag_ok(p, size, (uint32_t)i))
      bench_fail("a block passed between threads lost its contents");
    j->stats.check += ((unsigned char *)p)[size - 1];
    mm_free(p);
    freed += size;
    __atomic_store_n(&q->freed_bytes, freed, __ATOMIC_RELAXED);
    __atomic_store_n(&q->tail, i + 1, __ATOMIC_RELEASE);
  }
}

/* Runs a(ja) and b(jb) on two threads at once. */
typedef struct fn_arg {
  void (*fn)(void *);
  void *arg;
} fn_arg;

static void fn_arg_entry(void *p) {
  fn_arg *f = (fn_arg *)p;
  f->fn(f->arg);
}

static void run_pair(void (*a)(void *), void (*b)(void *), thread_job *ja, thread_job *jb) {
  fn_arg t[2] = {{a, ja}, {b, jb}};
  void *args[2] = {&t[0], &t[1]};
  bench_run_threads(2, fn_arg_entry, args);
}

/* Producer/consumer: one thread allocates blocks of 8-512 bytes and hands them through a ring
 * of 1024 to a second thread, which checks and frees them. One operation = one block. */
static void wl_mt_prodcons(bench_ctx *c) {
  uint64_t n = bench_count(c, 1e5);
  thread_job *jobs = new_jobs(2);
  spsc *q = (spsc *)bench_os_alloc(sizeof(spsc));
  uint32_t *sizes = size_table(SIZES, 41, pick_8_512);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->ring = q;
    JOB(jobs, i)->sizes = sizes;
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(producer, consumer, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = n;
  sum_jobs(c, jobs, 2);
}

static void churn_thread(void *arg) {
  thread_job *j = (thread_job *)arg;
  churn_random(&j->stats, j->n, j->seed, j->sizes, j->pool, 0);
}

/* small_churn_random on two threads at once, each with its own 4096 blocks. One operation =
 * one replacement in either thread. */
static void wl_mt_churn(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->seed = 42 + (uint64_t)i;
    JOB(jobs, i)->sizes = size_table(SIZES, 42 + (uint64_t)i, pick_small_8_256);
    JOB(jobs, i)->pool = (slot *)bench_os_alloc(4096 * sizeof(slot));
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(churn_thread, churn_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* ==== Fastcode MM Challenge groups ============================================================ */

/* Random ReallocMem among `count` live blocks with sizes from pick_lo..pick_hi (log-uniform):
 * each operation picks a block and resizes it; the tag must survive. `pages`: write every page
 * of the block after each resize (large blocks). One operation = one ReallocMem. */
static void realloc_mix(bench_ctx *c, uint64_t n, size_t count, size_t lo, size_t hi, uint64_t seed,
                        int pages) {
  slot *pool = (slot *)bench_os_alloc(count * sizeof *pool);
  rng r;
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

static void wl_fc_realloc_small(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 7.5e5), 1024, 1, 2000, 51, 0);
}

static void wl_fc_realloc_medium(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 1e4), 256, 2600, 256 * KB, 52, 1);
}

static void wl_fc_realloc_large(bench_ctx *c) {
  realloc_mix(c, bench_count(c, 150), 16, 256 * KB, 4 * MB, 53, 1);
}

/* Block downsize: a 256 KB block (every page written) shrunk by 1/8 at a time down to 8 bytes,
 * checked, freed, and again. One operation = one ReallocMem. */
static void wl_fc_downsize(bench_ctx *c) {
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
static void wl_fc_small_upsize(bench_ctx *c) {
  enum { POOL = 256 };
  uint64_t n = bench_count(c, 7.5e5);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  rng r;
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
static void wl_fc_addr_creep(bench_ctx *c) {
  enum { BUFS = 8, PINS = 16384 };
  uint64_t n = bench_count(c, 200);
  slot *bufs = (slot *)bench_os_alloc(BUFS * sizeof *bufs);
  slot *pins = (slot *)bench_os_alloc(PINS * sizeof *pins);
  rng r;
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
static void wl_fc_fragmentation(bench_ctx *c) {
  enum { SLOTS = 1 << 19 };
  static const size_t lo[3] = {16, 256, 2 * KB}, hi[3] = {128, 2 * KB, 32 * KB};
  uint64_t rounds = bench_count(c, 3);
  slot *pool = (slot *)bench_os_alloc(SLOTS * sizeof *pool);
  uint32_t *free_slots = (uint32_t *)bench_os_alloc(SLOTS * sizeof *free_slots);
  size_t nfree = SLOTS;
  uint64_t ops = 0;
  rng r;
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

/* Block-size spread: 2048 live blocks with sizes log-uniform over 8 B-256 KB (every small and
 * medium class), every page written, replaced at random. One operation = one replacement. */
static void wl_fc_size_spread(bench_ctx *c) {
  enum { POOL = 2048 };
  uint64_t n = bench_count(c, 5e4);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  rng r;
  rng_seed(&r, 81);
  bench_ready(c);
  for (size_t i = 0; i < POOL; i++)
    fill_written(c, &pool[i], rng_log_range(&r, 8, 256 * KB), (uint32_t)i);
  bench_begin(c);
  for (uint64_t i = 0; i < n; i++) {
    slot *s = &pool[rng_next(&r) & (POOL - 1)];
    free_slot(c, s);
    fill_written(c, s, rng_log_range(&r, 8, 256 * KB), (uint32_t)i);
  }
  bench_end(c);
  c->ops = n;
  free_all(c, pool, POOL);
}

/* Multi-threaded allocation and reallocation: two threads, each with 512 live blocks of 8 B-4 KB;
 * each operation either replaces a random block or ReallocMems it to a new random size. */
static void alloc_realloc_thread(void *arg) {
  enum { POOL = 512 };
  thread_job *j = (thread_job *)arg;
  bench_ctx *c = &j->stats;
  slot *pool = j->pool;
  rng r;
  rng_seed(&r, j->seed);
  for (size_t i = 0; i < POOL; i++)
    fill_slot(c, &pool[i], rng_log_range(&r, 8, 4 * KB), (uint32_t)i);
  for (uint64_t i = 0; i < j->n; i++) {
    uint64_t x = rng_next(&r);
    slot *s = &pool[x & (POOL - 1)];
    size_t size = rng_log_range(&r, 8, 4 * KB);
    if (x & 0x100000u) {
      free_slot(c, s);
      fill_slot(c, s, size, (uint32_t)i);
    } else {
      size_t keep = size < s->size ? size : s->size;
      s->p = mm_realloc(s->p, size);
      if (!tag_ok(s->p, keep, s->tag))
        bench_fail("ReallocMem lost the contents");
      live_add(c, size);
      live_sub(c, s->size);
      s->size = (uint32_t)size;
      s->tag = (uint32_t)i;
      tag_block(s->p, size, s->tag);
    }
  }
  free_all(c, pool, POOL);
}

static void wl_fc_mt_alloc_realloc(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->seed = 91 + (uint64_t)i;
    JOB(jobs, i)->pool = (slot *)bench_os_alloc(512 * sizeof(slot));
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(alloc_realloc_thread, alloc_realloc_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* String threads: two threads, each building strings by appends (as string_append) up to
 * 64 KB. One operation = one append in either thread. */
static void string_thread(void *arg) {
  thread_job *j = (thread_job *)arg;
  string_builder(&j->stats, j->n, 64 * KB, j->sizes);
}

static void wl_fc_string_threads(bench_ctx *c) {
  uint64_t n = bench_count(c, 2.5e5);
  thread_job *jobs = new_jobs(2);
  for (int i = 0; i < 2; i++) {
    JOB(jobs, i)->n = n;
    JOB(jobs, i)->sizes = size_table(SIZES, 101 + (uint64_t)i, pick_chunk_1_32);
  }
  bench_ready(c);
  bench_begin(c);
  run_pair(string_thread, string_thread, JOB(jobs, 0), JOB(jobs, 1));
  bench_end(c);
  c->ops = 2 * n;
  sum_jobs(c, jobs, 2);
}

/* Short-lived threads: threads started two at a time; each allocates 100 blocks of 8-512 bytes,
 * frees half of them and leaves the other half to the main thread, which frees them after the
 * thread has ended. One operation = one thread. */
typedef struct short_job {
  uint64_t seed;
  void *left[50];
  uint32_t left_size[50];
} short_job;

static void short_thread(void *arg) {
  short_job *j = (short_job *)arg;
  void *mine[50];
  rng r;
  rng_seed(&r, j->seed);
  for (int k = 0; k < 100; k++) {
    size_t size = rng_range(&r, 8, 512);
    void *p = mm_get(size);
    tag_block(p, size, (uint32_t)k);
    if (k & 1) {
      j->left[k / 2] = p;
      j->left_size[k / 2] = (uint32_t)size;
    } else {
      mine[k / 2] = p;
    }
  }
  for (int k = 0; k < 50; k++)
    mm_free(mine[k]);
}

static void wl_fc_short_threads(bench_ctx *c) {
  uint64_t pairs = bench_count(c, 60);
  short_job *jobs = (short_job *)bench_os_alloc(2 * sizeof(short_job));
  bench_ready(c);
  bench_begin(c);
  for (uint64_t i = 0; i < pairs; i++) {
    jobs[0].seed = 2 * i;
    jobs[1].seed = 2 * i + 1;
    void *args[2] = {&jobs[0], &jobs[1]};
    bench_run_threads(2, short_thread, args);
    for (int t = 0; t < 2; t++)
      for (int k = 0; k < 50; k++) {
        if (!tag_ok(jobs[t].left[k], jobs[t].left_size[k], (uint32_t)(2 * k + 1)))
          bench_fail("a block left by a thread lost its contents");
        mm_free(jobs[t].left[k]);
      }
  }
  bench_end(c);
  c->ops = 2 * pairs;
  c->peak_live = 2 * 100 * 512;
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

static void wl_fc_access_speed(bench_ctx *c) {
  enum { POOL = 16384, NODES = 65536 };
  uint64_t walks = bench_count(c, 20);
  slot *pool = (slot *)bench_os_alloc(POOL * sizeof *pool);
  node **nodes = (node **)bench_os_alloc(NODES * sizeof *nodes);
  uint32_t *node_sizes = (uint32_t *)bench_os_alloc(NODES * sizeof *node_sizes);
  rng r;
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

/* ==== The table =============================================================================== */

const workload bench_workloads[] = {
    {"realloc_inplace", 1, wl_realloc_inplace, "seed case: 64-byte block resized to 63 and back"},
    {"realloc_upsize", 1, wl_realloc_upsize, "seed case: forced upsize 40 -> 200 bytes (moves)"},
    {"realloc_downsize", 1, wl_realloc_downsize, "seed case: moving downsize 1000 -> 40 bytes"},
    {"realloc_medium", 1, wl_realloc_medium, "seed case: medium control, 20000 <-> 19968 bytes"},
    {"realloc_large", 1, wl_realloc_large, "seed case: large control, 1 MB <-> 1 MB - 64"},
    {"small_churn_lifo", 1, wl_small_churn_lifo, "8-256 B blocks in batches of 256, LIFO frees"},
    {"small_churn_random", 1, wl_small_churn_random, "4096 live 8-256 B blocks, random frees"},
    {"object_churn", 1, wl_object_churn, "Delphi objects 16-128 B, zeroed, mixed lifetimes"},
    {"string_append", 1, wl_string_append, "string grown by 1-32 char appends to 1 MB"},
    {"array_setlength", 1, wl_array_setlength, "4 arrays grown by SetLength(+1) to 1 MB"},
    {"mixed", 1, wl_mixed, "8 B-4 MB realistic mix, 8192 live blocks (~80 MB)"},
    {"mt_prodcons", 2, wl_mt_prodcons, "2 threads: one allocates 8-512 B, the other frees"},
    {"mt_churn", 2, wl_mt_churn, "small_churn_random on 2 threads at once"},
    {"fc_realloc_small", 1, wl_fc_realloc_small, "random ReallocMem of 1024 blocks, 1-2000 B"},
    {"fc_realloc_medium", 1, wl_fc_realloc_medium, "random ReallocMem of 256 blocks, 2.6-256 KB"},
    {"fc_realloc_large", 1, wl_fc_realloc_large, "random ReallocMem of 16 blocks, 256 KB-4 MB"},
    {"fc_downsize", 1, wl_fc_downsize, "256 KB block shrunk by 1/8 steps to 8 B"},
    {"fc_small_upsize", 1, wl_fc_small_upsize, "256 small blocks grown by 1-8 B to 2000 B"},
    {"fc_addr_creep", 1, wl_fc_addr_creep, "buffers growing 4 KB -> 2 MB, pinned gaps"},
    {"fc_fragmentation", 1, wl_fc_fragmentation, "fill 16 MB, free 80%, refill other sizes"},
    {"fc_size_spread", 1, wl_fc_size_spread, "2048 live blocks log-uniform 8 B-256 KB"},
    {"fc_mt_alloc_realloc", 2, wl_fc_mt_alloc_realloc, "2 threads: replace or ReallocMem 8 B-4 KB"},
    {"fc_string_threads", 2, wl_fc_string_threads, "2 threads building strings to 64 KB"},
    {"fc_short_threads", 2, wl_fc_short_threads, "threads of 100 allocations each, 2 at a time"},
    {"fc_access_speed", 1, wl_fc_access_speed, "walk 65536 list nodes allocated in a used heap"},
};
const size_t bench_workload_count = sizeof bench_workloads / sizeof bench_workloads[0];
