/* Debug blocks (the layout is in debug_block.h): guarded, checksummed, stamped with who
 * allocated and freed them, quarantined after free. */
#include "debug_block.h"

#include <string.h>

#include "core/alloc_fast.h"
#include "core/copy.h"
#include "core/lock.h"
#include "debug_report.h"
#include "gate.h"

static fmm_lock debug_lock; /* the live list, the quarantine, their counts */
static list_node live_blocks = LIST_INIT(live_blocks);
static list_node quarantine = LIST_INIT(quarantine);
static size_t quarantine_count, quarantine_bytes;
static uint64_t allocation_counter;
static uint32_t stack_depth_setting = DEBUG_STACK_DEPTH_DEFAULT;
static void (*freed_object_handler)(void);

/* ---- checksums and the guard ------------------------------------------------------------ */

/* The fields from allocation_number to the end of debug_fields: the ones that do not change
 * while a block sits in a list. */
#define CHECKED_BYTES (sizeof(debug_fields) - offsetof(debug_fields, allocation_number))
FMM_STATIC_ASSERT(CHECKED_BYTES % 8u == 0 && offsetof(debug_fields, allocation_number) % 8u == 0,
                  "the checksum reads whole 64-bit words");

static uint32_t checksum_of(const debug_header *h) {
  /* Eight bytes a step (a byte-wise hash made the checksum most of debug mode's own cost once
   * stack traces were off): multiply, fold the high half down. */
  const unsigned char *b = (const unsigned char *)&h->f.allocation_number;
  uint64_t x = 0x9E3779B97F4A7C15ull ^ h->flags ^ ((uint64_t)(uintptr_t)h << 17);
  for (size_t i = 0; i < CHECKED_BYTES; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, sizeof w);
    x = (x ^ w) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
  }
  return (uint32_t)(x ^ (x >> 32));
}

static uint32_t guard_of(const debug_header *h) {
  return h->checksum ^ 0x5AA5C33Cu;
}

static void seal(debug_header *h) {
  h->checksum = checksum_of(h);
  uint32_t guard = guard_of(h);
  memcpy((char *)(h + 1) + h->f.user_size, &guard, sizeof guard);
}

int debug_checksum_ok(const debug_header *h) {
  return h->checksum == checksum_of(h);
}

int debug_guard_ok(const debug_header *h) {
  uint32_t guard;
  memcpy(&guard, (const char *)(h + 1) + h->f.user_size, sizeof guard);
  return guard == guard_of(h);
}

static size_t trace_area(unsigned depth) {
  return (2u * depth * sizeof(void *) + 15u) & ~(size_t)15u;
}

static void *outer_of(debug_header *h) {
  return (char *)h - trace_area(h->f.stack_depth);
}

/* ---- the freed-object traps ---------------------------------------------------------------
 * A freed block's first pointer is aimed at the middle of this table, so a virtual method
 * called on a freed Delphi object (at a positive or a negative VMT offset) lands in a trap. */
#define TRAP_SLOTS 128u
static void freed_object_trap(void);
static void (*freed_object_vmt[TRAP_SLOTS])(void);

static void freed_object_trap(void) {
  debug_report_event(FASTMM_EVENT_FREED_OBJECT_CALL, NULL, NULL, NULL);
  if (freed_object_handler)
    freed_object_handler();
  prim_raise_fatal();
}

static void *trap_vmt(void) {
  if (freed_object_vmt[0] == NULL)
    for (unsigned i = 0; i < TRAP_SLOTS; i++)
      freed_object_vmt[i] = freed_object_trap;
  return &freed_object_vmt[TRAP_SLOTS / 2];
}

/* ---- stack traces ------------------------------------------------------------------------ */

/* This module's extent, looked up once at start-up (asking the OS for every frame made debug
 * mode several times slower); every thread reads it after heap_ensure_initialized. */
static uintptr_t own_begin, own_end;

void debug_find_own_module(void) {
  if (own_end == 0)
    prim_module_range((const void *)(uintptr_t)debug_capture, &own_begin, &own_end);
}

/* The caller's own return address first (exact even where frames are not chained), then what
 * the OS walk finds beyond this module. The walk asks for a few frames more than the depth:
 * the ones inside this module are dropped. */
#define DEBUG_OWN_FRAMES_MAX 8u

uint16_t debug_capture(void **frames, unsigned depth, const void *caller) {
  if (depth == 0)
    return 0;
  unsigned n = 0;
  if (caller != NULL)
    frames[n++] = (void *)caller;
  void *raw[DEBUG_STACK_DEPTH_MAX];
  size_t want = depth + DEBUG_OWN_FRAMES_MAX;
  size_t got =
      prim_capture_stack(raw, want < DEBUG_STACK_DEPTH_MAX ? want : DEBUG_STACK_DEPTH_MAX, 0);
  int skipping = 1;
  for (size_t i = 0; i < got && n < depth; i++) {
    uintptr_t a = (uintptr_t)raw[i];
    if (skipping && ((a >= own_begin && a < own_end) || raw[i] == caller))
      continue;
    skipping = 0;
    frames[n++] = raw[i];
  }
  return (uint16_t)n;
}

/* ---- lists ------------------------------------------------------------------------------- */

static size_t live_count;

/* debug_lock held. */
static void update_blocks_bit(void) {
  heap_mode_set_bit(HEAP_MODE_DEBUG_BLOCKS, live_count + quarantine_count > 0);
}

static debug_header *header_of_link(list_node *n) {
  return list_entry(n, debug_header, f.link);
}

static void live_link(debug_header *h) {
  live_count++;
  list_insert_after(&live_blocks, &h->f.link);
}

static void live_unlink(debug_header *h) {
  live_count--;
  list_remove(&h->f.link);
}

void debug_for_each_live(debug_visit_fn fn, void *context) {
  lock_acquire(&debug_lock);
  for (list_node *n = live_blocks.next; n != &live_blocks; n = n->next)
    fn(header_of_link(n), context);
  lock_release(&debug_lock);
}

static int freed_fill_intact(const debug_header *h) {
  const unsigned char *u = (const unsigned char *)(h + 1);
  size_t from = 0;
  if (h->f.user_size >= sizeof(void *)) {
    void *first;
    memcpy(&first, u, sizeof first);
    if (first != trap_vmt())
      return 0;
    from = sizeof(void *);
  }
  /* Eight bytes at a time: every eviction checks up to a whole block. */
  const uint64_t fill = (uint64_t)DEBUG_FILL_FREED * 0x0101010101010101ull;
  size_t i = from;
  for (; i + sizeof fill <= h->f.user_size; i += sizeof fill) {
    uint64_t w;
    memcpy(&w, u + i, sizeof w);
    if (w != fill)
      return 0;
  }
  for (; i < h->f.user_size; i++)
    if (u[i] != DEBUG_FILL_FREED)
      return 0;
  return 1;
}

/* Moves blocks from the quarantine onto `out` while it is over its limits (debug_lock held),
 * for the caller to check and free after unlocking. */
static void quarantine_trim(size_t max_blocks, size_t max_bytes, list_node *out) {
  list_node *n;
  while ((n = list_first(&quarantine)) != NULL &&
         (quarantine_count > max_blocks || quarantine_bytes > max_bytes)) {
    list_remove(n);
    quarantine_count--;
    quarantine_bytes -= header_of_link(n)->f.user_size;
    list_insert_after(out, n);
  }
}

static void free_evicted(list_node *evicted) {
  for (list_node *n = evicted->next, *next; n != evicted; n = next) {
    next = n->next; /* read first: the block's memory is freed below */
    debug_header *list = header_of_link(n);
    int header_ok = debug_checksum_ok(list);
    if (!header_ok || !debug_guard_ok(list) || !freed_fill_intact(list)) {
      /* Written after it was freed: reported, and its memory is left alone. */
      debug_report_event(FASTMM_EVENT_WRITE_AFTER_FREE, list + 1, header_ok ? list : NULL, NULL);
    } else {
      /* From here its memory may become anything, so it must stop looking like a debug
       * header (debug_is_outer_block trusts a header with a valid checksum). */
      list->flags = 0;
      fast_free_normal(outer_of(list));
    }
  }
}

void debug_flush_quarantine(void) {
  lock_acquire(&debug_lock);
  list_node evicted;
  list_init(&evicted);
  quarantine_trim(0, 0, &evicted);
  update_blocks_bit();
  lock_release(&debug_lock);
  free_evicted(&evicted);
}

/* ---- finding a debug block from its pointer ---------------------------------------------- */

/* The header of a debug block at p (live or freed), or NULL with *kind set to the event that
 * describes what is wrong. p's header word is readable and says DEBUG. A header whose fields
 * do not describe a block inside a live outer block is no debug block at all (an interior or
 * foreign pointer, say); one that does but fails its checksum was overwritten. */
static debug_header *locate(const void *p, fastmm_event_kind *kind) {
  *kind = FASTMM_EVENT_INVALID_POINTER;
  if (page_map_get((const char *)p - DEBUG_HEADER_SIZE) == REGION_NOT_OURS)
    return NULL;
  debug_header *h = debug_header_of(p);
  if (h->f.stack_depth > DEBUG_STACK_DEPTH_MAX || h->f.alloc_frames > h->f.stack_depth ||
      h->f.free_frames > h->f.stack_depth || h->f.user_size > MAX_REQUEST_SIZE)
    return NULL;
  void *outer = outer_of(h);
  size_t need =
      trace_area(h->f.stack_depth) + DEBUG_HEADER_SIZE + h->f.user_size + DEBUG_GUARD_SIZE;
  if (!heap_header_readable(outer) ||
      (block_header(outer) & BLOCK_KIND_MASK & ~BLOCK_FLAG_FREE) == BLOCK_FLAG_DEBUG ||
      heap_usable_size(outer) < need) {
    /* Its outer block is gone: freed long ago and out of quarantine, most likely. */
    if (h->flags == (BLOCK_FLAG_DEBUG | BLOCK_FLAG_FREE))
      *kind = FASTMM_EVENT_DOUBLE_FREE;
    return NULL;
  }
  if (!debug_checksum_ok(h)) {
    *kind = FASTMM_EVENT_HEADER_CORRUPTED;
    return NULL;
  }
  *kind = FASTMM_EVENT_NONE;
  return h;
}

static void scan_if_asked(void) {
  if (heap_mode_now() & HEAP_MODE_SCAN_EVERY_OPERATION)
    debug_scan_blocks();
}

/* ---- GetMem, FreeMem, ReallocMem of debug blocks ------------------------------------------ */

void *debug_get(size_t size, const void *caller) {
  scan_if_asked();
  unsigned depth = stack_depth_setting;
  size_t overhead = trace_area(depth) + DEBUG_HEADER_SIZE + DEBUG_GUARD_SIZE;
  if (size > MAX_REQUEST_SIZE - overhead)
    return NULL;
  char *outer = (char *)fast_get_normal(size + overhead);
  if (outer == NULL)
    return NULL;
  debug_header *h = (debug_header *)(outer + trace_area(depth));
  memset(&h->f, 0, sizeof h->f);
  h->f.user_size = size;
  h->f.allocation_time_ns = prim_time_ns();
  h->f.allocated_by_thread = prim_thread_id();
  h->f.stack_depth = (uint16_t)depth;
  h->f.alloc_frames = debug_capture(debug_alloc_stack(h), depth, caller);
  h->flags = BLOCK_FLAG_DEBUG;
  fmm_zero(debug_alloc_stack(h) + h->f.alloc_frames,
           (2u * depth - h->f.alloc_frames) * sizeof(void *));
  memset(h + 1, DEBUG_FILL_ALLOCATED, size);
  lock_acquire(&debug_lock);
  h->f.allocation_number = ++allocation_counter;
  live_link(h);
  update_blocks_bit();
  seal(h);
  lock_release(&debug_lock);
  return h + 1;
}

int debug_free(void *p, const void *caller) {
  scan_if_asked();
  fastmm_event_kind kind;
  debug_header *h = locate(p, &kind);
  if (h == NULL) {
    debug_report_event(kind, p, NULL, caller);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  lock_acquire(&debug_lock);
  if (h->flags & BLOCK_FLAG_FREE) {
    lock_release(&debug_lock);
    debug_report_event(FASTMM_EVENT_DOUBLE_FREE, p, h, caller);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  if (!debug_guard_ok(h)) {
    lock_release(&debug_lock);
    debug_report_event(FASTMM_EVENT_GUARD_CORRUPTED, p, h, caller);
    return FASTMM_ERROR_INVALID_POINTER; /* left as it is: its neighbour may be damaged too */
  }
  live_unlink(h);
  h->flags = BLOCK_FLAG_DEBUG | BLOCK_FLAG_FREE; /* a racing second free now sees it freed */
  lock_release(&debug_lock);

  if (h->f.user_size >= sizeof(void *))
    memcpy(&h->f.freed_class, p, sizeof(void *));
  h->f.freed_by_thread = prim_thread_id();
  h->f.free_frames = debug_capture(debug_free_stack(h), h->f.stack_depth, caller);
  memset(p, DEBUG_FILL_FREED, h->f.user_size);
  if (h->f.user_size >= sizeof(void *)) {
    void *vmt = trap_vmt();
    memcpy(p, &vmt, sizeof vmt);
  }

  lock_acquire(&debug_lock);
  seal(h);
  list_insert_before(&quarantine, &h->f.link);
  quarantine_count++;
  quarantine_bytes += h->f.user_size;
  list_node evicted;
  list_init(&evicted);
  quarantine_trim(DEBUG_QUARANTINE_BLOCKS, DEBUG_QUARANTINE_BYTES, &evicted);
  update_blocks_bit();
  lock_release(&debug_lock);
  free_evicted(&evicted);
  return FASTMM_OK;
}

void *debug_realloc(void *p, size_t size, const void *caller) {
  fastmm_event_kind kind;
  debug_header *h = locate(p, &kind);
  if (h == NULL) {
    debug_report_event(kind, p, NULL, caller);
    return NULL;
  }
  if (h->flags & BLOCK_FLAG_FREE) {
    debug_report_event(FASTMM_EVENT_REALLOC_OF_FREED, p, h, caller);
    return NULL;
  }
  if (!debug_guard_ok(h)) {
    debug_report_event(FASTMM_EVENT_GUARD_CORRUPTED, p, h, caller);
    return NULL;
  }
  /* A debug block always moves: a stale pointer to the old place then reads the freed fill. */
  void *q = (heap_mode_now() & HEAP_MODE_DEBUG) ? debug_get(size, caller) : fast_get_normal(size);
  if (q == NULL)
    return NULL;
  fmm_copy(q, p, size < h->f.user_size ? size : h->f.user_size);
  debug_free(p, caller);
  return q;
}

int debug_owns(const void *p) {
  fastmm_event_kind kind;
  debug_header *h = locate(p, &kind);
  return h != NULL && !(h->flags & BLOCK_FLAG_FREE);
}

size_t debug_usable(const void *p) {
  fastmm_event_kind kind;
  debug_header *h = locate(p, &kind);
  return h != NULL && !(h->flags & BLOCK_FLAG_FREE) ? h->f.user_size : 0;
}

/* ---- the outer blocks --------------------------------------------------------------------- */

/* Is p the outer block of a live debug block (a stale pointer to memory a debug block now
 * occupies)? Freeing it would pull the memory from under that block. */
int debug_is_outer_block(const void *p) {
  size_t usable = heap_usable_size(p);
  /* The block may have been made at any stack depth setting. */
  for (unsigned depth = 0; depth <= DEBUG_STACK_DEPTH_MAX; depth++) {
    if (usable < trace_area(depth) + DEBUG_HEADER_SIZE + DEBUG_GUARD_SIZE)
      return 0;
    debug_header *h = (debug_header *)((char *)p + trace_area(depth));
    /* Live or quarantined (a freed one keeps its outer block until it leaves the quarantine,
     * when its flags are cleared). */
    if ((h->flags & BLOCK_KIND_MASK & ~BLOCK_FLAG_FREE) == BLOCK_FLAG_DEBUG &&
        h->f.stack_depth == depth && debug_checksum_ok(h))
      return 1;
  }
  return 0;
}

int debug_block_describe(const void *outer, debug_block_info *info) {
  size_t usable = heap_usable_size(outer);
  for (unsigned depth = 0; depth <= DEBUG_STACK_DEPTH_MAX; depth++) {
    if (usable < trace_area(depth) + DEBUG_HEADER_SIZE + DEBUG_GUARD_SIZE)
      return 0;
    debug_header *h = (debug_header *)((char *)outer + trace_area(depth));
    if ((h->flags & BLOCK_KIND_MASK & ~BLOCK_FLAG_FREE) == BLOCK_FLAG_DEBUG &&
        h->f.stack_depth == depth && debug_checksum_ok(h)) {
      info->user = h + 1;
      info->header = NULL;
      info->user_size = h->f.user_size;
      info->allocation_number = (uint32_t)h->f.allocation_number;
      info->allocation_group = 0;
      info->freed = (h->flags & BLOCK_FLAG_FREE) != 0;
      return 1;
    }
  }
  return 0;
}

/* ---- settings ----------------------------------------------------------------------------- */

void debug_set_stack_depth(size_t count) {
  stack_depth_setting = count > DEBUG_STACK_DEPTH_MAX ? DEBUG_STACK_DEPTH_MAX : (uint32_t)count;
}

size_t debug_stack_depth(void) {
  return stack_depth_setting;
}

void debug_set_freed_object_handler(void (*handler)(void)) {
  freed_object_handler = handler;
}

/* ---- the scan ---------------------------------------------------------------------------- */

int debug_scan_blocks(void) {
  int ok = 1;
  lock_acquire(&debug_lock);
  for (list_node *n = live_blocks.next; n != &live_blocks; n = n->next) {
    debug_header *h = header_of_link(n);
    if (!debug_checksum_ok(h)) {
      /* Its fields cannot be trusted: report the block without them. */
      debug_report_event(FASTMM_EVENT_HEADER_CORRUPTED, h + 1, NULL, NULL);
      ok = 0;
    } else if (!debug_guard_ok(h)) {
      debug_report_event(FASTMM_EVENT_GUARD_CORRUPTED, h + 1, h, NULL);
      ok = 0;
    }
  }
  for (list_node *n = quarantine.next; n != &quarantine; n = n->next) {
    debug_header *h = header_of_link(n);
    int header_ok = debug_checksum_ok(h);
    if (!header_ok || !debug_guard_ok(h) || !freed_fill_intact(h)) {
      debug_report_event(FASTMM_EVENT_WRITE_AFTER_FREE, h + 1, header_ok ? h : NULL, NULL);
      ok = 0;
    }
  }
  lock_release(&debug_lock);
  return ok;
}
