/* SPDX-License-Identifier: MIT */
/* Medium blocks (medium.c): boundary-tagged blocks in 2 MB spans, binned by size. */
#ifndef FASTMM_MEDIUM_H
#define FASTMM_MEDIUM_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "block_header.h"
#include "compiler.h"
#include "linkage.h"
#include "list.h"
#include "lock.h"
#include "page_map.h"
#include "policy.h"

#define MEDIUM_SPAN_MAGIC 0x4D454455u /* "MEDU" */
#define MEDIUM_SPAN_HEADER_SIZE 48u   /* the span header's room (medium_span) */
/* Where a span's first block's 16-byte header starts: past the span's first 64 KB region, which
 * holds its header alone (policy.h, MEDIUM_SPAN_HEAD_BYTES), so the region before any block's
 * header is the span's too, readable (page_map.h, REGION_MEDIUM_SPAN). */
#define MEDIUM_SPAN_BLOCKS_OFFSET MEDIUM_SPAN_HEAD_BYTES
FMM_STATIC_ASSERT(MEDIUM_SPAN_BLOCKS_OFFSET == (1u << PAGE_MAP_REGION_SHIFT),
                  "a span's blocks start in its second region of the page map");

typedef struct medium_header {
  uint32_t prev_size;
  uint32_t size;
  uint32_t seal; /* a live block's medium_seal (below); anything in a free block */
  uint32_t flags;
} medium_header;

typedef struct medium_span {
  uint32_t magic;
  uint32_t arena;
  list_node arena_link; /* on its arena's spans */
  size_t size;
  uint32_t spare_since; /* the idle clock's tick at which it became the spare (idle_clock.h) */
} medium_span;
FMM_STATIC_ASSERT(sizeof(medium_span) <= MEDIUM_SPAN_HEADER_SIZE, "medium span header too big");

typedef struct medium_arena {
  fmm_lock lock;
  uint32_t index;
  uint32_t group_bitmap;
  uint32_t bin_bitmap[MEDIUM_BIN_GROUPS];
  /* Free blocks, linked through a list_node at their first byte (the user pointer). */
  list_node bins[MEDIUM_BIN_COUNT];
  list_node spans;
  size_t span_count;
  size_t span_bytes;    /* the sizes of its spans (the strategy sets the size of new ones) */
  size_t blocks_in_use; /* medium blocks handed to users (small spans not counted) */
  size_t bytes_in_use;  /* their usable bytes */
  size_t small_spans;   /* medium blocks holding small spans */
  size_t small_span_bytes;
} FMM_ALIGNED(64) medium_arena;

extern medium_arena medium_arenas[ARENA_COUNT];

static inline medium_header *medium_header_of(const void *p) {
  return (medium_header *)((char *)p - MEDIUM_HEADER_SIZE);
}
static inline size_t medium_usable(const void *p) {
  return medium_header_of(p)->size - MEDIUM_HEADER_SIZE;
}
static inline unsigned medium_arena_of(uint32_t h) {
  return (h >> MEDIUM_ARENA_SHIFT) & MEDIUM_ARENA_MASK;
}
/* The alignment a block's header word h keeps for ReallocMem (0: none), and the bits that say it
 * (`alignment` 0 or a power of two up to ALIGNED_MAX). */
static inline uint32_t medium_keep_alignment(uint32_t h) {
  uint32_t shift = (h >> MEDIUM_KEEP_SHIFT) & MEDIUM_KEEP_MASK;
  return shift != 0 ? (uint32_t)1u << shift : 0u;
}
/* A loop, not bits_lowest_set: the same result, and the code layout the Win32 workloads were
 * measured with (the bit scan made an aligned allocation path one 64-byte line shorter, moved
 * every medium function after it, and a two-thread workload under Wine moved with them; the
 * figures are in docs/experiments). */
static inline uint32_t medium_keep_bits(uint32_t alignment) {
  uint32_t shift = 0;
  while (alignment > 1u) {
    alignment >>= 1;
    shift++;
  }
  return shift << MEDIUM_KEEP_SHIFT;
}
FMM_STATIC_ASSERT(ALIGNED_MAX < (1u << MEDIUM_KEEP_MASK),
                  "the kept alignment's log2 fits its bits");

/* The seal of a live medium block at p of `size` bytes: its address (a multiply spreads blocks
 * that lie close together) and size under the process's key (medium_block_key, drawn when the
 * heap starts). Every path that makes a block live or changes a live block's size writes it; a
 * block that stops being live is flagged FREE, and a header merged into a free neighbour keeps
 * that flag. So a header word that reads live with the seal of its own address and size is a live
 * block's, found in the block's own cache line: data a program wrote in its own block does not
 * carry the seal of that place unless it copied the manager's key or derived it from one of its
 * own blocks' headers (the forgery the validation contract leaves out,
 * docs/architecture-reference.md), and a real header copied elsewhere names another address. */
extern FMM_HIDDEN uint32_t medium_block_key;
/* 2^32 divided by the golden ratio: an odd multiplier, so the product is one-to-one on 32-bit
 * words, and the products of neighbouring blocks differ in their high bits as well. It multiplies
 * the address itself (one instruction): two blocks' addresses share a seal's address part only
 * 4 GB apart, and the low four bits, zero in every 16-aligned address, are the key's and the
 * size's alone. */
#define MEDIUM_SEAL_MULTIPLIER 0x9E3779B1u
static inline uint32_t medium_seal(const void *p, uint32_t size) {
  return ((uint32_t)(uintptr_t)p * MEDIUM_SEAL_MULTIPLIER ^ medium_block_key) ^ size;
}
/* Is p (16-aligned, its header word h in a medium-span region) a live medium block handed to a
 * user? Its header word must be exactly MEDIUM plus an arena and a kept alignment (no other
 * flag: not free, not a small span, not the sentinel), and its seal that of p and its size. All
 * of it lies in p's 16-byte header, one cache line: ReallocMem's in-place medium case and the
 * usable size run it every time. */
FMM_STATIC_ASSERT((ARENA_COUNT & (ARENA_COUNT - 1)) == 0 && ARENA_COUNT - 1 <= MEDIUM_ARENA_MASK,
                  "one mask takes the arena out of a medium header word");
/* The header word alone: exactly MEDIUM plus an arena and a kept alignment (the bits that may
 * vary in a live block's word). */
#define MEDIUM_HEADER_VARIABLE_BITS                                                                \
  (((ARENA_COUNT - 1u) << MEDIUM_ARENA_SHIFT) | (MEDIUM_KEEP_MASK << MEDIUM_KEEP_SHIFT))
static inline int medium_header_word_live(uint32_t h) {
  return (h & ~(uint32_t)MEDIUM_HEADER_VARIABLE_BITS) == BLOCK_FLAG_MEDIUM;
}
static inline int medium_block_sealed(const void *p, uint32_t h) {
  const medium_header *mh = medium_header_of(p);
  return medium_header_word_live(h) && mh->seal == medium_seal(p, mh->size);
}
/* medium_block_sealed, and the boundary tags agree with it: the sizes are multiples of 16 within
 * a span, the block's end lies in a medium span too, and the next block's header names this block
 * as its predecessor. FreeMem asks this much, since it merges the block with its neighbours by
 * those tags: a block whose neighbour's tag a program overwrote is refused, not merged. */
static inline int medium_block_plausible(const void *p, uint32_t h) {
  if (!medium_block_sealed(p, h))
    return 0;
  const medium_header *mh = medium_header_of(p);
  uint32_t size = mh->size, prev = mh->prev_size;
  if (((size | prev) & 15u) != 0 ||
      size - MEDIUM_MIN_BLOCK_SIZE > MEDIUM_SPAN_MAX_SIZE - MEDIUM_MIN_BLOCK_SIZE ||
      prev > MEDIUM_SPAN_MAX_SIZE)
    return 0;
  /* The end is read only if it lies in a medium span: within p's 64 KB region, it does. */
  const char *end = (const char *)p + size - BLOCK_HEADER_SIZE;
  if (!page_map_same_region((uintptr_t)end, (uintptr_t)p - BLOCK_HEADER_SIZE) &&
      !region_is_medium(page_map_get(end)))
    return 0;
  return medium_header_of((const char *)p + size)->prev_size == size;
}

void medium_init(void);
/* A block with at least `user_size` usable bytes, or NULL: from the first arena whose lock is
 * free, starting at `first_arena` (whose lock it waits for when every one is taken). */
void *medium_alloc(size_t user_size, unsigned first_arena);
/* A block whose user pointer is a multiple of `alignment` (a power of two, 16 .. ALIGNED_MAX),
 * from the first arena whose lock is free as medium_alloc; `keep` goes to its keep_alignment. */
void *medium_alloc_aligned(size_t user_size, size_t alignment, unsigned first_arena, uint32_t keep);
/* A block to hold a small span, from `arena` (waiting for its lock), or NULL: `user_size` is a
 * multiple of 16 KB less the medium header, and the block's header lies at a multiple of 16 KB, so
 * that it covers its 16 KB granules alone (span_record.h). */
void *medium_alloc_small_span(size_t user_size, unsigned arena);
int medium_free(void *p); /* p validated by the caller; FASTMM_OK, or invalid if already free */
/* Sets or clears a flag of a live block's header word under its arena's lock (a neighbour's free
 * reads the word under that lock). */
void medium_set_flag(void *p, uint32_t flag, int on);
/* In-place resizes; return 1 when done. A shrink is done only when what it cuts off makes a free
 * block of at least MEDIUM_MIN_BLOCK_SIZE, on its own or merged into a free next neighbour; else
 * it returns 0 and the block is as it was. */
int medium_grow_in_place(void *p, size_t min_user, size_t want_user);
int medium_shrink_in_place(void *p, size_t new_user);
/* The spare spans that became spare at or before `up_to_tick` go back to the OS (release.h);
 * returns the bytes given back. medium_spare_bytes: the spares' bytes (while a span goes in or
 * comes out, possibly counting it already or still: release.c only weighs it). */
size_t medium_release_spare(uint32_t up_to_tick);
/* Ends the allowance of spares a churning heap has (policy.h, MEDIUM_SPARE_CHURN_MS): a program
 * that asks for its memory back, or a shortage, says the churn is over. */
void medium_end_churn(void);
/* The churn window in ms (MEDIUM_SPARE_CHURN_MS until changed); returns the one before. Only the
 * tests change it (fastmm_test_set_churn_window), so that what they assert does not depend on
 * how fast the machine runs them. */
uint32_t medium_set_churn_window(uint32_t ms);
extern FMM_HIDDEN size_t medium_spare_total;
/* Inline: a medium or large block's FreeMem asks on every call (release_poll, release.h). */
static inline size_t medium_spare_bytes(void) {
  return fmm_load_size_relaxed(&medium_spare_total);
}
/* The size of spans mapped from now on (a multiple of 64 KB, at most MEDIUM_SPAN_MAX_SIZE). */
void medium_set_span_size(uint32_t bytes);

#endif
