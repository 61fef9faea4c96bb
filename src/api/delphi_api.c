/* The record Delphi's SetMemoryManager takes (TMemoryManagerEx). On Win32 with GCC the entry
 * points are compiled with regparm(3), which is Delphi's `register` convention for these one-
 * and two-argument functions (EAX, EDX in; EAX or AL out; EBX, ESI, EDI, EBP kept); the build
 * adds -mincoming-stack-boundary=2 because Delphi keeps the stack only 4-byte aligned. MSVC has
 * no regparm: its Win32 build defines FASTMM_DELPHI_THUNKS and hands out the NASM thunks of
 * src/win32/delphi_register_thunks.asm, which move EAX/EDX onto the stack and call the cdecl
 * functions below. Win64 and native builds have one convention and use these directly.
 * The fast paths are inlined here (alloc_fast.h), so a Delphi GetMem is one call. */
#include "core/alloc_fast.h"
#include "modes/switches.h"

/* Sizes arrive as Delphi's NativeInt: a negative one is taken as the huge unsigned size it is,
 * which no fast path serves and every slow path refuses (above MAX_REQUEST_SIZE): NULL, the
 * old block intact, as the NASM ReallocMem of Win64 has always done, with no test of its own. */
static void *FASTMM_DELPHI_CALL delphi_get_mem(intptr_t size) {
  return fast_get((size_t)size);
}

static int32_t FASTMM_DELPHI_CALL delphi_free_mem(void *p) {
  return fast_free(p);
}

#if defined(FASTMM_ASM_REALLOC) && defined(_WIN64)
/* The NASM entry point is the C export itself: one convention on Win64. */
#define delphi_realloc_mem ((void *(*)(void *, intptr_t))(void *)fastmm_reallocmem)
#elif defined(FASTMM_ASM_REALLOC)
#define delphi_realloc_mem fastmm_delphi_realloc_mem /* src/win32/realloc_fast.asm */
#else
static void *FASTMM_DELPHI_CALL delphi_realloc_mem(void *p, intptr_t size) {
  return fast_realloc(p, (size_t)size);
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
  return size >= 0 ? fast_realloc(p, (size_t)size) : NULL;
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
  mode_debug_enter();
  fastmm_get_memory_manager(mm);
}
