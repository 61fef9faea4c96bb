/* SPDX-License-Identifier: MIT */
/* The debug block kind (debug_block.c); its reports are debug_report.c's.
 *
 * A debug block is laid out exactly as FastMM5's, inside an ordinary block (small, medium or
 * large: its "outer" block), whose header word then has BLOCK_FLAG_DEBUG_OUTER:
 *
 *   outer + 0                     the 64-byte header (fastmm_debug_block_header, include/fastmm.h)
 *   outer + 64                    the user data, user_size bytes        <- the program's pointer
 *   outer + 64 + user_size        footer: its checksum (4 bytes, not aligned), the allocation
 *                                 stack trace, the free stack trace (n pointers each), 4 bytes
 *                                 FastMM5 reserves
 *
 * The header's last 4 bytes are the block header word at p - 4 (block_header.h): every dispatch
 * (C and NASM) sends a debug block here by that word alone. Both checksums are FastMM5's (an xor
 * of 32-bit words): the header's covers its fields after header_checksum, the footer's covers
 * both traces; a write past the end of the data changes the footer checksum, a write before its
 * start the header. Which blocks exist, and whether each is live or freed, is the registry's
 * (debug_registry.h), not the header's: a damaged header cannot make a pointer pass for a
 * block. Freed blocks are filled with DEBUG_FILL_FREED, their first pointer aimed at a table of
 * traps (a Delphi object's VMT), and held in the quarantine before their outer block is really
 * freed; a changed byte found then is a write after free. */
#ifndef FASTMM_DEBUG_BLOCK_H
#define FASTMM_DEBUG_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"
#include "fastmm.h"

/* ---- the debug block kind: a header word that says DEBUG sends a block here, in or out of a
 * mode (the core answers such a word HEAP_NOT_MINE; entry/dispatch.c and mode_paths.c send it
 * on). */
int debug_free(void *p, const void *caller);
void *debug_realloc(void *p, size_t size, const void *caller);
size_t debug_usable(const void *p); /* 0 when p is not a valid live debug block */

typedef fastmm_debug_block_header debug_header;

#define DEBUG_HEADER_SIZE ((size_t)FASTMM_DEBUG_HEADER_SIZE)
#define DEBUG_FOOTER_CHECKSUM_SIZE 4u
#define DEBUG_FOOTER_RESERVED_SIZE 4u /* FastMM5: room for a free medium block's size */
#define DEBUG_FILL_ALLOCATED 0x90u    /* FastMM's byte for new blocks */
#define DEBUG_FILL_FREED 0x80u        /* and for freed ones */

/* FastMM5's CalculateDebugBlockFooterSize. */
static inline size_t debug_footer_size(unsigned entries) {
  return DEBUG_FOOTER_CHECKSUM_SIZE + 2u * entries * sizeof(void *) + DEBUG_FOOTER_RESERVED_SIZE;
}
static inline debug_header *debug_header_of(const void *p) {
  return (debug_header *)((char *)p - DEBUG_HEADER_SIZE);
}
/* The footer of a header whose user_size can be trusted. */
static inline unsigned char *debug_footer_of(const debug_header *h) {
  return (unsigned char *)(h + 1) + h->user_size;
}

/* Does a registered block's header still describe it (it fits its outer block, its checksum
 * holds)? The registry's lock is held. */
int debug_header_intact(const debug_header *h);
/* A new debug block of `size` bytes, filled with DEBUG_FILL_ALLOCATED when `fill` (and the
 * options allow), or NULL. */
void *debug_get(size_t size, const void *caller, int fill);
int debug_owns(const void *p); /* 1 for a live debug block, of any size (0 too) */
/* Is p the user pointer of a registered debug block (live or freed), whatever its header word
 * now says? */
int debug_is_registered(const void *p);
/* Frees every quarantined block at once (each checked first). */
void debug_flush_quarantine(void);
/* Checks every live and quarantined block, reports each fault; 1 when all are intact. */
int debug_scan_blocks(void);
/* The handler a call on a freed object runs before the manager ends it. */
void debug_set_freed_object_handler(void (*handler)(void));
/* The statistics with the quarantine's outer blocks counted as free: subtracts them from a
 * fastmm_state (and from per-class figures when `classes` is not NULL). */
void debug_state_without_quarantine(fastmm_state *st, fastmm_kind_usage *classes, size_t count);

/* What a walk of the heap needs of the debug block an outer block holds. */
typedef struct debug_block_info {
  void *user;                 /* the pointer the program was given */
  const debug_header *header; /* FastMM5's TFastMM_DebugBlockHeader (user - 64) */
  size_t user_size;           /* the size the program asked for */
  uint32_t allocation_number;
  uint32_t allocation_group;
  int freed; /* 1: freed (waiting in the quarantine): free for every statistic */
} debug_block_info;
/* `outer` is the user pointer of a live small, medium or large block (as a walk finds it).
 * Returns 1 and fills *info when it holds a debug block, live or freed (its header word has
 * BLOCK_FLAG_DEBUG_OUTER); else 0. Takes the registry's lock, a leaf lock: it may be called
 * while holding any lock of the core. */
int debug_block_describe(const void *outer, debug_block_info *info);

#endif
