/* What the manager holds: OS mappings counted as they are made, block counts gathered from
 * the arenas on demand (never on the hot paths). */
#include "internal.h"
#include "size_class.h"

static size_t os_reserved, os_peak, os_maps, os_unmaps;
/* FastMM's memory usage limit: mappings that would take os_reserved past it fail as if the OS
 * had no memory left. */
static size_t usage_limit = (size_t)-1;

static int within_limit(size_t size) {
  size_t limit = fmm_load_size_relaxed(&usage_limit);
  return limit == (size_t)-1 ||
         (size <= limit && fmm_load_size_relaxed(&os_reserved) <= limit - size);
}

static void count_map(size_t size) {
  size_t now = fmm_add_size(&os_reserved, size) + size;
  fmm_add_size(&os_maps, 1);
  size_t peak;
  while ((peak = fmm_load_size_relaxed(&os_peak)) < now && !fmm_cas_size(&os_peak, peak, now)) {
  }
}

void *os_map(size_t size) {
  if (!within_limit(size))
    return NULL;
  void *p = prim_map(size);
  if (p != NULL)
    count_map(size);
  return p;
}

int os_extend(void *at, size_t size) {
  if (!within_limit(size) || !prim_extend(at, size))
    return 0;
  count_map(size);
  return 1;
}

void os_unmap(void *p, size_t size) {
  prim_unmap(p, size);
  fmm_add_size(&os_reserved, (size_t)0 - size);
  fmm_add_size(&os_unmaps, 1);
}

/* Live blocks (thread-cached ones are free), their usable bytes and span bytes per small
 * class; returns the blocks sitting in thread caches. */
static size_t small_usage(fastmm_kind_usage out[SMALL_CLASS_COUNT]) {
  size_t cached[SMALL_CLASS_COUNT], cached_total = 0;
  size_t in_use[SMALL_CLASS_COUNT] = {0}, spans[SMALL_CLASS_COUNT] = {0};
  for (unsigned a = 0; a < ARENA_COUNT; a++) {
    for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
      small_manager *m = &small_managers[a][c];
      lock_acquire(&m->lock);
      small_drain_pending(m); /* pending frees are free: count them as such */
      in_use[c] += m->blocks_in_use;
      spans[c] += m->span_count * m->span_bytes;
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

void FASTMM_CDECL fastmm_get_state(fastmm_state *st) {
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
    st->medium.bytes_reserved += ar->span_count * MEDIUM_SPAN_SIZE;
    lock_release(&ar->lock);
  }
  /* Medium spans hold the small spans: report those bytes under small only. */
  st->medium.bytes_reserved -= st->small.bytes_reserved;
  large_stats(&st->large);
  st->os_bytes_reserved = fmm_load_size_relaxed(&os_reserved);
  st->os_bytes_peak = fmm_load_size_relaxed(&os_peak);
  st->os_map_calls = fmm_load_size_relaxed(&os_maps);
  st->os_unmap_calls = fmm_load_size_relaxed(&os_unmaps);
  st->small_class_count = SMALL_CLASS_COUNT;
}

void debug_flush_quarantine(void);

void FASTMM_CDECL fastmm_release_free_memory(void) {
  heap_ensure_initialized();
  if (!fastmm_debug_mode_active())
    debug_flush_quarantine(); /* freed debug blocks left from a debug session */
  medium_release_spare();
}

void FASTMM_CDECL fastmm_set_memory_usage_limit(size_t max_bytes) {
  usage_limit = max_bytes == 0 ? (size_t)-1 : max_bytes;
}

size_t FASTMM_CDECL fastmm_get_memory_usage_limit(void) {
  size_t limit = fmm_load_size_relaxed(&usage_limit);
  return limit == (size_t)-1 ? 0 : limit;
}

size_t FASTMM_CDECL fastmm_get_small_class_usage(fastmm_kind_usage *out, size_t count) {
  heap_ensure_initialized();
  fastmm_kind_usage classes[SMALL_CLASS_COUNT];
  small_usage(classes);
  for (size_t c = 0; c < SMALL_CLASS_COUNT && c < count; c++)
    out[c] = classes[c];
  return SMALL_CLASS_COUNT;
}
