/* SPDX-License-Identifier: MIT */
/* Memory for the debug-information readers, all of it from the prim layer (the library is the
 * allocator): arrays that grow in place inside address space reserved for the most they may
 * hold (committed as they grow, nothing copied), or by doubling (a new mapping, the old copied)
 * when no reservation was asked for or it could not be had; a string pool of mapped chunks; a
 * stable merge sort that needs a scratch array of its own size. */
#ifndef FASTMM_REPORT_DWARF_STORE_H
#define FASTMM_REPORT_DWARF_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dw_vec {
  unsigned char *p;
  size_t n, cap, mapped; /* elements used, elements room, bytes mapped (or committed) */
  size_t reserved;       /* bytes of address space reserved at p; 0: a plain mapping */
  size_t elem;           /* bytes an element */
  size_t most;           /* elements to reserve room for at the first growth; 0: none */
} dw_vec;

static inline void dw_vec_init(dw_vec *v, size_t elem) {
  v->p = NULL;
  v->n = v->cap = v->mapped = v->reserved = v->most = 0;
  v->elem = elem;
}

/* The vector will hold at most `most` elements: address space for them is reserved at the first
 * growth, so it grows in place. */
static inline void dw_vec_expect(dw_vec *v, size_t most) {
  v->most = most;
}

/* Room for at least `n` elements in all; 0 when memory ran out (the vector is unchanged). */
int dw_vec_reserve(dw_vec *v, size_t n);
/* A new zeroed element at the end, or NULL when memory ran out or `max` elements are there. */
void *dw_vec_push(dw_vec *v, size_t max);
void dw_vec_free(dw_vec *v);

static inline void *dw_vec_at(const dw_vec *v, size_t i) {
  return v->p + i * v->elem;
}

typedef struct dw_pool {
  unsigned char *chunk; /* the newest chunk; each starts with a pointer to the one before */
  size_t used, size;
} dw_pool;

/* A copy of s[0..n) with a NUL after it, or NULL when memory ran out. */
const char *dw_pool_copy(dw_pool *pool, const char *s, size_t n);
/* a, then `sep`, then b, as one string. */
const char *dw_pool_join(dw_pool *pool, const char *a, char sep, const char *b);
void dw_pool_free(dw_pool *pool);

/* Sorts v's elements stably by `less`; 0 when the scratch array could not be mapped. */
int dw_sort(dw_vec *v, int (*less)(const void *a, const void *b));

#endif
