/* SPDX-License-Identifier: MIT */
/* The OS layer on Windows: VirtualAlloc, TLS slot read from the TEB, DllMain thread detach. */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <string.h>
#include <windows.h>

#include "prim.h"

volatile int prim_fail_maps;
uint32_t prim_tls_slot_offset;
static DWORD tls_index = TLS_OUT_OF_INDEXES;
static prim_thread_exit_fn thread_exit_fn;
/* Delphi's Win64 code expects XMM4 and XMM5 kept across a call into the manager (CMakeLists.txt
 * keeps the compiler off them), but Microsoft's convention lets system code use them: they are
 * saved around every call here that debug mode and its reports make into the system (the stack
 * walk, module lookups, the event log's file, the time, OutputDebugString), and around starting
 * a thread. The normal paths' calls (VirtualAlloc and friends) keep them. */
#if defined(_WIN64) && defined(__GNUC__)
#define SAVE_XMM4_XMM5(area)                                                                       \
  __asm__ volatile("movdqu %%xmm4, (%0)\n\tmovdqu %%xmm5, 16(%0)" : : "r"(area) : "memory")
#define RESTORE_XMM4_XMM5(area)                                                                    \
  __asm__ volatile("movdqu (%0), %%xmm4\n\tmovdqu 16(%0), %%xmm5" : : "r"(area) : "memory")
#else
#define SAVE_XMM4_XMM5(area) ((void)(area))
#define RESTORE_XMM4_XMM5(area) ((void)(area))
#endif
/* The two in one scope: XMM_KEEP() at a function's start, XMM_GIVE_BACK() before its return. */
#define XMM_KEEP()                                                                                 \
  unsigned char xmm_kept_[32];                                                                     \
  SAVE_XMM4_XMM5(xmm_kept_)
#define XMM_GIVE_BACK() RESTORE_XMM4_XMM5(xmm_kept_)

static void (*process_exit_fn)(void);

void prim_on_process_exit(void (*fn)(void)) {
  process_exit_fn = fn;
}

void *prim_map(size_t size, int top_down) {
  if (prim_fail_maps)
    return NULL;
  return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT | (top_down ? MEM_TOP_DOWN : 0),
                      PAGE_READWRITE);
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

void *prim_reserve(size_t size, int top_down) {
  if (prim_fail_maps)
    return NULL;
  return VirtualAlloc(NULL, size, MEM_RESERVE | (top_down ? MEM_TOP_DOWN : 0), PAGE_NOACCESS);
}

/* The end of the reservation that holds `at` (a block grown by prim_reserve_after is several
 * reservations, and VirtualAlloc and VirtualFree work within one), or `end` if it goes on. */
static char *piece_end(char *at, char *end) {
  MEMORY_BASIC_INFORMATION mbi;
  if (VirtualQuery(at, &mbi, sizeof mbi) == 0)
    return end;
  void *base = mbi.AllocationBase;
  char *cur = (char *)mbi.BaseAddress + mbi.RegionSize;
  while (cur < end && VirtualQuery(cur, &mbi, sizeof mbi) != 0 && mbi.AllocationBase == base)
    cur = (char *)mbi.BaseAddress + mbi.RegionSize;
  return cur < end ? cur : end;
}

int prim_commit(void *at, size_t size) {
  if (prim_fail_maps)
    return 0;
  if (VirtualAlloc(at, size, MEM_COMMIT, PAGE_READWRITE) == at)
    return 1;
  char *cur = (char *)at, *end = (char *)at + size;
  while (cur < end) {
    char *stop = piece_end(cur, end);
    if (VirtualAlloc(cur, (size_t)(stop - cur), MEM_COMMIT, PAGE_READWRITE) != cur) {
      if (cur > (char *)at)
        prim_decommit(at, (size_t)(cur - (char *)at));
      return 0;
    }
    cur = stop;
  }
  return 1;
}

void prim_decommit(void *at, size_t size) {
  if (VirtualFree(at, size, MEM_DECOMMIT))
    return;
  char *cur = (char *)at, *end = (char *)at + size;
  while (cur < end) {
    char *stop = piece_end(cur, end);
    VirtualFree(cur, (size_t)(stop - cur), MEM_DECOMMIT);
    cur = stop;
  }
}

size_t prim_reserve_after(void *at, size_t min, size_t want) {
  if (prim_fail_maps)
    return 0;
  /* FastMM5's way: ask how much is free after the block and take up to what is wanted. */
  MEMORY_BASIC_INFORMATION mbi;
  if (VirtualQuery(at, &mbi, sizeof mbi) == 0 || mbi.State != MEM_FREE)
    return 0;
  size_t free_bytes = mbi.RegionSize - (size_t)((char *)at - (char *)mbi.BaseAddress);
  free_bytes &= ~(size_t)(64u * 1024u - 1u); /* reservations come in 64 KB units */
  if (free_bytes < min)
    return 0;
  size_t size = free_bytes < want ? free_bytes : want;
  void *p = VirtualAlloc(at, size, MEM_RESERVE, PAGE_NOACCESS);
  if (p == at)
    return size;
  if (p != NULL)
    VirtualFree(p, 0, MEM_RELEASE);
  return 0; /* another thread took the range meanwhile */
}

int prim_remap(void *base, size_t committed, size_t reserved, void *to, size_t new_committed) {
  (void)base;
  (void)committed;
  (void)reserved;
  (void)to;
  (void)new_committed;
  return 0; /* Windows cannot move pages between address ranges */
}

typedef union thread_fn {
  void (*fn)(void);
  void *arg;
} thread_fn;

/* The manager's own thread holds a reference to this DLL, so a FreeLibrary cannot unload the
 * code it runs; it drops the reference as it ends (FreeLibraryAndExitThread). The thread takes
 * the reference itself: taking it costs the loader lock (Wine's GetModuleHandleEx takes it even
 * to find a module), and the thread that starts this one may hold a heap lock that a thread
 * ending in DllMain, under the loader lock, waits for. The caller waits until the reference is
 * held (prim_start_thread), so the DLL cannot go away first unless that wait ran out. */
static HANDLE thread_started;

static DWORD WINAPI thread_main(LPVOID arg) {
  thread_fn f;
  f.arg = arg;
  HMODULE self = NULL;
  BOOL held = GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                                 (LPCSTR)(void *)thread_main, &self);
  SetEvent(thread_started);
  f.fn();
  if (held)
    FreeLibraryAndExitThread(self, 0);
  return 0;
}

/* prim_start_thread has one caller at a time (release.c starts a thread only while none runs),
 * so one event serves every start. */
#define THREAD_START_WAIT_MS 100u

/* The thread inside this DLL's DllMain, which holds the loader lock there (the loader calls one
 * DllMain at a time, so one variable serves): a thread it starts cannot run before it returns,
 * so waiting for it would only cost THREAD_START_WAIT_MS at every such thread's end. */
static volatile DWORD dllmain_thread; /* an aligned word: read whole */

/* Nothing here waits for the loader lock: callers may hold heap locks (release.h). */
int prim_start_thread(void (*fn)(void)) {
  thread_fn f;
  unsigned char xmm[32];
  f.fn = fn;
  SAVE_XMM4_XMM5(xmm);
  HANDLE t = NULL;
  DWORD saved = GetLastError();
  if (thread_started == NULL)
    thread_started = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (thread_started != NULL) {
    ResetEvent(thread_started);
    t = CreateThread(NULL, 64 * 1024, thread_main, f.arg, STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
  }
  if (t != NULL) {
    /* Returns once the thread runs and holds its reference: a program that exits right after
     * the call that started it (a large block freed just before the end) then exits with a
     * thread asleep, not one still being set up, which crashed Wine's 32-bit loader at exit
     * (about 1 exit in 120). Bounded, because while the loader lock is held (a FreeMem in a
     * DllMain, or a thread ending meanwhile) the thread cannot start until it is released. */
    if (dllmain_thread != GetCurrentThreadId())
      WaitForSingleObject(thread_started, THREAD_START_WAIT_MS);
    CloseHandle(t);
  }
  SetLastError(saved);
  RESTORE_XMM4_XMM5(xmm);
  return t != NULL;
}

void prim_sleep_ms(unsigned ms) {
  Sleep(ms);
}

void prim_on_fork_child(void (*fn)(void)) {
  (void)fn;
}

void prim_on_fork(void (*before)(void), void (*parent)(void), void (*child)(void)) {
  (void)before;
  (void)parent;
  (void)child;
}

void prim_yield(void) {
  SwitchToThread();
}

uint32_t prim_thread_id(void) {
  return (uint32_t)GetCurrentThreadId();
}

/* The barrier of prim_barrier_other_threads: a page of our own is written (so it is present)
 * and made inaccessible, which makes the kernel take its translation from every processor
 * running a thread of the process, by an interrupt (and an interrupt orders the stores and
 * loads around it); then FlushProcessWriteBuffers, Windows' own call for this, where the system
 * has it. Both: Wine 8 has the call as a stub that does nothing, and the page does it there. */
#define PRIM_BARRIER_PAGE 4096u
typedef VOID(WINAPI *flush_writes_fn)(void);
static volatile LONG barrier_kind; /* 0 not set up yet, 2 the page, 3 none */
static void *volatile barrier_page;
static flush_writes_fn flush_writes;

int prim_barrier_ready(void) {
  LONG kind = InterlockedCompareExchange(&barrier_kind, 0, 0);
  if (kind != 0)
    return kind != 3;
  void *page = VirtualAlloc(NULL, PRIM_BARRIER_PAGE, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  if (page != NULL &&
      InterlockedCompareExchangePointer((void *volatile *)&barrier_page, page, NULL) != NULL)
    VirtualFree(page, 0, MEM_RELEASE); /* another thread set one up */
  HMODULE kernel32 = GetModuleHandleW(L"kernel32.dll");
  FARPROC flush = kernel32 != NULL ? GetProcAddress(kernel32, "FlushProcessWriteBuffers") : NULL;
  if (flush != NULL) {
    flush_writes_fn fn;
    memcpy(&fn, &flush, sizeof fn);
    flush_writes = fn;
  }
  kind = barrier_page != NULL ? 2 : 3;
  LONG seen = InterlockedCompareExchange(&barrier_kind, kind, 0);
  return (seen != 0 ? seen : kind) != 3;
}

void prim_barrier_other_threads(void) {
  MemoryBarrier();
  void *page = barrier_page;
  if (page != NULL) {
    DWORD old;
    VirtualProtect(page, PRIM_BARRIER_PAGE, PAGE_READWRITE, &old);
    InterlockedExchange((volatile LONG *)page, 1);
    VirtualProtect(page, PRIM_BARRIER_PAGE, PAGE_NOACCESS, &old);
  }
  if (flush_writes != NULL)
    flush_writes();
  MemoryBarrier();
}

uint64_t prim_time_ns(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER now;
  if (freq.QuadPart == 0)
    QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&now);
  return (uint64_t)((double)now.QuadPart * 1e9 / (double)freq.QuadPart);
}

size_t prim_page_size(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return (size_t)info.dwPageSize;
}

uint32_t prim_tick_count_ms(void) {
  return (uint32_t)GetTickCount();
}

void prim_debug_break(void) {
  DebugBreak();
}

static HMODULE module_of(const void *addr);

size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip) {
  XMM_KEEP();
  /* RtlCaptureStackBackTrace takes at most 62 frames a call (older Windows: skip + count < 63);
   * deeper traces take a second call that skips what the first took. */
  size_t n = 0;
  while (n < max_frames) {
    size_t want = max_frames - n > 62 ? 62 : max_frames - n;
    size_t got = RtlCaptureStackBackTrace((DWORD)(skip + 1 + n), (DWORD)want, frames + n, NULL);
    n += got;
    if (got < want)
      break;
  }
  uintptr_t begin, end;
  /* The walk can run past the bottom of the stack (seen under Wine on Win64): keep frames up
   * to the first one that is in no module. */
  size_t kept = 0;
  while (kept < n && prim_module_range(frames[kept], &begin, &end))
    kept++;
  XMM_GIVE_BACK();
  return kept;
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

static HMODULE module_of(const void *addr) {
  HMODULE m = NULL;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)addr, &m))
    return NULL;
  return m;
}

static size_t format_hex(char *buf, size_t size, uintptr_t v) {
  char tmp[2 + 2 * sizeof(uintptr_t) + 1];
  size_t n = 0;
  tmp[n++] = '0';
  tmp[n++] = 'x';
  int started = 0;
  for (int shift = (int)(sizeof(uintptr_t) * 8) - 4; shift >= 0; shift -= 4) {
    unsigned d = (unsigned)(v >> shift) & 15u;
    if (d || started || shift == 0) {
      tmp[n++] = "0123456789abcdef"[d];
      started = 1;
    }
  }
  size_t i;
  for (i = 0; i < n && i + 1 < size; i++)
    buf[i] = tmp[i];
  if (size)
    buf[i] = 0;
  return i;
}

static size_t describe_address(const void *addr, char *buf, size_t size) {
  HMODULE m = module_of(addr);
  size_t n = 0;
  if (m != NULL && size > 1) {
    char path[MAX_PATH];
    DWORD len = GetModuleFileNameA(m, path, sizeof path);
    const char *name = path;
    for (DWORD i = 0; i < len; i++)
      if (path[i] == '\\' || path[i] == '/')
        name = path + i + 1;
    while (*name && n + 1 < size)
      buf[n++] = *name++;
    if (n + 1 < size)
      buf[n++] = '+';
    return n + format_hex(buf + n, size - n, (uintptr_t)addr - (uintptr_t)m);
  }
  return format_hex(buf, size, (uintptr_t)addr);
}

size_t prim_describe_address(const void *addr, char *buf, size_t size) {
  XMM_KEEP();
  size_t n = describe_address(addr, buf, size);
  XMM_GIVE_BACK();
  return n;
}

/* Ranges of modules already looked up: GetModuleHandleEx takes the loader lock, far too slow
 * for debug mode, which asks for every frame of every allocation's trace. A module unloaded
 * since stays listed; a stale range only lets a trace keep an address, which is all the
 * ranges are used for. */
#define MODULE_CACHE_SIZE 32
static struct { uintptr_t begin, end; } module_cache[MODULE_CACHE_SIZE];
static LONG module_cache_count;
static SRWLOCK module_cache_lock = SRWLOCK_INIT;

static int module_range(const void *addr, uintptr_t *begin, uintptr_t *end) {
  uintptr_t a = (uintptr_t)addr;
  int found = 0;
  AcquireSRWLockShared(&module_cache_lock);
  for (LONG i = 0; i < module_cache_count && !found; i++)
    if (a >= module_cache[i].begin && a < module_cache[i].end) {
      *begin = module_cache[i].begin;
      *end = module_cache[i].end;
      found = 1;
    }
  ReleaseSRWLockShared(&module_cache_lock);
  if (found)
    return 1;
  HMODULE m = module_of(addr);
  if (m == NULL)
    return 0;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)m;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)((const char *)m + dos->e_lfanew);
  *begin = (uintptr_t)m;
  *end = *begin + nt->OptionalHeader.SizeOfImage;
  if (a < *begin || a >= *end)
    return 0; /* Wine answers the program's module for address 0 */
  AcquireSRWLockExclusive(&module_cache_lock);
  if (module_cache_count < MODULE_CACHE_SIZE) {
    module_cache[module_cache_count].begin = *begin;
    module_cache[module_cache_count].end = *end;
    module_cache_count++;
  }
  ReleaseSRWLockExclusive(&module_cache_lock);
  return 1;
}

int prim_module_range(const void *addr, uintptr_t *begin, uintptr_t *end) {
  XMM_KEEP();
  int found = module_range(addr, begin, end);
  XMM_GIVE_BACK();
  return found;
}

int prim_readable(const void *p, size_t size) {
  XMM_KEEP();
  const char *cur = (const char *)p, *end = (const char *)p + size;
  int readable = end >= cur;
  while (readable && cur < end) {
    MEMORY_BASIC_INFORMATION mbi;
    if (VirtualQuery(cur, &mbi, sizeof mbi) == 0 || mbi.State != MEM_COMMIT ||
        (mbi.Protect & (PAGE_NOACCESS | PAGE_GUARD)) != 0 || mbi.Protect == 0)
      readable = 0;
    else
      cur = (const char *)mbi.BaseAddress + mbi.RegionSize;
  }
  XMM_GIVE_BACK();
  return readable;
}

size_t prim_program_path(char *buf, size_t size) {
  XMM_KEEP();
  DWORD n = GetModuleFileNameA(NULL, buf, (DWORD)size);
  XMM_GIVE_BACK();
  return n < size ? n : 0;
}

size_t prim_getenv(const char *name, char *buf, size_t size) {
  DWORD saved = GetLastError();
  DWORD n = GetEnvironmentVariableA(name, buf, (DWORD)size);
  SetLastError(saved);
  return n < size ? n : 0;
}

static int append_file(const char *path, const char *text, size_t length) {
  HANDLE f = CreateFileA(path, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
  if (f == INVALID_HANDLE_VALUE)
    return 0;
  DWORD written = 0;
  BOOL ok = WriteFile(f, text, (DWORD)length, &written, NULL);
  CloseHandle(f);
  return ok && written == length;
}

int prim_append_file(const char *path, const char *text, size_t length) {
  XMM_KEEP();
  int ok = append_file(path, text, length);
  XMM_GIVE_BACK();
  return ok;
}

static int write_file(const char *path, const char *text, size_t length) {
  HANDLE f = CreateFileA(path, GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, NULL);
  if (f == INVALID_HANDLE_VALUE)
    return 0;
  DWORD written = 0;
  BOOL ok = length == 0 || WriteFile(f, text, (DWORD)length, &written, NULL);
  CloseHandle(f);
  return ok && written == length;
}

int prim_write_file(const char *path, const char *text, size_t length) {
  XMM_KEEP();
  int ok = write_file(path, text, length);
  XMM_GIVE_BACK();
  return ok;
}

void prim_debug_output(const char *text) {
  XMM_KEEP();
  OutputDebugStringA(text);
  XMM_GIVE_BACK();
}

void prim_raise_fatal(void) {
  RaiseException(0xE0464D43u /* "FMC" */, EXCEPTION_NONCONTINUABLE, 0, NULL);
}

void prim_local_time(char *buf, size_t size) {
  SYSTEMTIME t;
  XMM_KEEP();
  GetLocalTime(&t);
  XMM_GIVE_BACK();
  char tmp[20];
  unsigned v[6] = {t.wYear, t.wMonth, t.wDay, t.wHour, t.wMinute, t.wSecond};
  const char *sep = "// ::";
  size_t n = 0;
  for (int i = 0; i < 6; i++) {
    unsigned digits = i == 0 ? 4 : 2, x = v[i];
    for (unsigned d = digits; d-- > 0;) {
      tmp[n + d] = (char)('0' + x % 10);
      x /= 10;
    }
    n += digits;
    if (i < 5)
      tmp[n++] = sep[i];
  }
  tmp[n] = 0;
  for (n = 0; tmp[n] && n + 1 < size; n++)
    buf[n] = tmp[n];
  if (size)
    buf[n] = 0;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved);
BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reserved;
  if (reason == DLL_THREAD_DETACH && tls_index != TLS_OUT_OF_INDEXES && thread_exit_fn) {
    void *v = prim_tls_get_slow();
    if (v != NULL) {
      dllmain_thread = GetCurrentThreadId();
      thread_exit_fn(v);
      dllmain_thread = 0;
      TlsSetValue(tls_index, NULL);
    }
  }
  /* DLL_PROCESS_ATTACH: nothing; the manager initialises itself on first use, which may come
   * from another DLL's DllMain before ours ran. At DLL_PROCESS_DETACH memory is left alone
   * (other modules may still free blocks while the process ends), but debug mode writes its
   * leak report. */
  if (reason == DLL_PROCESS_DETACH && process_exit_fn)
    process_exit_fn();
  return TRUE;
}
#endif
