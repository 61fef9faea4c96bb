/* Large blocks (large.c): one OS mapping each, with a 64-byte header. */
#ifndef FASTMM_LARGE_H
#define FASTMM_LARGE_H

#include <stddef.h>
#include <stdint.h>

#include "block_header.h"
#include "compiler.h"
#include "fastmm.h"
#include "list.h"

typedef struct large_header {
  list_node link;     /* on the list of live large blocks */
  size_t mapped_size; /* bytes mapped from the header's first byte */
  size_t user_size;   /* what the caller asked for last */
  char padding[LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE - sizeof(list_node) - 2 * sizeof(size_t)];
  uint32_t flags; /* the block header word */
} large_header;
FMM_STATIC_ASSERT(sizeof(large_header) == LARGE_HEADER_SIZE, "large header layout");

static inline large_header *large_header_of(const void *p) {
  return (large_header *)((char *)p - LARGE_HEADER_SIZE);
}
static inline size_t large_usable(const void *p) {
  return large_header_of(p)->mapped_size - LARGE_HEADER_SIZE;
}
void *large_alloc(size_t user_size);
int large_free(void *p);          /* FASTMM_OK, or invalid if p is not a live large block */
int large_is_live(const void *p); /* 1 if p is a live large block (a registry lookup) */
/* 1 if p is a live large block that holds a debug block (its word has DEBUG_OUTER). */
int large_is_live_outer(const void *p);
int large_extend_in_place(void *p, size_t new_user); /* 1 when the mapping grew in place */
void large_set_user_size(void *p, size_t user_size);
/* Sets or clears a flag of a live large block's header word under the large lock (the
 * consistency walk reads it under that lock). */
void large_set_flag(void *p, uint32_t flag, int on);
void large_stats(fastmm_kind_usage *u);
int large_check(void);

#endif
