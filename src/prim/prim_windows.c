/* SPDX-License-Identifier: MIT */
/* The OS layer on Windows: VirtualAlloc, TLS slot read from the TEB, DllMain thread detach. */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <stddef.h>
#include <string.h>
#include <windows.h>

#include "prim.h"

volatile int prim_fail_maps;
uint32_t prim_tls_slot_offset;
static DWORD tls_index = TLS_OUT_OF_INDEXES;
static prim_thread_exit_fn thread_exit_fn;
/* Delphi's Win64 code expects XMM4 and XMM5 kept across a call into the manager (CMakeLists.txt
 * keeps the compiler off them), but Microsoft's convention lets system code use them: they are
 * saved around every call here into the system. Which calls change them depends on the system
 * and the CPU: earlier machines showed it under Wine only for the stack walk, module lookups,
 * the event log's file and the time; an AMD Zen 3 for debug mode's other calls too
 * (test_win64_xmm). Each public function that calls the system is its body (name_os) between
 * XMM_KEEP and XMM_GIVE_BACK; none is on a fast path. */
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

static void (*process_exit_fns[PRIM_PROCESS_EXIT_MAX])(void);

void prim_on_process_exit(void (*fn)(void)) {
  for (int i = 0; i < PRIM_PROCESS_EXIT_MAX; i++)
    if (process_exit_fns[i] == NULL || process_exit_fns[i] == fn) {
      process_exit_fns[i] = fn;
      return;
    }
}

static void *map_os(size_t size, int top_down) {
  if (prim_fail_maps)
    return NULL;
  return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT | (top_down ? MEM_TOP_DOWN : 0),
                      PAGE_READWRITE);
}

void *prim_map(size_t size, int top_down) {
  XMM_KEEP();
  void *r = map_os(size, top_down);
  XMM_GIVE_BACK();
  return r;
}

static int extend_os(void *at, size_t size) {
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

int prim_extend(void *at, size_t size) {
  XMM_KEEP();
  int r = extend_os(at, size);
  XMM_GIVE_BACK();
  return r;
}

static void unmap_os(void *p, size_t size) {
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

void prim_unmap(void *p, size_t size) {
  XMM_KEEP();
  unmap_os(p, size);
  XMM_GIVE_BACK();
}

static void *reserve_os(size_t size, int top_down) {
  if (prim_fail_maps)
    return NULL;
  return VirtualAlloc(NULL, size, MEM_RESERVE | (top_down ? MEM_TOP_DOWN : 0), PAGE_NOACCESS);
}

void *prim_reserve(size_t size, int top_down) {
  XMM_KEEP();
  void *r = reserve_os(size, top_down);
  XMM_GIVE_BACK();
  return r;
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

static int commit_os(void *at, size_t size) {
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

int prim_commit(void *at, size_t size) {
  XMM_KEEP();
  int r = commit_os(at, size);
  XMM_GIVE_BACK();
  return r;
}

static void decommit_os(void *at, size_t size) {
  if (VirtualFree(at, size, MEM_DECOMMIT))
    return;
  char *cur = (char *)at, *end = (char *)at + size;
  while (cur < end) {
    char *stop = piece_end(cur, end);
    VirtualFree(cur, (size_t)(stop - cur), MEM_DECOMMIT);
    cur = stop;
  }
}

void prim_decommit(void *at, size_t size) {
  XMM_KEEP();
  decommit_os(at, size);
  XMM_GIVE_BACK();
}

static size_t reserve_after_os(void *at, size_t min, size_t want) {
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

size_t prim_reserve_after(void *at, size_t min, size_t want) {
  XMM_KEEP();
  size_t r = reserve_after_os(at, min, want);
  XMM_GIVE_BACK();
  return r;
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

static void sleep_ms_os(unsigned ms) {
  Sleep(ms);
}

void prim_sleep_ms(unsigned ms) {
  XMM_KEEP();
  sleep_ms_os(ms);
  XMM_GIVE_BACK();
}

void prim_on_fork_child(void (*fn)(void)) {
  (void)fn;
}

void prim_on_fork(void (*before)(void), void (*parent)(void), void (*child)(void)) {
  (void)before;
  (void)parent;
  (void)child;
}

static void yield_os(void) {
  SwitchToThread();
}

void prim_yield(void) {
  XMM_KEEP();
  yield_os();
  XMM_GIVE_BACK();
}

static uint32_t thread_id_os(void) {
  return (uint32_t)GetCurrentThreadId();
}

uint32_t prim_thread_id(void) {
  XMM_KEEP();
  uint32_t r = thread_id_os();
  XMM_GIVE_BACK();
  return r;
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

static int barrier_ready_os(void) {
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

int prim_barrier_ready(void) {
  XMM_KEEP();
  int r = barrier_ready_os();
  XMM_GIVE_BACK();
  return r;
}

static void barrier_other_threads_os(void) {
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

void prim_barrier_other_threads(void) {
  XMM_KEEP();
  barrier_other_threads_os();
  XMM_GIVE_BACK();
}

static uint64_t time_ns_os(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER now;
  if (freq.QuadPart == 0)
    QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&now);
  return (uint64_t)((double)now.QuadPart * 1e9 / (double)freq.QuadPart);
}

uint64_t prim_time_ns(void) {
  XMM_KEEP();
  uint64_t r = time_ns_os();
  XMM_GIVE_BACK();
  return r;
}

unsigned prim_cpu_count(void) {
  XMM_KEEP();
  DWORD_PTR process_mask, system_mask;
  unsigned n = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask))
    for (; process_mask != 0; process_mask &= process_mask - 1u)
      n++;
  if (n == 0) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    n = (unsigned)info.dwNumberOfProcessors;
  }
  XMM_GIVE_BACK();
  return n > 0 ? n : 1u;
}

size_t prim_page_size(void) {
  XMM_KEEP(); /* Wine's GetSystemInfo changes XMM4 and XMM5 (test_win64_xmm) */
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  XMM_GIVE_BACK();
  return (size_t)info.dwPageSize;
}

uint32_t prim_tick_count_ms(void) {
  XMM_KEEP(); /* Wine's GetTickCount changed XMM4 and XMM5 on an AMD Zen 3 (test_win64_xmm) */
  uint32_t ms = (uint32_t)GetTickCount();
  XMM_GIVE_BACK();
  return ms;
}

static void debug_break_os(void) {
  DebugBreak();
}

void prim_debug_break(void) {
  XMM_KEEP();
  debug_break_os();
  XMM_GIVE_BACK();
}

static HMODULE module_of(const void *addr);

#if defined(_WIN64)
const void *prim_direct_call_target(const void *return_address) {
  (void)return_address;
  return NULL;
}

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
#else
static int raw_return_address(uintptr_t value, uintptr_t stack_lo, uintptr_t stack_hi);

const void *prim_direct_call_target(const void *return_address) {
  const unsigned char *a = (const unsigned char *)return_address;
  if (a[-5] != 0xE8)
    return NULL;
  uint32_t rel =
      (uint32_t)a[-4] | (uint32_t)a[-3] << 8 | (uint32_t)a[-2] << 16 | (uint32_t)a[-1] << 24;
  return a + (int32_t)rel;
}

/* Win32: the raw trace. Code built without frames ({$W-}, leaf routines, -fomit-frame-pointer)
 * leaves RtlCaptureStackBackTrace nothing to follow, so the thread's stack is scanned from here
 * towards its base (the TEB's StackBase) for values that are return addresses: inside an
 * executable section of a loaded module, right after a CALL instruction. Stale values of
 * earlier calls can pass as well (as in FastMM's raw trace); the scan is bounded. */
size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip) {
  (void)skip;
  volatile uintptr_t here = 0;
  uintptr_t lo = (uintptr_t)&here;
  uintptr_t base; /* the TEB's StackBase, at fs:4 */
#if defined(_MSC_VER) && !defined(__clang__)
  base = (uintptr_t)__readfsdword(4);
#else
  __asm__("movl %%fs:0x04, %0" : "=r"(base));
#endif
  uintptr_t hi = base > lo && base - lo > PRIM_RAW_SCAN_BYTES ? lo + PRIM_RAW_SCAN_BYTES : base;
  size_t n = 0;
  /* The frames array is on this stack too: what is stored into it is not read back. */
  const uintptr_t *out_lo = (const uintptr_t *)frames, *out_hi = out_lo + max_frames;
  for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi && n < max_frames; p++)
    if ((p < out_lo || p >= out_hi) && raw_return_address(*p, lo, base))
      frames[n++] = (void *)*p;
  return n;
}
#endif

static void init_os(prim_thread_exit_fn on_thread_exit) {
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

void prim_init(prim_thread_exit_fn on_thread_exit) {
  XMM_KEEP();
  init_os(on_thread_exit);
  XMM_GIVE_BACK();
}

static void *tls_get_slow_os(void) {
  if (tls_index == TLS_OUT_OF_INDEXES)
    return NULL;
  DWORD saved = GetLastError();
  void *v = TlsGetValue(tls_index);
  SetLastError(saved);
  return v;
}

void *prim_tls_get_slow(void) {
  XMM_KEEP();
  void *r = tls_get_slow_os();
  XMM_GIVE_BACK();
  return r;
}

static void tls_set_os(void *value) {
  if (tls_index != TLS_OUT_OF_INDEXES)
    TlsSetValue(tls_index, value);
}

void prim_tls_set(void *value) {
  XMM_KEEP();
  tls_set_os(value);
  XMM_GIVE_BACK();
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
#define MODULE_CODE_RANGES 4
static struct {
  uintptr_t begin, end;
  uintptr_t code[MODULE_CODE_RANGES][2]; /* executable sections, for the Win32 raw trace */
} module_cache[MODULE_CACHE_SIZE];
static volatile LONG module_cache_count; /* entries below it are complete and never change */
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
  LONG at = module_cache_count;
  int known = 0;
  for (LONG i = 0; i < at; i++)
    known |= module_cache[i].begin == *begin;
  if (!known && at < MODULE_CACHE_SIZE) {
    module_cache[at].begin = *begin;
    module_cache[at].end = *end;
    const IMAGE_SECTION_HEADER *sec = IMAGE_FIRST_SECTION(nt);
    unsigned ranges = 0;
    for (unsigned i = 0; i < nt->FileHeader.NumberOfSections && ranges < MODULE_CODE_RANGES; i++)
      if (sec[i].Characteristics & IMAGE_SCN_MEM_EXECUTE) {
        module_cache[at].code[ranges][0] = *begin + sec[i].VirtualAddress;
        module_cache[at].code[ranges][1] = *begin + sec[i].VirtualAddress + sec[i].Misc.VirtualSize;
        ranges++;
      }
    MemoryBarrier();
    module_cache_count = at + 1;
  }
  ReleaseSRWLockExclusive(&module_cache_lock);
  return 1;
}

#if !defined(_WIN64)
/* The start of the executable section holding a, or 0: read without the lock (the count is
 * raised only once an entry is complete). */
static uintptr_t code_section_of(uintptr_t a) {
  LONG count = module_cache_count;
  MemoryBarrier();
  for (LONG i = 0; i < count; i++)
    if (a >= module_cache[i].begin && a < module_cache[i].end) {
      for (unsigned k = 0; k < MODULE_CODE_RANGES; k++)
        if (a >= module_cache[i].code[k][0] && a < module_cache[i].code[k][1])
          return module_cache[i].code[k][0];
      return 0;
    }
  return 0;
}

/* 64 KB regions known to hold no module (heap, stacks, mapped data), so that a value met on
 * the stack again costs no VirtualQuery: a direct-mapped table of region numbers. */
#define RAW_NOT_MODULE_SLOTS 512u
static volatile uintptr_t raw_not_module[RAW_NOT_MODULE_SLOTS];

/* 1 when the bytes before `a` are a CALL: E8 rel32, or FF /2 in its register and memory forms. */
static int after_call(const unsigned char *a) {
  if (a[-5] == 0xE8)
    return 1;
  unsigned m;
  m = a[-1]; /* FF D0+r (call reg); FF 00-07 /2 (call [reg]) */
  if (a[-2] == 0xFF && (m & 0x38) == 0x10 &&
      ((m >> 6) == 3 || ((m >> 6) == 0 && (m & 7) != 4 && (m & 7) != 5)))
    return 1;
  m = a[-2]; /* [reg+d8]; [SIB] */
  if (a[-3] == 0xFF && (m & 0x38) == 0x10 &&
      (((m >> 6) == 1 && (m & 7) != 4) || ((m >> 6) == 0 && (m & 7) == 4 && (a[-1] & 7) != 5)))
    return 1;
  m = a[-3]; /* [SIB+d8] */
  if (a[-4] == 0xFF && (m & 0x38) == 0x10 && (m >> 6) == 1 && (m & 7) == 4)
    return 1;
  m = a[-5]; /* [reg+d32]; [d32] */
  if (a[-6] == 0xFF && (m & 0x38) == 0x10 &&
      (((m >> 6) == 2 && (m & 7) != 4) || ((m >> 6) == 0 && (m & 7) == 5)))
    return 1;
  m = a[-6]; /* [SIB+d32]; [SIB with d32 and no base] */
  if (a[-7] == 0xFF && (m & 0x38) == 0x10 &&
      (((m >> 6) == 2 && (m & 7) == 4) || ((m >> 6) == 0 && (m & 7) == 4 && (a[-5] & 7) == 5)))
    return 1;
  return 0;
}

static int raw_return_address(uintptr_t value, uintptr_t stack_lo, uintptr_t stack_hi) {
  if (value < 0x10000u || (value >= stack_lo && value < stack_hi))
    return 0;
  uintptr_t code = code_section_of(value);
  if (code == 0) {
    uintptr_t region = value >> 16;
    volatile uintptr_t *slot = &raw_not_module[region % RAW_NOT_MODULE_SLOTS];
    if (*slot == region)
      return 0;
    MEMORY_BASIC_INFORMATION mbi;
    uintptr_t begin, end;
    if (VirtualQuery((const void *)value, &mbi, sizeof mbi) == 0 || mbi.Type != MEM_IMAGE ||
        !module_range((const void *)value, &begin, &end)) {
      *slot = region;
      return 0;
    }
    code = code_section_of(value);
  }
  return code != 0 && value - code >= 7 && after_call((const unsigned char *)value);
}
#endif

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

static size_t getenv_os(const char *name, char *buf, size_t size) {
  DWORD saved = GetLastError();
  DWORD n = GetEnvironmentVariableA(name, buf, (DWORD)size);
  SetLastError(saved);
  return n < size ? n : 0;
}

size_t prim_getenv(const char *name, char *buf, size_t size) {
  XMM_KEEP();
  size_t r = getenv_os(name, buf, size);
  XMM_GIVE_BACK();
  return r;
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

int prim_module_file(const void *addr, uintptr_t *begin, uintptr_t *end, uintptr_t *bias,
                     char *path, size_t size) {
  XMM_KEEP();
  HMODULE m = module_of(addr);
  int found = 0;
  if (m != NULL && size > 1) {
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)m;
    const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)((const char *)m + dos->e_lfanew);
    DWORD len = GetModuleFileNameA(m, path, (DWORD)size);
    *begin = (uintptr_t)m;
    *end = *begin + nt->OptionalHeader.SizeOfImage;
    *bias = 0;
    found = len > 0 && len < size && (uintptr_t)addr >= *begin && (uintptr_t)addr < *end;
  }
  XMM_GIVE_BACK();
  return found;
}

int prim_is_program_module(uintptr_t begin) {
  XMM_KEEP();
  int is = begin != 0 && begin == (uintptr_t)GetModuleHandleA(NULL);
  XMM_GIVE_BACK();
  return is;
}

static void *read_file(const char *path, size_t max, size_t *size, size_t *mapped) {
  HANDLE f = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
  if (f == INVALID_HANDLE_VALUE)
    return NULL;
  LARGE_INTEGER length;
  char *p = NULL;
  if (GetFileSizeEx(f, &length) && length.QuadPart >= 0 && (uint64_t)length.QuadPart <= max) {
    size_t want = (size_t)length.QuadPart, got = 0;
    *mapped = want + 1;
    p = (char *)prim_map(*mapped, 0);
    while (p != NULL && got < want) {
      DWORD part = want - got > 0x10000000u ? 0x10000000u : (DWORD)(want - got), read = 0;
      if (!ReadFile(f, p + got, part, &read, NULL) || read == 0)
        break;
      got += read;
    }
    if (p != NULL && got != want) {
      prim_unmap(p, *mapped);
      p = NULL;
    }
    *size = want;
  }
  CloseHandle(f);
  return p;
}

void *prim_read_file(const char *path, size_t max, size_t *size, size_t *mapped) {
  XMM_KEEP();
  DWORD saved = GetLastError();
  void *p = read_file(path, max, size, mapped);
  SetLastError(saved);
  XMM_GIVE_BACK();
  return p;
}

uint64_t prim_file_time(const char *path) {
  XMM_KEEP();
  DWORD saved = GetLastError();
  WIN32_FILE_ATTRIBUTE_DATA data;
  uint64_t seconds = 0;
  if (GetFileAttributesExA(path, GetFileExInfoStandard, &data)) {
    uint64_t t =
        (uint64_t)data.ftLastWriteTime.dwHighDateTime << 32 | data.ftLastWriteTime.dwLowDateTime;
    /* 100 ns units since 1601 to seconds since 1970 */
    if (t / 10000000u > 11644473600u)
      seconds = t / 10000000u - 11644473600u;
  }
  SetLastError(saved);
  XMM_GIVE_BACK();
  return seconds;
}

/* The system's symbol engine, for modules with a PDB: dbghelp.dll is loaded at the first report
 * that needs it (never at start-up), its functions found by name, and the process's modules
 * handed to it once. Calls into it are serialised (dbghelp is not thread-safe); the symbolizer
 * calls here under its own lock. */
typedef struct pdb_symbol {
  ULONG SizeOfStruct, TypeIndex;
  ULONG64 Reserved[2];
  ULONG Index, Size;
  ULONG64 ModBase;
  ULONG Flags;
  ULONG64 Value, Address;
  ULONG Register, Scope, Tag, NameLen, MaxNameLen;
  CHAR Name[256];
} pdb_symbol;
typedef struct pdb_line {
  DWORD SizeOfStruct;
  PVOID Key;
  DWORD LineNumber;
  PCHAR FileName;
  DWORD64 Address;
} pdb_line;
typedef BOOL(WINAPI *sym_initialize_fn)(HANDLE, PCSTR, BOOL);
typedef DWORD(WINAPI *sym_set_options_fn)(DWORD);
typedef BOOL(WINAPI *sym_from_addr_fn)(HANDLE, DWORD64, DWORD64 *, pdb_symbol *);
typedef BOOL(WINAPI *sym_get_line_fn)(HANDLE, DWORD64, DWORD *, pdb_line *);
static int pdb_state; /* 0 not tried, 1 ready, -1 unavailable */
static volatile int process_detaching;
static sym_from_addr_fn pdb_from_addr;
static sym_get_line_fn pdb_get_line;

static void copy_text(char *to, size_t size, const char *from) {
  size_t n = 0;
  while (from != NULL && from[n] && n + 1 < size) {
    to[n] = from[n];
    n++;
  }
  if (size)
    to[n] = 0;
}

static int pdb_lookup(const void *addr, char *routine, size_t routine_size, char *file,
                      size_t file_size, unsigned *line) {
  /* Never loaded while the process ends: DLL_PROCESS_DETACH holds the loader lock. */
  if (pdb_state == 0 && !process_detaching) {
    pdb_state = -1;
    HMODULE dbghelp = LoadLibraryA("dbghelp.dll");
    if (dbghelp != NULL) {
      sym_initialize_fn init =
          (sym_initialize_fn)(void (*)(void))GetProcAddress(dbghelp, "SymInitialize");
      sym_set_options_fn options =
          (sym_set_options_fn)(void (*)(void))GetProcAddress(dbghelp, "SymSetOptions");
      pdb_from_addr = (sym_from_addr_fn)(void (*)(void))GetProcAddress(dbghelp, "SymFromAddr");
      pdb_get_line =
          (sym_get_line_fn)(void (*)(void))GetProcAddress(dbghelp, "SymGetLineFromAddr64");
      if (init != NULL && options != NULL && pdb_from_addr != NULL && pdb_get_line != NULL) {
        options(0x2u /* SYMOPT_UNDNAME */ | 0x10u /* SYMOPT_LOAD_LINES */ |
                0x4u /* SYMOPT_DEFERRED_LOADS */);
        if (init(GetCurrentProcess(), NULL, TRUE))
          pdb_state = 1;
      }
    }
  }
  if (pdb_state != 1)
    return 0;
  pdb_symbol sym;
  memset(&sym, 0, sizeof sym);
  sym.SizeOfStruct =
      (ULONG)((offsetof(pdb_symbol, Name) + 1 + 7) & ~(size_t)7); /* sizeof(SYMBOL_INFO) */
  sym.MaxNameLen = sizeof sym.Name - 1;
  DWORD64 displacement = 0;
  if (!pdb_from_addr(GetCurrentProcess(), (DWORD64)(uintptr_t)addr, &displacement, &sym))
    return 0;
  copy_text(routine, routine_size, sym.Name);
  pdb_line l;
  memset(&l, 0, sizeof l);
  l.SizeOfStruct = sizeof l;
  DWORD column = 0;
  *line = 0;
  file[0] = 0;
  if (pdb_get_line(GetCurrentProcess(), (DWORD64)(uintptr_t)addr, &column, &l)) {
    copy_text(file, file_size, l.FileName);
    *line = (unsigned)l.LineNumber;
  }
  return 1;
}

int prim_pdb_lookup(const void *addr, char *routine, size_t routine_size, char *file,
                    size_t file_size, unsigned *line) {
  XMM_KEEP();
  DWORD saved = GetLastError();
  int found = routine_size > 0 && file_size > 0 &&
              pdb_lookup(addr, routine, routine_size, file, file_size, line);
  SetLastError(saved);
  XMM_GIVE_BACK();
  return found;
}

int prim_dynamic_symbol(const void *addr, char *name, size_t size, uintptr_t *start) {
  (void)addr;
  (void)name;
  (void)size;
  (void)start;
  return 0;
}

static void raise_fatal_os(void) {
  RaiseException(0xE0464D43u /* "FMC" */, EXCEPTION_NONCONTINUABLE, 0, NULL);
}

void prim_raise_fatal(void) {
  XMM_KEEP();
  raise_fatal_os();
  XMM_GIVE_BACK();
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
  if (reason == DLL_PROCESS_DETACH)
    process_detaching = 1;
  for (int i = 0; reason == DLL_PROCESS_DETACH && i < PRIM_PROCESS_EXIT_MAX && process_exit_fns[i];
       i++)
    process_exit_fns[i]();
  return TRUE;
}
#endif
