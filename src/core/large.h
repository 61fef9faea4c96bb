/* Large blocks (large.c): one OS mapping each, with a 64-byte header. */
#ifndef FASTMM_LARGE_H
#define FASTMM_LARGE_H

#include <stddef.h>
#include <stdint.h>

#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "list.h"
#include "policy.h"

typedef struct large_header {
  list_node link;     /* on the list of live large blocks */
  size_t mapped_size; /* bytes mapped from the header's first byte */
  size_t user_size;   /* what the caller asked for last */
  /* Where the user pointer is, from the header: LARGE_HEADER_SIZE, or for a block aligned
   * coarser than 64 (fastmm_getmem_aligned) that alignment, up to LARGE_GRANULARITY. Such a
   * block has its own header word at p - 4 too; the header itself always starts the mapping. */
  uint32_t user_offset;
  uint32_t keep_alignment; /* what fastmm_getmem_aligned asked for, kept by ReallocMem; else 0 */
  char padding[LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE - sizeof(list_node) - 2 * sizeof(size_t) -
               2 * sizeof(uint32_t)];
  uint32_t flags; /* the block header word */
} large_header;
FMM_STATIC_ASSERT(sizeof(large_header) == LARGE_HEADER_SIZE, "large header layout");

/* The header of a large block (or of what would be one) whose user pointer is p: the start of
 * the 64 KB region p's header word lies in. */
static inline large_header *large_header_of(const void *p) {
  return (large_header *)(((uintptr_t)p - BLOCK_HEADER_SIZE) & ~(uintptr_t)(LARGE_GRANULARITY - 1));
}
static inline size_t large_usable(const void *p) {
  const large_header *h = large_header_of(p);
  return h->mapped_size - h->user_offset;
}
void *large_alloc(size_t user_size);
/* A block whose user pointer is a multiple of `alignment` (up to LARGE_GRANULARITY); `keep` goes to
 * its keep_alignment. */
void *large_alloc_aligned(size_t user_size, size_t alignment, uint32_t keep);
int large_free(void *p);          /* FASTMM_OK, or invalid if p is not a live large block */
int large_is_live(const void *p); /* 1 if p is a live large block (a registry lookup) */
/* FreeMem of a pointer whose header word lies in a large block's first region, other than where
 * a 64-aligned block's user pointer would be: an aligned large block (freed: FASTMM_OK), a
 * pointer inside a block that is still mapped (LARGE_NOT_A_BLOCK: the caller may read its header
 * word), or one whose block is gone (invalid). Decided under the large lock, so a racing second
 * free never reads memory the first one unmapped. */
#define LARGE_NOT_A_BLOCK (-1)
int large_free_unaligned_start(void *p);
/* 1 if p is a live large block that holds a debug block (its word has DEBUG_OUTER). */
int large_is_live_outer(const void *p);
int large_extend_in_place(void *p, size_t new_user); /* 1 when the mapping grew in place */
void large_set_user_size(void *p, size_t user_size);
/* Sets or clears a flag of a live large block's header word under the large lock (the
 * consistency walk reads it under that lock). */
void large_set_flag(void *p, uint32_t flag, int on);
void large_stats(fastmm_kind_usage *u);
int large_check(void);
/* The walk (walk.c): calls visit(user pointer, header, context) for each live large block with the
 * large lock held (taken within timeout_ns, else 0 is returned); large_count_now says how many
 * there are, for sizing a buffer beforehand. */
int large_for_each(uint64_t timeout_ns,
                   void (*visit)(void *p, const large_header *h, void *context), void *context);
size_t large_count_now(void);

#endif
