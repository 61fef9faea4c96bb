/* SPDX-License-Identifier: MIT */
/* Debug blocks (the layout is in debug_block.h): FastMM5's header and footer, checksummed,
 * stamped with who allocated and freed them, quarantined after free. The registry
 * (debug_registry.h) says which blocks exist; its lock is held while a block's state is looked
 * at or changed, never while a report runs or the heap is called. */
#include "debug_block.h"

#include <string.h>

#include "core/copy.h"
#include "core/heap.h"
#include "core/inline_paths.h"
#include "debug_registry.h"
#include "debug_report.h"
#include "debug_settings.h"
#include "gate.h"
#include "prim/prim.h"
#include "stack_trace.h"

static void (*freed_object_handler)(void);

/* ---- checksums (FastMM5's: xor of 32-bit words, seeded with all ones) -------------------- */

static uint32_t xor_words(const unsigned char *b, size_t bytes) {
  uint32_t x = 0xFFFFFFFFu;
  for (size_t i = 0; i + 4u <= bytes; i += 4u) {
    uint32_t w;
    memcpy(&w, b + i, sizeof w);
    x ^= w;
  }
  return x;
}

#define HEADER_CHECKED_FROM (offsetof(debug_header, header_checksum) + 4u)

static uint32_t debug_header_checksum(const debug_header *h) {
  return xor_words((const unsigned char *)h + HEADER_CHECKED_FROM,
                   DEBUG_HEADER_SIZE - HEADER_CHECKED_FROM);
}

static uint32_t debug_footer_checksum(const debug_header *h) {
  return xor_words(debug_footer_of(h) + DEBUG_FOOTER_CHECKSUM_SIZE,
                   2u * h->stack_trace_entry_count * sizeof(void *));
}

static uint32_t stored_footer_checksum(const debug_header *h) {
  uint32_t c;
  memcpy(&c, debug_footer_of(h), sizeof c);
  return c;
}

static void set_footer_checksum(debug_header *h) {
  uint32_t c = debug_footer_checksum(h);
  memcpy(debug_footer_of(h), &c, sizeof c);
}

static int has_checksums(const debug_header *h) {
  return (h->debug_feature_flags & FASTMM_DEBUG_FEATURE_CHECKSUMS) != 0;
}

/* The allocation trace (0) or the free trace (1) in the footer. */
static unsigned char *trace_of(const debug_header *h, int which) {
  return debug_footer_of(h) + DEBUG_FOOTER_CHECKSUM_SIZE +
         (size_t)which * h->stack_trace_entry_count * sizeof(void *);
}

/* ---- the freed-object traps ---------------------------------------------------------------
 * A freed block's first pointer is aimed at the middle of this table, so a virtual method
 * called on a freed Delphi or Free Pascal object (at a positive or a negative VMT offset) lands
 * in a trap, which knows its slot and gets the object in Self (Delphi's convention: EAX on
 * Win32; MSVC's Win32 build cannot take it and reports without the object). */
#define TRAP_SLOTS 128
#define TRAP_FIRST (-(TRAP_SLOTS / 2))
#if defined(_WIN32) && !defined(_WIN64) && !defined(__GNUC__)
#define TRAP_CALL
#define TRAP_SELF(self) ((void)(self), (void *)NULL)
#else
#define TRAP_CALL FASTMM_DELPHI_CALL
#define TRAP_SELF(self) (self)
#endif

static void freed_object_call(void *self, int slot, const void *call_site);

#define TRAP(a, b)                                                                                 \
  static void TRAP_CALL trap_##a##_##b(void *self) {                                               \
    freed_object_call(TRAP_SELF(self), (a)*8 + (b) + TRAP_FIRST, FMM_RETURN_ADDRESS());            \
  }
#define TRAP_ROW(a)                                                                                \
  TRAP(a, 0) TRAP(a, 1) TRAP(a, 2) TRAP(a, 3) TRAP(a, 4) TRAP(a, 5) TRAP(a, 6) TRAP(a, 7)
TRAP_ROW(0)
TRAP_ROW(1)
TRAP_ROW(2)
TRAP_ROW(3)
TRAP_ROW(4)
TRAP_ROW(5)
TRAP_ROW(6)
TRAP_ROW(7)
TRAP_ROW(8)
TRAP_ROW(9)
TRAP_ROW(10)
TRAP_ROW(11)
TRAP_ROW(12)
TRAP_ROW(13)
TRAP_ROW(14)
TRAP_ROW(15)
#undef TRAP
#define TRAP(a, b) (void (*)(void))(uintptr_t) trap_##a##_##b,
static void (*const freed_object_vmt[TRAP_SLOTS])(void) = {
    TRAP_ROW(0) TRAP_ROW(1) TRAP_ROW(2) TRAP_ROW(3) TRAP_ROW(4) TRAP_ROW(5) TRAP_ROW(6) TRAP_ROW(7)
        TRAP_ROW(8) TRAP_ROW(9) TRAP_ROW(10) TRAP_ROW(11) TRAP_ROW(12) TRAP_ROW(13) TRAP_ROW(14)
            TRAP_ROW(15)};
#undef TRAP

static void *trap_vmt(void) {
  return (void *)&freed_object_vmt[-TRAP_FIRST];
}

/* ---- fill patterns ------------------------------------------------------------------------ */

/* A block big enough for an object (a VMT pointer and Delphi's monitor field) gets the trap
 * table in its first pointer (FastMM5's TFastMM_FreedObject). */
static int gets_trap(size_t size) {
  return size >= 2u * sizeof(void *);
}

static void fill_freed(unsigned char *u, size_t size) {
  memset(u, DEBUG_FILL_FREED, size);
  if (gets_trap(size)) {
    void *vmt = trap_vmt();
    memcpy(u, &vmt, sizeof vmt);
  }
}

static unsigned char freed_byte(size_t i, size_t size, const unsigned char *vmt) {
  return i < sizeof(void *) && gets_trap(size) ? vmt[i] : (unsigned char)DEBUG_FILL_FREED;
}

static int freed_fill_intact(const debug_header *h) {
  const unsigned char *u = (const unsigned char *)(h + 1);
  size_t size = (size_t)h->user_size, i = 0;
  if (gets_trap(size)) {
    void *first;
    memcpy(&first, u, sizeof first);
    if (first != trap_vmt())
      return 0;
    i = sizeof(void *);
  }
  /* Eight bytes at a time: a check reads up to a whole block. */
  const uint64_t fill = (uint64_t)DEBUG_FILL_FREED * 0x0101010101010101ull;
  for (; i + sizeof fill <= size; i += sizeof fill) {
    uint64_t w;
    memcpy(&w, u + i, sizeof w);
    if (w != fill)
      return 0;
  }
  for (; i < size; i++)
    if (u[i] != DEBUG_FILL_FREED)
      return 0;
  return 1;
}

/* The changed runs of a freed block's data, as FastMM5 logs them (token 15). */
static void changed_ranges(const debug_header *h, fastmm_debug_event *e) {
  const unsigned char *u = (const unsigned char *)(h + 1);
  size_t size = (size_t)h->user_size, i = 0;
  void *vmt_ptr = trap_vmt();
  unsigned char vmt[sizeof(void *)];
  memcpy(vmt, &vmt_ptr, sizeof vmt);
  e->modified_range_count = 0;
  while (i < size && e->modified_range_count < FASTMM_DEBUG_EVENT_RANGES) {
    if (u[i] == freed_byte(i, size, vmt)) {
      i++;
      continue;
    }
    size_t start = i;
    while (i < size && u[i] != freed_byte(i, size, vmt))
      i++;
    fastmm_debug_modified_range *r = &e->modified_ranges[e->modified_range_count++];
    r->offset = (uint32_t)start;
    r->length = (uint32_t)(i - start);
  }
}

/* ---- examining a registered block (registry lock held) ----------------------------------- */

/* Is all of [p, p + size) in regions of ours (so it can be read)? */
static int range_ours(const void *p, size_t size) {
  uintptr_t a = (uintptr_t)p, end = a + size;
  if (end < a)
    return 0;
  for (; a < end; a = (a | ((1u << PAGE_MAP_REGION_SHIFT) - 1u)) + 1u)
    if (page_map_get((const void *)a) == REGION_NOT_OURS)
      return 0;
  return size == 0 || page_map_get((const void *)(end - 1u)) != REGION_NOT_OURS;
}

/* May p be the user pointer of a debug block: 16-aligned, and its whole header in our memory? */
static int header_ours(const void *p) {
  return ((uintptr_t)p & (BLOCK_ALIGNMENT - 1u)) == 0 && (uintptr_t)p > DEBUG_HEADER_SIZE &&
         range_ours(debug_header_of(p), DEBUG_HEADER_SIZE);
}

/* Does the header (with the outer block's usable bytes) describe a block that fits? Nothing
 * past the header is read before this holds. */
static int header_fits(const debug_header *h, size_t usable, int16_t flags) {
  return usable != 0 && h->debug_block_flags == flags && (h->debug_feature_flags & ~3u) == 0 &&
         h->stack_trace_entry_count <= DEBUG_STACK_DEPTH_MAX && h->user_size >= 0 &&
         (size_t)h->user_size <= usable &&
         DEBUG_HEADER_SIZE + (size_t)h->user_size + debug_footer_size(h->stack_trace_entry_count) <=
             usable;
}

/* A registered block in `state` (LIVE or QUARANTINED) as it is now: FASTMM_EVENT_NONE when
 * intact, else the fault, with *e filled for the report. *usable gets the outer block's usable
 * bytes. */
static fastmm_event_kind examine(const debug_header *h, debug_entry_state state, size_t *usable,
                                 fastmm_debug_event *e) {
  const void *user = h + 1;
  *usable = heap_outer_usable(h);
  int freed = state == DEBUG_ENTRY_QUARANTINED;
  if (!header_fits(h, *usable, freed ? FASTMM_DEBUG_BLOCK_FREED : FASTMM_DEBUG_BLOCK_LIVE) ||
      (has_checksums(h) && h->header_checksum != debug_header_checksum(h))) {
    debug_event_init(e, FASTMM_EVENT_HEADER_CORRUPTED, user, NULL);
    return FASTMM_EVENT_HEADER_CORRUPTED;
  }
  if (has_checksums(h) && stored_footer_checksum(h) != debug_footer_checksum(h)) {
    debug_event_init(e, FASTMM_EVENT_GUARD_CORRUPTED, user, h);
    return FASTMM_EVENT_GUARD_CORRUPTED;
  }
  if (freed && (h->debug_feature_flags & FASTMM_DEBUG_FEATURE_FILL_PATTERN) &&
      !freed_fill_intact(h)) {
    debug_event_init(e, FASTMM_EVENT_WRITE_AFTER_FREE, user, h);
    changed_ranges(h, e);
    return FASTMM_EVENT_WRITE_AFTER_FREE;
  }
  return FASTMM_EVENT_NONE;
}

int debug_header_intact(const debug_header *h) {
  size_t usable = heap_outer_usable(h);
  int16_t flags = h->debug_block_flags == FASTMM_DEBUG_BLOCK_FREED ? FASTMM_DEBUG_BLOCK_FREED
                                                                   : FASTMM_DEBUG_BLOCK_LIVE;
  return header_fits(h, usable, flags) &&
         (!has_checksums(h) || h->header_checksum == debug_header_checksum(h));
}

/* The event for a pointer whose debug block is not registered: one freed long ago (its outer
 * block freed since; FastMM5 trusts a header that still says freed and passes its checksum), or
 * no debug block at all. */
static void unregistered_event(fastmm_debug_event *e, const void *p, fastmm_event_kind freed_kind) {
  const debug_header *h = debug_header_of(p);
  if (header_ours(p) && h->debug_block_flags == FASTMM_DEBUG_BLOCK_FREED &&
      (!has_checksums(h) || h->header_checksum == debug_header_checksum(h))) {
    int traces = h->stack_trace_entry_count <= DEBUG_STACK_DEPTH_MAX && h->user_size >= 0 &&
                 range_ours(debug_footer_of(h), debug_footer_size(h->stack_trace_entry_count));
    debug_event_init(e, freed_kind, p, traces ? h : NULL);
    if (!traces) /* the header alone: its footer is out of reach */
      e->debug_header = NULL;
    return;
  }
  debug_event_init(e, FASTMM_EVENT_INVALID_POINTER, p, NULL);
}

/* The outer block's kind, for the quarantine's statistics. */
static debug_outer_kind outer_kind_of(const debug_header *h, size_t usable) {
  uint32_t w = block_header(h) & ~BLOCK_FLAG_DEBUG_OUTER;
  debug_outer_kind k;
  k.kind = (uint8_t)(w & BLOCK_KINDS);
  k.small_class = (uint8_t)(k.kind == BLOCK_FLAG_SMALL ? small_header_class(w) : 0);
  k.usable = usable;
  return k;
}

/* ---- the quarantine ----------------------------------------------------------------------- */

/* Leaving the quarantine, a batch at a time while it is over the limits (registry lock held):
 * each block is checked once more; an intact one leaves the registry and goes to out[] for its
 * outer block to be freed after the lock is released; one written to is kept out of use for
 * good (HELD), its event in *e (*damaged set), and the batch stops there. Returns how many went
 * to out[]. */
#define TRIM_BATCH 8u
typedef struct trim_batch {
  debug_header *out[TRIM_BATCH];
  size_t count;
  int damaged;
  fastmm_debug_event e;
} trim_batch;

static void trim_locked(size_t max_blocks, size_t max_bytes, trim_batch *b) {
  b->count = 0;
  b->damaged = 0;
  while (b->count < TRIM_BATCH) {
    debug_header *h = (debug_header *)debug_quarantine_pop_over(max_blocks, max_bytes);
    if (h == NULL)
      return;
    size_t usable;
    if (examine(h, DEBUG_ENTRY_QUARANTINED, &usable, &b->e) != FASTMM_EVENT_NONE) {
      debug_registry_set_state(h, DEBUG_ENTRY_HELD);
      b->damaged = 1;
      return;
    }
    debug_registry_remove(h);
    b->out[b->count++] = h;
  }
}

/* The rest of a batch, without the lock; returns whether the quarantine may still be over. */
static int trim_finish(trim_batch *b) {
  for (size_t i = 0; i < b->count; i++) {
    /* The freed header stays in the freed outer block, as in FastMM5: a later free of the
     * pointer is still recognised as a double free while the memory is not reused. */
    debug_header *h = b->out[i];
    heap_set_debug_outer(h, 0);
    heap_free(h);
  }
  if (b->damaged)
    debug_report(&b->e, NULL);
  return b->damaged || b->count == TRIM_BATCH;
}

static void quarantine_trim(size_t max_blocks, size_t max_bytes) {
  trim_batch b;
  do {
    debug_registry_lock();
    trim_locked(max_blocks, max_bytes, &b);
    debug_registry_unlock();
  } while (trim_finish(&b));
}

void debug_flush_quarantine(void) {
  quarantine_trim(0, 0);
}

/* ---- GetMem, FreeMem, ReallocMem of debug blocks ------------------------------------------ */

void *debug_get(size_t size, const void *caller, int fill) {
  unsigned n = debug_stack_depth();
  uint32_t options = debug_options();
  size_t footer = debug_footer_size(n);
  if (size > MAX_REQUEST_SIZE - DEBUG_HEADER_SIZE - footer)
    return NULL;
  void *frames[DEBUG_STACK_DEPTH_MAX];
  stack_trace_capture(frames, n, caller);
  unsigned char *outer = (unsigned char *)heap_get(DEBUG_HEADER_SIZE + size + footer);
  if (outer == NULL)
    return NULL;
  debug_header *h = (debug_header *)outer;
  memset(h, 0, DEBUG_HEADER_SIZE);
  h->user_size = (intptr_t)size;
  h->stack_trace_entry_count = (uint8_t)n;
  h->allocation_group = debug_allocation_group();
  h->allocation_number = debug_next_allocation_number();
  h->allocation_tick_count = prim_tick_count_ms();
  h->allocated_by_thread = prim_thread_id();
  h->debug_block_flags = FASTMM_DEBUG_BLOCK_LIVE;
  if (!(options & FASTMM_DMO_NO_BLOCK_CHECKSUMS))
    h->debug_feature_flags = FASTMM_DEBUG_FEATURE_CHECKSUMS;
  unsigned char *f = debug_footer_of(h);
  memset(f, 0, footer);
  memcpy(trace_of(h, 0), frames, n * sizeof(void *));
  if (has_checksums(h)) {
    h->header_checksum = debug_header_checksum(h);
    set_footer_checksum(h);
  }
  /* While an erase mode is on a block is always filled (FastMM5). */
  if (fill &&
      (!(options & FASTMM_DMO_NO_BLOCK_FILL_PATTERNS) || (mode_now() & MODE_ERASE_ALLOCATED)))
    memset(h + 1, DEBUG_FILL_ALLOCATED, size);
  heap_set_debug_outer(outer, 1);
  debug_registry_lock();
  int added = debug_registry_add(h);
  debug_registry_unlock();
  if (!added) {
    heap_set_debug_outer(outer, 0);
    h->debug_block_flags = 0;
    heap_free(outer);
    return NULL;
  }
  if (debug_break_wanted(h->allocation_number))
    prim_debug_break();
  return h + 1;
}

/* The event for a pointer that is not a live, intact debug block (registry lock held, released
 * here): `freed_kind` for one already freed. */
static void refuse(fastmm_debug_event *e, void *p, debug_entry_state state,
                   fastmm_event_kind freed_kind) {
  const debug_header *h = debug_header_of(p);
  size_t usable;
  if (state == DEBUG_ENTRY_QUARANTINED) {
    fastmm_event_kind fault = examine(h, state, &usable, e);
    /* Freed, and its header still intact: the header tells where it was freed. */
    if (fault == FASTMM_EVENT_NONE || fault == FASTMM_EVENT_WRITE_AFTER_FREE)
      debug_event_init(e, freed_kind, p, h);
  } else if (state == DEBUG_ENTRY_HELD) {
    debug_event_init(e, freed_kind, p, NULL); /* being freed now, or kept after damage */
  } else if (state == DEBUG_ENTRY_NONE) {
    unregistered_event(e, p, freed_kind);
  }
  debug_registry_unlock();
}

int debug_free(void *p, const void *caller) {
  fastmm_debug_event e;
  if (!header_ours(p)) {
    debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, caller);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  debug_header *h = debug_header_of(p);
  size_t usable = 0;
  debug_slot slot;
  debug_registry_lock();
  debug_entry_state state = debug_registry_state_at(h, &slot);
  if (state != DEBUG_ENTRY_LIVE || examine(h, state, &usable, &e) != FASTMM_EVENT_NONE) {
    if (state != DEBUG_ENTRY_LIVE)
      refuse(&e, p, state, FASTMM_EVENT_DOUBLE_FREE);
    else
      debug_registry_unlock(); /* the fault examine found: left as it is */
    debug_report(&e, caller);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  /* A racing second free now finds it taken (HELD) and reports a double free; a scan skips it
   * while its header and footer change. */
  debug_registry_set_state_at(slot, DEBUG_ENTRY_HELD);
  debug_registry_unlock();

  unsigned n = h->stack_trace_entry_count;
  size_t size = (size_t)h->user_size;
  void *frames[DEBUG_STACK_DEPTH_MAX];
  stack_trace_capture(frames, n, caller);
  memcpy(trace_of(h, 1), frames, n * sizeof(void *));
  h->freed_by_thread = prim_thread_id();
  h->previously_used_by_class = NULL;
  if (size >= sizeof(void *))
    memcpy(&h->previously_used_by_class, p, sizeof(void *));
  if (!(debug_options() & FASTMM_DMO_NO_BLOCK_FILL_PATTERNS) || (mode_now() & MODE_ERASE_FREED)) {
    fill_freed((unsigned char *)p, size);
    h->debug_feature_flags |= FASTMM_DEBUG_FEATURE_FILL_PATTERN;
  } else {
    h->debug_feature_flags &= (uint8_t)~FASTMM_DEBUG_FEATURE_FILL_PATTERN;
  }
  h->debug_block_flags = FASTMM_DEBUG_BLOCK_FREED;
  if (has_checksums(h)) {
    h->header_checksum = debug_header_checksum(h);
    set_footer_checksum(h);
  }

  /* Into the quarantine; the oldest blocks leave it in the same turn of the lock. */
  trim_batch b;
  debug_outer_kind outer = outer_kind_of(h, usable);
  debug_registry_lock();
  debug_registry_set_state(h, DEBUG_ENTRY_QUARANTINED);
  debug_quarantine_push(h, size, outer);
  trim_locked(DEBUG_QUARANTINE_BLOCKS, DEBUG_QUARANTINE_BYTES, &b);
  debug_registry_unlock();
  if (trim_finish(&b))
    quarantine_trim(DEBUG_QUARANTINE_BLOCKS, DEBUG_QUARANTINE_BYTES);
  return FASTMM_OK;
}

void *debug_realloc(void *p, size_t size, const void *caller) {
  fastmm_debug_event e;
  if (!header_ours(p)) {
    debug_report_event(FASTMM_EVENT_INVALID_POINTER, p, NULL, caller);
    return NULL;
  }
  debug_header *h = debug_header_of(p);
  size_t usable = 0;
  debug_registry_lock();
  debug_entry_state state = debug_registry_state(h);
  if (state != DEBUG_ENTRY_LIVE || examine(h, state, &usable, &e) != FASTMM_EVENT_NONE) {
    if (state != DEBUG_ENTRY_LIVE)
      refuse(&e, p, state, FASTMM_EVENT_REALLOC_OF_FREED);
    else
      debug_registry_unlock();
    debug_report(&e, caller);
    return NULL;
  }
  size_t footer = debug_footer_size(h->stack_trace_entry_count);
  size_t moved = footer - DEBUG_FOOTER_RESERVED_SIZE; /* the checksum and both traces */
  if (size <= usable - DEBUG_HEADER_SIZE - footer) {
    /* It fits its outer block: the footer moves to the new end (FastMM5). */
    debug_registry_set_state(h, DEBUG_ENTRY_HELD);
    debug_registry_unlock();
    unsigned char *old_footer = debug_footer_of(h);
    h->user_size = (intptr_t)size;
    memmove(debug_footer_of(h), old_footer, moved);
    if (has_checksums(h))
      h->header_checksum = debug_header_checksum(h);
    debug_registry_lock();
    debug_registry_set_state(h, DEBUG_ENTRY_LIVE);
    debug_registry_unlock();
    return p;
  }
  debug_registry_unlock();
  if (size > MAX_REQUEST_SIZE - DEBUG_HEADER_SIZE - footer)
    return NULL;
  /* A new outer block takes the header, the data and the footer; the old block is freed the
   * debug way, so a stale pointer to it reads the freed fill. */
  unsigned char *outer = (unsigned char *)heap_get(DEBUG_HEADER_SIZE + size + footer);
  if (outer == NULL)
    return NULL;
  size_t keep = size < (size_t)h->user_size ? size : (size_t)h->user_size;
  debug_header *q = (debug_header *)outer;
  memcpy(q, h, DEBUG_HEADER_SIZE);
  fmm_copy(q + 1, p, keep);
  q->user_size = (intptr_t)size;
  memcpy(debug_footer_of(q), debug_footer_of(h), moved);
  memset(debug_footer_of(q) + moved, 0, DEBUG_FOOTER_RESERVED_SIZE);
  if (has_checksums(q))
    q->header_checksum = debug_header_checksum(q);
  heap_set_debug_outer(outer, 1);
  debug_registry_lock();
  int added = debug_registry_add(q);
  debug_registry_unlock();
  if (!added) {
    heap_set_debug_outer(outer, 0);
    q->debug_block_flags = 0;
    heap_free(outer);
    return NULL;
  }
  debug_free(p, caller);
  return q + 1;
}

/* ---- what a caller may learn ---------------------------------------------------------------- */

/* The user size of a live intact debug block, or -1. */
static intptr_t live_user_size(const void *p) {
  fastmm_debug_event e;
  size_t usable;
  intptr_t size = -1;
  if (!header_ours(p))
    return -1;
  const debug_header *h = debug_header_of(p);
  debug_registry_lock();
  if (debug_registry_state(h) == DEBUG_ENTRY_LIVE &&
      examine(h, DEBUG_ENTRY_LIVE, &usable, &e) == FASTMM_EVENT_NONE)
    size = h->user_size;
  debug_registry_unlock();
  return size;
}

int debug_owns(const void *p) {
  return live_user_size(p) >= 0;
}

size_t debug_usable(const void *p) {
  intptr_t size = live_user_size(p);
  return size > 0 ? (size_t)size : 0;
}

int debug_is_registered(const void *p) {
  if (!header_ours(p))
    return 0;
  debug_registry_lock();
  int found = debug_registry_state(debug_header_of(p)) != DEBUG_ENTRY_NONE;
  debug_registry_unlock();
  return found;
}

int debug_block_describe(const void *outer, debug_block_info *info) {
  if (!heap_header_readable(outer))
    return 0;
  uint32_t w = block_header(outer);
  if ((w & (BLOCK_FLAG_FREE | BLOCK_FLAG_DEBUG_OUTER)) != BLOCK_FLAG_DEBUG_OUTER ||
      (w & BLOCK_KINDS) == 0)
    return 0;
  const debug_header *h = (const debug_header *)outer;
  debug_registry_lock();
  debug_entry_state state = debug_registry_state(h);
  debug_registry_unlock();
  info->user = (void *)(h + 1);
  info->header = h;
  info->user_size = h->user_size > 0 ? (size_t)h->user_size : 0;
  info->allocation_number = h->allocation_number;
  info->allocation_group = h->allocation_group;
  /* Not registered yet (being made) or any more: what its header says. */
  info->freed = state == DEBUG_ENTRY_NONE ? h->debug_block_flags != FASTMM_DEBUG_BLOCK_LIVE
                                          : state != DEBUG_ENTRY_LIVE;
  return 1;
}

void debug_state_without_quarantine(fastmm_state *st, fastmm_kind_usage *classes, size_t count) {
  debug_quarantine_usage q;
  debug_registry_lock();
  debug_quarantine_get_usage(&q);
  debug_registry_unlock();
#define TAKE(u, v)                                                                                 \
  do {                                                                                             \
    (u).blocks_in_use -=                                                                           \
        (u).blocks_in_use < (v).blocks_in_use ? (u).blocks_in_use : (v).blocks_in_use;             \
    (u).bytes_in_use -= (u).bytes_in_use < (v).bytes_in_use ? (u).bytes_in_use : (v).bytes_in_use; \
  } while (0)
  if (st != NULL) {
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
      TAKE(st->small, q.small[c]);
    TAKE(st->medium, q.medium);
    TAKE(st->large, q.large);
  }
  if (classes != NULL)
    for (size_t c = 0; c < count && c < SMALL_CLASS_COUNT; c++)
      TAKE(classes[c], q.small[c]);
#undef TAKE
}

/* ---- a call on a freed object -------------------------------------------------------------- */

static void freed_object_call(void *self, int slot, const void *call_site) {
  fastmm_debug_event e;
  int known = 0;
  if (self != NULL && header_ours(self)) {
    const debug_header *h = debug_header_of(self);
    size_t usable;
    debug_registry_lock();
    if (debug_registry_state(h) == DEBUG_ENTRY_QUARANTINED) {
      fastmm_event_kind fault = examine(h, DEBUG_ENTRY_QUARANTINED, &usable, &e);
      if (fault == FASTMM_EVENT_NONE || fault == FASTMM_EVENT_WRITE_AFTER_FREE) {
        debug_event_init(&e, FASTMM_EVENT_FREED_OBJECT_CALL, self, h);
        known = 1;
      }
    }
    debug_registry_unlock();
  }
  if (!known)
    debug_event_init(&e, FASTMM_EVENT_FREED_OBJECT_CALL, self, NULL);
  e.virtual_method_index = slot;
  debug_report(&e, call_site);
  if (freed_object_handler)
    freed_object_handler();
  prim_raise_fatal();
}

void debug_set_freed_object_handler(void (*handler)(void)) {
  freed_object_handler = handler;
}

/* ---- the scan ---------------------------------------------------------------------------- */

/* debug_registry_for_each's visit when the scan has no snapshot: stops at the first fault. */
static int first_fault(const void *header, debug_entry_state state, void *context) {
  size_t usable;
  if (state != DEBUG_ENTRY_LIVE && state != DEBUG_ENTRY_QUARANTINED)
    return 0;
  return examine((const debug_header *)header, state, &usable, (fastmm_debug_event *)context) !=
         FASTMM_EVENT_NONE;
}

int debug_scan_blocks(void) {
  int ok = 1;
  debug_snapshot s;
  debug_registry_lock();
  debug_registry_snapshot(&s);
  debug_registry_unlock();
  for (size_t i = 0; i < s.count; i++) {
    const debug_header *h = (const debug_header *)debug_entry_header(s.entries[i]);
    fastmm_debug_event e;
    size_t usable;
    fastmm_event_kind fault = FASTMM_EVENT_NONE;
    debug_registry_lock();
    debug_entry_state state = debug_registry_state(h);
    if (state == DEBUG_ENTRY_LIVE || state == DEBUG_ENTRY_QUARANTINED)
      fault = examine(h, state, &usable, &e);
    debug_registry_unlock();
    if (fault != FASTMM_EVENT_NONE) {
      ok = 0;
      debug_report(&e, NULL);
    }
  }
  /* No memory for a copy: checked under the lock, and the first fault reported. */
  if (s.entries == NULL) {
    fastmm_debug_event e;
    e.kind = FASTMM_EVENT_NONE;
    debug_registry_lock();
    debug_registry_for_each(first_fault, &e);
    debug_registry_unlock();
    if (e.kind != FASTMM_EVENT_NONE) {
      ok = 0;
      debug_report(&e, NULL);
    }
  }
  debug_registry_snapshot_free(&s);
  return ok;
}
