/* SPDX-License-Identifier: MIT */
/* fastmm-specific helpers shared by the tests: block kinds from the header word, the expected
 * small class of a request, the manager's state with exact statistics, and ways to find blocks
 * that share a span. Brings in test_util.h. */
#ifndef FASTMM_TEST_BLOCKS_H
#define FASTMM_TEST_BLOCKS_H

#include "test_util.h"

#include "core/block_header.h"
#include "core/policy.h"
#include "fastmm.h"

/* Prints the test's banner and sends debug-mode events to the null device: for the tests
 * that cause events on purpose and count them through the API instead of the log. */
static inline void tb_start_quiet(const char *name) {
  printf("%s (%s, %u-bit pointers)\n", name, tu_build_name(), (unsigned)(sizeof(void *) * 8));
#if defined(_WIN32)
  fastmm_set_event_log_filename("NUL");
#else
  fastmm_set_event_log_filename("/dev/null");
#endif
}

/* What tb_kind answers for a debug block (whose header word has no kind bit). */
#define TB_KIND_DEBUG 0x100u

/* The kind bits (FREE, DEBUG_OUTER and the three kinds) of a block's header word, or
 * TB_KIND_DEBUG for a debug block. */
static inline uint32_t tb_kind(const void *p) {
  uint32_t h = block_header(p);
  return block_header_is_debug(h) ? TB_KIND_DEBUG : h & BLOCK_KIND_MASK;
}

static inline const char *tb_kind_name(uint32_t kind) {
  switch (kind) {
  case BLOCK_FLAG_SMALL:
    return "small";
  case BLOCK_FLAG_MEDIUM:
    return "medium";
  case BLOCK_FLAG_LARGE:
    return "large";
  case TB_KIND_DEBUG:
    return "debug";
  default:
    return (kind & BLOCK_FLAG_FREE) ? "free" : "invalid";
  }
}

/* The class the manager must pick for a small request: the smallest whose usable size
 * (slot - 4) holds `size`. -1 when the request is not small. */
static inline int tb_small_class_for(size_t size) {
  size_t i, slot;
  for (i = 0; (slot = fastmm_small_class_slot_size(i)) != 0; i++)
    if (slot - BLOCK_HEADER_SIZE >= size)
      return (int)i;
  return -1;
}

/* Usable size of small class i. */
static inline size_t tb_small_usable(size_t class_index) {
  return fastmm_small_class_slot_size(class_index) - BLOCK_HEADER_SIZE;
}

/* The medium header fields (block_header.h): block size including the 16-byte header, and the
 * size of the block before it in its span. */
static inline uint32_t tb_medium_size(const void *p) {
  return ((const uint32_t *)p)[-3];
}
static inline uint32_t tb_medium_prev_size(const void *p) {
  return ((const uint32_t *)p)[-4];
}

/* The state with exact statistics: the calling thread's cache is flushed first (fastmm.h says
 * statistics are exact after it). */
static inline void tb_state(fastmm_state *s) {
  fastmm_flush_thread_cache();
  fastmm_get_state(s);
}

/* After every thread flushed its cache: no block and no byte in use of any kind, none cached. */
static inline void tb_check_nothing_in_use(const fastmm_state *s) {
  CHECK_EQ(s->small.blocks_in_use, 0);
  CHECK_EQ(s->small.bytes_in_use, 0);
  CHECK_EQ(s->medium.blocks_in_use, 0);
  CHECK_EQ(s->medium.bytes_in_use, 0);
  CHECK_EQ(s->large.blocks_in_use, 0);
  CHECK_EQ(s->large.bytes_in_use, 0);
  CHECK_EQ(s->thread_cached_blocks, 0);
}

/* ---- Blocks with a pattern, checked from any thread ---------------------------------------- */

/* A block a test owns, its bytes holding tu_fill_pattern(seed). */
typedef struct tb_block {
  unsigned char *p;
  size_t size;
  uint32_t seed;
} tb_block;

/* Checks every byte of the block and its usable size; `what` names the moment. */
static inline void tb_block_verify(tu_thread_checks *c, const tb_block *b, const char *what) {
  size_t bad = tu_check_pattern(b->p, b->size, b->seed);
  THREAD_CHECK(c, bad == (size_t)-1, "%s: %zu-byte block %p broken at byte %zu", what, b->size,
               (void *)b->p, bad);
  THREAD_CHECK(c, fastmm_usable_size(b->p) >= b->size, "%s: usable size %zu < %zu", what,
               fastmm_usable_size(b->p), b->size);
}

/* ReallocMem of the block to `to` bytes (0 is taken as 1: a resize, not a free), checking that
 * the bytes it keeps survive; the block then holds the pattern of `new_seed`. Returns 0 and
 * leaves the block as it was when the manager says no. */
static inline int tb_block_resize(tu_thread_checks *c, tb_block *b, size_t to, uint32_t new_seed,
                                  const char *what) {
  size_t keep, bad;
  unsigned char *q;
  if (to == 0)
    to = 1;
  keep = b->size < to ? b->size : to;
  q = (unsigned char *)fastmm_reallocmem(b->p, to);
  THREAD_CHECK(c, q != NULL, "%s: reallocmem(%p, %zu -> %zu) = NULL", what, (void *)b->p, b->size,
               to);
  if (!q)
    return 0;
  bad = tu_check_pattern(q, keep, b->seed);
  THREAD_CHECK(c, bad == (size_t)-1, "%s: reallocmem %zu -> %zu: byte %zu of %zu lost", what,
               b->size, to, bad, keep);
  b->p = q;
  b->size = to;
  b->seed = new_seed;
  tu_fill_pattern(q, to, new_seed);
  return 1;
}

/* ---- Mixed sizes by kind ------------------------------------------------------------------- */

enum { TB_SMALL, TB_MEDIUM, TB_LARGE, TB_KINDS };
#define TB_MB ((size_t)1024 * 1024)

/* A size of a kind: small from 1 byte, medium, large up to large_max. */
static inline size_t tb_size_of_kind(rng_state *r, int kind, size_t large_max) {
  switch (kind) {
  case TB_SMALL:
    return rng_range(r, 1, SMALL_MAX_USER);
  case TB_MEDIUM:
    return rng_range(r, SMALL_MAX_USER + 1, MEDIUM_MAX_USER);
  default:
    return rng_range(r, MEDIUM_MAX_USER + 1, large_max);
  }
}

/* Allocates blocks of the three kinds at random until `total` bytes: a quarter of them in small
 * blocks, half in medium, a quarter in large. Each block is handed to `write(p, size, i)` and
 * recorded in blocks[i] and sizes[i] (at most `max`). Returns how many; have[] gets the bytes of
 * each kind. Stops at the first NULL (a failed check). */
static inline size_t tb_fill_mixed(rng_state *r, size_t total, size_t large_max,
                                   unsigned char **blocks, size_t *sizes, size_t max,
                                   void (*write)(unsigned char *p, size_t size, size_t i),
                                   size_t have[TB_KINDS]) {
  const size_t target[TB_KINDS] = {total / 4, total / 2, total / 4};
  size_t n = 0, sum = 0;
  have[TB_SMALL] = have[TB_MEDIUM] = have[TB_LARGE] = 0;
  while (sum < total && n < max) {
    int kind = (int)rng_below(r, TB_KINDS);
    size_t size;
    unsigned char *p;
    if (have[kind] >= target[kind])
      continue;
    size = tb_size_of_kind(r, kind, large_max);
    p = (unsigned char *)fastmm_getmem(size);
    if (!CHECK_MSG(p != NULL, "getmem(%zu) after %zu MB", size, sum / TB_MB))
      break;
    write(p, size, n);
    blocks[n] = p;
    sizes[n++] = size;
    have[kind] += size;
    sum += size;
  }
  return n;
}

/* Shuffles blocks[] and sizes[] alike (Fisher-Yates). */
static inline void tb_shuffle(rng_state *r, unsigned char **blocks, size_t *sizes, size_t n) {
  size_t i;
  for (i = n; i > 1; i--) {
    size_t j = rng_below(r, i), t = sizes[i - 1];
    unsigned char *q = blocks[i - 1];
    blocks[i - 1] = blocks[j];
    sizes[i - 1] = sizes[j];
    blocks[j] = q;
    sizes[j] = t;
  }
}

static inline int tb_cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* Allocates medium blocks of `size` bytes until `count` of them lie back to back in memory
 * (each one's size field leads to the next), whichever way the manager carves its spans. Puts
 * them in run[] in address order, frees every other block allocated on the way and returns 1;
 * returns 0 (everything freed) when no such run turned up among TB_ADJACENT_POOL blocks. */
#define TB_ADJACENT_POOL 192
static inline int tb_adjacent_medium(size_t size, size_t count, void **run) {
  void *pool[TB_ADJACENT_POOL], *sorted[TB_ADJACENT_POOL];
  size_t n, i, j, r, found = TB_ADJACENT_POOL;
  for (n = 0; n < TB_ADJACENT_POOL && found == TB_ADJACENT_POOL; n++) {
    pool[n] = fastmm_getmem(size);
    if (!pool[n] || tb_kind(pool[n]) != BLOCK_FLAG_MEDIUM) {
      n += pool[n] != NULL;
      break;
    }
    if (n + 1 < count)
      continue;
    memcpy(sorted, pool, (n + 1) * sizeof(void *));
    qsort(sorted, n + 1, sizeof(void *), tb_cmp_ptr);
    for (i = 0; i + count <= n + 1 && found == TB_ADJACENT_POOL; i++) {
      for (r = 1; r < count; r++)
        if ((uintptr_t)sorted[i + r] !=
            (uintptr_t)sorted[i + r - 1] + tb_medium_size(sorted[i + r - 1]))
          break;
      if (r == count) {
        found = i;
        memcpy(run, sorted + i, count * sizeof(void *));
      }
    }
  }
  for (i = 0; i < n; i++) {
    int keep = 0;
    for (j = 0; j < count && found != TB_ADJACENT_POOL; j++)
      keep |= pool[i] == run[j];
    if (!keep)
      fastmm_freemem(pool[i]);
  }
  return found != TB_ADJACENT_POOL;
}

/* Allocates *p (small or medium, `size` bytes) and returns a second live block in the same span
 * (NULL when none was found), so that freeing *p cannot empty the span and give it back to the
 * OS: a test may then free *p twice, as a double free of an unmapped block would fault before
 * the manager could refuse it. Small blocks name their span in the header; medium ones are
 * chosen adjacent. */
static inline void *tb_span_mate(void **p, size_t size) {
  if (size <= SMALL_MAX_USER) {
    enum { N = 128 };
    void *q[N], *mate = NULL;
    size_t i;
    char *span;
    *p = fastmm_getmem(size);
    if (!*p)
      return NULL;
    span = (char *)*p - small_header_span_offset(block_header(*p));
    for (i = 0; i < N; i++) {
      q[i] = fastmm_getmem(size);
      if (q[i] && !mate && (char *)q[i] - small_header_span_offset(block_header(q[i])) == span) {
        mate = q[i];
        q[i] = NULL;
      }
    }
    for (i = 0; i < N; i++)
      fastmm_freemem(q[i]);
    if (!mate) {
      fastmm_freemem(*p);
      *p = NULL;
    }
    return mate;
  } else {
    void *run[2];
    if (!tb_adjacent_medium(size, 2, run))
      return NULL;
    *p = run[0];
    return run[1];
  }
}

static inline size_t tb_blocks_in_use(const fastmm_state *s) {
  return s->small.blocks_in_use + s->medium.blocks_in_use + s->large.blocks_in_use;
}

#endif
