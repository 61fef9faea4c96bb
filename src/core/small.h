/* SPDX-License-Identifier: MIT */
/* Small blocks (small.c): one manager per (arena, size class) owns spans of equal slots. */
#ifndef FASTMM_SMALL_H
#define FASTMM_SMALL_H

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
#include "span_record.h"

typedef struct small_manager small_manager;

/* "The slot offset is a whole number of slots, below the span's carved end" in one multiply
 * and one compare (the divisibility test of Lemire, Kaser and Kurz, "Faster remainder by direct
 * computation", 2019, with the carved end folded into its bound). With c = floor(2^32 / slot) + 1,
 * c * slot = 2^32 + e with 1 <= e <= slot, so an offset k * slot + r multiplies to k * e + r * c
 * (mod 2^32): below K * e exactly when r == 0 and k < K, because r * c >= c exceeds every bound
 * K * e (K * slot is at most a span's bytes, below 2^17, and c is above 2^20), and nothing wraps
 * (offsets are below 2^17 and slots below 2^12: k * e + r * c < 2^17 + 2^32 - 2^32 / slot + slot).
 * The span keeps c (slot_divisor) and K * e for its K carved slots (carved_limit), 32 bits on
 * every target. tests/test_header_contract.c checks every class against every offset and carved
 * count a span can have. */
static inline uint32_t small_slot_divisor(uint32_t slot_size) {
  uint32_t c = UINT32_MAX / slot_size + 1u;         /* floor((2^32 - 1) / slot) + 1 */
  return c + ((slot_size & (slot_size - 1u)) == 0); /* floor(2^32 / slot) + 1 for a power of 2 */
}
/* e: what carving one more slot adds to the bound. */
static inline uint32_t small_slot_step(uint32_t divisor, uint32_t slot_size) {
  return divisor * slot_size;
}
static inline int small_slot_carved(uint32_t divisor, uint32_t carved_limit, uint32_t slot_offset) {
  return slot_offset * divisor < carved_limit;
}

/* The span header; the first block's header word sits at offset 60, so this must fit in 60. The
 * validation does not read it: it reads the span's records (span_record.h), which copy its header
 * bits, divisor and carved limit into memory no block reaches. */
typedef struct small_span {
  uint32_t fed_end;       /* blocks are carved in address order: the span offset of the first one
                             not carved yet; headers from there on are stale */
  uint16_t block_count;   /* at most SMALL_SPAN_MAX_BYTES / 16 */
  uint16_t blocks_in_use; /* handed out, including those in thread caches or pending lists */
  small_manager *manager;
  list_node room_link;   /* on the manager's spans_with_room, or next == NULL (full) */
  uint32_t header_bits;  /* SMALL_HEADER_TAG_MASK of its live blocks' header words; 0 once
                            released */
  uint32_t slot_divisor; /* small_slot_divisor(slot size) */
  uint32_t carved_limit; /* small_slot_step(...) times the slots carved so far */
  void *free_list;       /* freed blocks, linked through their first word */
} small_span;
FMM_STATIC_ASSERT(sizeof(small_span) <= SMALL_SPAN_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "small span header overlaps the first block's header word");
FMM_STATIC_ASSERT(SMALL_SPAN_MAX_BYTES / BLOCK_ALIGNMENT <= 0xFFFFu,
                  "block_count and blocks_in_use fit 16 bits");
FMM_STATIC_ASSERT(SMALL_SPAN_MAX_BYTES <= (1u << (32u - SMALL_SPAN_OFFSET_SHIFT)) * 16u,
                  "every real slot offset fits the header word's field");

/* A small span's medium block has its header at a multiple of 16 KB (medium_alloc_small_span), so
 * its user bytes start 16 bytes past one. The span header lies SMALL_SPAN_PACKING bytes times one
 * more than its class modulo SMALL_SPAN_COLOURS past that multiple (a colour, span_create; the
 * distance from the block's user pointer is kept in the block's first word), so that the first
 * blocks of spans do not all share one set of the L1 cache (small_churn_lifo had twice the L1
 * misses with none). */
static inline uint32_t small_span_colour(const void *block) {
  return *(const uint32_t *)block;
}
static inline small_span *small_span_in_block(void *block) {
  return (small_span *)((char *)block + small_span_colour(block));
}
/* The medium block that holds span s: its user pointer, 16 bytes past the multiple of 16 KB less
 * than 16 KB before s. */
static inline void *small_span_block(const small_span *s) {
  return (void *)(((uintptr_t)s & ~(uintptr_t)(SMALL_SPAN_MIN_BYTES - 1u)) + MEDIUM_HEADER_SIZE);
}
static inline int small_span_colour_valid(uint32_t colour) {
  colour += MEDIUM_HEADER_SIZE;
  return colour >= SMALL_SPAN_PACKING && colour <= SMALL_SPAN_PACKING * SMALL_SPAN_COLOURS &&
         colour % SMALL_SPAN_PACKING == 0;
}

static inline unsigned small_span_class(const small_span *s) {
  return small_header_class(s->header_bits);
}
static inline uint32_t small_span_slot_size(const small_span *s) {
  return small_header_slot_size(s->header_bits);
}

/* Is s on its manager's list of spans with room? */
static inline int small_span_listed(const small_span *s) {
  return s->room_link.next != NULL;
}

struct small_manager {
  fmm_lock lock;
  uint32_t class_index;
  uint32_t arena;
  uint32_t slot_size;
  uint32_t span_bytes;       /* size of its spans from the third on (medium user bytes) */
  uint32_t taken;            /* blocks handed to thread caches so far (wraps): the caches read it to
                                see whether anyone still allocates the class (thread_cache.c) */
  uint32_t keep_alignment;   /* the aligned managers' alignment (below), 0 for the others */
  list_node spans_with_room; /* spans with a free or uncarved block */
  void *pending_free;        /* frees that found the lock taken: a lock-free stack */
  size_t span_count;
  size_t span_bytes_held; /* its spans' medium blocks, summed (their sizes differ) */
  size_t blocks_in_use;   /* sum of the spans' blocks_in_use */
} FMM_ALIGNED(64);

extern small_manager small_managers[ARENA_COUNT][SMALL_CLASS_COUNT];
/* The small blocks of fastmm_getmem_aligned: one manager per class whose slot is a multiple of
 * 32 (keep_alignment: the largest of 32 and 64 that divides the slot), taking its spans from
 * medium arena 0. ReallocMem keeps the alignment of a block of their spans when it moves it
 * (realloc.c reads its manager's keep_alignment). Their blocks go through the thread caches like
 * any others, so a block of theirs may later serve a plain GetMem: it then keeps an alignment it
 * did not ask for, which costs at most the slack of a coarser class when it moves. */
extern small_manager small_aligned_managers[SMALL_CLASS_COUNT];

/* The span of a small block whose header word h is trusted (a block of a thread cache, a pending
 * list or a span's free list, or one the validation passed): its slot offset read from h. */
static inline small_span *small_span_of(const void *p, uint32_t h) {
  return (small_span *)((char *)p - small_header_span_offset(h));
}

/* The validation contract for small blocks (docs/architecture-reference.md), shared by every path
 * that trusts a small header: FreeMem, ReallocMem and the usable size, fast and slow, in C; the
 * NASM fast paths do the same steps. p is 16-aligned and its header word h lies in a medium span
 * (the caller looked it up in the page map, so the record of p's granule is committed). Returns
 * p's span when p is a live small block of ours, else NULL: the record of p's granule
 * (span_record_admits) has h's kind (exactly SMALL, FREE clear, no other flag), class and slot,
 * and p lies a whole number of slots after the span's first block, below its carved end. Nothing
 * of it comes from memory a program can write; the span is found from the record's first block,
 * not from h. */
static inline small_span *small_block_span(const void *p, uint32_t h) {
  const span_record *r = span_record_of((uintptr_t)p - BLOCK_ALIGNMENT);
  uint32_t offset = span_record_offset(r, p);
  if (!span_record_admits(r, offset, h))
    return NULL;
  return (small_span *)((char *)p - offset - SMALL_SPAN_HEADER_SIZE);
}

void small_init(void);
/* Takes up to `want` free blocks of a class (header words FREE-flagged) as a list linked
 * through their first word; returns how many (0 only when memory is exhausted). */
unsigned small_take_blocks(unsigned class_index, unsigned arena, void **list, unsigned want);
/* Gives back a list of FREE-flagged blocks (any classes, any arenas). */
void small_return_blocks(void *list);
/* Frees one live small block (validated by the caller) without a thread cache. */
void small_return_block(void *p);
void small_drain_pending(small_manager *m); /* caller holds m->lock */
/* One live block of a class from its aligned manager (keep_alignment set), or NULL. */
void *small_take_aligned(unsigned class_index);
void small_drain_all_pending(void); /* every manager's pending frees, each under its lock */

#endif
