/* SPDX-License-Identifier: MIT */
/* fastmm_entry_instructions: instructions per call of the hot entry points, natively under
 * callgrind (bench/README.md, "Instructions per entry point"). Each case calls one entry point
 * N times in a loop between CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT(<case> <entry>);
 * the same loop around a function that only returns is measured too (<case> baseline), and its
 * count is taken off, so a figure is the entry point's own instructions.
 *
 *   valgrind --tool=callgrind --callgrind-out-file=OUT build/native/bin/fastmm_entry_instructions
 *
 * prints nothing useful by itself outside callgrind; bench/analysis/entry_instructions.sh runs it
 * and prints the table. The entry points are the ones a program reaches: the C exports, and the
 * Free Pascal record's (fastmm_get_fpc_memory_manager, bound to a stand-in previous manager
 * that is never called), which natively are plain C functions with the same code as the
 * Windows ones (there with Free Pascal's convention), and the Delphi record bound the same way
 * (fastmm_get_memory_manager_with_previous: its FreeMem and ReallocMem; GetMem is the unbound
 * record's). The cases: an in-place ReallocMem of a
 * small block and of a medium one (20,000 <-> 19,968 bytes), MemSize of a small and a medium
 * block, a GetMem+FreeMem pair. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fastmm.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#if !defined(HAVE_CALLGRIND)
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

#define N 100000

static size_t FASTMM_DELPHI_CALL never_free(void *p) {
  (void)p;
  abort();
}
static void *FASTMM_DELPHI_CALL never_realloc(void **p, size_t n) {
  (void)p, (void)n;
  abort();
}
static size_t FASTMM_DELPHI_CALL never_size(void *p) {
  (void)p;
  abort();
}
static void *FASTMM_DELPHI_CALL never_get(size_t n) {
  (void)n;
  abort();
}
static void FASTMM_CDECL never_error(int32_t code, const void *address) {
  (void)code, (void)address;
  abort();
}
static int32_t FASTMM_DELPHI_CALL never_delphi_free(void *p) {
  (void)p;
  abort();
}
static void *FASTMM_DELPHI_CALL never_delphi_realloc(void *p, intptr_t n) {
  (void)p, (void)n;
  abort();
}

/* The baselines: the same loops around indirect calls of functions that return at once. */
__attribute__((noinline)) static void *nothing(void *p, size_t n) {
  (void)n;
  return p;
}
__attribute__((noinline)) static size_t nothing_size(const void *p) {
  return (size_t)(uintptr_t)p & 1u;
}
__attribute__((noinline)) static void *nothing_get(size_t n) {
  return (void *)(uintptr_t)n;
}
__attribute__((noinline)) static int nothing_free(void *p) {
  (void)p;
  return 0;
}
static void *(*volatile nothing_ptr)(void *, size_t) = nothing;
static size_t (*volatile nothing_size_ptr)(const void *) = nothing_size;
static void *(*volatile nothing_get_ptr)(size_t) = nothing_get;
static int (*volatile nothing_free_ptr)(void *) = nothing_free;

/* volatile pointers: the compiler calls through them every time, as a program calls an
 * installed record's field. */
static void *(*volatile c_realloc)(void *, size_t) = fastmm_reallocmem;
static size_t (*volatile c_usable)(const void *) = fastmm_usable_size;
static void *(*volatile c_get)(size_t) = fastmm_getmem;
static int (*volatile c_free)(void *) = fastmm_freemem;

int main(void) {
  static uint8_t no = 0, yes = 1;
  fastmm_fpc_bindings b = {sizeof b,  never_free,  never_realloc, never_size,
                           never_get, never_error, &no,           &yes};
  fastmm_fpc_memory_manager fpc;
  if (!fastmm_get_fpc_memory_manager(&fpc, &b))
    return 1;
  fastmm_delphi_bindings db = {sizeof db, never_delphi_free, never_delphi_realloc, never_error};
  fastmm_memory_manager_ex delphi;
  if (!fastmm_get_memory_manager_with_previous(&delphi, &db))
    return 1;
  void *small = fastmm_getmem(64), *medium = fastmm_getmem(2784), *big = fastmm_getmem(20000);
  size_t sum = 0;
  int i;

  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    small = nothing_ptr(small, (size_t)63 + (i & 1));
  CALLGRIND_DUMP_STATS_AT("realloc_inplace baseline");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += nothing_size_ptr(small);
  CALLGRIND_DUMP_STATS_AT("memsize_small baseline");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += nothing_size_ptr(medium);
  CALLGRIND_DUMP_STATS_AT("memsize_medium baseline");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    nothing_free_ptr(nothing_get_ptr(40));
  CALLGRIND_DUMP_STATS_AT("getmem_freemem baseline");

  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    small = c_realloc(small, (size_t)63 + (i & 1));
  CALLGRIND_DUMP_STATS_AT("realloc_inplace c_export");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    fpc.realloc_mem(&small, (size_t)63 + (i & 1));
  CALLGRIND_DUMP_STATS_AT("realloc_inplace fpc_entry");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    small = delphi.realloc_mem(small, (intptr_t)63 + (i & 1));
  CALLGRIND_DUMP_STATS_AT("realloc_inplace delphi_entry");

  /* A medium block that stays in place (the slow path of both: the Pascal entry's own part of
   * it is what differs). */
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    big = nothing_ptr(big, (size_t)20000 - (i & 1) * 32);
  CALLGRIND_DUMP_STATS_AT("realloc_medium baseline");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    big = c_realloc(big, (size_t)20000 - (i & 1) * 32);
  CALLGRIND_DUMP_STATS_AT("realloc_medium c_export");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    fpc.realloc_mem(&big, (size_t)20000 - (i & 1) * 32);
  CALLGRIND_DUMP_STATS_AT("realloc_medium fpc_entry");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    big = delphi.realloc_mem(big, (intptr_t)20000 - (i & 1) * 32);
  CALLGRIND_DUMP_STATS_AT("realloc_medium delphi_entry");

  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += c_usable(small);
  CALLGRIND_DUMP_STATS_AT("memsize_small c_export");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += fpc.mem_size(small);
  CALLGRIND_DUMP_STATS_AT("memsize_small fpc_entry");

  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += c_usable(medium);
  CALLGRIND_DUMP_STATS_AT("memsize_medium c_export");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    sum += fpc.mem_size(medium);
  CALLGRIND_DUMP_STATS_AT("memsize_medium fpc_entry");

  /* A pair: GetMem and FreeMem. */
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    c_free(c_get(40));
  CALLGRIND_DUMP_STATS_AT("getmem_freemem c_export");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    fpc.free_mem(fpc.get_mem(40));
  CALLGRIND_DUMP_STATS_AT("getmem_freemem fpc_entry");
  CALLGRIND_ZERO_STATS;
  for (i = 0; i < N; i++)
    delphi.free_mem(delphi.get_mem(40));
  CALLGRIND_DUMP_STATS_AT("getmem_freemem delphi_entry");

  fastmm_freemem(small);
  fastmm_freemem(medium);
  fastmm_freemem(big);
  printf("%d calls per case (checksum %zu)\n", N, sum);
  return 0;
}
