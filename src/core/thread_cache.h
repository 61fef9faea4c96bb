/* SPDX-License-Identifier: MIT */
/* Per-thread caches of free small blocks (thread_cache.c says why they exist). */
#ifndef FASTMM_THREAD_CACHE_H
#define FASTMM_THREAD_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "linkage.h"
#include "list.h"
#include "policy.h"
#include "prim/prim.h"

/* 32 bytes, so that FreeMem finds a block's bin from its header word with one mask: the class
 * field sits at bit 5 (thread_cache_bin_of in alloc_fast.h). */
typedef struct cache_bin {
  void *head;
  uint32_t count;
  uint32_t limit;
  /* For the slow paths only: the manager's `taken` count at the last full bin, and about how
   * many blocks this thread freed since without anyone taking one (thread_cache_make_room). */
  uint32_t seen_taken;
  uint32_t unmatched_frees;
  char unused[32 - sizeof(void *) - 4 * sizeof(uint32_t)];
} cache_bin;
FMM_STATIC_ASSERT(sizeof(cache_bin) == 32, "a bin is 32 bytes: the class field times 32");

typedef struct thread_cache {
  /* One per class, and bins[SIZE_CLASS_GATE], always empty: where GetMem looks while a mode
   * is on (size_class.h, its fast copy closed). */
  cache_bin bins[SMALL_CLASS_COUNT + 1];
  uint32_t arena;
  uint32_t thread_id;
  list_node registry_link; /* on the live caches, or the spare ones */
} thread_cache;

#if PRIM_TLS_FAST_NEVER_NULL
/* A thread without a cache reads prim_tls_unset's zeros as one: every bin empty, with no room. */
FMM_STATIC_ASSERT(sizeof(thread_cache) <= PRIM_TLS_UNSET_BYTES, "the unset thread pointer's zeros");
#endif

/* The bin stopped keeping its class (thread_cache_make_room) and its manager has handed out
 * nothing since (`taken`, read from the block's manager, is what the bin saw then): a free of
 * the class goes straight back to its span, with no call here. */
static inline int cache_bin_still_stopped(const cache_bin *bin, uint32_t taken) {
  return bin->limit == 0 && taken == bin->seen_taken;
}

thread_cache *thread_cache_create(void); /* for the calling thread; NULL if TLS is unavailable */
/* FreeMem found the bin of live small block p (header h) full: makes room in it and returns 1,
 * or returns 0 when the thread keeps no blocks of that class any more (p then goes straight
 * back to its span). */
int thread_cache_make_room(thread_cache *tc, unsigned class_index, void *p, uint32_t h);
/* GetMem found the bin empty: the bin gets its full capacity back (on_refill), then notes the
 * manager's count once the refill is in the bin (after_refill). */
void thread_cache_on_refill(thread_cache *tc, unsigned class_index);
void thread_cache_after_refill(thread_cache *tc, unsigned class_index);
/* Gives every block of the calling thread's cache back to the arenas. */
void thread_cache_flush_current(void);
void thread_cache_on_thread_exit(void *tc);
/* Sums cached blocks per class over all live caches (statistics; racy while threads run). */
void thread_cache_count(size_t per_class[SMALL_CLASS_COUNT]);
/* The arena the calling thread starts at. */
unsigned thread_arena_hint(void);

/* The lock of the registry of thread caches, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock thread_cache_registry_lock;

#endif
