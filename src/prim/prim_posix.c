/* The OS layer on POSIX (Linux): mmap, compiler TLS with a pthread key for thread exit. */
#if !defined(_WIN32)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "prim.h"

volatile int prim_fail_maps;
__thread void *prim_tls_value __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static prim_thread_exit_fn thread_exit_fn;

/* Mappings are 64 KB aligned, as VirtualAlloc's are, so the page map (page_map.h) is exact:
 * map 64 KB more than asked and trim both ends. */
#define MAP_ALIGNMENT ((size_t)64 * 1024)

void *prim_map(size_t size) {
  if (prim_fail_maps)
    return NULL;
  size_t padded = size + MAP_ALIGNMENT;
  if (padded < size)
    return NULL;
  char *p = (char *)mmap(NULL, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == (char *)MAP_FAILED)
    return NULL;
  char *aligned = (char *)(((uintptr_t)p + MAP_ALIGNMENT - 1) & ~(uintptr_t)(MAP_ALIGNMENT - 1));
  if (aligned > p)
    munmap(p, (size_t)(aligned - p));
  size_t tail = (size_t)((p + padded) - (aligned + size));
  if (tail > 0)
    munmap(aligned + size, tail);
  return aligned;
}

int prim_extend(void *at, size_t size) {
  if (prim_fail_maps)
    return 0;
#ifdef MAP_FIXED_NOREPLACE
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
#else
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#endif
  void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == at)
    return 1;
  if (p != MAP_FAILED)
    munmap(p, size); /* placed elsewhere: the range after the block was taken */
  return 0;
}

void prim_unmap(void *p, size_t size) {
  munmap(p, size);
}

void prim_yield(void) {
  sched_yield();
}

uint32_t prim_thread_id(void) {
#if defined(__linux__)
  return (uint32_t)syscall(SYS_gettid);
#else
  return (uint32_t)(uintptr_t)pthread_self();
#endif
}

uint64_t prim_time_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip) {
#if defined(__GLIBC__)
  void *all[128];
  size_t want = max_frames + skip + 1;
  if (want > 128)
    want = 128;
  int n = backtrace(all, (int)want);
  size_t got = 0;
  for (int i = (int)skip + 1; i < n && got < max_frames; i++)
    frames[got++] = all[i];
  return got;
#else
  (void)frames;
  (void)max_frames;
  (void)skip;
  return 0;
#endif
}

static void on_key_destroyed(void *value) {
  if (value != NULL && thread_exit_fn != NULL) {
    thread_exit_fn(value);
    prim_tls_value = NULL;
  }
}

static void make_exit_key(void) {
  pthread_key_create(&exit_key, on_key_destroyed);
}

void prim_init(prim_thread_exit_fn on_thread_exit) {
  thread_exit_fn = on_thread_exit;
  pthread_once(&exit_key_once, make_exit_key);
}

void prim_tls_set(void *value) {
  prim_tls_value = value;
  pthread_setspecific(exit_key, value);
}
#endif
