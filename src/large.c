/* Large blocks: each one an OS mapping of its own, rounded to LARGE_GRANULARITY, with a
 * 64-byte header. They are kept on one list (for statistics and the heap walk) and in a hash
 * set of their addresses, so FreeMem can tell a live large block from a freed or foreign
 * pointer without touching memory that may be unmapped. Both sit behind one lock: large
 * blocks are rare next to the system calls they cost. */
#include "internal.h"

static fmm_lock large_lock;
static large_header large_list = {&large_list, &large_list, 0, 0, {0}, 0};
static size_t large_count, large_user_bytes, large_mapped_bytes;

/* Open-addressing set of live large user pointers; deleted slots hold a tombstone. */
#define TOMBSTONE ((void *)(uintptr_t)1)
static void **set_slots;
static size_t set_capacity, set_used; /* used counts live entries and tombstones */

static size_t set_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p >> 16; /* mappings are 64 KB granular on Windows */
  x ^= (uint64_t)(uintptr_t)p >> 6;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 17);
}

static size_t set_find(const void *p) { /* index of p, or set_capacity */
  if (set_capacity == 0)
    return 0;
  size_t mask = set_capacity - 1;
  for (size_t i = set_hash(p) & mask;; i = (i + 1) & mask) {
    if (set_slots[i] == p)
      return i;
    if (set_slots[i] == NULL)
      return set_capacity;
  }
}

static int set_grow(void) {
  size_t live_now = 0;
  for (size_t i = 0; i < set_capacity; i++)
    live_now += set_slots[i] != NULL && set_slots[i] != TOMBSTONE;
  /* Mostly tombstones: rehash at the same size instead of doubling. */
  size_t cap = set_capacity == 0             ? 1024
               : live_now * 2 < set_capacity ? set_capacity
                                             : set_capacity * 2;
  void **slots = (void **)os_map(cap * sizeof(void *));
  if (slots == NULL)
    return 0;
  size_t live = 0;
  for (size_t i = 0; i < set_capacity; i++) {
    void *p = set_slots[i];
    if (p != NULL && p != TOMBSTONE) {
      size_t j = set_hash(p) & (cap - 1);
      while (slots[j] != NULL)
        j = (j + 1) & (cap - 1);
      slots[j] = p;
      live++;
    }
  }
  if (set_slots)
    os_unmap(set_slots, set_capacity * sizeof(void *));
  set_slots = slots;
  set_capacity = cap;
  set_used = live;
  return 1;
}

static int set_add(void *p) {
  if ((set_used + 1) * 4 > set_capacity * 3 && !set_grow())
    return 0;
  size_t mask = set_capacity - 1;
  size_t i = set_hash(p) & mask;
  while (set_slots[i] != NULL && set_slots[i] != TOMBSTONE)
    i = (i + 1) & mask;
  if (set_slots[i] == NULL)
    set_used++;
  set_slots[i] = p;
  return 1;
}

void large_init(void) {
}

void *large_alloc(size_t user_size) {
  heap_ensure_initialized();
  if (user_size > MAX_REQUEST_SIZE)
    return NULL;
  size_t mapped =
      (user_size + LARGE_HEADER_SIZE + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
  large_header *h = (large_header *)os_map(mapped);
  if (h == NULL)
    return NULL;
  h->mapped_size = mapped;
  h->user_size = user_size;
  h->flags = BLOCK_FLAG_LARGE;
  void *p = (char *)h + LARGE_HEADER_SIZE;
  lock_acquire(&large_lock);
  if (!set_add(p)) {
    lock_release(&large_lock);
    os_unmap(h, mapped);
    return NULL;
  }
  h->prev = &large_list;
  h->next = large_list.next;
  large_list.next->prev = h;
  large_list.next = h;
  large_count++;
  large_user_bytes += mapped - LARGE_HEADER_SIZE;
  large_mapped_bytes += mapped;
  lock_release(&large_lock);
  return p;
}

int large_is_live(const void *p) {
  lock_acquire(&large_lock);
  int live = set_find(p) < set_capacity;
  lock_release(&large_lock);
  return live;
}

int large_free(void *p) {
  lock_acquire(&large_lock);
  size_t i = set_find(p);
  if (i >= set_capacity) {
    lock_release(&large_lock);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  set_slots[i] = TOMBSTONE;
  large_header *h = large_header_of(p);
  h->prev->next = h->next;
  h->next->prev = h->prev;
  h->flags = BLOCK_FLAG_LARGE | BLOCK_FLAG_FREE;
  size_t mapped = h->mapped_size;
  large_count--;
  large_user_bytes -= mapped - LARGE_HEADER_SIZE;
  large_mapped_bytes -= mapped;
  lock_release(&large_lock);
  os_unmap(h, mapped);
  return FASTMM_OK;
}

int large_extend_in_place(void *p, size_t new_user) {
  large_header *h = large_header_of(p);
  if (new_user > MAX_REQUEST_SIZE)
    return 0;
  size_t mapped =
      (new_user + LARGE_HEADER_SIZE + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
  if (mapped <= h->mapped_size)
    return 1;
  size_t extra = mapped - h->mapped_size;
  if (!os_extend((char *)h + h->mapped_size, extra))
    return 0;
  lock_acquire(&large_lock);
  h->mapped_size = mapped;
  large_user_bytes += extra;
  large_mapped_bytes += extra;
  lock_release(&large_lock);
  return 1;
}

void large_set_user_size(void *p, size_t user_size) {
  large_header_of(p)->user_size = user_size;
}

void large_stats(fastmm_kind_usage *u) {
  lock_acquire(&large_lock);
  u->blocks_in_use = large_count;
  u->bytes_in_use = large_user_bytes;
  u->bytes_reserved = large_mapped_bytes;
  lock_release(&large_lock);
}

/* 0 when the list, the set and the counters agree; else a code from heap_check.c's range. */
int large_check(void) {
  int fault = 0;
  size_t n = 0, mapped = 0;
  lock_acquire(&large_lock);
  for (large_header *h = large_list.next; h != &large_list && !fault; h = h->next) {
    void *p = (char *)h + LARGE_HEADER_SIZE;
    if (h->flags != BLOCK_FLAG_LARGE || h->next->prev != h)
      fault = 301;
    else if (h->mapped_size % LARGE_GRANULARITY != 0 ||
             h->user_size > h->mapped_size - LARGE_HEADER_SIZE)
      fault = 302;
    else if (set_find(p) >= set_capacity)
      fault = 303;
    n++;
    mapped += h->mapped_size;
  }
  if (!fault && (n != large_count || mapped != large_mapped_bytes))
    fault = 304;
  size_t live = 0;
  for (size_t i = 0; i < set_capacity && !fault; i++)
    live += set_slots[i] != NULL && set_slots[i] != TOMBSTONE;
  if (!fault && live != large_count)
    fault = 305;
  lock_release(&large_lock);
  return fault;
}
