/* SPDX-License-Identifier: MIT */
/* What the manager holds: block counts gathered from the arenas on demand (never on the hot
 * paths), and the OS mappings counted by os_memory.c. */
#include "heap.h"

#include "large.h"
#include "lock.h"
#include "medium.h"
#include "os_memory.h"
#include "size_class.h"
#include "small.h"
#include "thread_cache.h"

#include <string.h>

/* Live blocks (thread-cached ones are free), their usable bytes and span bytes per small
 * class; returns the blocks sitting in thread caches. */
static size_t small_usage(fastmm_kind_usage out[SMALL_CLASS_COUNT]) {
  size_t cached[SMALL_CLASS_COUNT], cached_total = 0;
  size_t in_use[SMALL_CLASS_COUNT] = {0}, spans[SMALL_CLASS_COUNT] = {0};
  for (unsigned a = 0; a <= ARENA_COUNT; a++) {
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
      /* The arenas' managers, then the aligned ones (small.h). */
      small_manager *m = a < ARENA_COUNT ? &small_managers[a][c] : &small_aligned_managers[c];
      lock_acquire(&m->lock);
      small_drain_pending(m); /* pending frees are free: count them as such */
      in_use[c] += m->blocks_in_use;
      spans[c] += m->span_bytes_held;
      lock_release(&m->lock);
    }
  }
  thread_cache_count(cached);
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
    size_t live = in_use[c] > cached[c] ? in_use[c] - cached[c] : 0;
    out[c].blocks_in_use = live;
    out[c].bytes_in_use = live * (size_class_slot[c] - BLOCK_HEADER_SIZE);
    out[c].bytes_reserved = spans[c];
    cached_total += cached[c];
  }
  return cached_total;
}

void heap_get_state(fastmm_state *st) {
  heap_ensure_initialized();
  memset(st, 0, sizeof *st);
  fastmm_kind_usage classes[SMALL_CLASS_COUNT];
  st->thread_cached_blocks = small_usage(classes);
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
    st->small.blocks_in_use += classes[c].blocks_in_use;
    st->small.bytes_in_use += classes[c].bytes_in_use;
  }
  for (unsigned a = 0; a < ARENA_COUNT; a++) {
    medium_arena *ar = &medium_arenas[a];
    lock_acquire(&ar->lock);
    st->small.bytes_reserved += ar->small_span_bytes;
    st->medium.blocks_in_use += ar->blocks_in_use;
    st->medium.bytes_in_use += ar->bytes_in_use;
    st->medium.bytes_reserved += ar->span_bytes;
    lock_release(&ar->lock);
  }
  /* Medium spans hold the small spans: report those bytes under small only. */
  st->medium.bytes_reserved -= st->small.bytes_reserved;
  large_stats(&st->large);
  os_memory_counts os;
  os_memory_get_counts(&os);
  st->os_bytes_reserved = os.bytes_reserved;
  st->os_bytes_peak = os.bytes_peak;
  st->os_map_calls = os.map_calls;
  st->os_unmap_calls = os.unmap_calls;
  st->small_class_count = SMALL_CLASS_COUNT;
}

size_t heap_get_small_class_usage(fastmm_kind_usage *out, size_t count) {
  heap_ensure_initialized();
  fastmm_kind_usage classes[SMALL_CLASS_COUNT];
  small_usage(classes);
  for (size_t c = 0; c < SMALL_CLASS_COUNT && c < count; c++)
    out[c] = classes[c];
  return SMALL_CLASS_COUNT;
}
