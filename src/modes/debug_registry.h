/* SPDX-License-Identifier: MIT */
/* Every debug block that exists, and the quarantine (debug_registry.c).
 *
 * The registry is a hash set of debug headers kept outside the blocks, so a program that writes
 * over a header (an underrun of 64 bytes covers all of it) cannot break the set: whether a
 * pointer is a debug block of ours, and in which state, is decided here, never by the bytes
 * in front of it. Each entry has a state:
 *
 *   LIVE         handed to the program;
 *   HELD         the manager's: its header and footer are being rewritten by a free or an
 *                in-place resize outside the lock, or it was found written to after its free
 *                and is kept out of use for good (a scan skips it; a free of it is a double
 *                free);
 *   QUARANTINED  freed, its outer block still held so a write after free can be found.
 *
 * The quarantine keeps the order of the frees: the oldest leaves first, once the quarantine
 * holds more than DEBUG_QUARANTINE_BLOCKS blocks or DEBUG_QUARANTINE_BYTES bytes. Its outer
 * blocks are counted by kind, so the statistics can call them free.
 *
 * Every function here expects the registry's lock held (debug_registry_lock), except the
 * lock functions themselves and debug_registry_snapshot_free. */
#ifndef FASTMM_DEBUG_REGISTRY_H
#define FASTMM_DEBUG_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "fastmm.h"

#define DEBUG_QUARANTINE_BLOCKS 1024u
#define DEBUG_QUARANTINE_BYTES (8u * 1024u * 1024u)

typedef enum debug_entry_state {
  DEBUG_ENTRY_NONE = 0, /* not a debug block of ours */
  DEBUG_ENTRY_LIVE = 1,
  DEBUG_ENTRY_HELD = 2,
  DEBUG_ENTRY_QUARANTINED = 3
} debug_entry_state;

void debug_registry_lock(void);
void debug_registry_unlock(void);

/* Adds a LIVE entry; 0 when the table could not grow (no memory). */
int debug_registry_add(const void *header);
debug_entry_state debug_registry_state(const void *header);
void debug_registry_set_state(const void *header, debug_entry_state state);
void debug_registry_remove(const void *header);
/* The same lookup kept for a second use: valid until the lock is released or an entry is added
 * or removed. The state may be set through it only when the entry exists (not NONE). */
typedef size_t debug_slot;
debug_entry_state debug_registry_state_at(const void *header, debug_slot *slot);
void debug_registry_set_state_at(debug_slot slot, debug_entry_state state);
size_t debug_registry_count(void); /* entries of every state */

/* What the quarantine holds of an outer block, for the statistics. */
typedef struct debug_outer_kind {
  uint8_t kind;        /* BLOCK_FLAG_SMALL, _MEDIUM or _LARGE */
  uint8_t small_class; /* small: its size class */
  size_t usable;       /* the outer block's usable bytes */
} debug_outer_kind;

/* Appends a block to the quarantine (its entry must be QUARANTINED already); `user_size`
 * counts toward the byte limit. */
void debug_quarantine_push(const void *header, size_t user_size, debug_outer_kind outer);
/* The oldest quarantined header while the quarantine is over (max_blocks, max_bytes), removed
 * from the quarantine (its registry entry stays); NULL when it is within them. */
const void *debug_quarantine_pop_over(size_t max_blocks, size_t max_bytes);

/* The quarantine's outer blocks by kind: small[c] for each small class, medium, large. */
typedef struct debug_quarantine_usage {
  fastmm_kind_usage small[SMALL_CLASS_COUNT];
  fastmm_kind_usage medium;
  fastmm_kind_usage large;
} debug_quarantine_usage;
void debug_quarantine_get_usage(debug_quarantine_usage *out);

/* A copy of every registered header with its state, in a mapping of its own (the caller walks
 * it without the lock, checking each entry again under the lock before trusting it). NULL with
 * *count 0 when the registry is empty or no memory could be mapped. */
typedef struct debug_snapshot {
  uintptr_t *entries; /* header | state */
  size_t count;
  size_t mapped;
} debug_snapshot;
void debug_registry_snapshot(debug_snapshot *out);
void debug_registry_snapshot_free(debug_snapshot *s); /* no lock needed */
/* Calls fn for each entry until it returns non-zero (for when no snapshot could be mapped). */
void debug_registry_for_each(int (*fn)(const void *header, debug_entry_state state, void *context),
                             void *context);

#define DEBUG_ENTRY_STATE_MASK 3u
static inline const void *debug_entry_header(uintptr_t e) {
  return (const void *)(e & ~(uintptr_t)DEBUG_ENTRY_STATE_MASK);
}
static inline debug_entry_state debug_entry_state_of(uintptr_t e) {
  return (debug_entry_state)(e & DEBUG_ENTRY_STATE_MASK);
}

#endif
