/* SPDX-License-Identifier: MIT */
/* The symbol readers' memory and sorted tables: see sym_table.h. */
#include "sym_table.h"

#include "prim/prim.h"

#define SYM_CHUNK_BYTES ((size_t)1 << 20)

struct sym_chunk {
  sym_chunk *next;
  size_t size, used;
};

void *sym_arena_alloc(sym_arena *a, size_t size) {
  size = (size + 7u) & ~(size_t)7u;
  size_t head = (sizeof(sym_chunk) + 7u) & ~(size_t)7u;
  sym_chunk *c = a->head;
  if (c == NULL || c->size - c->used < size) {
    size_t bytes = SYM_CHUNK_BYTES;
    if (size > bytes - head) {
      if (size > SIZE_MAX / 2)
        return NULL;
      bytes = head + size;
    }
    sym_chunk *fresh = (sym_chunk *)prim_map(bytes, 0);
    if (fresh == NULL)
      return NULL;
    fresh->size = bytes;
    fresh->used = head;
    /* A chunk made for one large array goes behind the current one, which keeps its room. */
    if (c != NULL && bytes > SYM_CHUNK_BYTES) {
      fresh->next = c->next;
      c->next = fresh;
      fresh->used += size;
      return (char *)fresh + head;
    }
    fresh->next = c;
    a->head = c = fresh;
  }
  void *p = (char *)c + c->used;
  c->used += size;
  return p; /* prim_map's memory is zeroed and never reused */
}

char *sym_arena_copy(sym_arena *a, const char *s, size_t n) {
  char *p = (char *)sym_arena_alloc(a, n + 1);
  if (p == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++)
    p[i] = s[i];
  p[n] = 0;
  return p;
}

void sym_arena_free(sym_arena *a) {
  sym_chunk *c = a->head;
  while (c != NULL) {
    sym_chunk *next = c->next;
    prim_unmap(c, c->size);
    c = next;
  }
  a->head = NULL;
}

static void sift_down(sym_entry *e, size_t root, size_t n) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n)
      return;
    if (child + 1 < n && e[child + 1].address > e[child].address)
      child++;
    if (e[root].address >= e[child].address)
      return;
    sym_entry t = e[root];
    e[root] = e[child];
    e[child] = t;
    root = child;
  }
}

void sym_sort(sym_entry *e, size_t n) {
  if (n < 2)
    return;
  for (size_t i = n / 2; i-- > 0;)
    sift_down(e, i, n);
  for (size_t end = n - 1; end > 0; end--) {
    sym_entry t = e[0];
    e[0] = e[end];
    e[end] = t;
    sift_down(e, 0, end);
  }
}

size_t sym_find(const sym_entry *e, size_t n, uint64_t address) {
  size_t lo = 0, hi = n; /* the answer is lo - 1 once lo == hi */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e[mid].address <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1; /* (size_t)-1 when none */
}
