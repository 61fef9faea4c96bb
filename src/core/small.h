/* Small blocks (small.c): one manager per (arena, size class) owns spans of equal slots. */
#ifndef FASTMM_SMALL_H
#define FASTMM_SMALL_H

#include <stdint.h>

#include "atomics.h"
#include "block_header.h"
#include "compiler.h"
#include "list.h"
#include "lock.h"
#include "page_map.h"
#include "policy.h"

#define SMALL_SPAN_MAGIC 0x5350414Eu /* "SPAN" */

typedef struct small_manager small_manager;

/* The span header; the first block's header word sits at offset 60, so this must fit in 60. */
typedef struct small_span {
  uint32_t magic;
  uint16_t class_index;
  uint16_t listed; /* 1 while on the manager's list of spans with room */
  small_manager *manager;
  list_node room_link;    /* on the manager's spans_with_room while listed */
  void *free_list;        /* freed blocks, linked through their first word */
  uint32_t blocks_in_use; /* handed out, including those in thread caches or pending lists */
  uint32_t block_count;
  uint32_t slot_size;
  uint32_t fed_end; /* blocks are carved in address order: the offset of the first one not
                       carved yet; headers from there on are stale */
} small_span;
FMM_STATIC_ASSERT(sizeof(small_span) <= SMALL_SPAN_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "small span header overlaps the first block's header word");

struct small_manager {
  fmm_lock lock;
  uint32_t class_index;
  uint32_t arena;
  uint32_t slot_size;
  uint32_t span_bytes;       /* requested size of a new span (medium user bytes) */
  uint32_t taken;            /* blocks handed to thread caches so far (wraps): the caches read it to
                                see whether anyone still allocates the class (thread_cache.c) */
  uint32_t keep_alignment;   /* the aligned managers' alignment (below), 0 for the others */
  list_node spans_with_room; /* spans with a free or uncarved block */
  void *pending_free;        /* frees that found the lock taken: a lock-free stack */
  size_t span_count;
  size_t blocks_in_use; /* sum of the spans' blocks_in_use */
} FMM_ALIGNED(64);

extern small_manager small_managers[ARENA_COUNT][SMALL_CLASS_COUNT];
/* The small blocks of fastmm_getmem_aligned: one manager per class whose slot is a multiple of
 * 32 (keep_alignment: the largest of 32 and 64 that divides the slot), taking its spans from
 * medium arena 0. ReallocMem keeps the alignment of a block of their spans when it moves it
 * (small_keeps_alignment). Their blocks go through the thread caches like any others, so a
 * block of theirs may later serve a plain GetMem: it then keeps an alignment it did not ask for,
 * which costs at most the slack of a coarser class when it moves. */
extern small_manager small_aligned_managers[SMALL_CLASS_COUNT];

static inline small_span *small_span_of(const void *p, uint32_t h) {
  return (small_span *)((char *)p - small_header_span_offset(h));
}
/* Is p (16-aligned, its header word in a region of ours) a small block in a real span? The
 * header names the span; the span must lie in our memory and agree with the header. The page
 * map is consulted again only when the span header is in another 64 KB region than p. */
static inline int small_block_plausible(const void *p, uint32_t h) {
  uint32_t offset = small_header_span_offset(h);
  const small_span *s = (const small_span *)((const char *)p - offset);
  if (FMM_UNLIKELY(offset < SMALL_SPAN_HEADER_SIZE))
    return 0;
  if (FMM_UNLIKELY((((uintptr_t)s ^ (uintptr_t)p) >> PAGE_MAP_REGION_SHIFT) != 0 ||
                   (((uintptr_t)s ^ ((uintptr_t)s + SMALL_SPAN_HEADER_SIZE - 1)) >>
                    PAGE_MAP_REGION_SHIFT) != 0)) {
    if (page_map_get(s) != REGION_MEDIUM_SPAN ||
        page_map_get((const char *)s + SMALL_SPAN_HEADER_SIZE - 1) != REGION_MEDIUM_SPAN)
      return 0;
  }
  return s->magic == SMALL_SPAN_MAGIC && s->class_index == small_header_class(h) &&
         s->slot_size == small_header_slot_size(h) && offset < fmm_load_u32_relaxed(&s->fed_end);
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
/* The alignment ReallocMem keeps for a live small block (0: none). */
static inline uint32_t small_keeps_alignment(const void *p, uint32_t h) {
  return small_span_of(p, h)->manager->keep_alignment;
}
void small_drain_all_pending(void); /* every manager's pending frees, each under its lock */

#endif
