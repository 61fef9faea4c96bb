/* SPDX-License-Identifier: MIT */
/* Per-thread caches of free small blocks. Why: a Delphi program spends most of its memory
 * manager time on small GetMem/FreeMem pairs (strings, objects); serving them from a list only
 * the calling thread touches costs no lock and no atomic instruction, where FastMM5's arenas
 * pay one locked exchange per call. Blocks keep their spans and managers, so a block freed by
 * another thread simply goes into that thread's cache and later back to its own span; the
 * shared arenas behind the caches keep FastMM's try-lock design and never block a FreeMem. */
#include "thread_cache.h"

#include "arena.h"
#include "heap.h"
#include "lock.h"
#include "os_memory.h"
#include "prim/prim.h"
#include "size_class.h"
#include "small.h"

FMM_STATIC_ASSERT(SIZE_CLASS_GATE == SMALL_CLASS_COUNT,
                  "the gate bin is the one after the last class");

FMM_HIDDEN fmm_lock thread_cache_registry_lock;
static list_node live_caches = LIST_INIT(live_caches);
static list_node spare_caches = LIST_INIT(spare_caches); /* of threads that ended */
static char *carve_next, *carve_end; /* caches are carved from 64 KB OS chunks, never freed */
static uint32_t next_arena;

static uint32_t bin_limit(unsigned class_index) {
  uint32_t slot = size_class_slot[class_index];
  uint32_t n = (slot > THREAD_CACHE_LARGE_SLOT ? THREAD_CACHE_BIN_BYTES_LARGE_SLOTS
                                               : THREAD_CACHE_BIN_BYTES) /
               slot;
  if (n < THREAD_CACHE_BIN_MIN_COUNT)
    n = THREAD_CACHE_BIN_MIN_COUNT;
  if (n > THREAD_CACHE_BIN_MAX_COUNT)
    n = THREAD_CACHE_BIN_MAX_COUNT;
  return n;
}

thread_cache *thread_cache_create(void) {
  heap_ensure_initialized();
  lock_acquire(&thread_cache_registry_lock);
  list_node *spare = list_first(&spare_caches);
  thread_cache *tc = NULL;
  if (spare != NULL) {
    list_remove(spare);
    tc = list_entry(spare, thread_cache, registry_link);
  } else {
    if (carve_next == NULL || (size_t)(carve_end - carve_next) < sizeof(thread_cache)) {
      carve_next = (char *)os_map(LARGE_GRANULARITY);
      carve_end = carve_next ? carve_next + LARGE_GRANULARITY : NULL;
    }
    if (carve_next != NULL) {
      tc = (thread_cache *)carve_next;
      carve_next += (sizeof(thread_cache) + 63u) & ~(size_t)63u;
    }
  }
  if (tc != NULL) {
    for (unsigned c = 0; c <= SMALL_CLASS_COUNT; c++) {
      tc->bins[c].head = NULL;
      tc->bins[c].count = 0;
      tc->bins[c].limit = c < SMALL_CLASS_COUNT ? bin_limit(c) : 0;
      if (c < SMALL_CLASS_COUNT) {
        tc->bins[c].seen_taken = 0;
        tc->bins[c].unmatched_frees = 0;
      }
    }
    tc->arena = arena_for(next_arena++);
    tc->thread_id = prim_thread_id();
    list_insert_after(&live_caches, &tc->registry_link);
  }
  lock_release(&thread_cache_registry_lock);
  if (tc != NULL)
    prim_tls_set(tc);
  return tc;
}

/* Gives back all but `keep` blocks of one bin: the most recently freed stay (warm in cache). */
static void thread_cache_flush_bin(thread_cache *tc, unsigned class_index, uint32_t keep) {
  cache_bin *bin = &tc->bins[class_index];
  if (bin->count <= keep)
    return;
  void *list;
  if (keep == 0) {
    list = bin->head;
    bin->head = NULL;
  } else {
    void *last = bin->head;
    for (uint32_t i = 1; i < keep; i++)
      last = *(void **)last;
    list = *(void **)last;
    *(void **)last = NULL;
  }
  bin->count = keep;
  small_return_blocks(list);
}

/* A thread's cache shrinks while nobody allocates what it frees. Blocks in a cache are free, but
 * their spans count them in use: each one pins its small span, and that span pins its medium
 * span, so a cache left holding blocks after the program freed everything can keep megabytes
 * from the OS (measured: 1556 cached blocks kept 16 MB after the Pascal demo; 2705 kept 58 MB
 * after 100 MB of mixed blocks were freed). So when the thread has freed
 * THREAD_CACHE_SHRINK_AFTER blocks of a class while the class's manager handed none out (to
 * this thread or any other: a producer/consumer pair keeps its cache), the heap is shrinking:
 * the bin stops keeping blocks of that class (it is emptied, its later frees go straight to
 * their spans), and so does every other bin whose manager handed out nothing since this thread
 * last took blocks from it or looked (classes freed too seldom to get there by themselves). The
 * first refill of a bin gives it its full capacity back. This costs the full-bin slow path one
 * load and the refill one; the fast paths nothing (the bin's limit is what they compare with
 * already). */
static const small_manager *manager_of_block(void *p) {
  return small_span_of(p, block_header(p))->manager;
}

/* Every bin whose manager handed out nothing since this thread last looked stops keeping. */
static void stop_keeping_unused(thread_cache *tc) {
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
    cache_bin *bin = &tc->bins[c];
    if (bin->head == NULL ||
        fmm_load_u32_relaxed(&manager_of_block(bin->head)->taken) != bin->seen_taken)
      continue;
    bin->limit = 0;
    bin->unmatched_frees = THREAD_CACHE_SHRINK_AFTER;
    thread_cache_flush_bin(tc, c, 0);
  }
}

int thread_cache_make_room(thread_cache *tc, unsigned class_index, void *p, uint32_t h) {
  cache_bin *bin = &tc->bins[class_index];
  uint32_t taken = fmm_load_u32_relaxed(&small_span_of(p, h)->manager->taken);
  /* Blocks freed since the bin was last full: it was flushed to half its limit then. */
  uint32_t freed = bin->limit != 0 ? bin->limit - bin->limit / 2u : 1u;
  if (taken != bin->seen_taken) {
    bin->seen_taken = taken;
    bin->unmatched_frees = 0;
    bin->limit = bin_limit(class_index);
  } else if (bin->limit != 0 && (bin->unmatched_frees += freed) >= THREAD_CACHE_SHRINK_AFTER) {
    bin->limit = 0;
    stop_keeping_unused(tc);
  }
  if (bin->limit == 0) {
    thread_cache_flush_bin(tc, class_index, 0);
    return 0;
  }
  if (bin->count >= bin->limit)
    thread_cache_flush_bin(tc, class_index, bin->limit / 2u);
  return 1;
}

void thread_cache_on_refill(thread_cache *tc, unsigned class_index) {
  tc->bins[class_index].limit = bin_limit(class_index);
  tc->bins[class_index].unmatched_frees = 0;
}

void thread_cache_after_refill(thread_cache *tc, unsigned class_index) {
  void *head = tc->bins[class_index].head;
  if (head != NULL)
    tc->bins[class_index].seen_taken = fmm_load_u32_relaxed(&manager_of_block(head)->taken);
}

void thread_cache_on_thread_exit(void *value) {
  thread_cache *tc = (thread_cache *)value;
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
    thread_cache_flush_bin(tc, c, 0);
  lock_acquire(&thread_cache_registry_lock);
  list_remove(&tc->registry_link);
  list_insert_after(&spare_caches, &tc->registry_link);
  lock_release(&thread_cache_registry_lock);
}

void thread_cache_count(size_t per_class[SMALL_CLASS_COUNT]) {
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
    per_class[c] = 0;
  lock_acquire(&thread_cache_registry_lock);
  for (list_node *n = live_caches.next; n != &live_caches; n = n->next) {
    thread_cache *tc = list_entry(n, thread_cache, registry_link);
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
      per_class[c] += fmm_load_u32_relaxed(&tc->bins[c].count);
  }
  lock_release(&thread_cache_registry_lock);
}

unsigned thread_arena_hint(void) {
  thread_cache *tc = (thread_cache *)prim_tls_get();
  return tc ? tc->arena : arena_for(prim_thread_id());
}

void thread_cache_flush_current(void) {
  thread_cache *tc = (thread_cache *)prim_tls_get();
  if (tc == NULL)
    return;
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++)
    thread_cache_flush_bin(tc, c, 0);
}
