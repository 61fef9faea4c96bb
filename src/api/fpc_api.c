/* SPDX-License-Identifier: MIT */
/* Free Pascal's TMemoryManager filled with the library's own functions
 * (fastmm_get_fpc_memory_manager): GetMem, FreeMem, FreeMemSize, AllocMem, ReAllocMem (var
 * pointer) and MemSize in Free Pascal's conventions, so that FastMMC.pas installs them as they
 * are, with no Pascal adapter between the program and the fast paths.
 *
 * Each entry point inlines the fast path of alloc_fast.h and leaves for a slow path here only
 * when that fails; the slow path passes the previous manager's blocks back to it, reports bad
 * pointers and exhausted memory through the bindings (pascal_records.h says why the entry
 * points come in slots). The slow paths are reached by a tail jump, so their return address is
 * the program's: debug mode records it, and heap_error gets it. On Win32 the functions are
 * regparm(3), which is Free Pascal's default `register` convention for these one- and
 * two-argument functions (delphi_api.c says more). */
#include "entry/alloc_fast.h"
#include "pascal_records.h"

PASCAL_SLOT_TABLE(fpc_slot, fastmm_fpc_bindings, 7, fpc_slots, fpc_table);

/* ---- Slow paths ------------------------------------------------------------------------- */

/* 203 unless the program asked for NULL (System.ReturnNilIfGrowHeapFails). */
static void *fpc_out_of_memory(const fpc_slot *s, const void *caller) {
  if (*s->b.return_nil_if_grow_heap_fails == 0)
    s->b.heap_error(PASCAL_ERROR_OUT_OF_MEMORY, caller);
  return NULL;
}

/* GetMem and AllocMem found no memory. */
static FMM_NOINLINE void *fpc_no_memory(const fpc_slot *s) {
  return fpc_out_of_memory(s, FMM_RETURN_ADDRESS());
}

/* A pointer in a medium span that FreeMem refused: not a live block. */
static FMM_NOINLINE size_t fpc_invalid_free(const fpc_slot *s) {
  s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, FMM_RETURN_ADDRESS());
  return 0;
}

/* FreeMem of anything but a small or medium block of a medium span: nil, the previous
 * manager's block, a large block, any pointer while a mode is on. */
static FMM_NOINLINE size_t fpc_free_slow(void *p, const fpc_slot *s) {
  const void *caller = FMM_RETURN_ADDRESS();
  if (p == NULL)
    return 0;
  if (pascal_previous_block(p))
    return s->b.previous_free_mem(p);
  if (entry_free_slow(p, caller) != FASTMM_OK)
    s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, caller);
  return 0;
}

/* ReAllocMem's rare cases: nil allocates (from the previous manager once the unit has
 * uninstalled), size 0 frees, the previous manager's block is its business (it updates *pp). */
static FMM_NOINLINE void *fpc_realloc_rare(void **pp, size_t size, const fpc_slot *s,
                                           const void *caller) {
  void *p = *pp, *q;
  if (p == NULL) {
    if (size == 0)
      return NULL;
    if (*s->b.allocate_from_library == 0) {
      q = s->b.previous_get_mem(size);
    } else {
      q = entry_get_for(size, caller);
      if (q == NULL)
        return fpc_out_of_memory(s, caller);
    }
    *pp = q;
    return q;
  }
  if (pascal_previous_block(p))
    return s->b.previous_realloc_mem(pp, size);
  if (entry_free_slow(p, caller) != FASTMM_OK) { /* size 0 */
    s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, caller);
    return NULL;
  }
  *pp = NULL;
  return NULL;
}

/* A pointer the core's ReallocMem refused or could not serve (pascal_refused); a block of ours
 * that found no memory gives 203 or NULL (fpc_out_of_memory). */
static FMM_NOINLINE void *fpc_realloc_refused(void **pp, size_t size, const fpc_slot *s,
                                              const void *caller) {
  int refused = pascal_refused(*pp);
  if (refused == PASCAL_REFUSED_PREVIOUS)
    return s->b.previous_realloc_mem(pp, size);
  if (refused == PASCAL_REFUSED_NO_MEMORY)
    return fpc_out_of_memory(s, caller);
  s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, caller);
  return NULL;
}

/* ReAllocMem of everything but a small block that stays in place, made once per slot (so the
 * slot is a constant there, and the only value kept across the call is pp), routed as Delphi's
 * (PASCAL_REALLOC_IS_RARE, pascal_refused). */
FMM_INLINE void *fpc_realloc_slow(void **pp, size_t size, const fpc_slot *s, const void *caller) {
  void *p = *pp;
  uint32_t mode = mode_now();
  if (FMM_UNLIKELY(PASCAL_REALLOC_IS_RARE(p, size == 0, mode)))
    return fpc_realloc_rare(pp, size, s, caller);
  void *q = entry_realloc_slow_in(mode, p, size, caller);
  if (FMM_UNLIKELY(q == NULL))
    return fpc_realloc_refused(pp, size, s, caller);
  *pp = q;
  return q;
}

/* MemSize of anything but a live small or medium block. */
static FMM_NOINLINE size_t fpc_mem_size_slow(void *p, const fpc_slot *s) {
  if (p == NULL)
    return 0;
  if (pascal_previous_block(p))
    return s->b.previous_mem_size(p);
  return mode_usable_size(p);
}

/* ---- The entry points' bodies, inlined into every slot ------------------------------------ */

FMM_INLINE void *fpc_get_mem(size_t size, const fpc_slot *s) {
  void *p = entry_get(size);
  if (FMM_LIKELY(p != NULL))
    return p;
  return fpc_no_memory(s);
}

FMM_INLINE size_t fpc_free_mem(void *p, const fpc_slot *s) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  if (FMM_LIKELY(region == REGION_MEDIUM_SPAN)) {
    if (FMM_LIKELY(entry_free_in_span(p, table, off) == FASTMM_OK))
      return 0;
    return fpc_invalid_free(s);
  }
  return fpc_free_slow(p, s);
}

FMM_INLINE void *fpc_alloc_mem(size_t size, const fpc_slot *s) {
  void *p = fastmm_allocmem(size);
  if (FMM_LIKELY(p != NULL))
    return p;
  return fpc_no_memory(s);
}

/* The in-place case neither writes *pp nor makes a frame; `slow` is the slot's own
 * fpc_realloc_slow, reached by a tail jump. */
FMM_INLINE void *fpc_realloc_mem(void **pp, size_t size,
                                 void *(FASTMM_DELPHI_CALL *slow)(void **pp, size_t size)) {
  void *p = *pp;
  if (FMM_LIKELY(fast_realloc_stays(p, size)))
    return p;
  return slow(pp, size);
}

FMM_INLINE size_t fpc_mem_size(void *p, const fpc_slot *s) {
  size_t n;
  if (FMM_LIKELY(fast_usable_size(p, &n)))
    return n;
  return fpc_mem_size_slow(p, s);
}

/* ---- The slots' entry points -------------------------------------------------------------- */

/* A slot's ReAllocMem: its slow path, and the entry point, in C or (PASCAL_ASM_REALLOC) in
 * src/win32/realloc_fast.asm, which is lent the slow path when the slot's record is filled. */
#if defined(PASCAL_ASM_REALLOC)
#define FPC_SLOT_REALLOC_ENTRY(n)                                                                  \
  void *FASTMM_DELPHI_CALL fastmm_fpc_realloc_mem_##n(void **pp, size_t size);
#else
#define FPC_SLOT_REALLOC_ENTRY(n)                                                                  \
  PASCAL_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_realloc_mem_##n(void **pp, size_t size);        \
  PASCAL_ENTRY FMM_FAST_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_realloc_mem_##n(void **pp,       \
                                                                                  size_t size) {   \
    return fpc_realloc_mem(pp, size, fpc_realloc_slow_##n);                                        \
  }
#endif
#define FPC_SLOT_REALLOC(n)                                                                        \
  static FMM_NOINLINE void *FASTMM_DELPHI_CALL fpc_realloc_slow_##n(void **pp, size_t size) {      \
    return fpc_realloc_slow(pp, size, &fpc_slots[n], FMM_RETURN_ADDRESS());                        \
  }                                                                                                \
  FPC_SLOT_REALLOC_ENTRY(n)

#define FPC_SLOT_ENTRY_POINTS(n)                                                                   \
  PASCAL_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_get_mem_##n(size_t size);                       \
  PASCAL_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_free_mem_##n(void *p);                         \
  PASCAL_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_free_mem_size_##n(void *p, size_t size);       \
  PASCAL_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_alloc_mem_##n(size_t size);                     \
  PASCAL_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_mem_size_##n(void *p);                         \
  PASCAL_ENTRY FMM_FAST_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_get_mem_##n(size_t size) {       \
    return fpc_get_mem(size, &fpc_slots[n]);                                                       \
  }                                                                                                \
  PASCAL_ENTRY FMM_FAST_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_free_mem_##n(void *p) {         \
    return fpc_free_mem(p, &fpc_slots[n]);                                                         \
  }                                                                                                \
  PASCAL_ENTRY FMM_FAST_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_free_mem_size_##n(              \
      void *p, size_t size) {                                                                      \
    (void)size;                                                                                    \
    return fpc_free_mem(p, &fpc_slots[n]);                                                         \
  }                                                                                                \
  PASCAL_ENTRY void *FASTMM_DELPHI_CALL fastmm_fpc_alloc_mem_##n(size_t size) {                    \
    return fpc_alloc_mem(size, &fpc_slots[n]);                                                     \
  }                                                                                                \
  FPC_SLOT_REALLOC(n)                                                                              \
  PASCAL_ENTRY FMM_FAST_ENTRY size_t FASTMM_DELPHI_CALL fastmm_fpc_mem_size_##n(void *p) {         \
    return fpc_mem_size(p, &fpc_slots[n]);                                                         \
  }

PASCAL_SLOTS(FPC_SLOT_ENTRY_POINTS)

/* MSVC Win32: the register-convention thunks that call the functions above. */
#define FPC_SLOT_THUNKS(n)                                                                         \
  PASCAL_THUNK(fastmm_fpc_get_mem, n)                                                              \
  PASCAL_THUNK(fastmm_fpc_free_mem, n)                                                             \
  PASCAL_THUNK(fastmm_fpc_free_mem_size, n)                                                        \
  PASCAL_THUNK(fastmm_fpc_alloc_mem, n)                                                            \
  PASCAL_THUNK(fastmm_fpc_realloc_mem, n)                                                          \
  PASCAL_THUNK(fastmm_fpc_mem_size, n)
PASCAL_SLOTS(FPC_SLOT_THUNKS)

#define FPC_FILL_SLOT(n)                                                                           \
  case n:                                                                                          \
    PASCAL_FILL(mm, get_mem, fastmm_fpc_get_mem, n);                                               \
    PASCAL_FILL(mm, free_mem, fastmm_fpc_free_mem, n);                                             \
    PASCAL_FILL(mm, free_mem_size, fastmm_fpc_free_mem_size, n);                                   \
    PASCAL_FILL(mm, alloc_mem, fastmm_fpc_alloc_mem, n);                                           \
    PASCAL_LEND_REALLOC_SLOW(PASCAL_FPC_SLOW, n, fpc_realloc_slow_##n);                            \
    PASCAL_FILL(mm, realloc_mem, fastmm_fpc_realloc_mem, n);                                       \
    PASCAL_FILL(mm, mem_size, fastmm_fpc_mem_size, n);                                             \
    break;

int FASTMM_CDECL fastmm_get_fpc_memory_manager(fastmm_fpc_memory_manager *mm,
                                               const fastmm_fpc_bindings *b) {
  int slot = pascal_bind(&fpc_table, mm, b);
  PASCAL_FILL_SLOT(slot, FPC_FILL_SLOT);
}
