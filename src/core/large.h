/* Large blocks (large.c): each one a reservation of its own, committed as far as it is used,
 * with a 64-byte header; freed ones are kept in a bounded cache for reuse. */
#ifndef FASTMM_LARGE_H
#define FASTMM_LARGE_H

#include <stddef.h>
#include <stdint.h>

#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "list.h"

typedef struct large_header {
  list_node link;     /* on the list of live large blocks, or the cache's */
  size_t size;        /* the block's bytes from the header's first byte: usable + header (whole
                         64 KB regions) */
  size_t committed;   /* bytes committed from there: at least `size`; more when the block came
                         from the cache with pages it keeps to grow into */
  size_t reserved;    /* bytes of address space reserved from there (>= committed) */
  size_t user_size;   /* what the caller asked for last */
  size_t dirty;       /* bytes from the user pointer on that may hold old data (0: fresh) */
  uint32_t cached_at; /* in the cache: the release tick it went there (release.h); live:
                         LARGE_OUTGROWN when it is to skip the cache when freed */
#if UINTPTR_MAX <= 0xFFFFFFFFu
  char padding[LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE - 2 * sizeof(void *) - 5 * sizeof(size_t) -
               sizeof(uint32_t)];
#endif
  uint32_t flags; /* the block header word */
} large_header;
FMM_STATIC_ASSERT(sizeof(large_header) == LARGE_HEADER_SIZE, "large header layout");
FMM_STATIC_ASSERT(offsetof(large_header, flags) == LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "the header word ends the large header");

static inline large_header *large_header_of(const void *p) {
  return (large_header *)((char *)p - LARGE_HEADER_SIZE);
}
static inline size_t large_usable(const void *p) {
  return large_header_of(p)->size - LARGE_HEADER_SIZE;
}
void *large_alloc(size_t user_size);
int large_free(void *p);          /* FASTMM_OK, or invalid if p is not a live large block */
int large_is_live(const void *p); /* 1 if p is a live large block (a registry lookup) */
/* Grows p in place to at least `min_user` usable bytes, `want_user` if the address space after
 * it allows: 1 when done. */
int large_grow_in_place(void *p, size_t min_user, size_t want_user);
/* Moves p to a larger reservation without copying its bytes (where the OS can: Linux's
 * mremap): the new pointer, or NULL with p untouched. */
void *large_grow_by_remap(void *p, size_t min_user, size_t want_user);
void large_set_user_size(void *p, size_t user_size);
/* p is about to be freed because it moved to a bigger block: it skips the cache. */
void large_outgrown(void *p);
/* Bytes from p on that may hold old data: a block reused from the cache is not zeroed. */
size_t large_dirty_bytes(const void *p);
void large_stats(fastmm_kind_usage *u);
int large_check(void);

/* The cache of freed blocks (release.c decides when it shrinks): gives back the blocks cached
 * at a tick before `before_tick` (all of them for (uint32_t)-1 ... see release.c), returning
 * the bytes given back; large_cached_bytes says what it holds. */
size_t large_release_cached(uint32_t before_tick);
size_t large_cached_bytes(void);

#endif
