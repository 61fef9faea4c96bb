/* SPDX-License-Identifier: MIT */
/* The slow-path dispatch: "a mode is on: the mode's path; else the core's normal path", and
 * "a debug block: the debug block kind", chosen here, above both, so that the core never asks
 * about a mode and never calls the modes (FastMM5 chooses its set of entry points the same way,
 * above the routines it chooses between). */
#include "dispatch.h"

#include "alloc_fast.h"
#include "core/get_slow.h"
#include "core/realloc.h"
#include "modes/debug_block.h"
#include "modes/gate.h"
#include "modes/mode_paths.h"

FMM_NOINLINE void *FMM_REGCALL entry_get_slow(size_t size, const void *caller) {
  if (FMM_UNLIKELY(mode_now() != 0))
    return mode_get(size, caller);
  return heap_get_then(size, large_alloc); /* no second jump to the allocator */
}

/* The same for a block a ReallocMem asks for (core/realloc.c's moves, and ReallocMem of nil): a
 * large one keeps the cached pages it is given to grow into (large_alloc_resizing). */
FMM_NOINLINE void *FMM_REGCALL entry_get_slow_resizing(size_t size, const void *caller) {
  if (FMM_UNLIKELY(mode_now() != 0))
    return mode_get(size, caller);
  return heap_get_then(size, large_alloc_resizing);
}

FMM_NOINLINE void *entry_get_aligned(size_t size, size_t alignment, const void *caller) {
  if (FMM_UNLIKELY(mode_now() != 0))
    return mode_get_aligned(size, alignment, caller);
  return heap_get_aligned(size, alignment);
}

/* The core's FreeMem result, with a debug block sent to its kind (which reports a double free). */
static inline int free_or_debug(void *p, int result) {
  return FMM_UNLIKELY(result == HEAP_NOT_MINE) ? debug_free(p, NULL) : result;
}

/* A block by its header word: the core's kinds, a debug block to its kind. The core answers
 * HEAP_NOT_MINE only for a debug block's header word, so every other word goes to it with a tail
 * call: a medium or large FreeMem takes no frame here. */
static FMM_NOINLINE int FMM_REGCALL entry_free_block(void *p, uint32_t h) {
  if (FMM_LIKELY(!block_header_is_debug(h)))
    return heap_free_block(p, h);
  return free_or_debug(p, heap_free_block(p, h));
}

FMM_NOINLINE int FMM_REGCALL entry_free_in_span_slow(void *p, uint32_t h, int live_small) {
  if (live_small)
    return heap_free_live_small(p, h);
  /* A medium block's word is no debug block's: straight to the core, which need not ask the page
   * map again where the word lies. */
  if ((h & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM)
    return heap_free_medium(p, h);
  return entry_free_block(p, h);
}

FMM_NOINLINE int FMM_REGCALL entry_free_slow(void *p, const void *caller) {
  if (FMM_UNLIKELY(mode_now() != 0))
    return mode_free(p, caller);
  /* The normal path with this layer's slow paths behind it: a large block's free stays a tail
   * call. */
  return heap_free_then(p, entry_free_block, entry_free_in_span_slow);
}

/* ReallocMem off the fast path with the program's return address known, given p's region in the
 * fast copy of the page map (REGION_NOT_OURS where the caller has none: the core then looks it
 * up). With no mode on the fast copy is the map, so the core takes the region as it is. */
static inline void *realloc_slow_for(void *p, size_t size, unsigned region, const void *caller) {
  if (FMM_UNLIKELY(mode_now() != 0))
    return mode_realloc(p, size, caller);
  return heap_realloc_region(p, size, region, caller); /* a debug block comes back to its kind */
}

/* The Pascal records' slow paths. */
FMM_NOINLINE void *FMM_REGCALL entry_realloc_slow_for(void *p, size_t size, const void *caller) {
  return realloc_slow_for(p, size, REGION_NOT_OURS, caller);
}

/* ReallocMem of a debug block with no mode on: the debug block kind's, which reports a freed
 * one (lent to the core, heap_above). */
void *entry_realloc_debug_block(void *p, size_t size) {
  return debug_realloc(p, size, NULL);
}

/* ReallocMem off the fast path: every pointer but a live small or medium block that stays in
 * place (every fast path, C and NASM, has tested both), and every pointer while a mode is on. A
 * live large block goes straight to its policy (mostly in place, beyond 512 KB: half to all of
 * its usable size), with one page map lookup and no stack frame; everything else goes on. The
 * lookup reads the fast paths' copy of the page map, which holds nothing while a mode is on: no
 * mode word to read here (a call racing with a mode switch takes the old mode's path, as on the
 * fast paths). The body both entries share, inlined into each: realloc_slow_for inlined too (one
 * frame less on every ReallocMem that moves; on Win32 the call rewrote its three stack arguments
 * as well). */
static inline void *realloc_slow_region(void *p, size_t size, unsigned region, const void *caller) {
  if (heap_large_to_resize(region, p, size))
    return heap_realloc_large(p, size, caller);
  return realloc_slow_for(p, size, region, caller);
}

FMM_NOINLINE void *FMM_REGCALL entry_realloc_slow(void *p, size_t size) {
  return realloc_slow_region(p, size, fast_header_region(p), FMM_RETURN_ADDRESS());
}

FMM_NOINLINE void *FMM_REGCALL entry_realloc_slow_region(void *p, size_t size, unsigned region) {
  return realloc_slow_region(p, size, region, FMM_RETURN_ADDRESS());
}

#if defined(FMM_ASM_REALLOC_REGISTER) && defined(__GNUC__)
/* Where src/win32/realloc_fast.asm's register entry goes when the block cannot stay: the
 * same convention, so EAX and EDX arrive as Delphi passed them. */
void *FASTMM_DELPHI_CALL entry_realloc_slow_register(void *p, intptr_t size) {
  return size >= 0 ? entry_realloc_slow(p, (size_t)size) : NULL;
}
#endif
