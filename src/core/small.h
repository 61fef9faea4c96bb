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

/* The key every span's tag is XORed with: random per process (small_init), so that a span header
 * forged in a program's own block does not pass for one of ours unless the program copied a real
 * one. The top bit of each 32-bit half is set, so that no tag is 0 (a released span's) or a
 * user-space pointer below 2 GB (a free list's link over a released span's tag). */
extern FMM_HIDDEN uint64_t small_span_key;

/* A span's tag: bits 0-18 of the header word every live block of the span has (block_header.h),
 * XORed with the key. 0 in a span being released. */
static inline uint64_t small_span_tag(uint32_t h) {
  return small_span_key ^ (h & SMALL_HEADER_TAG_MASK);
}
/* The header bits a span's tag holds (small_span_tag undone). */
static inline uint32_t small_span_header_bits(uint64_t tag) {
  return (uint32_t)(tag ^ small_span_key);
}

/* The span header; the first block's header word sits at offset 60, so this must fit in 60.
 * The 16 bytes at SMALL_SPAN_CHECK_OFFSET are what validates a pointer (small_block_span): 16
 * aligned, so in one 64 KB region, and at least 32 bytes into the header, so that a span a forged
 * header word names (at most 64 KB + 64 bytes before the block, small_header_slot_offset_bounded)
 * has them no further back than the region before the block's header word: a later region of a
 * medium span (REGION_MEDIUM_SPAN) has that region, readable, before it. The span's class and slot
 * are in its tag (small_span_class, small_span_slot_size). */
#define SMALL_SPAN_CHECK_OFFSET 32u
typedef struct small_span {
  union {
    struct {
      uint32_t fed_end;       /* blocks are carved in address order: the span offset of the
                                 first one not carved yet; headers from there on are stale */
      uint16_t block_count;   /* at most SMALL_SPAN_MAX_BYTES / 16 */
      uint16_t blocks_in_use; /* handed out, including those in thread caches or pending lists */
      small_manager *manager;
      list_node room_link; /* on the manager's spans_with_room, or next == NULL (full) */
    };
    char books[SMALL_SPAN_CHECK_OFFSET];
  };
  uint64_t tag;          /* small_span_tag of its blocks' headers; 0 once released */
  uint32_t slot_divisor; /* small_slot_divisor(slot size) */
  uint32_t carved_limit; /* small_slot_step(...) times the slots carved so far */
  void *free_list;       /* freed blocks, linked through their first word */
} small_span;
FMM_STATIC_ASSERT(offsetof(small_span, tag) == SMALL_SPAN_CHECK_OFFSET &&
                      offsetof(small_span, carved_limit) + sizeof(uint32_t) ==
                          SMALL_SPAN_CHECK_OFFSET + BLOCK_ALIGNMENT &&
                      SMALL_SPAN_CHECK_OFFSET % BLOCK_ALIGNMENT == 0,
                  "the fields the validation reads are one 16-aligned 16 bytes");
FMM_STATIC_ASSERT(SMALL_SPAN_CHECK_OFFSET >= 2u * BLOCK_ALIGNMENT,
                  "a forged span's checked bytes lie no further back than the region before");
FMM_STATIC_ASSERT(SMALL_SPAN_MAX_BYTES - SMALL_SPAN_HEADER_SIZE <=
                      SMALL_SPAN_OFFSET_READ_MASK + 16u,
                  "every real slot offset survives the bounded read");
FMM_STATIC_ASSERT(sizeof(small_span) <= SMALL_SPAN_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "small span header overlaps the first block's header word");
FMM_STATIC_ASSERT(SMALL_SPAN_MAX_BYTES / BLOCK_ALIGNMENT <= 0xFFFFu,
                  "block_count and blocks_in_use fit 16 bits");

static inline unsigned small_span_class(const small_span *s) {
  return small_header_class(small_span_header_bits(s->tag));
}
static inline uint32_t small_span_slot_size(const small_span *s) {
  return small_header_slot_size(small_span_header_bits(s->tag));
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

/* Is s's tag small_span_tag(h)? One compare of a register's width: the whole 64-bit tag where
 * registers are 64 bits; on 32-bit targets its low half alone, which the key's low half already
 * covers, so the check is one XOR from memory and one compare, as the Win32 NASM path does it (the
 * low half alone also keeps GCC from building the 64-bit tag in a register pair and spilling it:
 * Free Pascal's MemSize entry was 48 instructions against 40 when it did). */
static inline int small_span_tag_matches(const small_span *s, uint32_t h) {
#if UINTPTR_MAX > UINT32_MAX
  return s->tag == small_span_tag(h);
#else
  return (uint32_t)s->tag == ((uint32_t)small_span_key ^ (h & SMALL_HEADER_TAG_MASK));
#endif
}

static inline small_span *small_span_of(const void *p, uint32_t h) {
  return (small_span *)((char *)p - small_header_span_offset(h));
}

/* Does the page map hold the 16 bytes the validation reads at s (the slow half of
 * small_block_span, for a span header in another 64 KB region than its block)? They are 16
 * aligned, so they lie in one region and one lookup answers; the rest of a span header is read
 * only once its tag has matched, when s is a real span, whose 64-aligned header lies in one
 * region. */
static inline int small_span_in_map(const small_span *s) {
  return region_is_medium(page_map_get((const char *)s + SMALL_SPAN_CHECK_OFFSET));
}

/* The validation contract for small blocks (ARCHITECTURE.md), shared by every path that trusts
 * a small header: FreeMem, ReallocMem and the usable size, fast and slow, in C; the NASM fast
 * paths do the same steps. p is 16-aligned and its header word h lies in a medium-span region
 * (the caller looked it up in the page map): `region` is that region's kind. Returns p's span
 * when p is a live small block of ours, else NULL:
 *   - the span the header names (its offset read as 12 bits, small_header_slot_offset_bounded)
 *     can be read: in a later region of a medium span, REGION_MEDIUM_SPAN, it lies no further
 *     back than the region before, part of the same span (SMALL_SPAN_CHECK_OFFSET says why);
 *     in a span's first region, REGION_MEDIUM_START, it must lie in p's region or else in the
 *     page map. Every real span lies in one region (medium_alloc_small_span places it so), so a
 *     real block always passes and only a forged header meets the second test;
 *   - its tag is the header's kind, class and slot under this process's key: a real span, of
 *     this class, and the block is live (FREE clear, no other flag);
 *   - the slot offset is a whole number of slots below the span's carved end (one multiply and
 *     compare, small_slot_carved): p is where a block the span handed out begins, not inside
 *     one, nor in the span's uncarved tail.
 * Every part of a header a program could forge in its own block is checked against the span,
 * which it cannot reach without reading the manager's own memory. The fast paths pass `region`
 * as a constant, so the common case carries no test of where the span lies. */
static inline small_span *small_block_span_in(const void *p, uint32_t h, unsigned region) {
  uintptr_t offset = small_header_slot_offset_bounded(h);
  const small_span *s = (const small_span *)((const char *)p - SMALL_SPAN_HEADER_SIZE - offset);
  if (region != REGION_MEDIUM_SPAN &&
      FMM_UNLIKELY(
          !page_map_same_region((uintptr_t)s + SMALL_SPAN_CHECK_OFFSET, (uintptr_t)p - 1u)) &&
      !small_span_in_map(s))
    return NULL;
  if (!small_span_tag_matches(s, h) ||
      !small_slot_carved(s->slot_divisor, s->carved_limit, (uint32_t)offset))
    return NULL;
  return (small_span *)s;
}

/* small_block_span_in for a header word in either kind of medium-span region (the slow paths,
 * which do not keep the kind): the test of where the span lies, always. */
static inline small_span *small_block_span(const void *p, uint32_t h) {
  return small_block_span_in(p, h, REGION_MEDIUM_START);
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
