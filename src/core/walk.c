/* SPDX-License-Identifier: MIT */
/* The walk of the blocks (FastMM5's FastMM_WalkBlocks). FastMM5 calls its callback with the
 * arena locked; here the program's callback may allocate and free, so the walk copies what it
 * finds into a buffer under the locks of one arena (WALK_BATCH_BLOCKS entries at most,
 * policy.h), releases them, and only then calls back for each entry. The buffer is mapped from
 * the OS: the walk allocates nothing from the heap it walks.
 *
 * Between two batches the heap moves on. Spans are visited in address order, so a batch resumes
 * at the span it stopped in, at its first block at or after the offset it stopped at, or, when
 * that span has gone, at the next one. A block freed meanwhile may still be reported and one
 * allocated meanwhile missed; nothing is read that is not a live span's under its locks.
 *
 * What is free: a block whose header word says FREE (in a span's free list, a thread's cache or
 * a pending list: fastmm_get_state counts them free too; a large block in the large cache), and
 * a debug block waiting in the
 * quarantine (its outer block is in use, the debug block is not). The slots of a small span past
 * its fed end were never handed out: they are the span's sequential feed, not blocks.
 *
 * Locks: a medium arena's, after those of the small managers whose spans it holds (the order of
 * the allocation paths and of heap_check), and the large list's; each within the timeout. */
#include "walk.h"

#include <string.h>

#include "heap.h"
#include "large.h"
#include "lock.h"
#include "medium.h"
#include "policy.h"
#include "prim/prim.h"
#include "small.h"

#define WALK_ALL_TYPES 0x1Fu
#define SPAN_DONE UINT32_MAX

typedef struct walk {
  fastmm_walk_callback callback;
  void *user_data;
  unsigned types;
  int used_only;
  uint32_t min_group, max_group;
  uint64_t timeout_ns;
  fastmm_block_info *buf;
  size_t buf_bytes, capacity, count;
  int overflow;
} walk;

static int wants(const walk *w, unsigned type) {
  return (w->types >> type) & 1u;
}

static fastmm_block_info *next_entry(walk *w) {
  if (w->count == w->capacity) {
    w->overflow = 1;
    return NULL;
  }
  fastmm_block_info *e = &w->buf[w->count];
  memset(e, 0, sizeof *e);
  return e;
}

/* A small, medium or large block: its entry, unless it is free and only used blocks are asked
 * for, or out of the allocation groups asked for (a block that holds no debug block is in group
 * 0). The debug block an outer block holds is reported instead of it, as FastMM5 reports one. */
static void add_block(walk *w, unsigned type, void *p, size_t block_size, size_t usable,
                      unsigned arena, int is_free) {
  if (!wants(w, type) || (is_free && w->used_only))
    return;
  fastmm_block_info *e = next_entry(w);
  if (e == NULL)
    return;
  uint32_t group = 0;
  heap_debug_view view;
  e->block_address = p;
  if (!is_free && heap_above_routines->describe_debug_block(p, &view)) {
    if (view.freed && w->used_only)
      return;
    e->block_address = view.user;
    e->debug_header = (void *)(uintptr_t)view.header;
    usable = view.user_size;
    group = view.allocation_group;
    is_free = view.freed;
  }
  if (group < w->min_group || group > w->max_group)
    return;
  e->block_size = block_size;
  e->usable_size = usable;
  e->allocation_group = group;
  e->arena_index = (uint8_t)arena;
  e->block_type = (uint8_t)type;
  e->block_is_free = (uint8_t)(is_free != 0);
  w->count++;
}

/* A medium span or a small span (never free, in no allocation group). */
static void add_span(walk *w, unsigned type, void *p, size_t block_size, size_t usable,
                     unsigned arena, uint32_t unfed_bytes, uint32_t slot_size) {
  if (!wants(w, type))
    return;
  fastmm_block_info *e = next_entry(w);
  if (e == NULL)
    return;
  e->block_address = p;
  e->block_size = block_size;
  e->usable_size = usable;
  e->arena_index = (uint8_t)arena;
  e->block_type = (uint8_t)type;
  e->is_sequential_feed_span = unfed_bytes != 0;
  e->sequential_feed_unused_bytes = unfed_bytes;
  e->small_block_span_block_size = slot_size;
  w->count++;
}

static void deliver(walk *w) {
  for (size_t i = 0; i < w->count; i++)
    w->callback(&w->buf[i], w->user_data);
  w->count = 0;
}

/* ---- medium arenas and the small spans in them --------------------------------------------- */

/* The small managers whose spans arena a holds: its own row, and for arena 0 the aligned ones. */
static unsigned manager_count(unsigned a) {
  return a == 0 ? 2u * SMALL_CLASS_COUNT : SMALL_CLASS_COUNT;
}
static small_manager *manager_of(unsigned a, unsigned i) {
  return i < SMALL_CLASS_COUNT ? &small_managers[a][i]
                               : &small_aligned_managers[i - SMALL_CLASS_COUNT];
}

static void unlock_arena(unsigned a, unsigned managers_held, int arena_held) {
  if (arena_held)
    lock_release(&medium_arenas[a].lock);
  while (managers_held > 0)
    lock_release(&manager_of(a, --managers_held)->lock);
}

/* The small managers first (only when small spans are looked into), then the arena. */
static int lock_arena(const walk *w, unsigned a, int small) {
  unsigned held = 0;
  if (small)
    for (; held < manager_count(a); held++)
      if (!lock_acquire_within(&manager_of(a, held)->lock, w->timeout_ns)) {
        unlock_arena(a, held, 0);
        return 0;
      }
  if (!lock_acquire_within(&medium_arenas[a].lock, w->timeout_ns)) {
    unlock_arena(a, held, 0);
    return 0;
  }
  return 1;
}

/* The span of `ar` at the lowest address above `after`. */
static medium_span *span_after(medium_arena *ar, uintptr_t after) {
  medium_span *best = NULL;
  for (list_node *n = ar->spans.next; n != &ar->spans; n = n->next) {
    medium_span *s = list_entry(n, medium_span, arena_link);
    if ((uintptr_t)s > after && (best == NULL || (uintptr_t)s < (uintptr_t)best))
      best = s;
  }
  return best;
}

static void copy_small_span(walk *w, unsigned arena, char *p, uint32_t block_size) {
  small_span *ss = small_span_in_block(p);
  uint32_t slot = small_span_slot_size(ss);
  uint32_t end = SMALL_SPAN_HEADER_SIZE + ss->block_count * slot;
  uint32_t fed_end = fmm_load_u32_relaxed(&ss->fed_end);
  add_span(w, FASTMM_BLOCK_SMALL_SPAN, p, block_size, (size_t)slot * ss->block_count, arena,
           end - fed_end, slot);
  if (!wants(w, FASTMM_BLOCK_SMALL))
    return;
  unsigned small_arena = ss->manager->arena;
  for (uint32_t offset = SMALL_SPAN_HEADER_SIZE; offset < fed_end; offset += slot) {
    char *q = (char *)ss + offset;
    /* A thread pops its cached blocks without a lock: read the FREE bit atomically. */
    uint32_t h = fmm_load_u32_relaxed((uint32_t *)q - 1);
    add_block(w, FASTMM_BLOCK_SMALL, q, slot, slot - BLOCK_HEADER_SIZE, small_arena,
              (h & BLOCK_FLAG_FREE) != 0);
  }
}

/* Copies span s's entries, from its own (offset 0) or from its first block at or after
 * `offset`, while the buffer takes each whole block; returns where to resume, or SPAN_DONE. */
static uint32_t copy_span(walk *w, medium_arena *ar, medium_span *s, uint32_t offset) {
  char *base = (char *)s;
  uint32_t first = MEDIUM_SPAN_BLOCKS_OFFSET + MEDIUM_HEADER_SIZE;
  int small = wants(w, FASTMM_BLOCK_SMALL) || wants(w, FASTMM_BLOCK_SMALL_SPAN);
  if (offset == 0) {
    if (wants(w, FASTMM_BLOCK_MEDIUM_SPAN) && w->count == w->capacity)
      return 0;
    add_span(w, FASTMM_BLOCK_MEDIUM_SPAN, s, s->size, s->size - first, ar->index, 0, 0);
    offset = first;
  }
  for (uint32_t o = first; o < s->size;) {
    char *p = base + o;
    medium_header *h = medium_header_of(p);
    uint32_t size = h->size;
    if (size < MEDIUM_MIN_BLOCK_SIZE || size > s->size - o)
      break; /* not a block: heap_check reports such a span */
    if (o >= offset) {
      int is_small_span =
          (h->flags & (MEDIUM_FLAG_SMALL_SPAN | BLOCK_FLAG_FREE)) == MEDIUM_FLAG_SMALL_SPAN;
      size_t need = 1u + (is_small_span && small ? small_span_in_block(p)->block_count : 0u);
      if (w->capacity - w->count < need)
        return o;
      if (h->flags & BLOCK_FLAG_FREE)
        add_block(w, FASTMM_BLOCK_MEDIUM, p, size, size - MEDIUM_HEADER_SIZE, ar->index, 1);
      else if (is_small_span) {
        if (small)
          copy_small_span(w, ar->index, p, size);
      } else
        add_block(w, FASTMM_BLOCK_MEDIUM, p, size, size - MEDIUM_HEADER_SIZE, ar->index, 0);
    }
    o += size;
  }
  return SPAN_DONE;
}

static int walk_arena(walk *w, unsigned a) {
  medium_arena *ar = &medium_arenas[a];
  int small = wants(w, FASTMM_BLOCK_SMALL) || wants(w, FASTMM_BLOCK_SMALL_SPAN);
  uintptr_t after = 0;
  medium_span *stopped = NULL;
  uint32_t resume = 0;
  for (;;) {
    if (!lock_arena(w, a, small))
      return 0;
    medium_span *s = span_after(ar, after);
    uint32_t offset = s != NULL && s == stopped ? resume : 0;
    int more = 0;
    while (s != NULL) {
      uint32_t r = copy_span(w, ar, s, offset);
      if (r != SPAN_DONE) {
        stopped = s;
        resume = r;
        after = (uintptr_t)s - 1u;
        more = 1;
        break;
      }
      after = (uintptr_t)s;
      s = span_after(ar, after);
      offset = 0;
    }
    unlock_arena(a, small ? manager_count(a) : 0, 1);
    deliver(w);
    if (!more)
      return 1;
  }
}

/* ---- large blocks ------------------------------------------------------------------------ */

/* A large block's size is the memory it holds (its committed bytes: a block reused from the
 * cache may keep pages past its usable size to grow into); a cached block is a free one, so the
 * sizes of all of them add up to the state's large bytes reserved. */
static void visit_large(void *p, const large_header *h, int cached, void *context) {
  add_block((walk *)context, FASTMM_BLOCK_LARGE, p, h->committed, h->size - h->user_offset, 0,
            cached);
}

static int buffer_map(walk *w, size_t capacity) {
  size_t bytes = (capacity * sizeof(fastmm_block_info) + LARGE_GRANULARITY - 1) &
                 ~(size_t)(LARGE_GRANULARITY - 1);
  fastmm_block_info *buf = (fastmm_block_info *)prim_map(bytes, 0);
  if (buf == NULL)
    return 0;
  if (w->buf != NULL)
    prim_unmap(w->buf, w->buf_bytes);
  w->buf = buf;
  w->buf_bytes = bytes;
  w->capacity = bytes / sizeof(fastmm_block_info);
  return 1;
}

/* Every large block in one batch: the buffer is made big enough for all of them first. */
static int walk_large(walk *w) {
  if (!wants(w, FASTMM_BLOCK_LARGE))
    return 1;
  for (;;) {
    size_t need = large_count_now() + 64u;
    if (need > w->capacity && !buffer_map(w, need))
      return 0;
    w->overflow = 0;
    if (!large_for_each(w->timeout_ns, visit_large, w))
      return 0;
    if (!w->overflow)
      break;
    w->count = 0; /* more blocks than a moment ago: again, with room for them */
  }
  deliver(w);
  return 1;
}

int heap_walk(fastmm_walk_callback callback, void *user_data, unsigned types, int used_blocks_only,
              uint32_t lock_timeout_ms, uint32_t min_allocation_group,
              uint32_t max_allocation_group) {
  walk w;
  memset(&w, 0, sizeof w);
  w.callback = callback;
  w.user_data = user_data;
  w.types = types == 0 ? WALK_ALL_TYPES : types & WALK_ALL_TYPES;
  /* Spans belong to no allocation group. */
  if (min_allocation_group > 0)
    w.types &=
        ~(FASTMM_WALK_TYPE(FASTMM_BLOCK_MEDIUM_SPAN) | FASTMM_WALK_TYPE(FASTMM_BLOCK_SMALL_SPAN));
  w.used_only = used_blocks_only != 0;
  w.min_group = min_allocation_group;
  w.max_group = max_allocation_group;
  w.timeout_ns = (uint64_t)lock_timeout_ms * 1000000u;
  if (callback == NULL || w.types == 0 || min_allocation_group > max_allocation_group)
    return 1;
  heap_ensure_initialized();
  if (!buffer_map(&w, WALK_BATCH_BLOCKS))
    return 0;
  int complete = walk_large(&w);
  if (w.types & ~FASTMM_WALK_TYPE(FASTMM_BLOCK_LARGE))
    for (unsigned a = 0; a < ARENA_COUNT; a++)
      complete &= walk_arena(&w, a);
  prim_unmap(w.buf, w.buf_bytes);
  return complete;
}
