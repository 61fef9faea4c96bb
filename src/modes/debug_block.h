/* The debug block kind (debug_block.c); its reports are debug_report.c's.
 *
 * A debug block lives inside an ordinary block (small, medium or large: the "outer" block):
 *
 *   outer: [allocation stack | free stack][debug_header][user data][guard: 4 bytes]
 *
 * The two stack traces hold `stack_depth` addresses each. The header's last field is the
 * block header word at p - 4: BLOCK_FLAG_DEBUG while live, with BLOCK_FLAG_FREE once freed, so
 * every dispatch (C and NASM) sends a debug block here by its kind alone. The header
 * carries a checksum of its fields; the guard after the user data is derived from it, so a
 * write past the end or before the start of the user data is found at free, at realloc and by
 * the scan. Freed blocks are filled with DEBUG_FILL_FREED, their first pointer aimed at a table
 * of traps (a Delphi object's VMT pointer), and held in a quarantine before their outer block
 * is really freed; a changed byte found then is a write after free. */
#ifndef FASTMM_DEBUG_BLOCK_H
#define FASTMM_DEBUG_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/list.h"
#include "core/mode_hooks.h" /* debug_free, debug_realloc, debug_usable: the core calls them */

#define DEBUG_HEADER_SIZE 96u
#define DEBUG_GUARD_SIZE 4u
#define DEBUG_FILL_ALLOCATED 0x90u /* FastMM's byte for new blocks */
#define DEBUG_FILL_FREED 0x80u     /* and for freed ones */
#define DEBUG_STACK_DEPTH_DEFAULT 20u
#define DEBUG_STACK_DEPTH_MAX 62u
/* Freed debug blocks wait this long (in blocks and in bytes) before they are really freed. */
#define DEBUG_QUARANTINE_BLOCKS 1024u
#define DEBUG_QUARANTINE_BYTES (8u * 1024u * 1024u)

typedef struct debug_fields {
  list_node link; /* on the live blocks, or the quarantine (oldest first) */
  uint64_t allocation_number;
  uint64_t allocation_time_ns;
  size_t user_size;
  void *freed_class; /* what the first pointer held at free (a VMT, for the report) */
  uint32_t allocated_by_thread;
  uint32_t freed_by_thread;
  uint16_t stack_depth; /* addresses room per trace */
  uint16_t alloc_frames;
  uint16_t free_frames;
  uint16_t reserved;
} debug_fields;

typedef struct debug_header {
  debug_fields f;
  char padding[DEBUG_HEADER_SIZE - sizeof(debug_fields) - 2 * sizeof(uint32_t)];
  uint32_t checksum;
  uint32_t flags; /* the block header word */
} debug_header;
FMM_STATIC_ASSERT(sizeof(debug_header) == DEBUG_HEADER_SIZE, "debug header layout");

void *debug_get(size_t size, const void *caller);
int debug_owns(const void *p); /* 1 for a live debug block, of any size (0 too) */
/* Is p the outer block of a live or quarantined debug block? */
int debug_is_outer_block(const void *p);

/* What a walk of the heap needs of the debug block an outer block holds. */
typedef struct debug_block_info {
  void *user;         /* the pointer the program was given */
  const void *header; /* FastMM5's TFastMM_DebugBlockHeader (user - 64); NULL until the
                         FastMM5 layout is in */
  size_t user_size;   /* the size the program asked for */
  uint32_t allocation_number;
  uint32_t allocation_group;
  int freed; /* 1: freed and waiting in the quarantine, which every statistic counts as free */
} debug_block_info;
/* `outer` is the user pointer of a live small, medium or large block (as a walk finds it).
 * Returns 1 and fills *info when it holds a debug block, live or quarantined; else 0. Reads
 * only the outer block's own bytes, takes no lock. */
int debug_block_describe(const void *outer, debug_block_info *info);
/* A stack trace of up to `depth` return addresses: `caller` first, then the frames the OS walk
 * finds outside this module. */
uint16_t debug_capture(void **frames, unsigned depth, const void *caller);
void debug_flush_quarantine(void);
/* Checks every live and quarantined block, reports each fault; 1 when all are intact. */
int debug_scan_blocks(void);
/* Looks up this module's extent, once, so traces can leave out the manager's own frames. */
void debug_find_own_module(void);

/* Settings: the trace depth of new blocks (at most DEBUG_STACK_DEPTH_MAX), and the handler a
 * call on a freed object runs before the manager ends it. */
void debug_set_stack_depth(size_t count);
size_t debug_stack_depth(void);
void debug_set_freed_object_handler(void (*handler)(void));

/* Stack traces: stored just before the header. */
static inline void **debug_alloc_stack(debug_header *h) {
  return (void **)((char *)h - 2u * h->f.stack_depth * sizeof(void *));
}
static inline void **debug_free_stack(debug_header *h) {
  return debug_alloc_stack(h) + h->f.stack_depth;
}
static inline debug_header *debug_header_of(const void *p) {
  return (debug_header *)((char *)p - DEBUG_HEADER_SIZE);
}

/* Walks the live debug blocks under the debug lock (for the report and the scan). */
typedef void (*debug_visit_fn)(debug_header *h, void *context);
void debug_for_each_live(debug_visit_fn fn, void *context);
int debug_checksum_ok(const debug_header *h);
int debug_guard_ok(const debug_header *h);

#endif
