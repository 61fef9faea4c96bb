/* SPDX-License-Identifier: MIT */
/* A tiny test kit for fastmm-c: checks that count failures, a portable thread and mutex, and a
 * deterministic random generator (common/rng.h). Plain C11. Include it before any system header (it
 * sets up MinGW's stdio); the tests include test_blocks.h, which includes it first.
 *
 *   CHECK(cond)            counts a check; on failure prints file:line and the expression
 *   CHECK_EQ(a, b)         the same, printing both values (as unsigned long long)
 *   CHECK_MSG(cond, ...)   the same, with a printf-style explanation on failure
 *   return tu_finish("test_small");   prints "test_small: N checks, F failed", returns 0 or 1
 *
 * A failing check does not stop the test: everything after it still runs, so one run reports
 * every fault. A test that could corrupt memory after a failed check should return early. */
#ifndef FASTMM_TEST_UTIL_H
#define FASTMM_TEST_UTIL_H

#if defined(_WIN32) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1 /* %zu and %llu in printf on every MinGW runtime */
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#ifndef PSAPI_VERSION
#define PSAPI_VERSION 2 /* GetProcessMemoryInfo is kernel32's K32GetProcessMemoryInfo */
#endif
/* after windows.h, which it needs */
#include <psapi.h>
#else
#include <pthread.h>
#include <sched.h>
#endif

/* Standard output line by line, also into a pipe (ctest's): a test that crashes then leaves
 * every line it printed before the crash, which tells how far it got. Windows' C runtime buffers
 * a stream it is told to buffer by line as fully as any other, so there it is unbuffered. */
#if defined(__GNUC__)
__attribute__((constructor, unused)) static void tu_line_buffered_stdout(void) {
#if defined(_WIN32)
  setvbuf(stdout, NULL, _IONBF, 0);
#else
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
#endif
}
#endif

/* ---- Checks ------------------------------------------------------------------------------ */

typedef struct tu_counters {
  unsigned long long checks;
  unsigned long long failed;
} tu_counters;

static inline tu_counters *tu_state(void) {
  static tu_counters state;
  return &state;
}

/* At most this many failure lines are printed; the count goes on. A loop over thousands of
 * sizes that fails everywhere should not bury the first, most useful line. */
#define TU_MAX_PRINTED_FAILURES 200u

static inline int tu_check(int ok, const char *file, int line, const char *expr) {
  tu_counters *s = tu_state();
  s->checks++;
  if (!ok) {
    s->failed++;
    if (s->failed <= TU_MAX_PRINTED_FAILURES) {
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
      fflush(stderr);
    }
  }
  return ok;
}

static inline int tu_check_eq(unsigned long long a, unsigned long long b, const char *file,
                              int line, const char *ea, const char *eb) {
  tu_counters *s = tu_state();
  s->checks++;
  if (a != b) {
    s->failed++;
    if (s->failed <= TU_MAX_PRINTED_FAILURES) {
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu, 0x%llx != 0x%llx)\n", file,
              line, ea, eb, a, b, a, b);
      fflush(stderr);
    }
    return 0;
  }
  return 1;
}

#if defined(__MINGW_PRINTF_FORMAT)
__attribute__((format(__MINGW_PRINTF_FORMAT, 5, 6))) /* gnu_printf with the ANSI stdio */
#elif defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static inline int
tu_check_msg(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
  tu_counters *s = tu_state();
  s->checks++;
  if (!ok) {
    s->failed++;
    if (s->failed <= TU_MAX_PRINTED_FAILURES) {
      va_list ap;
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", file, line, expr);
      va_start(ap, fmt);
      vfprintf(stderr, fmt, ap);
      va_end(ap);
      fputc('\n', stderr);
      fflush(stderr);
    }
  }
  return ok;
}

#define CHECK(cond) tu_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_EQ(a, b)                                                                             \
  tu_check_eq((unsigned long long)(a), (unsigned long long)(b), __FILE__, __LINE__, #a, #b)
#define CHECK_MSG(cond, ...) tu_check_msg(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Adds checks counted elsewhere (by threads, which must not share the counters above). */
static inline void tu_add_counts(unsigned long long checks, unsigned long long failed) {
  tu_state()->checks += checks;
  tu_state()->failed += failed;
}

/* ---- Checks on other threads --------------------------------------------------------------
 * The counters above are the main thread's. A thread counts its own checks in a
 * tu_thread_checks, and the main thread adds them with tu_add_counts once it has joined it.
 *
 *   THREAD_CHECK(&c, cond, fmt, ...)   counts a check of thread c->thread; on failure prints
 *                                      file:line, the thread, the expression and the message
 *
 * Each failure is printed with one fprintf, so the lines of two threads do not mix; a thread
 * prints its first TU_MAX_THREAD_FAILURES. */
typedef struct tu_thread_checks {
  int thread; /* a number the failures print */
  unsigned long long checks;
  unsigned long long failed;
} tu_thread_checks;

#define TU_MAX_THREAD_FAILURES 20u

#if defined(__MINGW_PRINTF_FORMAT)
__attribute__((format(__MINGW_PRINTF_FORMAT, 6, 7)))
#elif defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static inline int
tu_thread_check(tu_thread_checks *c, int ok, const char *file, int line, const char *expr,
                const char *fmt, ...) {
  c->checks++;
  if (!ok) {
    c->failed++;
    if (c->failed <= TU_MAX_THREAD_FAILURES) {
      char message[512];
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(message, sizeof message, fmt, ap);
      va_end(ap);
      fprintf(stderr, "%s:%d: thread %d: CHECK failed: %s: %s\n", file, line, c->thread, expr,
              message);
      fflush(stderr);
    }
  }
  return ok;
}

#define THREAD_CHECK(c, cond, ...)                                                                 \
  tu_thread_check((c), !!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

static inline unsigned long long tu_failures(void) {
  return tu_state()->failed;
}

static inline int tu_finish(const char *name) {
  tu_counters *s = tu_state();
  printf("%s: %llu checks, %llu failed\n", name, s->checks, s->failed);
  fflush(stdout);
  return s->failed ? 1 : 0;
}

/* ---- Byte patterns ------------------------------------------------------------------------
 * A pattern that depends on a seed and on each byte's offset, so two blocks with different seeds
 * differ everywhere and a shifted copy is caught. tu_check_pattern returns the offset of the first
 * wrong byte, or (size_t)-1 when all are right. */

static inline unsigned char tu_pattern_byte(uint32_t seed, size_t i) {
  uint32_t x = seed * 0x9E3779B1u + (uint32_t)i * 0x85EBCA6Bu + (uint32_t)(i >> 16) * 0xC2B2AE35u;
  x ^= x >> 15;
  return (unsigned char)(x ^ (x >> 8));
}

static inline void tu_fill_pattern(void *p, size_t n, uint32_t seed) {
  unsigned char *b = (unsigned char *)p;
  size_t i;
  for (i = 0; i < n; i++)
    b[i] = tu_pattern_byte(seed, i);
}

static inline size_t tu_check_pattern(const void *p, size_t n, uint32_t seed) {
  const unsigned char *b = (const unsigned char *)p;
  size_t i;
  for (i = 0; i < n; i++)
    if (b[i] != tu_pattern_byte(seed, i))
      return i;
  return (size_t)-1;
}

/* 1 if all n bytes are zero. */
static inline int tu_all_zero(const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  size_t i;
  for (i = 0; i < n; i++)
    if (b[i])
      return 0;
  return 1;
}

/* ---- Threads and a mutex ------------------------------------------------------------------ */

/* Built with ThreadSanitizer? (GCC says so with a macro, Clang through __has_feature.) */
#if defined(__SANITIZE_THREAD__)
#define TU_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TU_UNDER_TSAN 1
#endif
#endif

/* Milliseconds of a monotonic clock, for tests that run for a while (never for a verdict).
 * POSIX builds need clock_gettime: such a test defines _POSIX_C_SOURCE before any include. */
#if defined(_WIN32) || (defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L)
#if !defined(_WIN32)
#include <time.h>
#endif
static inline uint64_t tu_now_ms(void) {
#if defined(_WIN32)
  return (uint64_t)GetTickCount64();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
#endif
}
#endif

#if defined(__linux__)
/* A "Name: N kB" field of /proc/self/status (VmRSS, VmSize, ...) in bytes, or 0 when unknown. */
static inline size_t tu_proc_status_bytes(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t name_len = strlen(field), kb = 0;
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, name_len) == 0 && line[name_len] == ':' &&
        sscanf(line + name_len + 1, "%zu", &kb) == 1)
      break;
  fclose(f);
  return kb * 1024u;
}
#endif

/* Built with AddressSanitizer? (GCC says so with a macro, Clang through __has_feature.) */
#if defined(__SANITIZE_ADDRESS__)
#define TU_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_UNDER_ASAN 1
#endif
#endif

#if defined(__linux__) && defined(TU_UNDER_ASAN)
#include <sanitizer/asan_interface.h>
/* The resident bytes of every mapping of the process except AddressSanitizer's shadow, from
 * /proc/self/smaps; 0 when unknown. Every store the instrumented test makes into a block reads
 * that block's shadow bytes, and on some kernels (seen on 6.18) the read leaves a private page
 * behind in the shadow, an eighth of every range written, which stays resident after the range
 * is unmapped: the sanitizer's memory, not the manager's. The shadow is the one range
 * [offset, offset + user address space >> scale) that __asan_get_shadow_mapping gives. */
static inline size_t tu_rss_outside_asan_shadow(void) {
  size_t scale = 0, offset = 0, kb, total_kb = 0;
  uintptr_t shadow_lo, shadow_hi;
  char line[512];
  int in_shadow = 0;
  FILE *f;
#if defined(__x86_64__)
  const unsigned user_bits = 47;
#else
  const unsigned user_bits = 48;
#endif
  __asan_get_shadow_mapping(&scale, &offset);
  shadow_lo = (uintptr_t)offset;
  shadow_hi = (uintptr_t)offset + ((uintptr_t)1 << (user_bits - scale));
  f = fopen("/proc/self/smaps", "r");
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    /* A mapping's first line, "lo-hi perms ...", then its fields, "Name: value" (no field's
     * name reads as two hex numbers joined by '-'). */
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
      in_shadow = (uintptr_t)lo >= shadow_lo && (uintptr_t)hi <= shadow_hi;
    else if (strncmp(line, "Rss:", 4) == 0 && sscanf(line + 4, "%zu", &kb) == 1 && !in_shadow) {
      total_kb += kb;
    }
  }
  fclose(f);
  return total_kb * 1024u;
}
#endif

#if defined(_WIN32) || defined(__linux__)
/* The process's committed memory in bytes, 0 when unknown: Windows' PrivateUsage (Wine 8 may
 * leave it 0: then PagefileUsage), Linux's VmRSS, and under AddressSanitizer on Linux the
 * resident bytes of every mapping but the sanitizer's shadow (tu_rss_outside_asan_shadow): the
 * manager's own ranges are still counted, so memory it keeps still shows. tu_committed_name
 * says which. */
static inline size_t tu_committed_bytes(void) {
#if defined(_WIN32)
  PROCESS_MEMORY_COUNTERS_EX pmc;
  memset(&pmc, 0, sizeof pmc);
  if (!GetProcessMemoryInfo(GetCurrentProcess(), (PROCESS_MEMORY_COUNTERS *)&pmc, sizeof pmc))
    return 0;
  return pmc.PrivateUsage ? pmc.PrivateUsage : pmc.PagefileUsage;
#elif defined(TU_UNDER_ASAN)
  return tu_rss_outside_asan_shadow();
#else
  return tu_proc_status_bytes("VmRSS");
#endif
}

static inline const char *tu_committed_name(void) {
#if defined(_WIN32)
  return "PrivateUsage";
#elif defined(TU_UNDER_ASAN)
  return "RSS outside ASan's shadow";
#else
  return "VmRSS";
#endif
}
#endif

/* Writes every 4 KB page of a block (so it is committed and resident) and marks both ends with
 * bytes derived from i. */
static inline void tu_touch_pages(unsigned char *p, size_t size, size_t i) {
  size_t off;
  for (off = 0; off < size; off += 4096u)
    p[off] = (unsigned char)(i + off / 4096u);
  p[size - 1] = (unsigned char)(i * 3);
}

/* A flag one thread raises and others poll (an atomic int where the compiler has them, so
 * ThreadSanitizer sees no race in the test itself). */
typedef struct tu_flag {
  volatile int value;
} tu_flag;
static inline void tu_flag_raise(tu_flag *f) {
#if defined(__GNUC__)
  __atomic_store_n(&f->value, 1, __ATOMIC_RELEASE);
#else
  f->value = 1;
#endif
}
static inline int tu_flag_raised(tu_flag *f) {
#if defined(__GNUC__)
  return __atomic_load_n(&f->value, __ATOMIC_ACQUIRE);
#else
  return f->value;
#endif
}

/* A count one thread advances and another reads while it runs (atomic where the compiler has
 * them, as tu_flag). */
typedef struct tu_counter {
  volatile unsigned long long value;
} tu_counter;
static inline void tu_counter_add(tu_counter *c, unsigned long long n) {
#if defined(__GNUC__)
  __atomic_fetch_add(&c->value, n, __ATOMIC_RELAXED);
#else
  c->value += n;
#endif
}
static inline unsigned long long tu_counter_get(tu_counter *c) {
#if defined(__GNUC__)
  return __atomic_load_n(&c->value, __ATOMIC_RELAXED);
#else
  return c->value;
#endif
}

typedef void (*tu_thread_fn)(void *arg);

typedef struct tu_thread {
  tu_thread_fn fn;
  void *arg;
#if defined(_WIN32)
  HANDLE handle;
#else
  pthread_t handle;
#endif
} tu_thread;

#if defined(_WIN32)
static inline DWORD WINAPI tu_thread_trampoline(LPVOID param) {
  tu_thread *t = (tu_thread *)param;
  t->fn(t->arg);
  return 0;
}
#else
static inline void *tu_thread_trampoline(void *param) {
  tu_thread *t = (tu_thread *)param;
  t->fn(t->arg);
  return NULL;
}
#endif

/* Starts fn(arg) on a new thread; t must stay valid until tu_thread_join. Returns 1 on success. */
static inline int tu_thread_start(tu_thread *t, tu_thread_fn fn, void *arg) {
  t->fn = fn;
  t->arg = arg;
#if defined(_WIN32)
  t->handle = CreateThread(NULL, 0, tu_thread_trampoline, t, 0, NULL);
  return t->handle != NULL;
#else
  return pthread_create(&t->handle, NULL, tu_thread_trampoline, t) == 0;
#endif
}

static inline void tu_thread_join(tu_thread *t) {
#if defined(_WIN32)
  WaitForSingleObject(t->handle, INFINITE);
  CloseHandle(t->handle);
#else
  pthread_join(t->handle, NULL);
#endif
}

static inline void tu_yield(void) {
#if defined(_WIN32)
  SwitchToThread();
#else
  sched_yield();
#endif
}

typedef struct tu_mutex {
#if defined(_WIN32)
  CRITICAL_SECTION cs;
#else
  pthread_mutex_t m;
#endif
} tu_mutex;

static inline void tu_mutex_init(tu_mutex *m) {
#if defined(_WIN32)
  InitializeCriticalSection(&m->cs);
#else
  pthread_mutex_init(&m->m, NULL);
#endif
}

static inline void tu_mutex_destroy(tu_mutex *m) {
#if defined(_WIN32)
  DeleteCriticalSection(&m->cs);
#else
  pthread_mutex_destroy(&m->m);
#endif
}

static inline void tu_mutex_lock(tu_mutex *m) {
#if defined(_WIN32)
  EnterCriticalSection(&m->cs);
#else
  pthread_mutex_lock(&m->m);
#endif
}

static inline void tu_mutex_unlock(tu_mutex *m) {
#if defined(_WIN32)
  LeaveCriticalSection(&m->cs);
#else
  pthread_mutex_unlock(&m->m);
#endif
}

/* ---- Small helpers ------------------------------------------------------------------------ */

static inline int tu_is_aligned(const void *p, size_t a) {
  return ((uintptr_t)p & (a - 1)) == 0;
}

/* Which build this is, for the first line of a test's output. */
static inline const char *tu_build_name(void) {
#if defined(_WIN64)
  return "Win64";
#elif defined(_WIN32)
  return "Win32";
#else
  return "native";
#endif
}

#endif
