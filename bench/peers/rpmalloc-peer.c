/* SPDX-License-Identifier: MIT */
/* Built beside rpmalloc's rpmalloc.c by bench/peers/build.sh (bench/peers/README.md says why).
 * rpmalloc wants rpmalloc_initialize() once and rpmalloc_thread_initialize() in every thread
 * before that thread's first call, and rpmalloc_thread_finalize() when a thread ends: its
 * rpmalloc(), rpfree() and rprealloc() do neither (rpmalloc() of a thread without a heap
 * crashes). The benchmark's workloads start threads of their own, so the library is told here.
 *
 * Windows: the DLL's DllMain. The loader calls it in the thread that loads the DLL
 * (DLL_PROCESS_ATTACH) and in every thread that starts while the DLL is loaded
 * (DLL_THREAD_ATTACH), so rpmalloc's own rpmalloc, rpfree and rprealloc are exported as they
 * are, with nothing in front of them (prefix rp). A thread that was already running when the
 * DLL was loaded is not set up; fastmm_bench loads its allocator before it starts any. Thread
 * ends are rpmalloc's own business in this build: its static Windows build finalises a thread
 * from an FlsAlloc callback (checked under Wine: a thread started after another one ended gets
 * the ended thread's heap). DLL_THREAD_DETACH does not finalise the thread a second time: with
 * that call, mt_churn crashed or hung under Wine (Win64). Our reading, not proven: the heap
 * pointer is emulated TLS under MinGW, whose block the CRT frees at thread detach, and the
 * second call read the freed block and released the same heap twice.
 *
 * Linux: there is no such call for a library that dlopen loads, so the exports rpw_malloc and
 * rpw_realloc set the calling thread up on its first call (a thread-local flag, one load and a
 * branch per call), a pthread key's destructor finalises it when it ends, and rpw_free is
 * rpfree. */
#include <stddef.h>

#include "rpmalloc.h"

#ifdef _WIN32
#include <windows.h>

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reserved;
  if (reason == DLL_PROCESS_ATTACH)
    return rpmalloc_initialize() == 0; /* also gives the loading thread its heap */
  if (reason == DLL_THREAD_ATTACH)
    rpmalloc_thread_initialize();
  return TRUE;
}

#else
#include <pthread.h>

static pthread_key_t thread_end_key;
static __thread int thread_ready __attribute__((tls_model("initial-exec")));

static void thread_end(void *value) {
  (void)value;
  rpmalloc_thread_finalize(1);
}

__attribute__((constructor)) static void peer_init(void) {
  rpmalloc_initialize();
  pthread_key_create(&thread_end_key, thread_end);
}

static void thread_start(void) {
  rpmalloc_thread_initialize();
  /* Any non-NULL value: the key's destructor runs only for threads that set one. */
  pthread_setspecific(thread_end_key, &thread_end_key);
  thread_ready = 1;
}

void *rpw_malloc(size_t size) {
  if (__builtin_expect(!thread_ready, 0))
    thread_start();
  return rpmalloc(size);
}

/* Freeing needs no heap of the calling thread's: rpfree gives a block another thread owns back
 * to that thread's heap. */
void rpw_free(void *ptr) {
  rpfree(ptr);
}

void *rpw_realloc(void *ptr, size_t size) {
  if (__builtin_expect(!thread_ready, 0))
    thread_start();
  return rprealloc(ptr, size);
}
#endif
