/* SPDX-License-Identifier: MIT */
/* Small blocks: one manager per (arena, size class) owns spans of equal slots. A span is a
 * medium block; its blocks are carved in address order on demand and freed blocks go onto the
 * span's own free list, so a span whose blocks are all back is recognised at once and returned
 * to its medium arena. Managers are locked only on thread-cache refills and flushes. */
#include "small.h"

#include "arena.h"
#include "contention.h"
#include "medium.h"
#include "prim/prim.h"
#include "release.h"
#include "size_class.h"
#include "span_record.h"

small_manager small_managers[ARENA_COUNT][SMALL_CLASS_COUNT];
small_manager small_aligned_managers[SMALL_CLASS_COUNT];
/* A span's medium block: its user bytes, short of a multiple of 16 KB by the medium header, so that
 * spans placed at multiples of 16 KB pack with no gap (medium_alloc_small_span). */
static uint32_t packed(uint32_t bytes) {
  uint32_t granules = (bytes + SMALL_SPAN_MIN_BYTES - 1u) / SMALL_SPAN_MIN_BYTES;
  return granules * SMALL_SPAN_MIN_BYTES - MEDIUM_HEADER_SIZE;
}

static void manager_init(small_manager *m, unsigned c, unsigned arena) {
  uint32_t slot = size_class_slot[c];
  uint32_t bytes = slot * SMALL_SPAN_TARGET_BLOCKS;
  if (bytes < SMALL_SPAN_MIN_BYTES)
    bytes = SMALL_SPAN_MIN_BYTES;
  if (bytes > SMALL_SPAN_MAX_BYTES)
    bytes = SMALL_SPAN_MAX_BYTES;
  bytes = packed(bytes);
  m->class_index = c;
  m->arena = arena;
  m->slot_size = slot;
  m->span_bytes = bytes;
  list_init(&m->spans_with_room);
}

void small_init(void) {
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
      manager_init(&small_managers[a][c], c, a);
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
    small_manager *m = &small_aligned_managers[c];
    manager_init(m, c, 0);
    m->keep_alignment = m->slot_size % 64u == 0 ? 64u : m->slot_size % 32u == 0 ? 32u : 0u;
  }
}

static void room_insert(small_manager *m, small_span *s) {
  list_insert_after(&m->spans_with_room, &s->room_link);
}

static void room_remove(small_span *s) {
  list_remove(&s->room_link);
  s->room_link.next = NULL;
}

/* The granules of span s: from its medium block's header (at a multiple of 16 KB) to the end of
 * its last slot. */
static unsigned span_granules(const small_span *s, const small_manager *m) {
  uint32_t bytes = (uint32_t)((uintptr_t)s & (SMALL_SPAN_MIN_BYTES - 1u)) + SMALL_SPAN_HEADER_SIZE +
                   (uint32_t)s->block_count * m->slot_size;
  return (unsigned)((bytes + SPAN_RECORD_GRANULE - 1u) >> SPAN_RECORD_GRANULE_SHIFT);
}

/* Writes s's record into each of its granules, the header bits last, so that a reader that sees
 * them sees the rest; or clears them (bits 0 first). FreeMem reads records unlocked: each field
 * is an aligned word, old or new, and a record that does not match sends a pointer to the slow
 * path, which reads it again under no lock either but refuses only what no span holds. */
static void records_write(const small_span *s, const small_manager *m, uint32_t bits) {
  const char *granule = (const char *)small_span_block(s);
  unsigned n = span_granules(s, m);
  for (unsigned i = 0; i < n; i++, granule += SPAN_RECORD_GRANULE) {
    span_record *r = span_record_at(granule);
    if (bits == 0) {
      fmm_store_u32_relaxed(&r->header_bits, 0);
      fmm_store_u32_relaxed(&r->carved_limit, 0);
      continue;
    }
    r->first_block = (uint32_t)((uintptr_t)s + SMALL_SPAN_HEADER_SIZE);
    r->slot_divisor = s->slot_divisor;
    fmm_store_u32_relaxed(&r->carved_limit, s->carved_limit);
    fmm_store_u32_release(&r->header_bits, bits);
  }
}

/* s carved more slots: its records' carved limits follow (each an aligned word, old or new). */
static void records_carved(const small_span *s, const small_manager *m) {
  const char *granule = (const char *)small_span_block(s);
  unsigned n = span_granules(s, m);
  for (unsigned i = 0; i < n; i++, granule += SPAN_RECORD_GRANULE)
    fmm_store_u32_relaxed(&span_record_at(granule)->carved_limit, s->carved_limit);
}

static small_span *span_create(small_manager *m) {
  /* The first spans are smaller (policy.h, SMALL_SPAN_GROW_SPANS). */
  uint32_t bytes = m->span_bytes;
  if (m->span_count < SMALL_SPAN_GROW_SPANS) {
    uint32_t early = packed(SMALL_SPAN_MIN_BYTES << m->span_count);
    if (early < bytes)
      bytes = early;
  }
  void *mem = medium_alloc_small_span(bytes, m->arena);
  if (mem == NULL)
    return NULL;
  uint32_t colour =
      SMALL_SPAN_PACKING * (1u + m->class_index % SMALL_SPAN_COLOURS) - MEDIUM_HEADER_SIZE;
  *(uint32_t *)mem = colour;
  small_span *s = small_span_in_block(mem);
  /* The blocks stay within the span's bytes, its granules (medium_alloc_small_span), though the
   * medium block may be longer by a tail too short to cut off. */
  size_t usable = medium_usable(mem);
  if (usable > bytes)
    usable = bytes;
  usable -= colour;
  s->manager = m;
  s->free_list = NULL;
  s->blocks_in_use = 0;
  /* The last block's data ends 4 bytes before its slot does. */
  s->block_count = (uint16_t)((usable - SMALL_SPAN_HEADER_SIZE + BLOCK_HEADER_SIZE) / m->slot_size);
  s->slot_divisor = small_slot_divisor(m->slot_size);
  s->carved_limit = 0;
  s->fed_end = SMALL_SPAN_HEADER_SIZE;
  /* Last: from here on FreeMem may find the span (its blocks are handed out after this). */
  s->header_bits = small_header_make(m->class_index, m->slot_size, SMALL_SPAN_HEADER_SIZE) &
                   SMALL_HEADER_TAG_MASK;
  records_write(s, m, s->header_bits);
  m->span_count++;
  m->span_bytes_held += medium_usable(mem);
  room_insert(m, s);
  return s;
}

/* A span whose blocks are all back goes to its medium arena at once. Keeping one per manager
 * would pin the medium span under it (168 managers can pin as many spans); the thread caches
 * already absorb alloc/free loops, and the medium arenas keep spare spans for bursts. */
static void span_release(small_manager *m, small_span *s) {
  room_remove(s);
  records_write(s, m, 0);
  s->header_bits = 0;
  m->span_count--;
  m->span_bytes_held -= medium_usable(small_span_block(s));
  medium_free(small_span_block(s));
  release_poll(); /* the medium span may have become a spare (release.h) */
}

/* Frees one FREE-flagged block of m's class into its span; m->lock is held. */
static void free_into_span(small_manager *m, void *p) {
  small_span *s = small_span_of(p, block_header(p));
  *(void **)p = s->free_list;
  s->free_list = p;
  s->blocks_in_use--;
  m->blocks_in_use--;
  if (!small_span_listed(s))
    room_insert(m, s);
  if (s->blocks_in_use == 0)
    span_release(m, s);
}

void small_drain_pending(small_manager *m) {
  void *p = fmm_load_ptr_acquire(&m->pending_free) ? fmm_xchg_ptr(&m->pending_free, NULL) : NULL;
  while (p != NULL) {
    void *next = *(void **)p;
    free_into_span(m, p);
    p = next;
  }
}

void small_drain_all_pending(void) {
  for (unsigned a = 0; a < ARENA_COUNT; a++)
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
      small_manager *m = &small_managers[a][c];
      if (fmm_load_ptr_acquire(&m->pending_free) == NULL)
        continue;
      lock_acquire(&m->lock);
      small_drain_pending(m);
      lock_release(&m->lock);
    }
}

/* The first of m's spans with room, a new one if it has none (m->lock held); NULL when memory is
 * exhausted. */
static small_span *span_with_room(small_manager *m) {
  list_node *first = m->spans_with_room.next;
  if (FMM_LIKELY(first != &m->spans_with_room))
    return list_entry(first, small_span, room_link);
  return span_create(m);
}

/* Takes up to `want` (at least 1) FREE-flagged blocks from span s of m (on m's list of spans with
 * room, m->lock held): its free list's first, then blocks carved in address order. The first is
 * stored at *link, each next one in the first word of the one before; returns where the address
 * after the last one goes (the caller's to fill). m's blocks_in_use grows by how many it took.
 * The counts, the carved end and the room list are updated once for the whole batch: a refill
 * costs a few instructions a block, where taking them one at a time cost about 40
 * (fc_fragmentation's refills from spans 80% free). No local's address is taken here or in the
 * callers (ASan's detect_stack_use_after_return would give their frames a fake stack, whose
 * pages test_idle_release counts). */
static void **take_from_span(small_manager *m, small_span *s, unsigned want, void **link) {
  unsigned n = 0;
  void *p = s->free_list;
  if (p != NULL) {
    void *first = p, **tail;
    do {
      tail = (void **)p;
      p = *(void **)p;
    } while (++n < want && p != NULL);
    s->free_list = p;
    *link = first; /* after the walk: link may be the first block's own word (small_take_aligned) */
    link = tail;
  }
  uint32_t end = SMALL_SPAN_HEADER_SIZE + (uint32_t)s->block_count * m->slot_size;
  if (n < want && s->fed_end < end) {
    uint32_t offset = s->fed_end, carved = 0;
    do {
      void *b = (char *)s + offset;
      block_set_header(b,
                       small_header_make(m->class_index, m->slot_size, offset) | BLOCK_FLAG_FREE);
      *link = b;
      link = (void **)b;
      offset += m->slot_size;
      carved++;
    } while (++n < want && offset < end);
    s->fed_end = offset;
    /* The blocks carved are handed out only after the lock is released, so every FreeMem of one
     * finds the records' new limit. */
    s->carved_limit += carved * small_slot_step(s->slot_divisor, m->slot_size);
    records_carved(s, m);
  }
  s->blocks_in_use = (uint16_t)(s->blocks_in_use + n);
  m->blocks_in_use += n;
  if (s->free_list == NULL && s->fed_end == end)
    room_remove(s);
  return link;
}

static small_manager *lock_some_manager(unsigned class_index, unsigned arena) {
  unsigned n = fmm_load_u32_relaxed(&arena_count);
  for (unsigned i = 0; i < n; i++) {
    small_manager *m = &small_managers[arena_try(arena, i, n)][class_index];
    if (lock_try(&m->lock))
      return m;
  }
  small_manager *m = &small_managers[arena][class_index];
  contention_count(CONTENTION_SMALL); /* every arena's manager of the class is locked */
  lock_acquire(&m->lock);
  return m;
}

unsigned small_take_blocks(unsigned class_index, unsigned arena, void **list, unsigned want) {
  small_manager *m = lock_some_manager(class_index, arena);
  unsigned got = 0;
  /* The list keeps the order the blocks were taken in: blocks carved from a span go out in
   * address order, so a thread that allocates many of a class in a row gets them one after the
   * other in memory, as a walk over them reads best (fc_access_speed). It is built through
   * `link`, where the next block's address goes: first the caller's *list, then each block's
   * first word. */
  void **link = list;
  /* Blocks another thread freed while we held the lock are still counted in use: hand them
   * out as they are. */
  void *pending =
      fmm_load_ptr_acquire(&m->pending_free) ? fmm_xchg_ptr(&m->pending_free, NULL) : NULL;
  while (pending != NULL && got < want) {
    *link = pending;
    link = (void **)pending;
    pending = *(void **)pending;
    got++;
  }
  while (pending != NULL) {
    void *next = *(void **)pending;
    free_into_span(m, pending);
    pending = next;
  }
  size_t in_use = m->blocks_in_use;
  while (got < want) {
    small_span *s = span_with_room(m);
    if (s == NULL)
      break;
    link = take_from_span(m, s, want - got, link);
    got += (unsigned)(m->blocks_in_use - in_use);
    in_use = m->blocks_in_use;
  }
  *link = NULL;
  fmm_store_u32_relaxed(&m->taken, m->taken + got);
  lock_release(&m->lock);
  return got;
}

static void push_pending(small_manager *m, void *p) {
  void *old;
  do {
    old = fmm_load_ptr_acquire(&m->pending_free);
    *(void **)p = old;
  } while (!fmm_cas_ptr(&m->pending_free, old, p));
}

void small_return_blocks(void *list) {
  small_manager *held = NULL;
  while (list != NULL) {
    void *p = list;
    list = *(void **)p;
    small_manager *m = small_span_of(p, block_header(p))->manager;
    if (m != held) {
      if (held)
        lock_release(&held->lock);
      held = lock_try(&m->lock) ? m : NULL;
    }
    if (held)
      free_into_span(m, p);
    else
      push_pending(m, p); /* never wait in FreeMem: the lock owner or the next one drains it */
  }
  if (held) {
    small_drain_pending(held);
    lock_release(&held->lock);
  }
}

void small_return_block(void *p) {
  uint32_t h = block_header(p) | BLOCK_FLAG_FREE;
  block_set_header(p, h);
  small_manager *m = small_span_of(p, h)->manager;
  if (!lock_try(&m->lock)) {
    push_pending(m, p); /* never wait in FreeMem: the lock owner or the next one drains it */
    return;
  }
  free_into_span(m, p);
  small_drain_pending(m);
  lock_release(&m->lock);
}

void *small_take_aligned(unsigned class_index) {
  small_manager *m = &small_aligned_managers[class_index];
  lock_acquire(&m->lock);
  small_drain_pending(m);
  void *p = NULL;
  small_span *s = span_with_room(m);
  if (s != NULL) {
    /* The one block goes at the span's free-list head or its carved end: its address is known
     * before it is taken, and its own first word serves as the link, which the caller's data
     * overwrites. */
    p = s->free_list != NULL ? s->free_list : (char *)s + s->fed_end;
    take_from_span(m, s, 1u, (void **)p);
  }
  lock_release(&m->lock);
  if (p != NULL)
    block_set_header(p, block_header(p) & ~BLOCK_FLAG_FREE);
  return p;
}
