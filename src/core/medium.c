/* SPDX-License-Identifier: MIT */
/* Medium blocks: spans of 1-4 MB (policy.h: the optimization strategy chooses) mapped from the
 * OS, cut into blocks with boundary tags (each header holds its own size and its predecessor's),
 * so a freed block merges with free neighbours at once. Free blocks sit in segregated bins found
 * through a two-level bitmap. A new span starts as one free block; requests are carved from the
 * front of the best-fitting free block, so an untouched span is fed sequentially. A block that
 * must start at a multiple of an alignment (small spans: 64; aligned requests) is carved from the
 * front when the free block starts aligned, else from its back, so the free part stays in front;
 * a small span also lies in one 64 KB region of the page map (from the back, it ends where the
 * region it would cross into begins).
 *
 * Span layout: [medium_span, 48 bytes][first block header | user ...] ... [sentinel header]
 * The sentinel is a 16-byte in-use header at the end that stops merging; a free block that
 * is first in its span (prev_size 0) and ends at the sentinel means the span is empty. */
#include "medium.h"

#include "arena.h"
#include "contention.h"

#include "bits.h"
#include "heap.h"
#include "idle_clock.h"
#include "os_memory.h"
#include "page_map.h"
#include "prim/prim.h"
#include "process_key.h"
#include "region_handover.h"

medium_arena medium_arenas[ARENA_COUNT];
/* Empty spans kept for reuse by any arena (policy.h: MEDIUM_SPARE_MAX_SPANS): each slot is taken
 * and filled with one atomic instruction, so the arenas share no lock for them. */
static medium_span *spare_spans[MEDIUM_SPARE_MAX_SPANS];
/* Their bytes: counted before a span goes in and after it comes out, so never below what the
 * slots hold (medium_spare_bytes). */
size_t medium_spare_total;
/* The bytes of the spans in all arenas, which bound the spares (spare_allowed). */
static size_t arena_span_bytes;
/* While the heap churns (it maps a span again soon after it unmapped one, policy.h:
 * MEDIUM_SPARE_CHURN_MS), the spares it may keep beyond the share bound: one more for each such
 * mapping, none once a whole window has passed in which no span was mapped or taken from the
 * spares. Written under one arena's lock and read under another's: a stale value costs one spare
 * too many or too few, never a lost span. */
static uint32_t churn_spares;
static uint32_t churn_unmap_ms;   /* prim_tick_count_ms when span_remove last unmapped a span */
static uint32_t churn_unmap_seen; /* 1 once it did (since the start or medium_end_churn) */
static uint32_t churn_remap_ms;   /* when span_add last mapped one within the window of that, or
                                     took a spare while the allowance lasts */
static uint32_t churn_window_ms = MEDIUM_SPARE_CHURN_MS; /* medium_set_churn_window */
/* The size of the spans mapped from now on: the optimization strategy's (policy.h). */
static uint32_t new_span_size = MEDIUM_SPAN_SIZE;

void medium_set_span_size(uint32_t bytes) {
  fmm_store_u32_relaxed(&new_span_size, bytes);
}

static uint32_t medium_span_size(void) {
  return fmm_load_u32_relaxed(&new_span_size);
}

/* Until medium_init draws it: no medium block exists before. */
uint32_t medium_block_key;

void medium_init(void) {
  medium_block_key = (uint32_t)process_key_draw(&medium_block_key);
  for (unsigned a = 0; a < ARENA_COUNT; a++) {
    medium_arena *ar = &medium_arenas[a];
    ar->index = a;
    list_init(&ar->spans);
    for (unsigned b = 0; b < MEDIUM_BIN_COUNT; b++)
      list_init(&ar->bins[b]);
  }
}

static inline void *next_block(void *p) {
  return (char *)p + medium_header_of(p)->size;
}
static inline void *prev_block(void *p) {
  return (char *)p - medium_header_of(p)->prev_size;
}
static inline list_node *bin_link(void *p) {
  return (list_node *)p;
}

/* Bin of a free block of `size` bytes (rounded down: blocks in it are at least that size's
 * bin floor). */
static unsigned bin_of(size_t size) {
  unsigned log2 = bits_highest_set((uint32_t)size);
  unsigned sub = (unsigned)(size >> (log2 - MEDIUM_BIN_SUBDIVISION_LOG2)) &
                 ((1u << MEDIUM_BIN_SUBDIVISION_LOG2) - 1u);
  return ((log2 - MEDIUM_BIN_MIN_LOG2) << MEDIUM_BIN_SUBDIVISION_LOG2) + sub;
}

/* First bin whose every block holds `size` bytes. */
static unsigned bin_for_request(size_t size) {
  unsigned log2 = bits_highest_set((uint32_t)size);
  size_t rounded = size + ((size_t)1 << (log2 - MEDIUM_BIN_SUBDIVISION_LOG2)) - 1u;
  return bin_of(rounded);
}

static void bin_insert(medium_arena *a, void *p) {
  unsigned b = bin_of(medium_header_of(p)->size);
  list_insert_after(&a->bins[b], bin_link(p));
  a->bin_bitmap[b >> 5] |= 1u << (b & 31u);
  a->group_bitmap |= 1u << (b >> 5);
}

static void bin_remove(medium_arena *a, void *p) {
  list_node *n = bin_link(p);
  if (n->next == n->prev) {
    /* The bin's only block: both neighbours are the bin itself, which is now empty. */
    unsigned b = (unsigned)(n->prev - a->bins);
    a->bin_bitmap[b >> 5] &= ~(1u << (b & 31u));
    if (a->bin_bitmap[b >> 5] == 0)
      a->group_bitmap &= ~(1u << (b >> 5));
  }
  list_remove(n);
}

/* The first bin from b on that holds a block, or MEDIUM_BIN_COUNT when none does. */
static inline unsigned first_bin_from(const medium_arena *a, unsigned b) {
  unsigned g = b >> 5;
  if (g >= MEDIUM_BIN_GROUPS)
    return MEDIUM_BIN_COUNT;
  uint32_t in_group = a->bin_bitmap[g] & (~0u << (b & 31u));
  if (in_group == 0) {
    uint32_t groups = g + 1u < 32u ? a->group_bitmap & (~0u << (g + 1u)) : 0u;
    if (groups == 0)
      return MEDIUM_BIN_COUNT;
    g = bits_lowest_set(groups);
    in_group = a->bin_bitmap[g];
  }
  return (g << 5) + bits_lowest_set(in_group);
}

static void *bin_find(medium_arena *a, size_t size) {
  unsigned b = first_bin_from(a, bin_for_request(size));
  return b < MEDIUM_BIN_COUNT ? a->bins[b].next : NULL; /* the bit says: not empty */
}

static inline uint32_t free_flags(medium_arena *a) {
  return BLOCK_FLAG_MEDIUM | BLOCK_FLAG_FREE | (a->index << MEDIUM_ARENA_SHIFT);
}

static void span_link(medium_arena *a, medium_span *s) {
  s->magic = MEDIUM_SPAN_MAGIC;
  s->arena = a->index;
  list_insert_after(&a->spans, &s->arena_link);
  a->span_count++;
  a->span_bytes += s->size;
  fmm_add_size(&arena_span_bytes, s->size);
  /* One free block from the span's second region (MEDIUM_SPAN_BLOCKS_OFFSET) to the sentinel. */
  char *first = (char *)s + MEDIUM_SPAN_BLOCKS_OFFSET + MEDIUM_HEADER_SIZE;
  char *end = (char *)s + s->size;
  medium_header *h = medium_header_of(first);
  h->prev_size = 0;
  h->size = (uint32_t)(end - first);
  h->flags = free_flags(a);
  medium_header *sentinel = medium_header_of(end);
  sentinel->prev_size = h->size;
  sentinel->size = 0;
  sentinel->flags = BLOCK_FLAG_MEDIUM | MEDIUM_FLAG_SENTINEL | (a->index << MEDIUM_ARENA_SHIFT);
  bin_insert(a, first);
}

static void unmap_span(medium_span *s) {
  size_t size = s->size;
  region_handover_begin();
  page_map_set(s, size, REGION_NOT_OURS);
  os_unmap(s, size);
  region_handover_end();
}

/* The span in spare slot i, taken out of it, or NULL. */
static medium_span *spare_take_slot(unsigned i) {
  if (fmm_load_ptr_acquire(&spare_spans[i]) == NULL)
    return NULL;
  medium_span *s = (medium_span *)fmm_xchg_ptr(&spare_spans[i], NULL);
  if (s != NULL)
    fmm_add_size(&medium_spare_total, (size_t)0 - s->size);
  return s;
}

/* A spare span, or NULL. */
static medium_span *spare_take(void) {
  for (unsigned i = 0; i < MEDIUM_SPARE_MAX_SPANS; i++) {
    medium_span *s = spare_take_slot(i);
    if (s != NULL)
      return s;
  }
  return NULL;
}

/* How many spare spans of `span_size` may be kept: the arenas' spans allow a share of theirs
 * (MEDIUM_SPARE_SHARE_SHIFT, at least MEDIUM_SPARE_SPANS, at most MEDIUM_SPARE_SHARE_MAX_SPANS),
 * a churning heap its allowance if that is more (policy.h). */
static unsigned spare_allowed(uint32_t span_size) {
  size_t n = (fmm_load_size_relaxed(&arena_span_bytes) >> MEDIUM_SPARE_SHARE_SHIFT) / span_size;
  unsigned allowed = n < MEDIUM_SPARE_SPANS             ? MEDIUM_SPARE_SPANS
                     : n > MEDIUM_SPARE_SHARE_MAX_SPANS ? MEDIUM_SPARE_SHARE_MAX_SPANS
                                                        : (unsigned)n;
  uint32_t churn = fmm_load_u32_relaxed(&churn_spares);
  if (churn != 0) {
    if (prim_tick_count_ms() - fmm_load_u32_relaxed(&churn_remap_ms) >=
        fmm_load_u32_relaxed(&churn_window_ms))
      fmm_store_u32_relaxed(&churn_spares, 0);
    else if (allowed < churn)
      allowed = churn; /* at most MEDIUM_SPARE_MAX_SPANS (note_mapped) */
  }
  return allowed;
}

/* A span was mapped: when one was unmapped within the window before, the heap churns. */
static void note_mapped(void) {
  if (fmm_load_u32_relaxed(&churn_unmap_seen) == 0)
    return;
  /* The clock first: an unmapping of this thread's in the same tick reads as 0 ms before. Another
   * thread's, stored after this read, reads as long ago: one mapping not counted, no harm. */
  uint32_t now = prim_tick_count_ms();
  if (now - fmm_load_u32_relaxed(&churn_unmap_ms) >= fmm_load_u32_relaxed(&churn_window_ms))
    return;
  uint32_t churn = fmm_load_u32_relaxed(&churn_spares);
  if (churn < MEDIUM_SPARE_MAX_SPANS)
    fmm_store_u32_relaxed(&churn_spares, churn + 1u);
  fmm_store_u32_relaxed(&churn_remap_ms, now);
}

uint32_t medium_set_churn_window(uint32_t ms) {
  uint32_t old = fmm_load_u32_relaxed(&churn_window_ms);
  fmm_store_u32_relaxed(&churn_window_ms, ms);
  return old;
}

void medium_end_churn(void) {
  fmm_store_u32_relaxed(&churn_spares, 0);
  fmm_store_u32_relaxed(&churn_unmap_seen, 0);
}

/* span_remove unmapped a span the bound did not let it keep. */
static void note_unmapped(void) {
  fmm_store_u32_relaxed(&churn_unmap_ms, prim_tick_count_ms());
  fmm_store_u32_relaxed(&churn_unmap_seen, 1);
}

static int span_add(medium_arena *a) {
  medium_span *s = spare_take();
  if (s != NULL && fmm_load_u32_relaxed(&churn_spares) != 0)
    fmm_store_u32_relaxed(&churn_remap_ms, prim_tick_count_ms()); /* the churn goes on */
  if (s == NULL) {
    uint32_t size = medium_span_size() + MEDIUM_SPAN_HEAD_BYTES; /* policy.h */
    region_handover_begin();
    s = (medium_span *)os_map(size);
    if (s != NULL && !page_map_set(s, size, REGION_MEDIUM_START)) {
      os_unmap(s, size);
      s = NULL;
    }
    region_handover_end();
    if (s == NULL)
      return 0;
    s->size = size;
    note_mapped();
  }
  span_link(a, s);
  return 1;
}

/* Keeps the emptied span s as a spare if a slot the bound allows is free, else unmaps it; and
 * unmaps the spares the bound no longer allows (the heap shrank). Nothing here tells release.c:
 * medium_free's callers ask it once they return (release_poll, release.h), with the arena's
 * lock released. */
static void span_remove(medium_arena *a, medium_span *s) {
  list_remove(&s->arena_link);
  a->span_count--;
  a->span_bytes -= s->size;
  fmm_add_size(&arena_span_bytes, (size_t)0 - s->size);
  s->magic = 0;
  s->spare_since = idle_clock_now();
  unsigned allowed = spare_allowed(s->size);
  int kept = 0;
  fmm_add_size(&medium_spare_total, s->size);
  for (unsigned i = 0; i < allowed && !kept; i++)
    kept = fmm_cas_ptr(&spare_spans[i], NULL, s);
  if (!kept) {
    fmm_add_size(&medium_spare_total, (size_t)0 - s->size);
    unmap_span(s);
    note_unmapped();
  }
  for (unsigned i = allowed; i < MEDIUM_SPARE_MAX_SPANS; i++) {
    medium_span *old = spare_take_slot(i);
    if (old != NULL) {
      unmap_span(old);
      note_unmapped();
    }
  }
}

/* Cuts p's block to `size` bytes: the rest becomes a block of its own (its boundary tags
 * written: its header, and the next block's prev_size), which is returned with its flags left
 * to the caller. */
static void *cut_tail(void *p, uint32_t size) {
  medium_header *h = medium_header_of(p);
  uint32_t rest = h->size - size;
  h->size = size;
  char *tail = (char *)p + size;
  medium_header *th = medium_header_of(tail);
  th->prev_size = size;
  th->size = rest;
  medium_header_of(tail + rest)->prev_size = rest;
  return tail;
}

/* Cuts `p` (free, unlinked) to `size` bytes, binning the rest when it is worth a block. */
static void split(medium_arena *a, void *p, uint32_t size) {
  if (medium_header_of(p)->size - size < MEDIUM_MIN_BLOCK_SIZE)
    return;
  void *tail = cut_tail(p, size);
  medium_header_of(tail)->flags = free_flags(a);
  bin_insert(a, tail);
}

/* Marks `p` (its header already holding its size) free, merges it with free neighbours, and
 * bins it or gives the span back (span_remove). */
static void free_block(medium_arena *a, void *p) {
  medium_header *h = medium_header_of(p);
  /* Flagged free first: if it merges into its predecessor, its header stays behind inside a
   * free block, and a second FreeMem of it must find it free. */
  h->flags = free_flags(a);
  void *next = next_block(p);
  if (medium_header_of(next)->flags & BLOCK_FLAG_FREE) {
    bin_remove(a, next);
    h->size += medium_header_of(next)->size;
  }
  if (h->prev_size != 0) {
    void *prev = prev_block(p);
    if (medium_header_of(prev)->flags & BLOCK_FLAG_FREE) {
      bin_remove(a, prev);
      medium_header_of(prev)->size += h->size;
      p = prev;
      h = medium_header_of(p);
    }
  }
  h->flags = free_flags(a);
  next = next_block(p);
  medium_header_of(next)->prev_size = h->size;
  if (h->prev_size == 0 && (medium_header_of(next)->flags & MEDIUM_FLAG_SENTINEL)) {
    span_remove(a, (medium_span *)((char *)p - MEDIUM_HEADER_SIZE - MEDIUM_SPAN_BLOCKS_OFFSET));
    return;
  }
  bin_insert(a, p);
}

static inline uint32_t block_size_for(size_t user_size) {
  size_t size = (user_size + MEDIUM_HEADER_SIZE + 15u) & ~(size_t)15u;
  return size < MEDIUM_MIN_BLOCK_SIZE ? MEDIUM_MIN_BLOCK_SIZE : (uint32_t)size;
}

/* Marks the block p (cut to its size, unlinked) in use and counts it. */
static void *take_block(medium_arena *a, void *p, uint32_t extra_flags, uint32_t keep) {
  medium_header *h = medium_header_of(p);
  h->seal = medium_seal(p, h->size);
  h->flags =
      BLOCK_FLAG_MEDIUM | extra_flags | (a->index << MEDIUM_ARENA_SHIFT) | medium_keep_bits(keep);
  if (extra_flags & MEDIUM_FLAG_SMALL_SPAN) {
    a->small_spans++;
    a->small_span_bytes += h->size;
  } else {
    a->blocks_in_use++;
    a->bytes_in_use += h->size - MEDIUM_HEADER_SIZE;
  }
  return p;
}

static void *alloc_locked(medium_arena *a, size_t user_size, uint32_t extra_flags) {
  uint32_t size = block_size_for(user_size);
  void *p = bin_find(a, size);
  if (p == NULL) {
    if (!span_add(a))
      return NULL;
    p = bin_find(a, size);
  }
  bin_remove(a, p);
  split(a, p, size);
  return take_block(a, p, extra_flags, 0);
}

/* Where a block of `size` bytes whose user pointer lies `offset` bytes past a multiple of
 * `alignment` goes in the free block p: p itself when p is such a place, else the highest such
 * place that leaves a free block of at least MEDIUM_MIN_BLOCK_SIZE in front of it; 0 when neither
 * fits. */
static uintptr_t aligned_place(void *p, uint32_t size, size_t alignment, uint32_t offset) {
  uintptr_t start = (uintptr_t)p, end = start + medium_header_of(p)->size;
  if (((start - offset) & (alignment - 1u)) == 0)
    return end - start >= size ? start : 0;
  if (end - start < (uintptr_t)size + MEDIUM_MIN_BLOCK_SIZE)
    return 0;
  uintptr_t q = ((end - size - offset) & ~(uintptr_t)(alignment - 1u)) + offset;
  return q >= start + MEDIUM_MIN_BLOCK_SIZE ? q : 0;
}

/* A free block that has a place for `size` bytes at a multiple of `alignment`, among the first
 * MEDIUM_REGION_FIT_SCAN free blocks of the bins that hold at least `size` bytes, smallest bins
 * first; NULL if none (q: the place). The bin that guarantees such a place asks for the alignment
 * more, which skips every free block between the two sizes: small spans then cut into the largest
 * free blocks, often a span's untouched tail, while holes they fit in stay empty (pas_mixed
 * touched 620 KB of pages under small spans' uncarved slots, 1.2 MB more in free medium
 * blocks). */
static void *fit_first(medium_arena *a, uint32_t size, size_t alignment, uint32_t offset,
                       uintptr_t *q) {
  unsigned left = MEDIUM_REGION_FIT_SCAN;
  for (unsigned b = first_bin_from(a, bin_for_request(size)); b < MEDIUM_BIN_COUNT;
       b = first_bin_from(a, b + 1u)) {
    for (list_node *n = a->bins[b].next; n != &a->bins[b]; n = n->next) {
      if ((*q = aligned_place(n, size, alignment, offset)) != 0)
        return n;
      if (--left == 0)
        return NULL;
    }
  }
  return NULL;
}

/* A free block of `size` bytes whose user pointer lies `offset` (0 or MEDIUM_HEADER_SIZE) past a
 * multiple of `alignment` (arena locked), or NULL; a nonzero offset also looks for a place among
 * the smaller free blocks first (fit_first: small spans). The first bin that fits
 * `size + alignment` may hold a block too short once placed; one that fits MEDIUM_MIN_BLOCK_SIZE
 * more never does. */
static void *alloc_locked_aligned(medium_arena *a, size_t user_size, size_t alignment,
                                  uint32_t extra_flags, uint32_t keep, uint32_t offset) {
  uint32_t size = block_size_for(user_size);
  /* Up to 64, sizes stay multiples of the alignment: blocks carved one after another from the
   * front of a free block all start aligned. */
  uint32_t unit = alignment < 64u ? (uint32_t)alignment : 64u;
  size = (size + unit - 1u) & ~(unit - 1u);
  size_t slack = alignment - (offset == 0 ? MEDIUM_HEADER_SIZE : 0u);
  void *p = NULL;
  uintptr_t q = 0;
  if (offset != 0)
    p = fit_first(a, size, alignment, offset, &q);
  for (int attempt = 0; attempt < 3 && q == 0; attempt++) {
    size_t want = size + slack + (attempt > 0 ? MEDIUM_MIN_BLOCK_SIZE : 0u);
    if (want > MEDIUM_SPAN_MAX_SIZE)
      return NULL;
    p = bin_find(a, want);
    if (p == NULL && attempt == 2) {
      if (!span_add(a))
        return NULL;
      p = bin_find(a, want);
    }
    if (p != NULL)
      q = aligned_place(p, size, alignment, offset);
  }
  if (q == 0)
    return NULL;
  bin_remove(a, p);
  if (q != (uintptr_t)p) {
    /* The front stays free: cut at q, the part from q on is the new block. */
    void *tail = cut_tail(p, (uint32_t)(q - (uintptr_t)p));
    medium_header_of(p)->flags = free_flags(a);
    bin_insert(a, p);
    p = tail;
  }
  split(a, p, size);
  return take_block(a, p, extra_flags, keep);
}

/* The first arena whose lock is free, from `first_arena` on, locked; when every one is taken,
 * `first_arena`'s, waited for (and counted: FastMM5's contention counter). */
static FMM_NOINLINE medium_arena *lock_an_arena_slow(unsigned first_arena) {
  unsigned n = fmm_load_u32_relaxed(&arena_count);
  for (unsigned i = 0; i < n; i++) {
    medium_arena *c = &medium_arenas[arena_try(first_arena, i, n)];
    if (lock_try(&c->lock))
      return c;
  }
  medium_arena *a = &medium_arenas[first_arena];
  contention_count(CONTENTION_MEDIUM);
  lock_acquire(&a->lock);
  return a;
}

/* `first_arena`'s lock when it is free on lock_try_quick's path, with no frame; else
 * lock_an_arena_slow. */
static inline medium_arena *lock_an_arena(unsigned first_arena) {
  medium_arena *a = &medium_arenas[first_arena];
  if (FMM_LIKELY(lock_try_quick(&a->lock)))
    return a;
  return lock_an_arena_slow(first_arena);
}

void *medium_alloc(size_t user_size, unsigned first_arena) {
  medium_arena *a = lock_an_arena(first_arena);
  void *p = alloc_locked(a, user_size, 0);
  lock_release(&a->lock);
  return p;
}

void *medium_alloc_aligned(size_t user_size, size_t alignment, unsigned first_arena,
                           uint32_t keep) {
  medium_arena *a = lock_an_arena(first_arena);
  void *p = alloc_locked_aligned(a, user_size, alignment, 0, keep, 0);
  lock_release(&a->lock);
  return p;
}

void *medium_alloc_small_span(size_t user_size, unsigned arena) {
  medium_arena *a = &medium_arenas[arena];
  lock_acquire(&a->lock);
  /* Its header at a multiple of 16 KB, its size a multiple of it, so that the block covers its
   * 16 KB granules alone, headers included: each granule holds at most one span, whose record
   * names it (span_record.h), and a span touches no page of another's. */
  void *p = alloc_locked_aligned(a, user_size, SMALL_SPAN_MIN_BYTES, MEDIUM_FLAG_SMALL_SPAN, 0,
                                 MEDIUM_HEADER_SIZE);
  lock_release(&a->lock);
  return p;
}

void medium_set_flag(void *p, uint32_t flag, int on) {
  medium_header *h = medium_header_of(p);
  medium_arena *a = &medium_arenas[medium_arena_of(h->flags)];
  lock_acquire(&a->lock);
  h->flags = on ? (h->flags | flag) : (h->flags & ~flag);
  lock_release(&a->lock);
}

static FMM_NOINLINE void lock_arena_wait(medium_arena *a) {
  lock_acquire(&a->lock);
}

int medium_free(void *p) {
  medium_header *h = medium_header_of(p);
  medium_arena *a = &medium_arenas[medium_arena_of(h->flags)];
  /* Its common case inline: medium_free takes no frame for a lock that is free. */
  if (FMM_UNLIKELY(!lock_try_quick(&a->lock)))
    lock_arena_wait(a);
  /* Checked again under the lock: of two racing frees of one block, the second finds it free
   * (a block merged into its predecessor keeps a free-flagged header). */
  if ((h->flags & BLOCK_FLAG_FREE) || medium_arena_of(h->flags) != a->index) {
    lock_release(&a->lock);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  if (h->flags & MEDIUM_FLAG_SMALL_SPAN) {
    a->small_spans--;
    a->small_span_bytes -= h->size;
  } else {
    a->blocks_in_use--;
    a->bytes_in_use -= h->size - MEDIUM_HEADER_SIZE;
  }
  free_block(a, p);
  lock_release(&a->lock);
  return FASTMM_OK;
}

int medium_grow_in_place(void *p, size_t min_user, size_t want_user) {
  medium_header *h = medium_header_of(p);
  medium_arena *a = &medium_arenas[medium_arena_of(h->flags)];
  uint32_t min_size = block_size_for(min_user);
  uint32_t want_size =
      want_user > MEDIUM_SPAN_MAX_SIZE ? MEDIUM_SPAN_MAX_SIZE : block_size_for(want_user);
  int done = 0;
  lock_acquire(&a->lock);
  void *next = next_block(p);
  medium_header *nh = medium_header_of(next);
  if ((nh->flags & BLOCK_FLAG_FREE) && (size_t)h->size + nh->size >= min_size) {
    uint32_t old = h->size;
    bin_remove(a, next);
    h->size += nh->size;
    medium_header_of(next_block(p))->prev_size = h->size;
    /* Keep what the policy wants if the neighbour has it; give the rest back. */
    split(a, p, want_size < h->size ? (want_size > min_size ? want_size : min_size) : h->size);
    h->seal = medium_seal(p, h->size);
    a->bytes_in_use += h->size - old;
    done = 1;
  }
  lock_release(&a->lock);
  return done;
}

int medium_shrink_in_place(void *p, size_t new_user) {
  medium_header *h = medium_header_of(p);
  medium_arena *a = &medium_arenas[medium_arena_of(h->flags)];
  uint32_t size = block_size_for(new_user);
  if (h->size <= size)
    return 0;
  lock_acquire(&a->lock);
  uint32_t rest = h->size - size;
  /* What is cut off must make a free block of at least the smallest size: on its own, or with
   * a free next neighbour it merges into. Else nothing is cut and the caller decides. */
  if (rest < MEDIUM_MIN_BLOCK_SIZE && !(medium_header_of(next_block(p))->flags & BLOCK_FLAG_FREE)) {
    lock_release(&a->lock);
    return 0;
  }
  void *tail = cut_tail(p, size);
  h->seal = medium_seal(p, size);
  a->bytes_in_use -= rest;
  free_block(a, tail); /* merges with a free next neighbour; the span stays */
  lock_release(&a->lock);
  return 1;
}

size_t medium_release_spare(uint32_t up_to_tick) {
  size_t given = 0;
  for (unsigned i = 0; i < MEDIUM_SPARE_MAX_SPANS; i++) {
    medium_span *s = (medium_span *)fmm_xchg_ptr(&spare_spans[i], NULL);
    if (s == NULL)
      continue;
    if ((int32_t)(s->spare_since - up_to_tick) > 0 && fmm_cas_ptr(&spare_spans[i], NULL, s))
      continue; /* spare since after that tick: kept */
    size_t size = s->size;
    fmm_add_size(&medium_spare_total, (size_t)0 - size);
    unmap_span(s);
    given += size;
  }
  return given;
}
