/* SPDX-License-Identifier: MIT */
/* Large blocks (large.c): each one a reservation of its own, committed as far as it is used,
 * with a 64-byte header; freed ones are kept in a bounded cache for reuse. */
#ifndef FASTMM_LARGE_H
#define FASTMM_LARGE_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "linkage.h"
#include "list.h"
#include "policy.h"

/* live_state bits of a live block. */
#define LARGE_LIVE_REUSED 1u  /* taken from the cache: its bytes may hold old data */
#define LARGE_LIVE_RESIZED 4u /* a ReallocMem moved it to a smaller block: cached for growth */

typedef struct large_header {
  list_node link;   /* on the list of live large blocks, or the cache's */
  size_t size;      /* the block's bytes from the header's first byte: user_offset + usable
                       (whole 64 KB regions) */
  size_t committed; /* bytes committed from there: at least `size`; more when the block came
                       from the cache with pages it keeps to grow into */
  size_t reserved;  /* bytes of address space reserved from there (>= committed) */
  size_t user_size; /* live: what the caller asked for last; cached: 1 when a ReallocMem that
                       moved it freed it (large.c keeps those under a larger bound), else 0 */
  union {
    uint32_t cached_at;  /* in the cache: the idle clock's tick it went there (idle_clock.h) */
    uint32_t live_state; /* live: LARGE_LIVE_* */
  } u;
  /* Where the user pointer is, from the header: LARGE_HEADER_SIZE, or for a block aligned
   * coarser than 64 (fastmm_getmem_aligned) that alignment, up to LARGE_GRANULARITY. Such a
   * block has its own header word at p - 4 too; the header itself always starts the mapping. */
  uint32_t user_offset;
  uint32_t keep_alignment; /* what fastmm_getmem_aligned asked for, kept by ReallocMem; else 0 */
#if UINTPTR_MAX <= 0xFFFFFFFFu
  char padding[LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE - 2 * sizeof(void *) - 4 * sizeof(size_t) -
               3 * sizeof(uint32_t)];
#endif
  uint32_t flags; /* the block header word */
} large_header;
FMM_STATIC_ASSERT(sizeof(large_header) == LARGE_HEADER_SIZE, "large header layout");
FMM_STATIC_ASSERT(offsetof(large_header, flags) == LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "the header word ends the large header");

/* The header of a large block (or of what would be one) whose user pointer is p: the start of
 * the 64 KB region p's header word lies in. */
static inline large_header *large_header_of(const void *p) {
  return (large_header *)(((uintptr_t)p - BLOCK_HEADER_SIZE) & ~(uintptr_t)(LARGE_GRANULARITY - 1));
}
static inline size_t large_usable(const void *p) {
  const large_header *h = large_header_of(p);
  return h->size - h->user_offset;
}
/* Is p, whose header word lies in a large block's first region (the caller looked it up in the
 * page map), a large block whose header word is `word` (BLOCK_FLAG_LARGE: live; with
 * BLOCK_FLAG_DEBUG_OUTER too: live and holding a debug block), its user pointer where its header
 * says? Read without the large lock, as ReallocMem and MemSize read it: only FreeMem decides
 * under the lock (a ReallocMem or MemSize racing with a FreeMem of the same block is the
 * program's use after free). */
static inline int large_has_word_at(const void *p, uint32_t word) {
  const large_header *h = large_header_of(p);
  return h->flags == word && (const char *)h + h->user_offset == (const char *)p;
}
/* A GetMem's large block: from the cache when a block there holds the request (its pages past
 * the request given back), else mapped anew. */
void *large_alloc(size_t user_size);
/* The same for a block a ReallocMem asks for: a cached block it reuses keeps its pages beyond
 * the request (up to LARGE_CACHE_TRIM_FACTOR times it) for the block to grow into, where
 * large_alloc's keeps only what the request needs (policy.h). */
void *large_alloc_resizing(size_t user_size);
/* A block whose user pointer is a multiple of `alignment` (up to LARGE_GRANULARITY); `keep` goes to
 * its keep_alignment. A cached block it reuses keeps no pages beyond the request, as a GetMem's,
 * also when a ReallocMem moves an aligned block here (rare: no rule of its own). */
void *large_alloc_aligned(size_t user_size, size_t alignment, uint32_t keep);
int large_free(void *p);          /* FASTMM_OK, or invalid if p is not a live large block */
int large_is_live(const void *p); /* 1 if p is a live large block (a registry lookup) */
/* FreeMem of a pointer whose header word lies in a large block's first region, other than where
 * a 64-aligned block's user pointer would be: an aligned large block (freed: FASTMM_OK), a
 * pointer inside a block that is still mapped (LARGE_NOT_A_BLOCK: the caller may read its header
 * word), or one whose block is gone (invalid). Decided under the large lock, so a racing second
 * free never reads memory the first one gave back. */
#define LARGE_NOT_A_BLOCK (-1)
int large_free_unaligned_start(void *p);
/* Grows p in place to at least `min_user` usable bytes, `want_user` if the address space after
 * it allows: 1 when done. */
int large_grow_in_place(void *p, size_t min_user, size_t want_user);
/* Moves p to a larger reservation without copying its bytes (where the OS can: Linux's
 * mremap): the new pointer (as far into its mapping as p was), or NULL with p untouched. */
void *large_grow_by_remap(void *p, size_t min_user, size_t want_user);
static inline void large_set_user_size(void *p, size_t user_size) {
  large_header_of(p)->user_size = user_size;
}
/* p is about to be freed because a ReallocMem moved it to a smaller block: it is cached under
 * the larger bound (large.c). */
void large_resized(void *p);
/* Bytes from p on that may hold old data (a block reused from the cache is not zeroed): its
 * usable size, or 0 for a block fresh from the OS. */
size_t large_dirty_bytes(const void *p);
/* Sets or clears a flag of a live large block's header word under the large lock (the
 * consistency walk reads it under that lock). */
void large_set_flag(void *p, uint32_t flag, int on);
void large_stats(fastmm_kind_usage *u);
/* The large blocks' part of heap_check: 0, a 3xx fault, or FASTMM_CHECK_HEAP_LOCKED when the
 * lock could not be had within `lock_timeout_ns`. */
int large_check(uint64_t lock_timeout_ns);
/* The walk (walk.c): calls visit(user pointer, header, cached, context) for each live large block
 * and then each cached one (cached 1: a free block, its committed memory kept) with the large
 * lock held (taken within timeout_ns, else 0 is returned); large_count_now says how many there
 * are of both, for sizing a buffer beforehand. */
int large_for_each(uint64_t timeout_ns,
                   void (*visit)(void *p, const large_header *h, int cached, void *context),
                   void *context);
size_t large_count_now(void);

/* The cache of freed blocks (release.c decides when it shrinks): gives back the blocks cached
 * at or before `up_to_tick`, returning the bytes given back; large_cached_bytes says what it
 * holds, read under the large lock. large_cached_bytes_now reads it without the lock (a FreeMem
 * asks after every large block it frees, release.h: inline, no locked instruction). */
size_t large_release_cached(uint32_t up_to_tick);
size_t large_cached_bytes(void);
extern FMM_HIDDEN size_t large_cache_bytes;
static inline size_t large_cached_bytes_now(void) {
  return fmm_load_size_relaxed(&large_cache_bytes);
}

/* The large blocks' lock, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock large_lock;

#endif
