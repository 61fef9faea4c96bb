/* SPDX-License-Identifier: MIT */
/* What every workload file shares: the slot that records one live block, tables of request
 * sizes, and filling and freeing a slot the way every workload does it (tags written at the
 * block's ends, checked before the block is freed, the live bytes kept). */
#ifndef FASTMM_BENCH_WORKLOAD_SLOTS_H
#define FASTMM_BENCH_WORKLOAD_SLOTS_H

#include "bench.h"

#define MB ((size_t)1024u * 1024u)
#define KB ((size_t)1024u)

#define SIZES 4096u /* entries of a size table (a power of two) */

typedef struct slot {
  void *p;
  uint32_t size;
  uint32_t tag;
} slot;

/* A table of `count` (a power of two) sizes drawn by `pick`. */
typedef size_t (*size_picker)(rng_state *r);
static inline uint32_t *size_table(size_t count, uint64_t seed, size_picker pick) {
  uint32_t *t = (uint32_t *)bench_os_alloc(count * sizeof *t);
  rng_state r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < count; i++)
    t[i] = (uint32_t)pick(&r);
  return t;
}

static inline size_t pick_small_8_256(rng_state *r) {
  return rng_range(r, 8, 256);
}

static inline size_t pick_chunk_1_32(rng_state *r) {
  return rng_range(r, 1, 32);
}

static inline void free_slot(bench_ctx *c, slot *s) {
  if (!tag_ok(s->p, s->size, s->tag))
    bench_fail("a block lost its contents");
  c->check += ((const unsigned char *)s->p)[s->size - 1];
  mm_free(s->p);
  live_sub(c, s->size);
  s->p = NULL;
}

static inline void fill_slot(bench_ctx *c, slot *s, size_t size, uint32_t tag) {
  s->p = mm_get(size);
  s->size = (uint32_t)size;
  s->tag = tag;
  tag_block(s->p, size, tag);
  live_add(c, size);
}

/* fill_slot, with every page of the block written. */
static inline void fill_written(bench_ctx *c, slot *s, size_t size, uint32_t tag) {
  s->p = mm_get(size);
  touch_pages(s->p, size);
  s->size = (uint32_t)size;
  s->tag = tag;
  tag_block(s->p, size, tag);
  live_add(c, size);
}

static inline void free_all(bench_ctx *c, slot *slots, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (slots[i].p != NULL)
      free_slot(c, &slots[i]);
}

#endif
