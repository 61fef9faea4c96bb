/* SPDX-License-Identifier: MIT */
/* The exports that ask about or act on the heap as a whole: statistics, the consistency walk,
 * the usage limit, memory given back. */
#include "core/heap.h"
#include "core/medium.h"
#include "core/os_memory.h"
#include "core/release.h"
#include "core/small.h"
#include "core/thread_cache.h"
#include "entry/startup.h"
#include "modes/debug_block.h"
#include "modes/gate.h"

/* Freed debug blocks wait in the quarantine inside live outer blocks: they count as free here,
 * as FastMM5 counts a freed block. */
/* A NULL output does nothing and returns 0 (fastmm.h, "Output pointers"). */
void FASTMM_CDECL fastmm_get_state(fastmm_state *st) {
  if (st == NULL)
    return;
  heap_get_state(st);
  debug_state_without_quarantine(st, NULL, 0);
}

size_t FASTMM_CDECL fastmm_get_small_class_usage(fastmm_kind_usage *out, size_t count) {
  if (out == NULL)
    return 0;
  size_t classes = heap_get_small_class_usage(out, count);
  debug_state_without_quarantine(NULL, out, count);
  return classes;
}

int FASTMM_CDECL fastmm_check_heap(void) {
  return heap_check();
}

void FASTMM_CDECL fastmm_run_startup(void) {
  entry_startup();
}

void FASTMM_CDECL fastmm_flush_thread_cache(void) {
  thread_cache_flush_current();
}

/* The quarantine first: the blocks it frees go through the calling thread's cache (and other
 * arenas' pending lists), which are emptied after it. */
void FASTMM_CDECL fastmm_process_all_pending_frees(void) {
  heap_ensure_initialized();
  debug_flush_quarantine();
  thread_cache_flush_current();
  small_drain_all_pending();
}

void FASTMM_CDECL fastmm_release_free_memory(void) {
  heap_ensure_initialized();
  if (!(mode_now() & MODE_DEBUG))
    debug_flush_quarantine(); /* freed debug blocks left from a debug session */
  release_all();
}

void FASTMM_CDECL fastmm_release_idle_memory(void) {
  heap_ensure_initialized();
  release_idle_pass();
}

void FASTMM_CDECL fastmm_set_idle_release_interval(unsigned milliseconds) {
  heap_ensure_initialized();
  release_set_interval(milliseconds);
}

unsigned FASTMM_CDECL fastmm_get_idle_release_interval(void) {
  return release_interval();
}

void FASTMM_CDECL fastmm_set_memory_usage_limit(size_t max_bytes) {
  os_set_usage_limit(max_bytes == 0 ? (size_t)-1 : max_bytes);
}

size_t FASTMM_CDECL fastmm_get_memory_usage_limit(void) {
  size_t limit = os_usage_limit();
  return limit == (size_t)-1 ? 0 : limit;
}
