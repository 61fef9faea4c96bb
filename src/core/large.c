/* Large blocks: each one an OS mapping of its own, rounded to LARGE_GRANULARITY, with a
 * 64-byte header. They are kept on one list (for statistics and the heap walk) and marked in
 * the page map, so FreeMem can tell a live large block from a freed or foreign pointer without
 * touching memory that may be unmapped. One lock: large blocks are rare next to the system
 * calls they cost. */
#include "large.h"

#include "contention.h"
#include "heap.h"
#include "lock.h"
#include "os_memory.h"
#include "page_map.h"
#include "policy.h"

static fmm_lock large_lock;
static list_node large_blocks = LIST_INIT(large_blocks);
static size_t large_count, large_user_bytes, large_mapped_bytes;

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
  if (!page_map_set(h, mapped, REGION_LARGE_START)) {
    os_unmap(h, mapped);
    return NULL;
  }
  if (!lock_try(&large_lock)) {
    contention_count(CONTENTION_LARGE); /* the one large lock is taken */
    lock_acquire(&large_lock);
  }
  list_insert_after(&large_blocks, &h->link);
  large_count++;
  large_user_bytes += mapped - LARGE_HEADER_SIZE;
  large_mapped_bytes += mapped;
  lock_release(&large_lock);
  return p;
}

/* The header is read only after the page map says a large block starts in p's region. */
static int large_has_word(const void *p, uint32_t word) {
  return ((uintptr_t)p & (LARGE_GRANULARITY - 1)) == LARGE_HEADER_SIZE &&
         page_map_get(p) == REGION_LARGE_START && large_header_of(p)->flags == word;
}

int large_is_live(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE);
}

int large_is_live_outer(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE | BLOCK_FLAG_DEBUG_OUTER);
}

int large_free(void *p) {
  lock_acquire(&large_lock);
  /* Checked under the lock: of two racing frees of one block, the second finds it gone. */
  if (!large_is_live(p)) {
    lock_release(&large_lock);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  large_header *h = large_header_of(p);
  list_remove(&h->link);
  h->flags = BLOCK_FLAG_LARGE | BLOCK_FLAG_FREE;
  size_t mapped = h->mapped_size;
  large_count--;
  large_user_bytes -= mapped - LARGE_HEADER_SIZE;
  large_mapped_bytes -= mapped;
  page_map_set(h, mapped, REGION_NOT_OURS);
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
  if (!page_map_set((char *)h + h->mapped_size, extra, REGION_LARGE_REST)) {
    os_unmap((char *)h + h->mapped_size, extra);
    return 0;
  }
  lock_acquire(&large_lock);
  h->mapped_size = mapped;
  large_user_bytes += extra;
  large_mapped_bytes += extra;
  lock_release(&large_lock);
  return 1;
}

void large_set_flag(void *p, uint32_t flag, int on) {
  large_header *h = large_header_of(p);
  lock_acquire(&large_lock);
  h->flags = on ? (h->flags | flag) : (h->flags & ~flag);
  lock_release(&large_lock);
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

/* 0 when the list, the page map and the counters agree; else a code from heap_check.c's
 * range. */
int large_check(void) {
  int fault = 0;
  size_t n = 0, mapped = 0;
  lock_acquire(&large_lock);
  for (list_node *node = large_blocks.next; node != &large_blocks && !fault; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    void *p = (char *)h + LARGE_HEADER_SIZE;
    if ((h->flags & ~BLOCK_FLAG_DEBUG_OUTER) != BLOCK_FLAG_LARGE || node->next->prev != node)
      fault = 301;
    else if (h->mapped_size % LARGE_GRANULARITY != 0 ||
             h->user_size > h->mapped_size - LARGE_HEADER_SIZE)
      fault = 302;
    else if (!(large_is_live(p) || large_is_live_outer(p)) ||
             page_map_get((char *)h + h->mapped_size - 1) !=
                 (h->mapped_size > LARGE_GRANULARITY ? REGION_LARGE_REST : REGION_LARGE_START))
      fault = 303;
    n++;
    mapped += h->mapped_size;
  }
  if (!fault && (n != large_count || mapped != large_mapped_bytes))
    fault = 304;
  lock_release(&large_lock);
  return fault;
}
