/* SPDX-License-Identifier: MIT */
/* Expected memory leaks: see expected_leaks.h. Registrations are rare, so plain arrays scanned
 * under a lock are enough; each grows by mapping a twice larger one. A removal moves the last
 * entry into its place, as the Pascal unit's arrays did, so a listing keeps their order. */
#include "expected_leaks.h"

#include "copy.h"
#include "lock.h"
#include "os_memory.h"

typedef struct entry {
  const void *key; /* the pointer, or the class's VMT (NULL: a registration by size) */
  size_t instance_size;
  ptrdiff_t size;
  ptrdiff_t count;
} entry;

typedef struct entries {
  entry *e;
  size_t n, capacity;
} entries;

FMM_HIDDEN fmm_lock expected_leaks_lock;
static entries pointers, kinds; /* kinds: by class and by size */
static entries match_copy;      /* the kinds' counts as the current matching sees them */

/* Room for `want` entries (lock held): 0 when out of memory. */
static int make_room(entries *a, size_t want) {
  if (want <= a->capacity)
    return 1;
  size_t cap = a->capacity ? a->capacity * 2 : 4096 / sizeof(entry) * 4;
  while (cap < want)
    cap *= 2;
  entry *e = (entry *)os_map(cap * sizeof(entry));
  if (e == NULL)
    return 0;
  if (a->e != NULL) {
    fmm_copy(e, a->e, a->n * sizeof(entry));
    os_unmap(a->e, a->capacity * sizeof(entry));
  }
  a->e = e;
  a->capacity = cap;
  return 1;
}

static size_t find(const entries *a, const void *key, ptrdiff_t size) {
  size_t i = 0;
  while (i < a->n && !(a->e[i].key == key && a->e[i].size == size))
    i++;
  return i;
}

/* Adds delta to the count of (key, size) (lock held): FastMM5's AdjustLeakEntry. */
static int adjust(entries *a, const void *key, size_t instance_size, ptrdiff_t size,
                  ptrdiff_t delta) {
  if (delta == 0)
    return 0;
  size_t i = find(a, key, size);
  if (i < a->n) {
    if (a->e[i].count + delta < 0)
      return 0;
    a->e[i].count += delta;
    if (a->e[i].count == 0)
      a->e[i] = a->e[--a->n];
    return 1;
  }
  if (delta < 0 || !make_room(a, a->n + 1))
    return 0;
  a->e[a->n++] = (entry){key, instance_size, size, delta};
  return 1;
}

int expected_leaks_add_once(const void *p) {
  lock_acquire(&expected_leaks_lock);
  int ok = find(&pointers, p, 0) == pointers.n && adjust(&pointers, p, 0, 0, 1);
  lock_release(&expected_leaks_lock);
  return ok;
}

int expected_leaks_add(const void *p) {
  lock_acquire(&expected_leaks_lock);
  int ok = adjust(&pointers, p, 0, 0, 1);
  lock_release(&expected_leaks_lock);
  return ok;
}

int expected_leaks_remove(const void *p) {
  lock_acquire(&expected_leaks_lock);
  int ok = adjust(&pointers, p, 0, 0, -1);
  lock_release(&expected_leaks_lock);
  return ok;
}

int expected_leaks_contains(const void *p) {
  lock_acquire(&expected_leaks_lock);
  int found = find(&pointers, p, 0) < pointers.n;
  lock_release(&expected_leaks_lock);
  return found;
}

int expected_leaks_adjust(const void *vmt, size_t instance_size, ptrdiff_t size, int delta) {
  lock_acquire(&expected_leaks_lock);
  int ok = adjust(&kinds, vmt, instance_size, vmt != NULL ? 0 : size, delta);
  lock_release(&expected_leaks_lock);
  return ok;
}

static size_t list(const entries *a, int by_pointer, fastmm_expected_leak *out, size_t room) {
  for (size_t i = 0; i < a->n && i < room; i++) {
    const entry *e = &a->e[i];
    out[i] = (fastmm_expected_leak){by_pointer ? e->key : NULL, by_pointer ? NULL : e->key,
                                    e->instance_size, e->size, (size_t)e->count};
  }
  return a->n;
}

size_t expected_leaks_list(fastmm_expected_leak *out, size_t capacity) {
  lock_acquire(&expected_leaks_lock);
  size_t n = list(&pointers, 1, out, capacity);
  n += list(&kinds, 0, out + (n < capacity ? n : capacity), n < capacity ? capacity - n : 0);
  lock_release(&expected_leaks_lock);
  return n;
}

void expected_leaks_match_begin(void) {
  lock_acquire(&expected_leaks_lock);
  match_copy.n = 0;
  make_room(&match_copy, kinds.n);
  match_copy.n = match_copy.capacity < kinds.n ? match_copy.capacity : kinds.n;
  if (match_copy.n > 0)
    fmm_copy(match_copy.e, kinds.e, match_copy.n * sizeof(entry));
  lock_release(&expected_leaks_lock);
}

int expected_leaks_match(const void *block, size_t usable, const void *first) {
  if (expected_leaks_contains(block))
    return 1;
  lock_acquire(&expected_leaks_lock);
  entry *hit = NULL;
  for (size_t i = 0; i < match_copy.n && hit == NULL && first != NULL; i++) {
    entry *e = &match_copy.e[i];
    if (e->key == first && e->count > 0 && e->instance_size <= usable)
      hit = e;
  }
  if (hit == NULL)
    for (size_t i = 0; i < match_copy.n; i++) {
      entry *e = &match_copy.e[i];
      if (e->key == NULL && e->count > 0 && (size_t)e->size <= usable &&
          (hit == NULL || e->size > hit->size))
        hit = e;
    }
  if (hit != NULL)
    hit->count--;
  lock_release(&expected_leaks_lock);
  return hit != NULL;
}
