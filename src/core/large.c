/* SPDX-License-Identifier: MIT */
/* Large blocks: each one a reservation of address space of its own, committed as far as the
 * block is used, with a 64-byte header at its start. The reservation runs ahead of the block
 * (LARGE_RESERVE_AHEAD_SHIFT), so a block that grows commits more of it in place: no new
 * mapping, no copy. A freed block goes into a cache, from which a later request takes it with
 * its pages already in memory; the cache is bounded (LARGE_CACHE_*) and given back to the OS
 * after an idle spell (release.c), on fastmm_release_free_memory and when memory runs short.
 * A block reused for a smaller request of a ReallocMem keeps the pages beyond its new end
 * committed (up to LARGE_CACHE_TRIM_FACTOR times its size): it is exactly the block a fresh
 * request gets (its usable size, FastMM's ReallocMem policy), with pages to grow into without a
 * page fault. One reused for a GetMem keeps only the pages the request needs.
 *
 * The user pointer is LARGE_HEADER_SIZE into the block, or for a block aligned coarser than 64
 * (fastmm_getmem_aligned) up to LARGE_GRANULARITY in (user_offset), with a header word of its
 * own at p - 4; the header always starts the block, at the 64 KB boundary the header word lies
 * in.
 *
 * Live blocks are on one list (for statistics, the heap check and the walk), cached ones on
 * another; both are marked in the page map for their committed regions, so FreeMem can tell a
 * live large block (its header word says LARGE) from a cached one (LARGE | FREE), a freed one
 * whose memory went back to the OS (not ours) or a foreign pointer without touching memory
 * that may be unmapped. A block leaves the page map under the lock, before its memory goes back:
 * a free that takes the lock afterwards finds it gone instead of reading memory being given
 * back. One lock, never held across a call to the OS. */
#include "large.h"

#include "contention.h"
#include "heap.h"
#include "idle_clock.h"
#include "lock.h"
#include "medium.h"
#include "os_memory.h"
#include "page_map.h"
#include "policy.h"
#include "region_handover.h"

FMM_HIDDEN fmm_lock large_lock;
static list_node large_blocks = LIST_INIT(large_blocks);
static list_node large_cache = LIST_INIT(large_cache); /* most recently cached first */
static size_t large_count, large_user_bytes, large_committed_bytes;
static size_t large_user_peak; /* the most large_user_bytes has been */
static size_t cache_count;
/* The cache's committed bytes: written under the lock, read without it too (large.h). */
size_t large_cache_bytes;
static size_t cache_plain_bytes; /* of large_cache_bytes, the blocks FreeMem freed */

/* The block size (whole regions) for `user_size` bytes at `user_offset` from the header. */
static inline size_t mapping_for(size_t user_size, size_t user_offset) {
  return (user_size + user_offset + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
}

/* Address space to reserve for a block of `size` bytes (policy.h). */
#define LARGE_RESERVE_AHEAD_TIMES                                                                  \
  (PRIM_CAN_REMAP ? LARGE_RESERVE_AHEAD_TIMES_MOVING : LARGE_RESERVE_AHEAD_TIMES_COPYING)
static size_t reserve_for(size_t size) {
  if (size > LARGE_RESERVE_AHEAD_LIMIT)
    return size;
  size_t ahead = (size * LARGE_RESERVE_AHEAD_TIMES) >> LARGE_RESERVE_AHEAD_SHIFT;
  ahead = (ahead + LARGE_GRANULARITY - 1) & ~(size_t)(LARGE_GRANULARITY - 1);
  return size + ahead >= size ? size + ahead : size;
}

static void note_user_peak_locked(void) {
  if (large_user_bytes > large_user_peak)
    large_user_peak = large_user_bytes;
}

FMM_INLINE void link_live_locked(large_header *h) {
  list_insert_after(&large_blocks, &h->link);
  large_count++;
  large_user_bytes += h->size - h->user_offset;
  large_committed_bytes += h->committed;
  note_user_peak_locked();
}

FMM_INLINE void unlink_live_locked(large_header *h) {
  list_remove(&h->link);
  large_count--;
  large_user_bytes -= h->size - h->user_offset;
  large_committed_bytes -= h->committed;
}

/* What the cache may hold: the larger of a floor and a share of the live large blocks. */
static size_t cache_share_locked(void) {
  size_t share = large_committed_bytes >> LARGE_CACHE_LIVE_SHIFT;
  return share > LARGE_CACHE_MIN_BYTES ? share : LARGE_CACHE_MIN_BYTES;
}

/* What the blocks FreeMem freed may hold of it: no more than keeps the committed bytes within
 * LARGE_CACHE_ABOVE_PEAK_BYTES of the most the live blocks have held (policy.h). */
static size_t cache_room_locked(void) {
  size_t limit = large_user_peak + LARGE_CACHE_ABOVE_PEAK_BYTES;
  return limit > large_committed_bytes ? limit - large_committed_bytes : 0;
}

/* A block on no list leaves the page map (under the lock: see the top) ... */
static void unmark_locked(large_header *h) {
  region_handover_begin(); /* ended once the memory is gone (release_unmarked) */
  page_map_set(h, h->committed, REGION_NOT_OURS); /* its tables exist: cannot fail */
}

/* ... and then goes back to the OS, the lock released. */
static void release_unmarked(large_header *h) {
  os_release(h, h->reserved, h->committed);
  region_handover_end();
}

static void give_back(large_header *h) {
  lock_acquire(&large_lock);
  unmark_locked(h);
  lock_release(&large_lock);
  release_unmarked(h);
}

static void cache_remove_locked(large_header *h) {
  list_remove(&h->link);
  cache_count--;
  fmm_store_size_relaxed(&large_cache_bytes, large_cache_bytes - h->committed);
  if (!h->user_size)
    cache_plain_bytes -= h->committed;
}

/* Takes the blocks cached longest ago off the cache (onto `gone`, out of the page map) until it
 * holds at most `share` bytes with `incoming` more, its blocks freed by FreeMem at most `room`
 * (with `incoming` more when `incoming_plain`), and fewer than LARGE_CACHE_MAX_BLOCKS blocks
 * when `incoming` is a block. */
static FMM_NOINLINE void evict_some_locked(size_t share, size_t room, size_t incoming,
                                           size_t max_count, size_t plain_in, list_node *gone) {
  for (list_node *n = large_cache.prev, *prev; n != &large_cache; n = prev) {
    prev = n->prev;
    int over_all = large_cache_bytes + incoming > share || cache_count > max_count;
    int over_room = cache_plain_bytes + plain_in > room;
    if (!over_all && !over_room)
      break;
    large_header *old = list_entry(n, large_header, link);
    if (!over_all && old->user_size) /* kept for a ReallocMem: only the share bounds it */
      continue;
    cache_remove_locked(old);
    unmark_locked(old);
    list_insert_after(gone, &old->link);
  }
}

static inline void evict_locked(size_t share, size_t room, size_t incoming, int incoming_plain,
                                list_node *gone) {
  size_t max_count = incoming != 0 ? LARGE_CACHE_MAX_BLOCKS - 1u : LARGE_CACHE_MAX_BLOCKS;
  size_t plain_in = incoming_plain ? incoming : 0;
  if (large_cache_bytes + incoming > share || cache_count > max_count ||
      cache_plain_bytes + plain_in > room)
    evict_some_locked(share, room, incoming, max_count, plain_in, gone);
}

/* After the live blocks grew: the cache makes way (the blocks to give back go onto `gone`). */
static void evict_after_growth_locked(list_node *gone) {
  evict_locked(cache_share_locked(), cache_room_locked(), 0, 0, gone);
}

/* The blocks evict_locked took, back to the OS (the lock released). */
static void release_gone(list_node *gone) {
  while (!list_empty(gone)) {
    large_header *h = list_entry(gone->next, large_header, link);
    list_remove(&h->link);
    release_unmarked(h);
  }
}

/* Takes a cached block off the cache for a request of `need` bytes, NULL when none fits: the
 * one whose reservation holds the request with the committed size closest to it (a shortfall,
 * which costs a commit and its page faults, counting double), else the biggest one that holds
 * at least 1/LARGE_CACHE_GROW_FACTOR of it, which the caller grows (its pages are in memory
 * already: moving them is cheaper than faulting in fresh ones; one that cannot grow is given back,
 * as requests have outgrown it). */
static large_header *cache_take_locked(size_t need) {
  large_header *best = NULL, *biggest = NULL;
  size_t best_cost = (size_t)-1;
  for (list_node *n = large_cache.next; n != &large_cache; n = n->next) {
    large_header *h = list_entry(n, large_header, link);
    if (h->reserved < need) {
      if (h->committed >= need / LARGE_CACHE_GROW_FACTOR &&
          (biggest == NULL || h->committed > biggest->committed))
        biggest = h;
      continue;
    }
    size_t cost = h->committed >= need ? h->committed - need : (need - h->committed) * 2u;
    if (cost < best_cost) {
      best = h;
      best_cost = cost;
      if (cost == 0)
        break;
    }
  }
  if (best == NULL)
    best = biggest;
  if (best != NULL)
    cache_remove_locked(best);
  return best;
}

/* ---- growing a block (on no list, or live with the caller counting) ------------------------ */

/* Reserves address space right after h's reservation so that it reaches `want` bytes (room
 * ahead included), or at least `need` (FastMM5 extends by what is free); returns the bytes
 * added (h->reserved is the caller's to update). Growth steps beyond LARGE_RESERVE_AHEAD_LIMIT
 * are not tried (policy.h). */
static size_t reserve_more(const large_header *h, size_t need, size_t want) {
  size_t more_min = need > h->reserved ? need - h->reserved : LARGE_GRANULARITY;
  size_t more_want = reserve_for(want) - h->reserved;
  if (more_want > LARGE_RESERVE_AHEAD_LIMIT)
    more_want = more_min > LARGE_RESERVE_AHEAD_LIMIT ? 0 : LARGE_RESERVE_AHEAD_LIMIT;
  return more_want != 0 ? os_reserve_after((char *)h + h->reserved, more_min, more_want) : 0;
}

/* Commits [h + h->committed, h + to) and marks it in the page map; 1 when done (h->committed is
 * the caller's to update). */
static int commit_up_to(const large_header *h, size_t to) {
  size_t extra = to - h->committed;
  int done = 0;
  region_handover_begin();
  if (os_commit((char *)h + h->committed, extra)) {
    done = page_map_set((char *)h + h->committed, extra, REGION_LARGE_REST);
    if (!done)
      os_decommit((char *)h + h->committed, extra);
  }
  region_handover_end();
  return done;
}

/* A new reservation of `reserve` bytes with its first `need` committed and marked in the page
 * map as a large block's; NULL when either the OS or the page map's tables fail. */
static large_header *reserve_marked(size_t reserve, size_t need) {
  region_handover_begin();
  large_header *h = (large_header *)os_reserve(reserve, need);
  if (h != NULL && !page_map_set(h, need, REGION_LARGE_START)) {
    os_release(h, reserve, need);
    h = NULL;
  }
  region_handover_end();
  return h;
}

/* Where the OS can (Linux), moves h's pages to a new reservation whose block is `want` bytes:
 * no byte copied, no page faulted in again. Returns the new header (its sizes set, its other
 * fields, the user offset among them, moved with it), or NULL with h untouched. h is on no
 * list. */
static large_header *move_pages(large_header *h, size_t want) {
#if PRIM_CAN_REMAP
  size_t want_reserved = reserve_for(want);
  /* The new place is committed before the pages move onto it, so that the page map may say
   * it is ours from the start: a pointer into it is never read while it cannot be. */
  large_header *n = reserve_marked(want_reserved, want);
  if (n == NULL)
    return NULL;
  size_t old_committed = h->committed;
  /* The old addresses stop being ours when the kernel moves the pages. */
  region_handover_begin();
  page_map_set(h, old_committed, REGION_NOT_OURS);
  if (!os_remap(h, old_committed, h->reserved, n, want)) {
    page_map_set(h, old_committed, REGION_LARGE_START); /* its tables exist: cannot fail */
    page_map_set(n, want, REGION_NOT_OURS);
    os_release(n, want_reserved, want);
    region_handover_end();
    return NULL;
  }
  region_handover_end();
  n->size = want;
  n->committed = want;
  n->reserved = want_reserved;
  return n;
#else
  (void)h;
  (void)want;
  return NULL;
#endif
}

/* Does a cached block of `committed` bytes give back its pages past `need` when it serves a
 * request of that many: a GetMem's beyond it, a ReallocMem's (`resizing`) when it holds
 * LARGE_CACHE_TRIM_FACTOR times the request (policy.h)? */
static inline int trims_tail(size_t committed, size_t need, int resizing) {
  return resizing ? committed / LARGE_CACHE_TRIM_FACTOR >= need : committed > need;
}

/* A cached block made a block of `need` bytes: committed further or grown past its reservation
 * (in place, else by moving its pages) when it is too small, its tail decommitted when
 * trims_tail says so. NULL when it cannot be (it is given back then). */
static large_header *fit_cached(large_header *h, size_t need, int resizing) {
  if (h->committed >= need) {
    if (trims_tail(h->committed, need, resizing)) {
      size_t extra = h->committed - need;
      region_handover_begin();
      page_map_set((char *)h + need, extra, REGION_NOT_OURS);
      os_decommit((char *)h + need, extra);
      region_handover_end();
      h->committed = need;
    }
    h->size = need;
    return h;
  }
  if (need > h->reserved)
    h->reserved += reserve_more(h, need, need);
  if (need <= h->reserved && commit_up_to(h, need)) {
    h->size = h->committed = need;
    return h;
  }
  large_header *n = move_pages(h, need);
  if (n == NULL)
    give_back(h);
  return n;
}

static large_header *map_new(size_t need) {
  size_t reserve = reserve_for(need);
  large_header *h = reserve_marked(reserve, need);
  if (h == NULL && reserve > need) { /* the address space is short: no room ahead */
    reserve = need;
    h = reserve_marked(reserve, need);
  }
  if (h == NULL)
    return NULL;
  h->size = need;
  h->committed = need;
  h->reserved = reserve;
  return h;
}

/* Fills in h's header for a caller that asked for `user_size` bytes at `offset`, and links it
 * live. */
FMM_INLINE char *make_live_locked(large_header *h, size_t user_size, size_t offset, uint32_t keep,
                                  uint32_t state) {
  h->user_size = user_size;
  h->u.live_state = state;
  h->user_offset = (uint32_t)offset;
  h->keep_alignment = keep;
  h->flags = BLOCK_FLAG_LARGE;
  char *p = (char *)h + offset;
  if (offset != LARGE_HEADER_SIZE)
    block_set_header(p, BLOCK_FLAG_LARGE);
  link_live_locked(h);
  return p;
}

/* A cached block of h->committed bytes serves a request of `need` as it is: no commit, and no
 * tail to give back. */
static inline int fits_as_is(const large_header *h, size_t need, int resizing) {
  return h->committed >= need && !trims_tail(h->committed, need, resizing);
}

/* The rest of a GetMem (a ReallocMem's: `resizing`) once the large lock is held (released
 * here): a cached block that serves as it is, else one fitted from the cache or mapped anew. */
static FMM_NOINLINE void *alloc_locked(size_t user_size, size_t offset, uint32_t keep, size_t need,
                                       int resizing) {
  large_header *h = cache_take_locked(need);
  if (h != NULL && fits_as_is(h, need, resizing)) {
    /* The cache hit: one lock, no call to the OS. */
    h->size = need;
    char *p = make_live_locked(h, user_size, offset, keep, LARGE_LIVE_REUSED);
    lock_release(&large_lock);
    return p;
  }
  lock_release(&large_lock);
  uint32_t state = 0;
  if (h != NULL && (h = fit_cached(h, need, resizing)) != NULL)
    state = LARGE_LIVE_REUSED;
  if (h == NULL && (h = map_new(need)) == NULL)
    return NULL;
  list_node gone = LIST_INIT(gone);
  lock_acquire(&large_lock);
  char *p = make_live_locked(h, user_size, offset, keep, state);
  /* The live blocks grew: the cache makes room below their peak. The new pages are not in
   * memory before the caller writes them, so giving the old ones back now is soon enough. */
  evict_after_growth_locked(&gone);
  lock_release(&large_lock);
  release_gone(&gone);
  return p;
}

static inline void lock_large(void) {
  if (!lock_try(&large_lock)) {
    contention_count(CONTENTION_LARGE); /* the one large lock is taken */
    lock_acquire(&large_lock);
  }
}

void *large_alloc_aligned(size_t user_size, size_t alignment, uint32_t keep) {
  if (user_size > MAX_REQUEST_SIZE)
    return NULL;
  size_t offset = alignment > LARGE_HEADER_SIZE ? alignment : LARGE_HEADER_SIZE;
  size_t need = mapping_for(user_size, offset);
  lock_large();
  return alloc_locked(user_size, offset, keep, need, 0);
}

/* A plain GetMem (no alignment to keep), or a ReallocMem's (`resizing`). Its common case, a
 * block of the size just freed again (a buffer, a document, an image made and dropped in a
 * loop), is done here: the most recently cached block, committed exactly as far as this request
 * needs, is what cache_take_locked would choose first. */
FMM_INLINE void *alloc_plain(size_t user_size, int resizing) {
  if (user_size > MAX_REQUEST_SIZE)
    return NULL;
  size_t need = mapping_for(user_size, LARGE_HEADER_SIZE);
  lock_large();
  if (!list_empty(&large_cache)) {
    large_header *h = list_entry(large_cache.next, large_header, link);
    if (h->committed == need) {
      cache_remove_locked(h);
      h->size = need;
      char *p = make_live_locked(h, user_size, LARGE_HEADER_SIZE, 0, LARGE_LIVE_REUSED);
      lock_release(&large_lock);
      return p;
    }
  }
  return alloc_locked(user_size, LARGE_HEADER_SIZE, 0, need, resizing);
}

void *large_alloc(size_t user_size) {
  return alloc_plain(user_size, 0);
}

void *large_alloc_resizing(size_t user_size) {
  return alloc_plain(user_size, 1);
}

/* The header is read only after the page map says a large block starts in the region of p's
 * header word. */
static inline int large_has_word(const void *p, uint32_t word) {
  if (((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) != 0 ||
      page_map_get((const char *)p - BLOCK_HEADER_SIZE) != REGION_LARGE_START)
    return 0;
  return large_has_word_at(p, word);
}

int large_is_live(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE);
}

/* p is a live large block that holds a debug block (its word has DEBUG_OUTER). */
static int large_is_live_outer(const void *p) {
  return large_has_word(p, BLOCK_FLAG_LARGE | BLOCK_FLAG_DEBUG_OUTER);
}

FMM_INLINE void cache_insert_locked(large_header *h, int for_realloc) {
  h->u.cached_at = idle_clock_now();
  h->user_size = (size_t)for_realloc; /* in the cache: kept for a ReallocMem */
  list_insert_after(&large_cache, &h->link);
  cache_count++;
  fmm_store_size_relaxed(&large_cache_bytes, large_cache_bytes + h->committed);
  if (!for_realloc)
    cache_plain_bytes += h->committed;
}

/* free_locked's general case: into the cache with the blocks cached longest ago making way, or
 * back to the OS when the cache may not hold it. */
static FMM_NOINLINE void free_locked_slow(large_header *h) {
  list_node gone = LIST_INIT(gone);
  int for_realloc = (h->u.live_state & LARGE_LIVE_RESIZED) != 0;
  size_t share = cache_share_locked(), room = cache_room_locked();
  if (h->committed <= (for_realloc || share < room ? share : room)) {
    evict_locked(share, room, h->committed, !for_realloc, &gone);
    cache_insert_locked(h, for_realloc);
  } else {
    unmark_locked(h);
    list_insert_after(&gone, &h->link);
  }
  size_t kept = large_cache_bytes;
  lock_release(&large_lock);
  release_gone(&gone);
  idle_clock_note_kept(kept + medium_spare_bytes());
}

/* large_lock held, h live: off the live list and into the cache or back to the OS. Releases the
 * lock. Its common case is done here: a block FreeMem freed (not one a ReallocMem moved) that
 * the cache holds with nothing evicted, as free_locked_slow would decide. */
static inline void free_locked(large_header *h) {
  unlink_live_locked(h);
  h->flags = BLOCK_FLAG_LARGE | BLOCK_FLAG_FREE;
  size_t committed = h->committed;
  if (FMM_LIKELY(!(h->u.live_state & LARGE_LIVE_RESIZED)) &&
      large_cache_bytes + committed <= cache_share_locked() &&
      cache_plain_bytes + committed <= cache_room_locked() &&
      cache_count < LARGE_CACHE_MAX_BLOCKS) {
    cache_insert_locked(h, 0);
    size_t kept = large_cache_bytes;
    lock_release(&large_lock);
    idle_clock_note_kept(kept + medium_spare_bytes()); /* the cache's and the spare spans' */
    return;
  }
  free_locked_slow(h);
}

int large_free(void *p) {
  lock_acquire(&large_lock);
  /* Checked under the lock: of two racing frees of one block, the second finds it gone. */
  if (!large_has_word(p, BLOCK_FLAG_LARGE)) {
    lock_release(&large_lock);
    return FASTMM_ERROR_INVALID_POINTER;
  }
  free_locked(large_header_of(p)); /* releases the lock */
  return FASTMM_OK;
}

int large_free_unaligned_start(void *p) {
  lock_acquire(&large_lock);
  if (large_has_word(p, BLOCK_FLAG_LARGE)) {
    free_locked(large_header_of(p)); /* releases the lock */
    return FASTMM_OK;
  }
  /* Under the lock a region the page map still marks is mapped. A cached block holds nothing
   * live: a pointer into it is refused without its word being read. */
  int result = FASTMM_ERROR_INVALID_POINTER;
  if (page_map_get((const char *)p - BLOCK_HEADER_SIZE) == REGION_LARGE_START &&
      !(large_header_of(p)->flags & BLOCK_FLAG_FREE))
    result = LARGE_NOT_A_BLOCK;
  lock_release(&large_lock);
  return result;
}

int large_grow_in_place(void *p, size_t min_user, size_t want_user) {
  large_header *h = large_header_of(p);
  if (min_user > MAX_REQUEST_SIZE)
    return 0;
  if (want_user > MAX_REQUEST_SIZE)
    want_user = MAX_REQUEST_SIZE;
  size_t need = mapping_for(min_user, h->user_offset),
         want = mapping_for(want_user, h->user_offset);
  if (need <= h->size)
    return 1;
  size_t to, got = 0, reserved = h->reserved;
  int handing_over = 0;
  if (need <= h->committed) {
    /* Pages kept from an earlier use of the block: no call to the OS at all. */
    to = want < h->committed ? want : h->committed;
  } else {
    if (want > reserved)
      reserved += got = reserve_more(h, need, want);
    to = want < reserved ? want : reserved;
    /* Committed here, marked in the page map below under the lock together with h->committed:
     * fastmm_check_heap reads both under it and must never see one without the other (pages
     * marked past the committed end read as a stale mark). The tables are made first, so the
     * marking calls no OS function with the lock held. */
    char *from = (char *)h + h->committed;
    size_t extra = to - h->committed;
    region_handover_begin(); /* ended once the pages are marked */
    handing_over = 1;
    int committed = need <= reserved && os_commit(from, extra);
    if (committed && !page_map_make_tables(from, extra)) {
      os_decommit(from, extra);
      committed = 0;
    }
    if (!committed) {
      if (got != 0) /* memory could not be had: the extension goes back too */
        os_release((char *)h + h->reserved, got, 0);
      region_handover_end();
      return 0;
    }
  }
  list_node gone = LIST_INIT(gone);
  lock_acquire(&large_lock);
  large_user_bytes += to - h->size;
  note_user_peak_locked();
  if (to > h->committed) {
    /* its tables exist: cannot fail */
    page_map_set((char *)h + h->committed, to - h->committed, REGION_LARGE_REST);
    large_committed_bytes += to - h->committed;
    h->committed = to;
  }
  if (handing_over)
    region_handover_end();
  h->size = to;
  h->reserved = reserved;
  evict_after_growth_locked(&gone); /* as in large_alloc_aligned */
  lock_release(&large_lock);
  release_gone(&gone);
  return 1;
}

void *large_grow_by_remap(void *p, size_t min_user, size_t want_user) {
  if (!PRIM_CAN_REMAP || min_user > MAX_REQUEST_SIZE)
    return NULL;
  if (want_user > MAX_REQUEST_SIZE)
    want_user = MAX_REQUEST_SIZE;
  large_header *h = large_header_of(p);
  size_t offset = h->user_offset;
  size_t want = mapping_for(want_user, offset);
  if (want < mapping_for(min_user, offset))
    want = mapping_for(min_user, offset);
  /* Off the list while it moves: its list node moves with it. */
  lock_acquire(&large_lock);
  unlink_live_locked(h);
  lock_release(&large_lock);
  large_header *n = move_pages(h, want);
  list_node gone = LIST_INIT(gone);
  lock_acquire(&large_lock);
  link_live_locked(n != NULL ? n : h);
  evict_after_growth_locked(&gone); /* as in large_alloc_aligned */
  lock_release(&large_lock);
  release_gone(&gone);
  return n != NULL ? (char *)n + offset : NULL;
}

void large_set_flag(void *p, uint32_t flag, int on) {
  large_header *h = large_header_of(p);
  lock_acquire(&large_lock);
  h->flags = on ? (h->flags | flag) : (h->flags & ~flag);
  lock_release(&large_lock);
}

void large_resized(void *p) {
  large_header_of(p)->u.live_state |= LARGE_LIVE_RESIZED;
}

size_t large_dirty_bytes(const void *p) {
  return (large_header_of(p)->u.live_state & LARGE_LIVE_REUSED) ? large_usable(p) : 0;
}

void large_stats(fastmm_kind_usage *u) {
  lock_acquire(&large_lock);
  u->blocks_in_use = large_count;
  u->bytes_in_use = large_user_bytes;
  /* Cached blocks are memory this kind holds from the OS: reserved, not in use. */
  u->bytes_reserved = large_committed_bytes + large_cache_bytes;
  lock_release(&large_lock);
}

size_t large_cached_bytes(void) {
  lock_acquire(&large_lock);
  size_t bytes = large_cache_bytes;
  lock_release(&large_lock);
  return bytes;
}

size_t large_release_cached(uint32_t up_to_tick) {
  list_node gone = LIST_INIT(gone);
  size_t bytes = 0;
  lock_acquire(&large_lock);
  for (list_node *n = large_cache.prev, *prev; n != &large_cache; n = prev) {
    prev = n->prev;
    large_header *h = list_entry(n, large_header, link);
    if ((int32_t)(h->u.cached_at - up_to_tick) > 0)
      continue; /* cached after that tick */
    bytes += h->committed;
    cache_remove_locked(h);
    unmark_locked(h);
    list_insert_after(&gone, n);
  }
  lock_release(&large_lock);
  release_gone(&gone);
  return bytes;
}

/* 0 when the block agrees with the page map and its own fields; else a code from heap_check.c's
 * range. A live block's word may have DEBUG_OUTER; a cached one is LARGE | FREE. */
static int check_one(large_header *h, int cached) {
  void *p = (char *)h + h->user_offset;
  if (cached ? h->flags != (BLOCK_FLAG_LARGE | BLOCK_FLAG_FREE)
             : (h->flags & ~BLOCK_FLAG_DEBUG_OUTER) != BLOCK_FLAG_LARGE)
    return 301;
  if (h->link.next->prev != &h->link)
    return 301;
  if (h->size % LARGE_GRANULARITY != 0 || h->committed % LARGE_GRANULARITY != 0 ||
      h->reserved % LARGE_GRANULARITY != 0 || h->size > h->committed ||
      h->committed > h->reserved || h->user_offset < LARGE_HEADER_SIZE ||
      h->user_offset > LARGE_GRANULARITY || h->user_offset % LARGE_HEADER_SIZE != 0 ||
      h->user_offset >= h->size || h->user_size > h->size - h->user_offset)
    return 302;
  if (page_map_get((char *)p - BLOCK_HEADER_SIZE) != REGION_LARGE_START ||
      page_map_get((char *)h + h->committed - 1) !=
          (h->committed > LARGE_GRANULARITY ? REGION_LARGE_REST : REGION_LARGE_START) ||
      (h->committed < h->reserved && page_map_get((char *)h + h->committed) == REGION_LARGE_REST))
    return 303;
  if (!cached && !(large_is_live(p) || large_is_live_outer(p)))
    return 303;
  return 0;
}

int large_check(uint64_t lock_timeout_ns) {
  int fault = 0;
  size_t n = 0, committed = 0, user = 0, cn = 0, ccommitted = 0, cplain = 0;
  if (!lock_acquire_within(&large_lock, lock_timeout_ns))
    return FASTMM_CHECK_HEAP_LOCKED;
  for (list_node *node = large_blocks.next; node != &large_blocks && !fault; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    fault = check_one(h, 0);
    n++;
    committed += h->committed;
    user += h->size - h->user_offset;
  }
  for (list_node *node = large_cache.next; node != &large_cache && !fault; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    fault = check_one(h, 1);
    cn++;
    ccommitted += h->committed;
    if (!h->user_size)
      cplain += h->committed;
  }
  if (!fault &&
      (n != large_count || committed != large_committed_bytes || user != large_user_bytes ||
       cn != cache_count || ccommitted != large_cache_bytes || cplain != cache_plain_bytes))
    fault = 304;
  lock_release(&large_lock);
  return fault;
}

int large_for_each(uint64_t timeout_ns,
                   void (*visit)(void *p, const large_header *h, int cached, void *context),
                   void *context) {
  if (!lock_acquire_within(&large_lock, timeout_ns))
    return 0;
  for (list_node *node = large_blocks.next; node != &large_blocks; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    visit((char *)h + h->user_offset, h, 0, context);
  }
  for (list_node *node = large_cache.next; node != &large_cache; node = node->next) {
    large_header *h = list_entry(node, large_header, link);
    visit((char *)h + h->user_offset, h, 1, context);
  }
  lock_release(&large_lock);
  return 1;
}

size_t large_count_now(void) {
  lock_acquire(&large_lock);
  size_t n = large_count + cache_count;
  lock_release(&large_lock);
  return n;
}
