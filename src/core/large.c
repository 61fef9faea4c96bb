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

static size_t mapping_for(size_t user_size, size_t user_offset) {
  return (user_size + user_offset + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
}

void *large_alloc(size_t user_size) {
  return large_alloc_aligned(user_size, LARGE_HEADER_SIZE, 0);
}

void *large_alloc_aligned(size_t user_size, size_t alignment, uint32_t keep) {
  heap_ensure_initialized();
  if (user_size > MAX_REQUEST_SIZE)
    return NULL;
  size_t offset = alignment > LARGE_HEADER_SIZE ? alignment : LARGE_HEADER_SIZE;
  size_t mapped = mapping_for(user_size, offset);
  large_header *h = (large_header *)os_map(mapped);
  if (h == NULL)
    return NULL;
  h->mapped_size = mapped;
  h->user_size = user_size;
  h->user_offset = (uint32_t)offset;
  h->keep_alignment = keep;
  h->flags = BLOCK_FLAG_LARGE;
  void *p = (char *)h + offset;
  if (offset != LARGE_HEADER_SIZE)
    block_set_header(p, BLOCK_FLAG_LARGE);
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
  large_user_bytes += mapped - offset;
  large_mapped_bytes += mapped;
  lock_release(&large_lock);
  return p;
}

/* The header is read only after the page map says a large block starts in the region of p's
 * header word. */
static int large_has_word(const void *p, uint32_t word) {
  if (((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) != 0 ||
      page_map_get((const char *)p - BLOCK_HEADER_SIZE) != REGION_LARGE_START)
    return 0;
  const large_header *h = large_header_of(p);
  return h->flags == word && (const char *)h + h->user_offset == (const char *)p;
}

int large_is_live(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE);
}

int large_is_live_outer(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE | BLOCK_FLAG_DEBUG_OUTER);
}

/* large_lock held, p live. */
static void free_locked(void *p) {
  large_header *h = large_header_of(p);
  list_remove(&h->link);
  h->flags = BLOCK_FLAG_LARGE | BLOCK_FLAG_FREE;
  size_t mapped = h->mapped_size;
  large_count--;
  large_user_bytes -= mapped - h->user_offset;
  large_mapped_bytes -= mapped;
  page_map_set(h, mapped, REGION_NOT_OURS);
  lock_release(&large_lock);
  os_unmap(h, mapped);
}

int large_free(void *p) {
  lock_acquire(&large_lock);
  /* Checked under the lock: of two racing frees of one block, the second finds it gone. */
  if (!large_is_live(p)) {
    lock_release(&large_lock);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  free_locked(p); /* releases the lock */
  return FASTMM_OK;
}

int large_free_unaligned_start(void *p) {
  lock_acquire(&large_lock);
  if (large_is_live(p)) {
    free_locked(p);
    return FASTMM_OK;
  }
  int mapped = page_map_get((const char *)p - BLOCK_HEADER_SIZE) != REGION_NOT_OURS;
  lock_release(&large_lock);
  return mapped ? LARGE_NOT_A_BLOCK : FASTMM_ERROR_INVALID_POINTER;
}

int large_extend_in_place(void *p, size_t new_user) {
  large_header *h = large_header_of(p);
  if (new_user > MAX_REQUEST_SIZE)
    return 0;
  size_t mapped = mapping_for(new_user, h->user_offset);
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
    void *p = (char *)h + h->user_offset;
    if ((h->flags & ~BLOCK_FLAG_DEBUG_OUTER) != BLOCK_FLAG_LARGE || node->next->prev != node)
      fault = 301;
    else if (h->mapped_size % LARGE_GRANULARITY != 0 || h->user_offset < LARGE_HEADER_SIZE ||
             h->user_offset > LARGE_GRANULARITY || h->user_offset >= h->mapped_size ||
             h->user_size > h->mapped_size - h->user_offset)
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

int large_for_each(uint64_t timeout_ns,
                   void (*visit)(void *p, const large_header *h, void *context), void *context) {
  if (!lock_acquire_within(&large_lock, timeout_ns))
    return 0;
  for (list_node *node = large_blocks.next; node != &large_blocks; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    visit((char *)h + h->user_offset, h, context);
  }
  lock_release(&large_lock);
  return 1;
}

size_t large_count_now(void) {
  lock_acquire(&large_lock);
  size_t n = large_count;
  lock_release(&large_lock);
  return n;
}
