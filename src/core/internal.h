/* Declarations shared by the core's modules. Each block kind lives in its own file:
 * small.c (size classes in spans), medium.c (binned blocks in spans), large.c (OS mappings),
 * thread_cache.c (per-thread free lists in front of the small arenas). */
#ifndef FASTMM_INTERNAL_H
#define FASTMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fastmm.h"
#include "atomics.h"
#include "block_header.h"
#include "lock.h"
#include "page_map.h"
#include "policy.h"
#include "prim/prim.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define FMM_ALIGNED(n) __declspec(align(n))
#define FMM_LIKELY(x) (x)
#define FMM_UNLIKELY(x) (x)
#define FMM_NOINLINE __declspec(noinline)
#else
#define FMM_ALIGNED(n) __attribute__((aligned(n)))
#define FMM_LIKELY(x) __builtin_expect(!!(x), 1)
#define FMM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FMM_NOINLINE __attribute__((noinline))
#endif

#define FMM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)

/* The Windows DLLs take ReallocMem's entry points from NASM (src/win32, src/win64) unless
 * built pure C (FASTMM_PURE_C, the win32-purec and win64-purec presets). */
#if defined(_WIN32) && !defined(FASTMM_PURE_C)
#define FASTMM_ASM_REALLOC 1
#endif

/* ---- start-up ---------------------------------------------------------------------------- */
extern volatile uint32_t heap_initialized;
void heap_init_slow(void);
static inline void heap_ensure_initialized(void) {
  /* Acquire: a thread that finds the heap made by another one must see what it made. */
  if (FMM_UNLIKELY(fmm_load_u32_acquire(&heap_initialized) == 0))
    heap_init_slow();
}

/* ---- OS memory with accounting (stats.c) ------------------------------------------------ */
void *os_map(size_t size);
int os_extend(void *at, size_t size);
void os_unmap(void *p, size_t size);

/* ---- copying without the CRT where Delphi's register rules matter (realloc.c) ------------ */
void fmm_copy(void *dst, const void *src, size_t n);
void fmm_zero(void *dst, size_t n);

/* ---- small blocks (small.c) --------------------------------------------------------------- */
#define SMALL_SPAN_MAGIC 0x5350414Eu /* "SPAN" */

typedef struct small_manager small_manager;

/* The span header; the first block's header word sits at offset 60, so this must fit in 60. */
typedef struct small_span {
  uint32_t magic;
  uint16_t class_index;
  uint16_t listed; /* 1 while on the manager's list of spans with room */
  small_manager *manager;
  struct small_span *next; /* spans with room */
  struct small_span *prev;
  void *free_list;        /* freed blocks, linked through their first word */
  uint32_t blocks_in_use; /* handed out, including those in thread caches or pending lists */
  uint32_t block_count;
  uint32_t slot_size;
  uint32_t fed_end; /* blocks are carved in address order: the offset of the first one not
                       carved yet; headers from there on are stale */
} small_span;
FMM_STATIC_ASSERT(sizeof(small_span) <= SMALL_SPAN_HEADER_SIZE - BLOCK_HEADER_SIZE,
                  "small span header overlaps the first block's header word");

struct small_manager {
  fmm_lock lock;
  uint32_t class_index;
  uint32_t arena;
  uint32_t slot_size;
  uint32_t span_bytes; /* requested size of a new span (medium user bytes) */
  uint32_t unused;
  small_span *spans_with_room;
  void *pending_free; /* frees that found the lock taken: a lock-free stack */
  size_t span_count;
  size_t blocks_in_use; /* sum of the spans' blocks_in_use */
} FMM_ALIGNED(64);

extern small_manager small_managers[ARENA_COUNT][SMALL_CLASS_COUNT];

static inline small_span *small_span_of(const void *p, uint32_t h) {
  return (small_span *)((char *)p - small_header_span_offset(h));
}
/* Is p (16-aligned, its header word in a region of ours) a small block in a real span? The
 * header names the span; the span must lie in our memory and agree with the header. The page
 * map is consulted again only when the span header is in another 64 KB region than p. */
static inline int small_block_plausible(const void *p, uint32_t h) {
  uint32_t offset = small_header_span_offset(h);
  const small_span *s = (const small_span *)((const char *)p - offset);
  if (FMM_UNLIKELY(offset < SMALL_SPAN_HEADER_SIZE))
    return 0;
  if (FMM_UNLIKELY((((uintptr_t)s ^ (uintptr_t)p) >> PAGE_MAP_REGION_SHIFT) != 0 ||
                   (((uintptr_t)s ^ ((uintptr_t)s + SMALL_SPAN_HEADER_SIZE - 1)) >>
                    PAGE_MAP_REGION_SHIFT) != 0)) {
    if (page_map_get(s) != REGION_MEDIUM_SPAN ||
        page_map_get((const char *)s + SMALL_SPAN_HEADER_SIZE - 1) != REGION_MEDIUM_SPAN)
      return 0;
  }
  return s->magic == SMALL_SPAN_MAGIC && s->class_index == small_header_class(h) &&
         s->slot_size == small_header_slot_size(h) && offset < fmm_load_u32_relaxed(&s->fed_end);
}

/* May p's header word be read at all? p must be 16-aligned and the 4 bytes before it in a
 * region that holds our spans or large blocks. */
static inline int heap_header_readable(const void *p) {
  return ((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) == 0 && p != NULL &&
         page_map_get((const char *)p - BLOCK_HEADER_SIZE) != REGION_NOT_OURS;
}

/* Small and medium blocks live only in medium-span regions, large ones start only in a large
 * block's first region: a header word that names a kind its region cannot hold is not one. */
static inline int heap_kind_fits_region(uint32_t h, const void *p) {
  unsigned region = page_map_get((const char *)p - BLOCK_HEADER_SIZE);
  switch (h & BLOCK_KIND_MASK) {
  case BLOCK_FLAG_SMALL:
  case BLOCK_FLAG_MEDIUM:
    return region == REGION_MEDIUM_SPAN;
  case BLOCK_FLAG_LARGE:
    return region == REGION_LARGE_START;
  default:
    return region != REGION_NOT_OURS;
  }
}

/* The page map's word on p's header: REGION_NOT_OURS also for NULL and misaligned pointers. */
static inline unsigned heap_header_region(const void *p) {
  if (((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) != 0 || p == NULL)
    return REGION_NOT_OURS;
  return page_map_get((const char *)p - BLOCK_HEADER_SIZE);
}

void small_init(void);
/* Takes up to `want` free blocks of a class (header words FREE-flagged) as a list linked
 * through their first word; returns how many (0 only when memory is exhausted). */
unsigned small_take_blocks(unsigned class_index, unsigned arena, void **list, unsigned want);
/* Gives back a list of FREE-flagged blocks (any classes, any arenas). */
void small_return_blocks(void *list);
/* Frees one live small block (validated by the caller) without a thread cache. */
void small_return_block(void *p);
void small_drain_pending(small_manager *m); /* caller holds m->lock */

/* ---- thread caches (thread_cache.c) -------------------------------------------------------- */
typedef struct cache_bin {
  void *head;
  uint32_t count;
  uint32_t limit;
} cache_bin;

typedef struct thread_cache {
  /* One per class, and bins[SIZE_CLASS_GATE], always empty: where GetMem looks while a mode
   * is on (heap_mode.h). */
  cache_bin bins[SMALL_CLASS_COUNT + 1];
  uint32_t arena;
  uint32_t thread_id;
  struct thread_cache *next; /* registry of live caches, or the free list */
  struct thread_cache *prev;
} thread_cache;

thread_cache *thread_cache_create(void); /* for the calling thread; NULL if TLS is unavailable */
void thread_cache_flush_bin(thread_cache *tc, unsigned class_index, uint32_t keep);
void thread_cache_on_thread_exit(void *tc);
/* Sums cached blocks per class over all live caches (statistics; racy while threads run). */
void thread_cache_count(size_t per_class[SMALL_CLASS_COUNT]);
unsigned thread_arena_hint(void);

/* ---- medium blocks (medium.c) ------------------------------------------------------------ */
#define MEDIUM_SPAN_MAGIC 0x4D454455u /* "MEDU" */
#define MEDIUM_SPAN_HEADER_SIZE 48u   /* the first block's 16-byte header ends at offset 64 */

typedef struct medium_header {
  uint32_t prev_size;
  uint32_t size;
  uint32_t reserved;
  uint32_t flags;
} medium_header;

typedef struct medium_span {
  uint32_t magic;
  uint32_t arena;
  struct medium_span *next;
  struct medium_span *prev;
  size_t size;
} medium_span;
FMM_STATIC_ASSERT(sizeof(medium_span) <= MEDIUM_SPAN_HEADER_SIZE, "medium span header too big");

typedef struct medium_free_links {
  void *next;
  void *prev;
} medium_free_links;

typedef struct medium_arena {
  fmm_lock lock;
  uint32_t index;
  uint32_t group_bitmap;
  uint32_t bin_bitmap[MEDIUM_BIN_GROUPS];
  void *bins[MEDIUM_BIN_COUNT];
  medium_span *spans;
  size_t span_count;
  size_t blocks_in_use; /* medium blocks handed to users (small spans not counted) */
  size_t bytes_in_use;  /* their usable bytes */
  size_t small_spans;   /* medium blocks holding small spans */
  size_t small_span_bytes;
} FMM_ALIGNED(64) medium_arena;

extern medium_arena medium_arenas[ARENA_COUNT];

static inline medium_header *medium_header_of(const void *p) {
  return (medium_header *)((char *)p - MEDIUM_HEADER_SIZE);
}
static inline size_t medium_usable(const void *p) {
  return medium_header_of(p)->size - MEDIUM_HEADER_SIZE;
}
static inline unsigned medium_arena_of(uint32_t h) {
  return (h >> MEDIUM_ARENA_SHIFT) & MEDIUM_ARENA_MASK;
}
/* Is p a live medium block handed to a user? Header and boundary tags only. */
int medium_block_plausible(const void *p, uint32_t h);

void medium_init(void);
/* A block with at least `user_size` usable bytes, or NULL. `arena` < ARENA_COUNT picks the
 * arena (waiting for its lock); ARENA_COUNT means any arena, starting at the thread's own. */
void *medium_alloc(size_t user_size, unsigned arena, uint32_t extra_flags);
int medium_free(void *p); /* p validated by the caller; FASTMM_OK, or invalid if already free */
/* In-place resizes; return 1 when done. */
int medium_grow_in_place(void *p, size_t min_user, size_t want_user);
int medium_shrink_in_place(void *p, size_t new_user);
void medium_release_spare(void);

/* ---- large blocks (large.c) -------------------------------------------------------------- */
typedef struct large_header {
  struct large_header *next; /* all live large blocks, a circular list */
  struct large_header *prev;
  size_t mapped_size; /* bytes mapped from the header's first byte */
  size_t user_size;   /* what the caller asked for last */
  char padding[LARGE_HEADER_SIZE - BLOCK_HEADER_SIZE - 2 * sizeof(void *) - 2 * sizeof(size_t)];
  uint32_t flags; /* the block header word */
} large_header;
FMM_STATIC_ASSERT(sizeof(large_header) == LARGE_HEADER_SIZE, "large header layout");

static inline large_header *large_header_of(const void *p) {
  return (large_header *)((char *)p - LARGE_HEADER_SIZE);
}
static inline size_t large_usable(const void *p) {
  return large_header_of(p)->mapped_size - LARGE_HEADER_SIZE;
}
void large_init(void);
void *large_alloc(size_t user_size);
int large_free(void *p);          /* FASTMM_OK, or invalid if p is not a live large block */
int large_is_live(const void *p); /* 1 if p is a live large block (a registry lookup) */
int large_extend_in_place(void *p, size_t new_user); /* 1 when the mapping grew in place */
void large_set_user_size(void *p, size_t user_size);
void large_stats(fastmm_kind_usage *u);
int large_check(void);

/* ---- allocation paths shared by the C and Delphi entry points (api.c) --------------------- */
/* (heap_get_slow, heap_get_normal and heap_free_off_span: alloc_fast.h) */
int heap_free_slow(void *p, uint32_t h); /* a block in our regions with header word h */
void *heap_realloc_slow(void *p, size_t size);
size_t heap_usable_size(const void *p); /* fastmm_usable_size without the debug-outer test */
#if defined(FASTMM_ASM_REALLOC) && !defined(_WIN64)
/* The Win32 assembly's entry for the Delphi record, and the slow path it jumps to. */
void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem(void *p, intptr_t size);
void *FASTMM_DELPHI_CALL heap_realloc_slow_register(void *p, intptr_t size);
#endif

/* ---- expected leaks (leaks.c) ------------------------------------------------------------ */
int leaks_register(void *p);
int leaks_unregister(void *p);

#endif
