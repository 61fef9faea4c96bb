/* SPDX-License-Identifier: MIT */
/* fastmm-c benchmark: what the workloads (workloads*.c) and the harness (bench_main.c) share.
 *
 * One program, fastmm_bench, built for Win32, Win64 and native Linux, runs one workload with
 * one allocator per process. The allocator is picked at run time and reached through the table
 * `A` of three function pointers, so every allocator pays the same indirect call:
 *   --alloc record --lib PATH --sym NAME   a library exporting NAME(fastmm_memory_manager_ex *)
 *                                          (fastmm-c: fastmm_get_memory_manager), the record a
 *                                          Delphi program hands to SetMemoryManager
 *   --alloc malloc [--lib PATH] [--sym P]  P##malloc / P##free / P##realloc from PATH (dlopen or
 *                                          LoadLibrary by path), or the program's own C library
 *   --alloc heap                           Windows: HeapAlloc/HeapFree/HeapReAlloc, process heap
 *
 * On Win32 the table uses Delphi's `register` convention (regparm(3)), because that is how a
 * Delphi program calls its memory manager: fastmm-c's record plugs in directly, and a peer gets a
 * thin register-convention wrapper, as it would if a Delphi program installed it.
 *
 * The table's contract is narrower than malloc's: get(n) with n > 0, free(p) with p != NULL,
 * realloc(p, n) with p != NULL and n > 0, so no allocator needs an edge-case wrapper. */
#ifndef FASTMM_BENCH_H
#define FASTMM_BENCH_H

#if defined(_WIN32) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../tests/common/rng.h" /* the generator the tests and the demo use */

#if defined(_WIN32) && !defined(_WIN64)
#define BENCH_CALL __attribute__((regparm(3)))
#else
#define BENCH_CALL
#endif

typedef struct bench_alloc {
  void *(BENCH_CALL *get)(intptr_t size);
  void(BENCH_CALL *free)(void *p);
  void *(BENCH_CALL *realloc)(void *p, intptr_t size);
} bench_alloc;

extern bench_alloc A;

/* Per-process state of a run. The workload sets ops, adds to check, and keeps live/peak_live
 * (the bytes it asked for and still holds) through the helpers below. */
typedef struct bench_ctx {
  double scale;     /* multiplies every workload's operation count (--scale) */
  uint64_t ops;     /* operations done in the timed region */
  uint64_t check;   /* a checksum of what the workload read back, printed */
  size_t live;      /* bytes requested and not yet freed */
  size_t peak_live; /* the most live bytes at once (threads: the sum of each thread's peak) */
  int ready;        /* bench_ready was called */
  int begun, ended; /* bench_begin / bench_end were called */
  uint64_t t_begin, t_end;
  uint64_t base_mem; /* process memory when the workload was ready */
} bench_ctx;

/* ---- Harness services (bench_main.c) ----------------------------------------------------- */

/* Call once the workload's own bookkeeping (bench_os_alloc) is set up and before its first
 * allocation through A: the process's memory at that point is the base that the allocator's
 * peak is measured against. */
void bench_ready(bench_ctx *c);
/* The timed region (and, under callgrind, the counted one). */
void bench_begin(bench_ctx *c);
void bench_end(bench_ctx *c);

/* Zeroed memory straight from the OS for the workload's own tables, never freed. */
void *bench_os_alloc(size_t bytes);

/* Fails the run: prints the message and exits with status 3. */
void bench_fail(const char *what);

/* Count of operations: base * scale, at least 1. */
uint64_t bench_count(const bench_ctx *c, double base);

/* ---- Small helpers ----------------------------------------------------------------------- */

static inline void *mm_get(size_t n) {
  void *p = A.get((intptr_t)n);
  if (p == NULL)
    bench_fail("GetMem returned NULL");
  return p;
}
static inline void mm_free(void *p) {
  A.free(p);
}
static inline void *mm_realloc(void *p, size_t n) {
  void *q = A.realloc(p, (intptr_t)n);
  if (q == NULL)
    bench_fail("ReallocMem returned NULL");
  return q;
}

static inline void live_add(bench_ctx *c, size_t n) {
  c->live += n;
  if (c->live > c->peak_live)
    c->peak_live = c->live;
}
static inline void live_sub(bench_ctx *c, size_t n) {
  c->live -= n;
}

/* Writes a tag word at the start of a block and a byte at its end (what a program does first
 * with what it gets), and reads them back. n >= 1. */
static inline void tag_block(void *p, size_t n, uint32_t tag) {
  unsigned char *b = (unsigned char *)p;
  if (n >= 4)
    memcpy(b, &tag, 4);
  else
    b[0] = (unsigned char)tag;
  if (n != 4) /* inside the tag when n == 4 */
    b[n - 1] = (unsigned char)tag;
}
static inline int tag_ok(const void *p, size_t n, uint32_t tag) {
  const unsigned char *b = (const unsigned char *)p;
  if (n >= 4) {
    uint32_t t;
    memcpy(&t, b, 4);
    return t == tag;
  }
  return b[0] == (unsigned char)tag;
}
/* Writes one byte in every 4 KB page of a block, so resident memory counts it. */
static inline void touch_pages(void *p, size_t n) {
  unsigned char *b = (unsigned char *)p;
  for (size_t i = 0; i < n; i += 4096)
    b[i] = (unsigned char)i;
  b[n - 1] = 1;
}

/* ---- The workloads (workloads.c) --------------------------------------------------------- */

typedef struct workload {
  const char *name;
  int threads;
  void (*run)(bench_ctx *c);
  const char *description;
} workload;

extern const workload bench_workloads[];
extern const size_t bench_workload_count;

#endif
