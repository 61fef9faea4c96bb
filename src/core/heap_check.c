/* SPDX-License-Identifier: MIT */
/* The consistency walk: every span and block, every boundary tag, free list and bin, and the
 * counters, checked against each other. It takes every lock (small managers first, then the
 * medium arenas, the order the allocation paths use), so it sees a quiescent heap; each within
 * HEAP_CHECK_LOCK_TIMEOUT_MS, with lock_acquire_within as the block walk: a lock that stays held
 * (its thread ended by ExitProcess) gives FASTMM_CHECK_HEAP_LOCKED, nothing checked.
 * Result codes: 0 consistent; 1xx medium spans and bins (114: a live medium block's seal is not
 * its own); 2xx small spans (210: a record of its granules is not its own; 212: a span that does
 * not start 64-aligned; 213: a span's colour is not one span_create gives); 3xx large blocks. */
#include "heap.h"
#include "large.h"
#include "lock.h"
#include "medium.h"
#include "policy.h"
#include "small.h"

/* Per manager: row a < ARENA_COUNT is small_managers[a], row ARENA_COUNT the aligned managers. */
static size_t span_in_use[ARENA_COUNT + 1][SMALL_CLASS_COUNT];
static size_t span_count[ARENA_COUNT + 1][SMALL_CLASS_COUNT];

static small_manager *manager_at(unsigned row, unsigned c) {
  return row < ARENA_COUNT ? &small_managers[row][c] : &small_aligned_managers[c];
}

/* The records of span s's granules (span_record.h) are its own: 0 when one is not. */
static int records_match(const small_span *s, uint32_t slot) {
  const char *block = (const char *)small_span_block(s);
  const char *end = (const char *)s + SMALL_SPAN_HEADER_SIZE + (size_t)s->block_count * slot;
  for (const char *g = block; g < end; g += SPAN_RECORD_GRANULE) {
    const span_record *r = span_record_of((uintptr_t)g);
    if (r->header_bits != s->header_bits ||
        r->first_block != (uint32_t)((uintptr_t)s + SMALL_SPAN_HEADER_SIZE) ||
        r->slot_divisor != s->slot_divisor || r->carved_limit != s->carved_limit)
      return 0;
  }
  return 1;
}

static int check_small_span(small_span *s) {
  uint32_t tag = s->header_bits;
  unsigned c = small_header_class(tag);
  if ((tag & BLOCK_KIND_MASK) != BLOCK_FLAG_SMALL || c >= SMALL_CLASS_COUNT)
    return 201;
  small_manager *m = s->manager;
  unsigned a = m == &small_aligned_managers[c] ? ARENA_COUNT : m->arena;
  uint32_t slot = small_span_slot_size(s);
  if (a > ARENA_COUNT || m != manager_at(a, c) || slot != m->slot_size ||
      tag != small_header_make(c, slot, SMALL_SPAN_HEADER_SIZE) ||
      s->slot_divisor != small_slot_divisor(slot))
    return 202;
  if (((uintptr_t)s & (ALIGNMENT_SMALL_MAX - 1)) != 0)
    return 212; /* every span starts 64-aligned, so the aligned classes' blocks are aligned */
  uint32_t fed = (s->fed_end - SMALL_SPAN_HEADER_SIZE) / slot;
  if (s->fed_end < SMALL_SPAN_HEADER_SIZE || SMALL_SPAN_HEADER_SIZE + fed * slot != s->fed_end ||
      fed > s->block_count || s->blocks_in_use > fed ||
      s->carved_limit != fed * small_slot_step(s->slot_divisor, slot))
    return 203;
  if (!records_match(s, slot))
    return 210; /* a record of its granules says otherwise */
  for (uint32_t i = 0; i < fed; i++) {
    uint32_t offset = SMALL_SPAN_HEADER_SIZE + i * slot;
    uint32_t h = block_header((char *)s + offset);
    /* A live block may hold a debug block (DEBUG_OUTER); a free one never does. */
    if ((h & BLOCK_FLAG_FREE ? h & ~BLOCK_FLAG_FREE : h & ~BLOCK_FLAG_DEBUG_OUTER) !=
        small_header_make(c, slot, offset))
      return 204;
  }
  uint32_t free_count = 0;
  for (void *p = s->free_list; p != NULL; p = *(void **)p) {
    uintptr_t off = (uintptr_t)((char *)p - (char *)s);
    if (off < SMALL_SPAN_HEADER_SIZE || (off - SMALL_SPAN_HEADER_SIZE) % slot != 0 ||
        (off - SMALL_SPAN_HEADER_SIZE) / slot >= fed)
      return 205;
    if (!(block_header(p) & BLOCK_FLAG_FREE))
      return 206;
    if (++free_count > fed)
      return 207; /* a cycle */
  }
  if (free_count + s->blocks_in_use != fed)
    return 208;
  int has_room = s->free_list != NULL || fed < s->block_count;
  if (has_room != small_span_listed(s))
    return 209;
  span_in_use[a][c] += s->blocks_in_use;
  span_count[a][c]++;
  return 0;
}

static int check_arena(medium_arena *ar) {
  size_t free_blocks = 0, used = 0, used_bytes = 0, spans = 0, small_spans = 0, span_bytes = 0;
  for (list_node *n = ar->spans.next; n != &ar->spans; n = n->next) {
    medium_span *s = list_entry(n, medium_span, arena_link);
    if (s->magic != MEDIUM_SPAN_MAGIC || s->arena != ar->index ||
        s->size % LARGE_GRANULARITY != 0 ||
        s->size < MEDIUM_SPAN_SIZE_LOW_MEMORY + MEDIUM_SPAN_HEAD_BYTES ||
        s->size > MEDIUM_SPAN_MAX_SIZE + MEDIUM_SPAN_HEAD_BYTES)
      return 101;
    if (++spans > ar->span_count)
      return 102;
    span_bytes += s->size;
    char *end = (char *)s + s->size;
    char *p = (char *)s + MEDIUM_SPAN_BLOCKS_OFFSET + MEDIUM_HEADER_SIZE;
    uint32_t prev_size = 0;
    int prev_free = 0;
    while (p < end) {
      medium_header *h = medium_header_of(p);
      uint32_t kind = h->flags & BLOCK_KINDS;
      if (kind != BLOCK_FLAG_MEDIUM || medium_arena_of(h->flags) != ar->index ||
          (h->flags & MEDIUM_FLAG_SENTINEL))
        return 103;
      if (h->prev_size != prev_size)
        return 104;
      if (h->size < MEDIUM_MIN_BLOCK_SIZE || (h->size & 15u) || h->size > (size_t)(end - p))
        return 105;
      int is_free = (h->flags & BLOCK_FLAG_FREE) != 0;
      if (is_free && prev_free)
        return 106; /* two free neighbours were not merged */
      if (!is_free && h->seal != medium_seal(p, h->size))
        return 114; /* a live block's seal is not that of its place and size */
      if (is_free) {
        free_blocks++;
      } else if (h->flags & MEDIUM_FLAG_SMALL_SPAN) {
        small_spans++;
        if (!small_span_colour_valid(small_span_colour(p)))
          return 213;
        int fault = check_small_span(small_span_in_block(p));
        if (fault)
          return fault;
      } else {
        used++;
        used_bytes += h->size - MEDIUM_HEADER_SIZE;
      }
      prev_free = is_free;
      prev_size = h->size;
      p += h->size;
    }
    medium_header *sentinel = medium_header_of(end);
    if (p != end || !(sentinel->flags & MEDIUM_FLAG_SENTINEL) || sentinel->prev_size != prev_size)
      return 107;
  }
  if (spans != ar->span_count || used != ar->blocks_in_use || used_bytes != ar->bytes_in_use ||
      small_spans != ar->small_spans || span_bytes != ar->span_bytes)
    return 108;
  size_t binned = 0;
  for (unsigned b = 0; b < MEDIUM_BIN_COUNT; b++) {
    const list_node *bin = &ar->bins[b];
    int bit = (ar->bin_bitmap[b >> 5] >> (b & 31u)) & 1u;
    if (bit != !list_empty(bin))
      return 109;
    for (const list_node *n = bin->next; n != bin; n = n->next) {
      if (!(medium_header_of(n)->flags & BLOCK_FLAG_FREE) || n->next->prev != n)
        return 110;
      if (++binned > free_blocks)
        return 111;
    }
  }
  for (unsigned g = 0; g < MEDIUM_BIN_GROUPS; g++)
    if (((ar->group_bitmap >> g) & 1u) != (ar->bin_bitmap[g] != 0))
      return 112;
  if (binned != free_blocks)
    return 113;
  return 0;
}

#define CHECK_LOCK_TIMEOUT_NS ((uint64_t)HEAP_CHECK_LOCK_TIMEOUT_MS * 1000000u)

int heap_check(void) {
  heap_ensure_initialized();
  int fault = 0;
  /* The lock order of the allocation paths: small managers (the arenas', then the aligned
   * ones), then medium arenas. Counted as taken, so that a lock not had in time lets go of
   * exactly those. */
  unsigned small_held = 0, medium_held = 0;
  for (unsigned a = 0; a <= ARENA_COUNT && !fault; a++)
    for (unsigned c = 0; c < SMALL_CLASS_COUNT && !fault; c++) {
      if (!lock_acquire_within(&manager_at(a, c)->lock, CHECK_LOCK_TIMEOUT_NS)) {
        fault = FASTMM_CHECK_HEAP_LOCKED;
        continue;
      }
      small_held++;
      span_in_use[a][c] = 0;
      span_count[a][c] = 0;
    }
  for (unsigned a = 0; a < ARENA_COUNT && !fault; a++) {
    if (lock_acquire_within(&medium_arenas[a].lock, CHECK_LOCK_TIMEOUT_NS))
      medium_held++;
    else
      fault = FASTMM_CHECK_HEAP_LOCKED;
  }
  for (unsigned a = 0; a < ARENA_COUNT && !fault; a++)
    fault = check_arena(&medium_arenas[a]);
  for (unsigned a = 0; a <= ARENA_COUNT && !fault; a++)
    for (unsigned c = 0; c < SMALL_CLASS_COUNT && !fault; c++) {
      small_manager *m = manager_at(a, c);
      if (span_in_use[a][c] != m->blocks_in_use || span_count[a][c] != m->span_count)
        fault = 210;
      for (list_node *n = m->spans_with_room.next; n != &m->spans_with_room && !fault;
           n = n->next) {
        small_span *s = list_entry(n, small_span, room_link);
        if (!small_span_listed(s) || s->manager != m || n->next->prev != n)
          fault = 211;
      }
    }
  for (unsigned a = medium_held; a-- > 0;)
    lock_release(&medium_arenas[a].lock);
  for (unsigned i = 0; i < small_held; i++)
    lock_release(&manager_at(i / SMALL_CLASS_COUNT, i % SMALL_CLASS_COUNT)->lock);
  if (!fault)
    fault = large_check(CHECK_LOCK_TIMEOUT_NS);
  return fault;
}
