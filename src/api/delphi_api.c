/* SPDX-License-Identifier: MIT */
/* The record Delphi's SetMemoryManager takes (TMemoryManagerEx). On Win32 with GCC the entry
 * points are compiled with regparm(3), which is Delphi's `register` convention for these one-
 * and two-argument functions (EAX, EDX in; EAX or AL out; EBX, ESI, EDI, EBP kept); the build
 * adds -mincoming-stack-boundary=2 because Delphi keeps the stack only 4-byte aligned. MSVC has
 * no regparm: its Win32 build defines FASTMM_DELPHI_THUNKS and hands out the NASM thunks of
 * src/win32/delphi_register_thunks.asm, which move EAX/EDX onto the stack and call the cdecl
 * functions below. Win64 and native builds have one convention and use these directly.
 * The fast paths are inlined here (alloc_fast.h), so a Delphi GetMem is one call. */
#include "entry/alloc_fast.h"
#include "modes/switches.h"
#include "pascal_records.h"

/* Sizes arrive as Delphi's NativeInt: a negative one is taken as the huge unsigned size it is,
 * which no fast path serves and every slow path refuses (above MAX_REQUEST_SIZE): NULL, the
 * old block intact, as the NASM ReallocMem of Win64 has always done, with no test of its own. */
static FMM_FAST_ENTRY void *FASTMM_DELPHI_CALL delphi_get_mem(intptr_t size) {
  return entry_get((size_t)size);
}

static FMM_FAST_ENTRY int32_t FASTMM_DELPHI_CALL delphi_free_mem(void *p) {
  return entry_free(p);
}

#if defined(FASTMM_ASM_REALLOC) && defined(_WIN64)
/* The NASM entry point is the C export itself: one convention on Win64. */
#define delphi_realloc_mem ((void *(*)(void *, intptr_t))(void *)fastmm_reallocmem)
#elif defined(FASTMM_ASM_REALLOC)
#define delphi_realloc_mem fastmm_delphi_realloc_mem /* src/win32/realloc_fast.asm */
#else
static FMM_FAST_ENTRY void *FASTMM_DELPHI_CALL delphi_realloc_mem(void *p, intptr_t size) {
  return entry_realloc(p, (size_t)size);
}
#endif

static void *FASTMM_DELPHI_CALL delphi_alloc_mem(intptr_t size) {
  return size >= 0 ? fastmm_allocmem((size_t)size) : NULL;
}

static uint8_t FASTMM_DELPHI_CALL delphi_register_leak(void *p) {
  return (uint8_t)fastmm_register_expected_leak(p);
}

static uint8_t FASTMM_DELPHI_CALL delphi_unregister_leak(void *p) {
  return (uint8_t)fastmm_unregister_expected_leak(p);
}

#if defined(FASTMM_DELPHI_THUNKS)
/* cdecl bodies the MSVC Win32 thunks call. */
void *fastmm_delphi_get_mem_c(intptr_t size);
int32_t fastmm_delphi_free_mem_c(void *p);
void *fastmm_delphi_realloc_mem_c(void *p, intptr_t size);
void *fastmm_delphi_alloc_mem_c(intptr_t size);
uint8_t fastmm_delphi_register_leak_c(void *p);
uint8_t fastmm_delphi_unregister_leak_c(void *p);
void *fastmm_delphi_get_mem_c(intptr_t size) {
  return delphi_get_mem(size);
}
int32_t fastmm_delphi_free_mem_c(void *p) {
  return delphi_free_mem(p);
}
void *fastmm_delphi_realloc_mem_c(void *p, intptr_t size) {
  return size >= 0 ? entry_realloc(p, (size_t)size) : NULL;
}
void *fastmm_delphi_alloc_mem_c(intptr_t size) {
  return delphi_alloc_mem(size);
}
uint8_t fastmm_delphi_register_leak_c(void *p) {
  return delphi_register_leak(p);
}
uint8_t fastmm_delphi_unregister_leak_c(void *p) {
  return delphi_unregister_leak(p);
}

void *fastmm_delphi_get_mem_register(void);
void *fastmm_delphi_free_mem_register(void);
void *fastmm_delphi_realloc_mem_register(void);
void *fastmm_delphi_alloc_mem_register(void);
void *fastmm_delphi_register_leak_register(void);
void *fastmm_delphi_unregister_leak_register(void);

void FASTMM_CDECL fastmm_get_memory_manager(fastmm_memory_manager_ex *mm) {
  if (mm == NULL)
    return; /* fastmm.h, "Output pointers" */
  /* The thunks follow the register convention; the record's C types cannot say so. */
  *(void **)&mm->get_mem = (void *)fastmm_delphi_get_mem_register;
  *(void **)&mm->free_mem = (void *)fastmm_delphi_free_mem_register;
#if defined(FASTMM_ASM_REALLOC)
  *(void **)&mm->realloc_mem = (void *)fastmm_delphi_realloc_mem;
#else
  *(void **)&mm->realloc_mem = (void *)fastmm_delphi_realloc_mem_register;
#endif
  *(void **)&mm->alloc_mem = (void *)fastmm_delphi_alloc_mem_register;
  *(void **)&mm->register_expected_memory_leak = (void *)fastmm_delphi_register_leak_register;
  *(void **)&mm->unregister_expected_memory_leak = (void *)fastmm_delphi_unregister_leak_register;
}
#else
void FASTMM_CDECL fastmm_get_memory_manager(fastmm_memory_manager_ex *mm) {
  if (mm == NULL)
    return; /* fastmm.h, "Output pointers" */
  mm->get_mem = delphi_get_mem;
  mm->free_mem = delphi_free_mem;
  mm->realloc_mem = delphi_realloc_mem;
  mm->alloc_mem = delphi_alloc_mem;
  mm->register_expected_memory_leak = delphi_register_leak;
  mm->unregister_expected_memory_leak = delphi_unregister_leak;
}
#endif

/* The same record with debug mode entered first: for a program (or a benchmark) that wants debug
 * mode from its first allocation without the environment variable. */
void FASTMM_CDECL fastmm_get_memory_manager_debug(fastmm_memory_manager_ex *mm) {
  if (mm == NULL)
    return; /* not even debug mode entered: fastmm.h, "Output pointers" */
  mode_debug_enter();
  fastmm_get_memory_manager(mm);
}

/* ---- The record bound to a previous manager (fastmm_get_memory_manager_with_previous) -------
 * The same GetMem, AllocMem and expected-leak entries; FreeMem and ReallocMem come in slots
 * (pascal_records.h) whose slow paths pass the previous manager's blocks back to it. Delphi's
 * System calls FreeMem and ReallocMem with a pointer that is not nil and ReallocMem with a size
 * above 0 (it calls GetMem and FreeMem for the others), and turns a FreeMem result other than 0
 * into EInvalidPointer and a NULL ReallocMem into EOutOfMemory; so a ReallocMem of a pointer
 * that is not a live block reports itself through heap_error (FastMM raises EInvalidPointer
 * there). */

PASCAL_SLOT_TABLE(delphi_slot, fastmm_delphi_bindings, 3, delphi_slots, delphi_table);

/* FreeMem of anything but a small or medium block of a medium span: the previous manager's
 * block, a large block, any pointer while a mode is on. */
static FMM_NOINLINE int32_t delphi_free_slow(void *p, const delphi_slot *s) {
  if (pascal_previous_block(p))
    return s->b.previous_free_mem(p);
  return entry_free_slow(p, FMM_RETURN_ADDRESS());
}

/* ReallocMem's rare cases (PASCAL_REALLOC_IS_RARE): nil, a size of 0 or below, and while a mode
 * is on the previous manager's block. */
static FMM_NOINLINE void *delphi_realloc_rare(void *p, intptr_t size, const delphi_slot *s,
                                              const void *caller) {
  if (pascal_previous_block(p))
    return s->b.previous_realloc_mem(p, size);
  if (size < 0)
    return NULL;
  if (p == NULL)
    return entry_get_for((size_t)size, caller);
  if (entry_free_slow(p, caller) == FASTMM_OK) /* size 0 */
    return NULL;
  s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, caller);
  return NULL;
}

/* A pointer the core's ReallocMem refused or could not serve (pascal_refused); a block of ours
 * that found no memory gives NULL (System raises EOutOfMemory). */
static FMM_NOINLINE void *delphi_realloc_refused(void *p, intptr_t size, const delphi_slot *s,
                                                 const void *caller) {
  int refused = pascal_refused(p);
  if (refused == PASCAL_REFUSED_PREVIOUS)
    return s->b.previous_realloc_mem(p, size);
  if (refused == PASCAL_REFUSED_INVALID)
    s->b.heap_error(PASCAL_ERROR_INVALID_POINTER, caller);
  return NULL;
}

/* ReallocMem of everything but a small block that stays in place, made once per slot: as Free
 * Pascal's (fpc_api.c, fpc_realloc_slow). */
FMM_INLINE void *delphi_realloc_slow(void *p, intptr_t size, const delphi_slot *s,
                                     const void *caller) {
  uint32_t mode = mode_now();
  if (FMM_UNLIKELY(PASCAL_REALLOC_IS_RARE(p, size <= 0, mode)))
    return delphi_realloc_rare(p, size, s, caller);
  void *q = entry_realloc_slow_in(mode, p, (size_t)size, caller);
  if (FMM_UNLIKELY(q == NULL))
    return delphi_realloc_refused(p, size, s, caller);
  return q;
}

FMM_INLINE int32_t delphi_bound_free_mem(void *p, const delphi_slot *s) {
  unsigned region;
  uintptr_t table, off;
  FAST_LOOKUP(p, region, table, off);
  /* A block entry_free_in_span refuses is not a live one: System raises EInvalidPointer. */
  if (FMM_LIKELY(region == REGION_MEDIUM_SPAN))
    return entry_free_in_span(p, table, off);
  return delphi_free_slow(p, s);
}

FMM_INLINE void *delphi_bound_realloc_mem(void *p, intptr_t size,
                                          void *(FASTMM_DELPHI_CALL *slow)(void *p,
                                                                           intptr_t size)) {
  if (FMM_LIKELY(fast_realloc_stays(p, (size_t)size)))
    return p;
  return slow(p, size);
}

/* A slot's ReallocMem: its slow path, and the entry point, in C or (PASCAL_ASM_REALLOC,
 * pascal_records.h) in src/win32/realloc_fast.asm, which is lent the slow path when the slot's
 * record is filled. */
#if defined(PASCAL_ASM_REALLOC)
#define DELPHI_SLOT_REALLOC_ENTRY(n)                                                               \
  void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem_##n(void *p, intptr_t size);
#else
#define DELPHI_SLOT_REALLOC_ENTRY(n)                                                               \
  PASCAL_ENTRY void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem_##n(void *p, intptr_t size);     \
  PASCAL_ENTRY FMM_FAST_ENTRY void *FASTMM_DELPHI_CALL fastmm_delphi_realloc_mem_##n(              \
      void *p, intptr_t size) {                                                                    \
    return delphi_bound_realloc_mem(p, size, delphi_realloc_slow_##n);                             \
  }
#endif
#define DELPHI_SLOT_REALLOC(n)                                                                     \
  static FMM_NOINLINE void *FASTMM_DELPHI_CALL delphi_realloc_slow_##n(void *p, intptr_t size) {   \
    return delphi_realloc_slow(p, size, &delphi_slots[n], FMM_RETURN_ADDRESS());                   \
  }                                                                                                \
  DELPHI_SLOT_REALLOC_ENTRY(n)

#define DELPHI_SLOT_ENTRY_POINTS(n)                                                                \
  PASCAL_ENTRY int32_t FASTMM_DELPHI_CALL fastmm_delphi_free_mem_##n(void *p);                     \
  PASCAL_ENTRY FMM_FAST_ENTRY int32_t FASTMM_DELPHI_CALL fastmm_delphi_free_mem_##n(void *p) {     \
    return delphi_bound_free_mem(p, &delphi_slots[n]);                                             \
  }                                                                                                \
  DELPHI_SLOT_REALLOC(n)

PASCAL_SLOTS(DELPHI_SLOT_ENTRY_POINTS)

#define DELPHI_SLOT_THUNKS(n)                                                                      \
  PASCAL_THUNK(fastmm_delphi_free_mem, n) PASCAL_THUNK(fastmm_delphi_realloc_mem, n)
PASCAL_SLOTS(DELPHI_SLOT_THUNKS)

#define DELPHI_FILL_SLOT(n)                                                                        \
  case n:                                                                                          \
    PASCAL_FILL(mm, free_mem, fastmm_delphi_free_mem, n);                                          \
    PASCAL_LEND_REALLOC_SLOW(PASCAL_DELPHI_SLOW, n, delphi_realloc_slow_##n);                      \
    PASCAL_FILL(mm, realloc_mem, fastmm_delphi_realloc_mem, n);                                    \
    break;

int FASTMM_CDECL fastmm_get_memory_manager_with_previous(fastmm_memory_manager_ex *mm,
                                                         const fastmm_delphi_bindings *b) {
  int slot = pascal_bind(&delphi_table, mm, b);
  if (slot < 0)
    return 0;
  fastmm_get_memory_manager(mm);
  PASCAL_FILL_SLOT(slot, DELPHI_FILL_SLOT);
}
