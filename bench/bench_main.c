/* SPDX-License-Identifier: MIT */
/* fastmm_bench: runs one workload with one allocator and prints one JSON line.
 *
 *   fastmm_bench --workload NAME --alloc KIND [--lib PATH] [--sym NAME] [--scale F]
 *   fastmm_bench --workload all ...   every workload in turn in one process (a smoke test)
 *   fastmm_bench --list
 *
 * KIND is record, malloc or heap (see bench.h). The line reports the time of the workload's
 * timed region per operation, the process's memory (peak and base) and the workload's own peak
 * live bytes. bench/run starts this program and reads that line; README.md explains the fields.
 *
 * Memory: natively the peak resident set (VmHWM) and the resident set when the workload was
 * ready (VmRSS). On Windows the peak committed memory (PeakPagefileUsage) and PagefileUsage at
 * the start; under Wine, whose PeakPagefileUsage is not a peak (it equals the current value),
 * the peak working set instead (Wine backs it with Linux's VmHWM), which "mem_kind" says. */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, RTLD_DEFAULT */
#endif
#include "bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fastmm.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
/* psapi.h needs windows.h first. */
#include <psapi.h>
#else
#include <dlfcn.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#endif

bench_alloc A;

static const char *alloc_desc = "";
static const char *workload_name = "";

void bench_fail(const char *what) {
  fprintf(stderr, "fastmm_bench: %s: %s (allocator: %s)\n", workload_name, what, alloc_desc);
  fflush(stderr);
  exit(3);
}

uint64_t bench_count(const bench_ctx *c, double base) {
  double n = base * c->scale;
  return n < 1.0 ? 1u : (uint64_t)n;
}

/* ---- Clock and memory ------------------------------------------------------------------ */

#if defined(_WIN32)
static uint64_t now_ns(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER t;
  if (freq.QuadPart == 0)
    QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&t);
  return (uint64_t)((double)t.QuadPart * 1e9 / (double)freq.QuadPart);
}

static int under_wine(void) {
  HMODULE ntdll = GetModuleHandleA("ntdll.dll");
  return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

static const char *mem_kind(void) {
  return under_wine() ? "peak-working-set" : "peak-commit";
}

/* current: the memory now; peak: the most so far (of the kind mem_kind names). */
static void process_memory(uint64_t *current, uint64_t *peak) {
  PROCESS_MEMORY_COUNTERS pmc;
  memset(&pmc, 0, sizeof pmc);
  pmc.cb = sizeof pmc;
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc))
    bench_fail("GetProcessMemoryInfo failed");
  if (under_wine()) {
    *current = pmc.WorkingSetSize;
    *peak = pmc.PeakWorkingSetSize;
  } else {
    *current = pmc.PagefileUsage;
    *peak = pmc.PeakPagefileUsage;
  }
}

static uint64_t affinity_mask(void) {
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask))
    return 0;
  return (uint64_t)process_mask;
}

void *bench_os_alloc(size_t bytes) {
  void *p = VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  if (p == NULL)
    bench_fail("VirtualAlloc failed for the workload's tables");
  memset(p, 0, bytes); /* touched now, so it is part of the base */
  return p;
}

#else /* POSIX */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *mem_kind(void) {
  return "peak-rss";
}

static uint64_t status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  uint64_t kb = 0;
  size_t keylen = strlen(key);
  if (f == NULL)
    bench_fail("cannot read /proc/self/status");
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, key, keylen) == 0 && line[keylen] == ':') {
      kb = strtoull(line + keylen + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return kb;
}

static void process_memory(uint64_t *current, uint64_t *peak) {
  *current = status_kb("VmRSS") * 1024u;
  *peak = status_kb("VmHWM") * 1024u;
}

static uint64_t affinity_mask(void) {
  cpu_set_t set;
  uint64_t mask = 0;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return 0;
  for (int i = 0; i < 64; i++)
    if (CPU_ISSET(i, &set))
      mask |= (uint64_t)1 << i;
  return mask;
}

void *bench_os_alloc(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    bench_fail("mmap failed for the workload's tables");
  memset(p, 0, bytes);
  return p;
}

#endif

/* ---- The timed region -------------------------------------------------------------------- */

void bench_ready(bench_ctx *c) {
  uint64_t peak;
  if (c->ready)
    bench_fail("bench_ready called twice");
  process_memory(&c->base_mem, &peak);
  c->ready = 1;
}

void bench_begin(bench_ctx *c) {
  if (!c->ready || c->begun)
    bench_fail("bench_begin out of order");
  c->begun = 1;
#if defined(BENCH_HAVE_CALLGRIND)
  CALLGRIND_ZERO_STATS;
#endif
  c->t_begin = now_ns();
}

void bench_end(bench_ctx *c) {
  c->t_end = now_ns();
#if defined(BENCH_HAVE_CALLGRIND)
  CALLGRIND_DUMP_STATS_AT("fastmm_bench timed region");
#endif
  if (!c->begun || c->ended)
    bench_fail("bench_end out of order");
  c->ended = 1;
}

/* ---- Loading the allocator --------------------------------------------------------------- */

/* Function pointers out of a library: the table's types are narrower than the symbols' (free
 * may return a status, sizes are intptr_t vs size_t): the same registers either way. */
#define SET_FN(dst, src)                                                                           \
  do {                                                                                             \
    void *tmp_ = (void *)(src);                                                                    \
    memcpy(&(dst), &tmp_, sizeof tmp_);                                                            \
  } while (0)

#if defined(_WIN32)
static void *lib_open(const char *path) {
  HMODULE m = LoadLibraryA(path);
  if (m == NULL) {
    fprintf(stderr, "fastmm_bench: LoadLibrary(%s) failed, error %lu\n", path,
            (unsigned long)GetLastError());
    exit(2);
  }
  return (void *)m;
}
static void *lib_sym(void *lib, const char *name) {
  FARPROC f = GetProcAddress((HMODULE)lib, name);
  void *p;
  memcpy(&p, &f, sizeof p);
  if (p == NULL) {
    fprintf(stderr, "fastmm_bench: %s is not exported by the library\n", name);
    exit(2);
  }
  return p;
}
#else
static void *lib_open(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "fastmm_bench: dlopen(%s) failed: %s\n", path, dlerror());
    exit(2);
  }
  return h;
}
static void *lib_sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "fastmm_bench: %s is not exported by the library\n", name);
    exit(2);
  }
  return p;
}
#endif

#if defined(_WIN32) && !defined(_WIN64)
/* Win32: cdecl malloc-style functions behind the register-convention table. */
static void *(__cdecl *c_malloc)(size_t);
static void(__cdecl *c_free)(void *);
static void *(__cdecl *c_realloc)(void *, size_t);
static void *BENCH_CALL wrap_malloc(intptr_t n) {
  return c_malloc((size_t)n);
}
static void BENCH_CALL wrap_free(void *p) {
  c_free(p);
}
static void *BENCH_CALL wrap_realloc(void *p, intptr_t n) {
  return c_realloc(p, (size_t)n);
}
#endif

#if defined(_WIN32)
static HANDLE process_heap;
static void *BENCH_CALL heap_get(intptr_t n) {
  return HeapAlloc(process_heap, 0, (SIZE_T)n);
}
static void BENCH_CALL heap_free(void *p) {
  HeapFree(process_heap, 0, p);
}
static void *BENCH_CALL heap_realloc(void *p, intptr_t n) {
  return HeapReAlloc(process_heap, 0, p, (SIZE_T)n);
}
#endif

static void load_allocator(const char *kind, const char *lib, const char *sym) {
  if (strcmp(kind, "record") == 0) {
    if (lib == NULL || sym == NULL) {
      fprintf(stderr, "fastmm_bench: --alloc record needs --lib and --sym\n");
      exit(2);
    }
    void *h = lib_open(lib);
    void(FASTMM_CDECL * init)(fastmm_memory_manager_ex *);
    void *f = lib_sym(h, sym);
    fastmm_memory_manager_ex mm;
    memcpy(&init, &f, sizeof f);
    memset(&mm, 0, sizeof mm);
    init(&mm);
    if (mm.get_mem == NULL || mm.free_mem == NULL || mm.realloc_mem == NULL) {
      fprintf(stderr, "fastmm_bench: %s left the record empty\n", sym);
      exit(2);
    }
    SET_FN(A.get, mm.get_mem);
    SET_FN(A.free, mm.free_mem);
    SET_FN(A.realloc, mm.realloc_mem);
  } else if (strcmp(kind, "malloc") == 0) {
    void *fm, *ff, *fr;
    if (lib != NULL && lib[0] != '\0') {
      char name[128];
      const char *prefix = sym != NULL ? sym : "";
      void *h = lib_open(lib);
      snprintf(name, sizeof name, "%smalloc", prefix);
      fm = lib_sym(h, name);
      snprintf(name, sizeof name, "%sfree", prefix);
      ff = lib_sym(h, name);
      snprintf(name, sizeof name, "%srealloc", prefix);
      fr = lib_sym(h, name);
    } else {
      fm = (void *)malloc;
      ff = (void *)free;
      fr = (void *)realloc;
    }
#if defined(_WIN32) && !defined(_WIN64)
    memcpy(&c_malloc, &fm, sizeof fm);
    memcpy(&c_free, &ff, sizeof ff);
    memcpy(&c_realloc, &fr, sizeof fr);
    A.get = wrap_malloc;
    A.free = wrap_free;
    A.realloc = wrap_realloc;
#else
    SET_FN(A.get, fm);
    SET_FN(A.free, ff);
    SET_FN(A.realloc, fr);
#endif
  } else if (strcmp(kind, "heap") == 0) {
#if defined(_WIN32)
    process_heap = GetProcessHeap();
    A.get = heap_get;
    A.free = heap_free;
    A.realloc = heap_realloc;
#else
    fprintf(stderr, "fastmm_bench: --alloc heap exists on Windows only\n");
    exit(2);
#endif
  } else {
    fprintf(stderr, "fastmm_bench: unknown --alloc %s (record, malloc, heap)\n", kind);
    exit(2);
  }
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr, "usage: fastmm_bench --workload NAME|all --alloc record|malloc|heap [--lib PATH]"
                  " [--sym NAME] [--scale F]\n"
                  "       fastmm_bench --list\n");
}

/* JSON strings here are names and paths: escape what JSON needs. */
static void json_string(const char *s) {
  putchar('"');
  for (; *s != '\0'; s++) {
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", (unsigned)(unsigned char)*s);
    else
      putchar(*s);
  }
  putchar('"');
}

static int run_workload(const workload *w, double scale, const char *desc);

int main(int argc, char **argv) {
  const char *wname = NULL, *kind = NULL, *lib = NULL, *sym = NULL;
  double scale = 1.0;
  char desc[1024];

  for (int i = 1; i < argc; i += 2) { /* every option but --list takes a value */
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--list") == 0) {
      for (size_t w = 0; w < bench_workload_count; w++)
        printf("%s\t%d\t%s\n", bench_workloads[w].name, bench_workloads[w].threads,
               bench_workloads[w].description);
      return 0;
    } else if (v != NULL && strcmp(a, "--workload") == 0) {
      wname = v;
    } else if (v != NULL && strcmp(a, "--alloc") == 0) {
      kind = v;
    } else if (v != NULL && strcmp(a, "--lib") == 0) {
      lib = v;
    } else if (v != NULL && strcmp(a, "--sym") == 0) {
      sym = v;
    } else if (v != NULL && strcmp(a, "--scale") == 0) {
      scale = strtod(v, NULL);
    } else {
      usage();
      return 2;
    }
  }
  if (wname == NULL || kind == NULL || !(scale > 0.0)) {
    usage();
    return 2;
  }
  int all = strcmp(wname, "all") == 0;
  const workload *w = NULL;
  for (size_t i = 0; i < bench_workload_count; i++)
    if (strcmp(bench_workloads[i].name, wname) == 0)
      w = &bench_workloads[i];
  if (w == NULL && !all) {
    fprintf(stderr, "fastmm_bench: unknown workload %s (--list lists them)\n", wname);
    return 2;
  }
  snprintf(desc, sizeof desc, "%s%s%s%s%s", kind, lib ? " " : "", lib ? lib : "", sym ? " " : "",
           sym ? sym : "");
  alloc_desc = desc;

  load_allocator(kind, lib, sym);

  if (!all)
    return run_workload(w, scale, desc);
  /* --workload all: every workload in turn in this one process, a smoke test of the workloads
   * and their checks (ctest's bench_smoke); the memory figures of all but the first are not
   * those of a fresh process. */
  for (size_t i = 0; i < bench_workload_count; i++)
    run_workload(&bench_workloads[i], scale, desc);
  return 0;
}

static int run_workload(const workload *w, double scale, const char *desc) {
  workload_name = w->name;
  bench_ctx c;
  memset(&c, 0, sizeof c);
  c.scale = scale;
  w->run(&c);
  if (!c.ended)
    bench_fail("the workload did not end its timed region");
  if (c.live != 0)
    bench_fail("the workload's own count of live bytes did not return to 0");

  uint64_t current, peak;
  process_memory(&current, &peak);
  double seconds = (double)(c.t_end - c.t_begin) / 1e9;
  double ns_per_op = c.ops ? (double)(c.t_end - c.t_begin) / (double)c.ops : 0.0;

  printf("{\"workload\":");
  json_string(w->name);
  printf(",\"alloc\":");
  json_string(desc);
  printf(",\"bits\":%d,\"threads\":%d,\"scale\":%g,\"ops\":%" PRIu64 ",\"seconds\":%.9f"
         ",\"ns_per_op\":%.4f,\"mem_kind\":\"%s\",\"peak_mem\":%" PRIu64 ",\"base_mem\":%" PRIu64
         ",\"end_mem\":%" PRIu64 ",\"peak_live\":%" PRIu64 ",\"affinity\":%" PRIu64
         ",\"check\":%" PRIu64 "}\n",
         (int)(sizeof(void *) * 8), w->threads, scale, c.ops, seconds, ns_per_op, mem_kind(), peak,
         c.base_mem, current, (uint64_t)c.peak_live, affinity_mask(), c.check);
  fflush(stdout);
  return 0;
}
