/* The OS layer on Windows: VirtualAlloc, TLS slot read from the TEB, DllMain thread detach. */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "prim.h"

volatile int prim_fail_maps;
uint32_t prim_tls_slot_offset;
static DWORD tls_index = TLS_OUT_OF_INDEXES;
static prim_thread_exit_fn thread_exit_fn;

void *prim_map(size_t size) {
  if (prim_fail_maps)
    return NULL;
  return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

int prim_extend(void *at, size_t size) {
  if (prim_fail_maps)
    return 0;
  /* VirtualAlloc at an address fails unless the whole range is free. */
  void *p = VirtualAlloc(at, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  if (p == at)
    return 1;
  if (p != NULL)
    VirtualFree(p, 0, MEM_RELEASE);
  return 0;
}

void prim_unmap(void *p, size_t size) {
  /* A range grown by prim_extend is several reservations; each must be released by itself. */
  char *cur = (char *)p, *end = (char *)p + size;
  while (cur < end) {
    MEMORY_BASIC_INFORMATION mbi;
    if (VirtualQuery(cur, &mbi, sizeof mbi) == 0 || mbi.AllocationBase != cur)
      return;
    char *next = cur + mbi.RegionSize;
    /* A reservation fully committed is one region; walk the regions of this reservation. */
    while (next < end) {
      MEMORY_BASIC_INFORMATION more;
      if (VirtualQuery(next, &more, sizeof more) == 0 || more.AllocationBase != cur)
        break;
      next += more.RegionSize;
    }
    VirtualFree(cur, 0, MEM_RELEASE);
    cur = next;
  }
}

void prim_yield(void) {
  SwitchToThread();
}

uint32_t prim_thread_id(void) {
  return (uint32_t)GetCurrentThreadId();
}

uint64_t prim_time_ns(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER now;
  if (freq.QuadPart == 0)
    QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&now);
  return (uint64_t)((double)now.QuadPart * 1e9 / (double)freq.QuadPart);
}

size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip) {
  if (max_frames > 62)
    max_frames = 62; /* the limit of RtlCaptureStackBackTrace on older Windows */
  return RtlCaptureStackBackTrace((DWORD)(skip + 1), (DWORD)max_frames, frames, NULL);
}

void prim_init(prim_thread_exit_fn on_thread_exit) {
  if (tls_index != TLS_OUT_OF_INDEXES)
    return;
  thread_exit_fn = on_thread_exit;
  tls_index = TlsAlloc();
  /* The first 64 slots live in the TEB itself (TlsSlots); later ones need TlsGetValue. */
  if (tls_index < 64) {
#if defined(_WIN64)
    prim_tls_slot_offset = 0x1480u + tls_index * 8u;
#else
    prim_tls_slot_offset = 0xE10u + tls_index * 4u;
#endif
  }
}

void *prim_tls_get_slow(void) {
  if (tls_index == TLS_OUT_OF_INDEXES)
    return NULL;
  DWORD saved = GetLastError();
  void *v = TlsGetValue(tls_index);
  SetLastError(saved);
  return v;
}

void prim_tls_set(void *value) {
  if (tls_index != TLS_OUT_OF_INDEXES)
    TlsSetValue(tls_index, value);
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved);
BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reserved;
  if (reason == DLL_THREAD_DETACH && tls_index != TLS_OUT_OF_INDEXES && thread_exit_fn) {
    void *v = prim_tls_get_slow();
    if (v != NULL) {
      thread_exit_fn(v);
      TlsSetValue(tls_index, NULL);
    }
  }
  /* DLL_PROCESS_ATTACH: nothing; the manager initialises itself on first use, which may come
   * from another DLL's DllMain before ours ran. At DLL_PROCESS_DETACH memory is left alone:
   * other modules may still free blocks while the process ends. */
  return TRUE;
}
#endif
