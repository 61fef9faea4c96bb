/* SPDX-License-Identifier: MIT */
/* borlndmm.dll: fastmm-c as a drop-in for the borlndmm.dll that Delphi's ShareMem unit loads.
 *
 * A Delphi program and its libraries that list ShareMem first share one memory manager, the
 * one in borlndmm.dll. This DLL is built from the same core as fastmmc32.dll / fastmmc64.dll
 * (one self-contained DLL, no other to ship) and exports exactly the names ShareMem imports,
 * which are the same on Win32 and Win64 (src/api/borlndmm.def):
 *
 *   @Borlndmm@SysGetMem$qqri          function(Size: NativeInt): Pointer
 *   @Borlndmm@SysFreeMem$qqrpv        function(P: Pointer): Integer          0 = freed
 *   @Borlndmm@SysReallocMem$qqrpvi    function(P: Pointer; Size: NativeInt): Pointer
 *   @Borlndmm@SysAllocMem$qqri        function(Size: NativeInt): Pointer     zeroed
 *   @Borlndmm@SysRegisterExpectedMemoryLeak$qqrpi    function(P: Pointer): Boolean
 *   @Borlndmm@SysUnregisterExpectedMemoryLeak$qqrpi  function(P: Pointer): Boolean
 *   @Borlndmm@HeapAddRef$qqrv         function: Integer    (ShareMem's initialization)
 *   @Borlndmm@HeapRelease$qqrv        function: Integer    (ShareMem's finalization)
 *   GetHeapStatus                     function: THeapStatus
 *   GetAllocMemCount                  function: Integer    live blocks
 *   GetAllocMemSize                   function: Integer    their usable bytes
 *   DumpBlocks                        procedure            a usage line to OutputDebugString
 *   GetMemory, FreeMemory, ReallocMemory                   System's cdecl trio
 *
 * Conventions: `$qqr` in a mangled name is C++Builder's __fastcall, which is Delphi's
 * `register`: on Win32 the first arguments in EAX and EDX, the result in EAX (a Boolean in AL),
 * EBX/ESI/EDI/EBP kept: GCC's regparm(3) for these one- and two-argument functions (the build
 * adds -mincoming-stack-boundary=2, as Delphi keeps the stack 4-byte aligned). The unmangled
 * names are Delphi functions with the default convention too, except GetMemory, FreeMemory and
 * ReallocMemory, which are cdecl in Delphi's System unit. GetHeapStatus returns a record larger
 * than a register: Delphi passes the result's address as a hidden argument (EAX on Win32, RCX
 * on Win64), which is what a function taking that pointer receives. Win64 has one convention.
 *
 * The numbers come from fastmm_get_state (include/fastmm.h); they take every lock of the heap
 * for a moment, as Delphi's own GetHeapStatus walk does. */
#include <stdint.h>

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "fastmm.h"

#if defined(_WIN32) && !defined(_WIN64) && defined(__GNUC__)
#define BORLNDMM_REGISTER __attribute__((regparm(3)))
#else
#define BORLNDMM_REGISTER
#endif

#if defined(__GNUC__)
#define BORLNDMM_CDECL __attribute__((cdecl))
#else
#define BORLNDMM_CDECL __cdecl
#endif

/* Delphi's System.THeapStatus: nine NativeUInt and a Cardinal. Written field by field, so a
 * caller's record that ends after HeapErrorCode (no tail padding) is never overrun. */
typedef struct borlndmm_heap_status {
  size_t total_addr_space;
  size_t total_uncommitted;
  size_t total_committed;
  size_t total_allocated;
  size_t total_free;
  size_t free_small;
  size_t free_big;
  size_t unused;
  size_t overhead;
  uint32_t heap_error_code;
} borlndmm_heap_status;

/* The header sizes of include/fastmm.h and docs/architecture-reference.md: a small block's usable
 * size is its slot less 4 bytes, a medium block's is its size less 16. */
#define BORLNDMM_SMALL_HEADER 4u
#define BORLNDMM_MEDIUM_HEADER 16u

/* The exports (named in borlndmm.def). Declared here so -Wmissing-prototypes stays quiet. */
void *BORLNDMM_REGISTER borlndmm_sys_get_mem(intptr_t size);
int32_t BORLNDMM_REGISTER borlndmm_sys_free_mem(void *p);
void *BORLNDMM_REGISTER borlndmm_sys_realloc_mem(void *p, intptr_t size);
void *BORLNDMM_REGISTER borlndmm_sys_alloc_mem(intptr_t size);
uint8_t BORLNDMM_REGISTER borlndmm_sys_register_expected_memory_leak(void *p);
uint8_t BORLNDMM_REGISTER borlndmm_sys_unregister_expected_memory_leak(void *p);
int32_t BORLNDMM_REGISTER borlndmm_heap_add_ref(void);
int32_t BORLNDMM_REGISTER borlndmm_heap_release(void);
borlndmm_heap_status *BORLNDMM_REGISTER borlndmm_get_heap_status(borlndmm_heap_status *result);
int32_t BORLNDMM_REGISTER borlndmm_get_alloc_mem_count(void);
int32_t BORLNDMM_REGISTER borlndmm_get_alloc_mem_size(void);
void BORLNDMM_REGISTER borlndmm_dump_blocks(void);
void *BORLNDMM_CDECL borlndmm_get_memory(intptr_t size);
int32_t BORLNDMM_CDECL borlndmm_free_memory(void *p);
void *BORLNDMM_CDECL borlndmm_realloc_memory(void *p, intptr_t size);

/* ---- The memory manager (sizes are Delphi's NativeInt: a negative one fails cleanly) ------- */

void *BORLNDMM_REGISTER borlndmm_sys_get_mem(intptr_t size) {
  return size >= 0 ? fastmm_getmem((size_t)size) : NULL;
}

int32_t BORLNDMM_REGISTER borlndmm_sys_free_mem(void *p) {
  return fastmm_freemem(p);
}

void *BORLNDMM_REGISTER borlndmm_sys_realloc_mem(void *p, intptr_t size) {
  return size >= 0 ? fastmm_reallocmem(p, (size_t)size) : NULL;
}

void *BORLNDMM_REGISTER borlndmm_sys_alloc_mem(intptr_t size) {
  return size >= 0 ? fastmm_allocmem((size_t)size) : NULL;
}

uint8_t BORLNDMM_REGISTER borlndmm_sys_register_expected_memory_leak(void *p) {
  return fastmm_register_expected_leak(p) ? 1u : 0u;
}

uint8_t BORLNDMM_REGISTER borlndmm_sys_unregister_expected_memory_leak(void *p) {
  return fastmm_unregister_expected_leak(p) ? 1u : 0u;
}

/* ---- Module references: every ShareMem module adds one at start and drops it at its end ---- */

static volatile LONG heap_refs;

int32_t BORLNDMM_REGISTER borlndmm_heap_add_ref(void) {
  return (int32_t)InterlockedIncrement(&heap_refs);
}

int32_t BORLNDMM_REGISTER borlndmm_heap_release(void) {
  return (int32_t)InterlockedDecrement(&heap_refs);
}

/* ---- Statistics ------------------------------------------------------------------------- */

static size_t minus(size_t a, size_t b) {
  return a > b ? a - b : 0;
}

static size_t blocks_in_use(const fastmm_state *st) {
  return st->small.blocks_in_use + st->medium.blocks_in_use + st->large.blocks_in_use;
}

static size_t bytes_in_use(const fastmm_state *st) {
  return st->small.bytes_in_use + st->medium.bytes_in_use + st->large.bytes_in_use;
}

static int32_t clamp_int32(size_t v) {
  return v > (size_t)INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* Delphi's partition of the address space: allocated + free + overhead = committed; free is
 * the room in small and medium spans plus memory mapped for no block at all (the spare span,
 * the manager's own tables); the headers and the slack of large mappings are overhead. */
borlndmm_heap_status *BORLNDMM_REGISTER borlndmm_get_heap_status(borlndmm_heap_status *result) {
  fastmm_state st;
  fastmm_get_state(&st);
  size_t allocated = bytes_in_use(&st);
  size_t total = st.os_bytes_reserved;
  size_t free_small = minus(st.small.bytes_reserved,
                            st.small.bytes_in_use + st.small.blocks_in_use * BORLNDMM_SMALL_HEADER);
  size_t free_big =
      minus(st.medium.bytes_reserved,
            st.medium.bytes_in_use + st.medium.blocks_in_use * BORLNDMM_MEDIUM_HEADER);
  size_t unused =
      minus(total, st.small.bytes_reserved + st.medium.bytes_reserved + st.large.bytes_reserved);
  size_t total_free = free_small + free_big + unused;
  result->total_addr_space = total;
  result->total_uncommitted = 0;
  result->total_committed = total;
  result->total_allocated = allocated;
  result->total_free = total_free;
  result->free_small = free_small;
  result->free_big = free_big;
  result->unused = unused;
  result->overhead = minus(total, allocated + total_free);
  result->heap_error_code = 0;
  return result;
}

int32_t BORLNDMM_REGISTER borlndmm_get_alloc_mem_count(void) {
  fastmm_state st;
  fastmm_get_state(&st);
  return clamp_int32(blocks_in_use(&st));
}

int32_t BORLNDMM_REGISTER borlndmm_get_alloc_mem_size(void) {
  fastmm_state st;
  fastmm_get_state(&st);
  return clamp_int32(bytes_in_use(&st));
}

static char *put_text(char *at, char *end, const char *s) {
  while (*s && at < end)
    *at++ = *s++;
  return at;
}

static char *put_size(char *at, char *end, size_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0 && n < (int)sizeof digits);
  while (n > 0 && at < end)
    *at++ = digits[--n];
  return at;
}

/* Borland's DumpBlocks listed the heap for the debugger; this one sends the debugger a line
 * with what the heap holds (and makes the calling thread's cached blocks count as free). */
void BORLNDMM_REGISTER borlndmm_dump_blocks(void) {
  fastmm_flush_thread_cache();
  fastmm_state st;
  fastmm_get_state(&st);
  char line[256];
  char *at = line, *end = line + sizeof line - 1;
  at = put_text(at, end, "borlndmm (fastmm-c " FASTMM_VERSION_STRING "): ");
  at = put_size(at, end, blocks_in_use(&st));
  at = put_text(at, end, " blocks, ");
  at = put_size(at, end, bytes_in_use(&st));
  at = put_text(at, end, " bytes in use; ");
  at = put_size(at, end, st.os_bytes_reserved);
  at = put_text(at, end, " bytes from the OS\n");
  *at = '\0';
  OutputDebugStringA(line);
}

/* ---- System.GetMemory / FreeMemory / ReallocMemory (cdecl in Delphi) ---------------------- */

void *BORLNDMM_CDECL borlndmm_get_memory(intptr_t size) {
  return size >= 0 ? fastmm_getmem((size_t)size) : NULL;
}

int32_t BORLNDMM_CDECL borlndmm_free_memory(void *p) {
  return p == NULL ? 0 : fastmm_freemem(p);
}

void *BORLNDMM_CDECL borlndmm_realloc_memory(void *p, intptr_t size) {
  return size >= 0 ? fastmm_reallocmem(p, (size_t)size) : NULL;
}
