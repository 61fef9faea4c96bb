/* SPDX-License-Identifier: MIT */
/* The debug-information readers' memory: growing arrays, a string pool, a merge sort
 * (dwarf_store.h). */
#include "dwarf_store.h"

#include <string.h>

#include "prim/prim.h"

#define DW_GRAIN ((size_t)64 << 10)

static size_t round_up(size_t n) {
  return (n + DW_GRAIN - 1) & ~(DW_GRAIN - 1);
}

int dw_vec_reserve(dw_vec *v, size_t n) {
  if (n <= v->cap)
    return 1;
  size_t cap = v->cap < 64 ? 64 : v->cap;
  while (cap < n)
    cap *= 2;
  if (cap > SIZE_MAX / 2 / v->elem)
    return 0;
  size_t bytes = round_up(cap * v->elem);
  if (v->p == NULL && v->most >= n && v->most <= SIZE_MAX / 2 / v->elem) {
    size_t room = round_up(v->most * v->elem);
    unsigned char *p = (unsigned char *)prim_reserve(room, 0);
    if (p != NULL) {
      v->p = p;
      v->reserved = room;
    }
  }
  if (v->reserved != 0 && bytes > v->reserved && n * v->elem <= v->reserved)
    bytes = v->reserved;
  if (v->reserved != 0 && bytes <= v->reserved) { /* in place */
    if (!prim_commit(v->p + v->mapped, bytes - v->mapped))
      return 0;
    v->mapped = bytes;
    v->cap = bytes / v->elem;
    return 1;
  }
  unsigned char *p = (unsigned char *)prim_map(bytes, 0);
  if (p == NULL)
    return 0;
  if (v->p != NULL) {
    memcpy(p, v->p, v->n * v->elem);
    prim_unmap(v->p, v->reserved != 0 ? v->reserved : v->mapped);
  }
  v->p = p;
  v->mapped = bytes;
  v->reserved = 0;
  v->cap = bytes / v->elem;
  return 1;
}

void *dw_vec_push(dw_vec *v, size_t max) {
  if (v->n >= max || !dw_vec_reserve(v, v->n + 1))
    return NULL;
  void *e = v->p + v->n * v->elem;
  memset(e, 0, v->elem);
  v->n++;
  return e;
}

void dw_vec_free(dw_vec *v) {
  if (v->p != NULL)
    prim_unmap(v->p, v->reserved != 0 ? v->reserved : v->mapped);
  dw_vec_init(v, v->elem);
}

/* Each chunk starts with a header: the chunk before it and the chunk's own mapped size. */
typedef struct pool_header {
  unsigned char *before;
  size_t size;
} pool_header;

static char *pool_take(dw_pool *pool, size_t n) {
  if (pool->chunk == NULL || pool->size - pool->used < n) {
    size_t size = round_up(n + sizeof(pool_header));
    if (size < n)
      return NULL;
    unsigned char *chunk = (unsigned char *)prim_map(size, 0);
    if (chunk == NULL)
      return NULL;
    pool_header h = {pool->chunk, size};
    memcpy(chunk, &h, sizeof h);
    pool->chunk = chunk;
    pool->used = sizeof(pool_header);
    pool->size = size;
  }
  char *s = (char *)pool->chunk + pool->used;
  pool->used += n;
  return s;
}

const char *dw_pool_copy(dw_pool *pool, const char *s, size_t n) {
  char *copy = pool_take(pool, n + 1);
  if (copy == NULL)
    return NULL;
  memcpy(copy, s, n);
  copy[n] = 0;
  return copy;
}

const char *dw_pool_join(dw_pool *pool, const char *a, char sep, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = pool_take(pool, na + nb + 2);
  if (s == NULL)
    return NULL;
  memcpy(s, a, na);
  s[na] = sep;
  memcpy(s + na + 1, b, nb + 1);
  return s;
}

void dw_pool_free(dw_pool *pool) {
  while (pool->chunk != NULL) {
    pool_header h;
    memcpy(&h, pool->chunk, sizeof h);
    prim_unmap(pool->chunk, h.size);
    pool->chunk = h.before;
  }
  pool->used = pool->size = 0;
}

/* Merges the sorted runs a[0..na) and b[0..nb) into out. */
static void merge(const unsigned char *a, size_t na, const unsigned char *b, size_t nb,
                  unsigned char *out, size_t elem, int (*less)(const void *, const void *)) {
  while (na > 0 && nb > 0) {
    if (less(b, a)) {
      memcpy(out, b, elem);
      b += elem;
      nb--;
    } else {
      memcpy(out, a, elem);
      a += elem;
      na--;
    }
    out += elem;
  }
  memcpy(out, a, na * elem);
  memcpy(out + na * elem, b, nb * elem);
}

/* Bottom-up merge sort over the input's natural runs: input already in order (a line table's
 * rows mostly are) costs one pass. O(n log n) whatever the input. */
int dw_sort(dw_vec *v, int (*less)(const void *a, const void *b)) {
  size_t n = v->n, elem = v->elem, i = 1;
  while (i < n && !less(v->p + i * elem, v->p + (i - 1) * elem))
    i++;
  if (i >= n)
    return 1; /* in order already */
  size_t bytes = round_up(n * elem);
  unsigned char *scratch = (unsigned char *)prim_map(bytes, 0);
  if (scratch == NULL)
    return 0;
  unsigned char *src = v->p, *dst = scratch;
  for (;;) {
    size_t runs = 0, i = 0;
    while (i < n) {
      size_t mid = i + 1;
      while (mid < n && !less(src + mid * elem, src + (mid - 1) * elem))
        mid++;
      size_t end = mid;
      if (mid < n) {
        end = mid + 1;
        while (end < n && !less(src + end * elem, src + (end - 1) * elem))
          end++;
      }
      merge(src + i * elem, mid - i, src + mid * elem, end - mid, dst + i * elem, elem, less);
      runs++;
      i = end;
    }
    unsigned char *t = src;
    src = dst;
    dst = t;
    if (runs <= 1)
      break;
  }
  if (src != v->p)
    memcpy(v->p, src, n * elem);
  prim_unmap(scratch, bytes);
  return 1;
}
