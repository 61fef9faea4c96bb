/* SPDX-License-Identifier: MIT */
/* The registry of debug blocks and the quarantine (debug_registry.h).
 *
 * The set is an open-addressing table of header addresses with the entry's state in the two low
 * bits (headers are 16-aligned), linear probing, deletion by shifting the run back (no
 * tombstones). It lives in mappings of its own, doubled when it is half full: debug mode keeps
 * it out of the heap it watches. The quarantine is a ring of the freed headers in free order. */
#include "debug_registry.h"

#include <string.h>

#include "core/block_header.h"
#include "core/compiler.h"
#include "core/lock.h"
#include "core/os_memory.h"

static fmm_lock registry_lock;

static uintptr_t *table;  /* 0: empty slot */
static size_t table_size; /* slots, a power of two, or 0 */
static size_t table_used;

#define TABLE_MIN_SLOTS 8192u /* one 64 KB mapping on 64-bit */

/* Mappings are whole 64 KB units (prim_map's granularity). */
static size_t mapping_bytes(size_t bytes) {
  return (bytes + 0xFFFFu) & ~(size_t)0xFFFFu;
}

typedef struct quarantined {
  const void *header;
  size_t user_size;
  debug_outer_kind outer;
} quarantined;

/* A push comes before the trim, so the ring holds one more than the limit; a power of two. */
#define RING_SIZE (2u * DEBUG_QUARANTINE_BLOCKS)
FMM_STATIC_ASSERT((RING_SIZE & (RING_SIZE - 1u)) == 0 && RING_SIZE > DEBUG_QUARANTINE_BLOCKS,
                  "the quarantine's ring");
static quarantined ring[RING_SIZE];
static size_t ring_first, ring_count, ring_bytes;
static debug_quarantine_usage usage;

void debug_registry_lock(void) {
  lock_acquire(&registry_lock);
}

void debug_registry_unlock(void) {
  lock_release(&registry_lock);
}

static size_t slot_of(uintptr_t header, size_t size) {
  uint64_t h = (uint64_t)(header >> 4) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (size - 1u);
}

/* The slot holding `header`, or the empty slot where it would go. */
static size_t find(uintptr_t header) {
  size_t i = slot_of(header, table_size);
  while (table[i] != 0 && (table[i] & ~(uintptr_t)DEBUG_ENTRY_STATE_MASK) != header)
    i = (i + 1u) & (table_size - 1u);
  return i;
}

static int grow(void) {
  size_t size = table_size ? table_size * 2u : TABLE_MIN_SLOTS;
  uintptr_t *t = (uintptr_t *)os_map(mapping_bytes(size * sizeof(uintptr_t)));
  if (t == NULL)
    return 0;
  for (size_t i = 0; i < table_size; i++) {
    if (table[i] == 0)
      continue;
    size_t j = slot_of(table[i] & ~(uintptr_t)DEBUG_ENTRY_STATE_MASK, size);
    while (t[j] != 0)
      j = (j + 1u) & (size - 1u);
    t[j] = table[i];
  }
  if (table != NULL)
    os_unmap(table, mapping_bytes(table_size * sizeof(uintptr_t)));
  table = t;
  table_size = size;
  return 1;
}

int debug_registry_add(const void *header) {
  if ((table_used + 1u) * 2u > table_size && !grow())
    return 0;
  size_t i = find((uintptr_t)header);
  if (table[i] == 0)
    table_used++;
  table[i] = (uintptr_t)header | DEBUG_ENTRY_LIVE;
  return 1;
}

debug_entry_state debug_registry_state(const void *header) {
  if (table_used == 0)
    return DEBUG_ENTRY_NONE;
  size_t i = find((uintptr_t)header);
  return debug_entry_state_of(table[i]);
}

void debug_registry_set_state(const void *header, debug_entry_state state) {
  if (table_used == 0)
    return;
  size_t i = find((uintptr_t)header);
  if (table[i] != 0)
    table[i] = (uintptr_t)header | (uintptr_t)state;
}

debug_entry_state debug_registry_state_at(const void *header, debug_slot *slot) {
  if (table_used == 0) {
    *slot = (debug_slot)-1;
    return DEBUG_ENTRY_NONE;
  }
  *slot = find((uintptr_t)header);
  return debug_entry_state_of(table[*slot]);
}

void debug_registry_set_state_at(debug_slot slot, debug_entry_state state) {
  table[slot] = (table[slot] & ~(uintptr_t)DEBUG_ENTRY_STATE_MASK) | (uintptr_t)state;
}

void debug_registry_remove(const void *header) {
  if (table_used == 0)
    return;
  size_t i = find((uintptr_t)header);
  if (table[i] == 0)
    return;
  table[i] = 0;
  if (--table_used == 0) { /* the last debug block gone: the table goes too */
    os_unmap(table, mapping_bytes(table_size * sizeof(uintptr_t)));
    table = NULL;
    table_size = 0;
    return;
  }
  /* Shift back every entry of the run after i that may sit in the hole. */
  size_t j = i;
  for (;;) {
    j = (j + 1u) & (table_size - 1u);
    if (table[j] == 0)
      break;
    size_t home = slot_of(table[j] & ~(uintptr_t)DEBUG_ENTRY_STATE_MASK, table_size);
    /* The entry at j stays if its home lies cyclically in (i, j]. */
    int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!stays) {
      table[i] = table[j];
      table[j] = 0;
      i = j;
    }
  }
}

size_t debug_registry_count(void) {
  return table_used;
}

static fastmm_kind_usage *usage_of(debug_outer_kind outer) {
  switch (outer.kind) {
  case BLOCK_FLAG_SMALL:
    return outer.small_class < SMALL_CLASS_COUNT ? &usage.small[outer.small_class] : NULL;
  case BLOCK_FLAG_MEDIUM:
    return &usage.medium;
  case BLOCK_FLAG_LARGE:
    return &usage.large;
  default:
    return NULL;
  }
}

void debug_quarantine_push(const void *header, size_t user_size, debug_outer_kind outer) {
  quarantined *q = &ring[(ring_first + ring_count) & (RING_SIZE - 1u)];
  q->header = header;
  q->user_size = user_size;
  q->outer = outer;
  ring_count++;
  ring_bytes += user_size;
  fastmm_kind_usage *u = usage_of(outer);
  if (u != NULL) {
    u->blocks_in_use++;
    u->bytes_in_use += outer.usable;
  }
}

const void *debug_quarantine_pop_over(size_t max_blocks, size_t max_bytes) {
  if (ring_count == 0 || (ring_count <= max_blocks && ring_bytes <= max_bytes))
    return NULL;
  quarantined *q = &ring[ring_first];
  ring_first = (ring_first + 1u) & (RING_SIZE - 1u);
  ring_count--;
  ring_bytes -= q->user_size;
  fastmm_kind_usage *u = usage_of(q->outer);
  if (u != NULL) {
    u->blocks_in_use--;
    u->bytes_in_use -= q->outer.usable;
  }
  return q->header;
}

void debug_quarantine_get_usage(debug_quarantine_usage *out) {
  *out = usage;
}

void debug_registry_snapshot(debug_snapshot *out) {
  memset(out, 0, sizeof *out);
  if (table_used == 0)
    return;
  size_t bytes = mapping_bytes(table_used * sizeof(uintptr_t));
  uintptr_t *e = (uintptr_t *)os_map(bytes);
  if (e == NULL)
    return;
  size_t n = 0;
  for (size_t i = 0; i < table_size && n < table_used; i++)
    if (table[i] != 0)
      e[n++] = table[i];
  out->entries = e;
  out->count = n;
  out->mapped = bytes;
}

void debug_registry_for_each(int (*fn)(const void *header, debug_entry_state state, void *context),
                             void *context) {
  for (size_t i = 0; i < table_size; i++)
    if (table[i] != 0 && fn(debug_entry_header(table[i]), debug_entry_state_of(table[i]), context))
      return;
}

void debug_registry_snapshot_free(debug_snapshot *s) {
  if (s->entries != NULL)
    os_unmap(s->entries, s->mapped);
  memset(s, 0, sizeof *s);
}
