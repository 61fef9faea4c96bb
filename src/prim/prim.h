/* SPDX-License-Identifier: MIT */
/* The operating-system layer: the only place that knows whether it runs on Windows or POSIX.
 * prim_windows.c and prim_posix.c implement it; everything above is portable C. */
#ifndef FASTMM_PRIM_H
#define FASTMM_PRIM_H

#include <stddef.h>
#include <stdint.h>

/* Virtual memory. prim_map returns `size` bytes of zeroed, committed read/write memory
 * (64 KB aligned everywhere), or NULL; `top_down` asks for the highest free addresses (Windows'
 * MEM_TOP_DOWN; Linux maps from the top down anyway, so POSIX ignores it). prim_extend maps `size`
 * bytes at exactly `at` (the end of an earlier mapping) and returns 1, or returns 0 and maps
 * nothing. prim_unmap releases a range made of one mapping and any extensions of it. */
void *prim_map(size_t size, int top_down);
int prim_extend(void *at, size_t size);
void prim_unmap(void *p, size_t size);

/* Address space apart from memory, for blocks that grow (large blocks reserve room ahead).
 * prim_reserve returns `size` bytes of address space (64 KB aligned) that nothing may touch yet,
 * or NULL (`top_down` as for prim_map). prim_commit makes [at, at + size) of a reservation
 * read/write (zeroed the first time), 1 on success; prim_decommit gives those pages back and keeps
 * the addresses reserved. prim_reserve_after reserves address space at exactly `at` (the end of a
 * reservation): as much of `want` bytes as is free there, but at least `min`; it returns the bytes
 * reserved, 0 when fewer than `min` are free. prim_unmap releases a reservation with its
 * extensions. prim_remap moves the first `committed` bytes of a reservation (its committed pages)
 * onto `to`, the start of another reservation whose first `new_committed` bytes are committed,
 * without copying them (Linux's mremap), and releases the old reservation; it returns 0 where the
 * OS cannot (PRIM_CAN_REMAP is 0; nothing changed then). Sizes and addresses are multiples of 64
 * KB. */
void *prim_reserve(size_t size, int top_down);
int prim_commit(void *at, size_t size);
void prim_decommit(void *at, size_t size);
size_t prim_reserve_after(void *at, size_t min, size_t want);
int prim_remap(void *base, size_t committed, size_t reserved, void *to, size_t new_committed);
#if defined(__linux__)
#define PRIM_CAN_REMAP 1
#else
#define PRIM_CAN_REMAP 0
#endif

/* A thread of the manager's own, for work that must happen while the program makes no call
 * (memory given back after an idle spell). prim_start_thread runs fn() on a new thread, which
 * keeps the library loaded until fn returns; 1 on success. prim_sleep_ms sleeps the calling
 * thread. */
int prim_start_thread(void (*fn)(void));
void prim_sleep_ms(unsigned ms);
/* `fn` runs in the child of a fork() (whose only thread is the one that forked); Windows has
 * no fork and never calls it. Up to PRIM_FORK_CHILD_MAX routines, each run once per fork. */
#define PRIM_FORK_CHILD_MAX 4
void prim_on_fork_child(void (*fn)(void));
/* `before` runs in the thread that calls fork() just before it forks, `parent` and `child` after
 * it in the parent and the child; each registration is run at every fork, the last registered
 * `before` first and the first registered `parent` and `child` first (pthread_atfork's order).
 * Windows has no fork and never calls them. */
void prim_on_fork(void (*before)(void), void (*parent)(void), void (*child)(void));

/* The OS's page size in bytes (valloc's alignment). */
size_t prim_page_size(void);

/* Threads and time. */
void prim_yield(void);
/* The CPUs this process may run on (its affinity), at least 1. */
unsigned prim_cpu_count(void);
uint32_t prim_thread_id(void);

/* The other half of a store-then-load handshake whose first half runs with no fence
 * (core/lock.c): when this returns, every other thread of the process has passed a full
 * memory barrier since the call began (its stores before that point are visible, its loads
 * after it see the caller's stores before the call). One system call or two, never on a fast
 * path. prim_barrier_ready sets it up (once; safe to call from any thread) and returns 0 when
 * the OS offers no way to do it, and then prim_barrier_other_threads must not be relied on. */
int prim_barrier_ready(void);
void prim_barrier_other_threads(void);
uint64_t prim_time_ns(void);
/* Milliseconds since the system started, wrapping at 2^32 (GetTickCount; CLOCK_MONOTONIC). */
uint32_t prim_tick_count_ms(void);
/* Breaks into the debugger: DebugBreak on Windows, SIGTRAP natively. Without a debugger the
 * process gets the breakpoint as an unhandled exception or signal (FastMM5's DebugBreak). */
void prim_debug_break(void);

/* Return addresses of the calling thread's stack, innermost first, after skipping `skip`
 * frames; returns how many were stored. On Win32 it is a raw trace (PRIM_RAW_STACK_TRACE): the
 * stack scanned for return addresses (at most PRIM_RAW_SCAN_BYTES of it), which finds frames of
 * code built without stack frames, and also stale ones; `skip` is then ignored. */
size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip);
/* For a return address a raw trace found: the target of the call before it when that is a
 * direct call (E8 rel32), else NULL (an indirect call, or no raw trace on this target). */
const void *prim_direct_call_target(const void *return_address);
#if defined(_WIN32) && !defined(_WIN64)
#define PRIM_RAW_STACK_TRACE 1
#define PRIM_RAW_SCAN_BYTES (16u * 1024u)
#else
#define PRIM_RAW_STACK_TRACE 0
#endif

/* One thread-local pointer for the manager (the thread cache). Reading it is on the hot path,
 * so it is inline; on Windows it reads the thread's TEB slot directly, because MinGW's
 * compiler TLS costs a call per access and TlsGetValue clobbers the last-error value.
 * prim_tls_set also arranges for `on_thread_exit(value)` (given to prim_init) to run when the
 * thread ends. */
typedef void (*prim_thread_exit_fn)(void *value);
void prim_init(prim_thread_exit_fn on_thread_exit);
void prim_tls_set(void *value);

#if defined(_WIN32)
extern uint32_t prim_tls_slot_offset; /* offset of our slot in the TEB, 0 if not direct */
void *prim_tls_get_slow(void);
/* The slot, or NULL when it is not in the TEB itself (a TLS index past 63): the fast paths
 * then take their slow path, which calls prim_tls_get. No call here keeps them frameless. */
static inline void *prim_tls_get_fast(void) {
  if (prim_tls_slot_offset == 0)
    return NULL;
#if defined(_MSC_VER) && !defined(__clang__)
#if defined(_WIN64)
  return (void *)__readgsqword(prim_tls_slot_offset);
#else
  return (void *)__readfsdword(prim_tls_slot_offset);
#endif
#elif defined(_WIN64)
  void *v;
  __asm__("movq %%gs:(%1), %0" : "=r"(v) : "r"((uintptr_t)prim_tls_slot_offset));
  return v;
#else
  void *v;
  __asm__("movl %%fs:(%1), %0" : "=r"(v) : "r"((uintptr_t)prim_tls_slot_offset));
  return v;
#endif
}
static inline void *prim_tls_get(void) {
  return prim_tls_slot_offset != 0 ? prim_tls_get_fast() : prim_tls_get_slow();
}
#define PRIM_TLS_FAST_NEVER_NULL 0 /* a thread's slot in the TEB starts at 0 */
#else
/* Until prim_tls_set (and after the thread's exit callback) the pointer is not NULL but the
 * address of PRIM_TLS_UNSET_BYTES read-only zero bytes, so the fast paths can index what it
 * points at without a NULL test (an all-zero thread cache has no block to give and no room to
 * take one: every call takes the slow path); prim_tls_get says NULL for it. */
#define PRIM_TLS_FAST_NEVER_NULL 1
#define PRIM_TLS_UNSET_BYTES 2048u /* at least sizeof(thread_cache) (thread_cache.h checks) */
extern const uint64_t prim_tls_unset[PRIM_TLS_UNSET_BYTES / sizeof(uint64_t)];
#if defined(__GNUC__)
extern __thread void *prim_tls_value __attribute__((tls_model("initial-exec")));
#else
extern _Thread_local void *prim_tls_value;
#endif
static inline void *prim_tls_get(void) {
  void *v = prim_tls_value;
  return v != (void *)prim_tls_unset ? v : NULL;
}
/* The thread's pointer as it is: never NULL. */
static inline void *prim_tls_get_fast(void) {
  return prim_tls_value;
}
#endif

/* A value that tells the calling thread from every other thread alive now, read with no call:
 * the address of the thread's own block (Windows' thread environment block, the thread's
 * storage of prim_tls_value elsewhere). A thread that ended may pass its value on to a new one. */
static inline void *prim_thread_token(void) {
#if defined(_WIN32)
#if defined(_MSC_VER) && !defined(__clang__)
#if defined(_WIN64)
  return (void *)__readgsqword(0x30);
#else
  return (void *)(uintptr_t)__readfsdword(0x18);
#endif
#elif defined(_WIN64)
  void *v;
  __asm__("movq %%gs:0x30, %0" : "=r"(v));
  return v;
#else
  void *v;
  __asm__("movl %%fs:0x18, %0" : "=r"(v));
  return v;
#endif
#else
  return (void *)&prim_tls_value;
#endif
}

/* For debug mode's reports. prim_describe_address writes "module+0xoffset" (or the bare
 * address) for a code address; prim_module_range gives the extent [begin, end) of the loaded
 * module that holds an address (0 when none does; cheap after the first call per module);
 * prim_readable whether `size` bytes at `p` can be read without a fault; prim_program_path the
 * running program's path (without a NUL: returns its length, 0 when unknown); prim_getenv copies an
 * environment variable (0 when unset); prim_append_file appends to a file, creating it;
 * prim_debug_output sends a line to the debugger (OutputDebugString) or to standard error natively;
 * prim_raise_fatal ends the call that hit a freed object (an exception on Windows, abort natively).
 */
size_t prim_describe_address(const void *addr, char *buf, size_t size);
int prim_module_range(const void *addr, uintptr_t *begin, uintptr_t *end);
int prim_readable(const void *p, size_t size);
size_t prim_program_path(char *buf, size_t size);
size_t prim_getenv(const char *name, char *buf, size_t size);
int prim_append_file(const char *path, const char *text, size_t length);
int prim_write_file(const char *path, const char *text, size_t length); /* creates or empties it */
void prim_debug_output(const char *text);
void prim_raise_fatal(void);
void prim_local_time(char *buf, size_t size); /* "YYYY/MM/DD hh:mm:ss" */
/* `fn` runs once when the process ends (DLL_PROCESS_DETACH; a destructor natively), after the
 * routines registered before it; up to PRIM_PROCESS_EXIT_MAX routines. */
#define PRIM_PROCESS_EXIT_MAX 4
void prim_on_process_exit(void (*fn)(void));

/* For the symbolizer (report/symbolize.c), only while a report is written. prim_module_file
 * finds the loaded module that holds `addr`: its extent [begin, end), its bias (the runtime
 * address less the bias is the address its own symbol tables use: the ELF load bias natively; 0
 * on Windows, where the reader takes the preferred image base from the PE header) and its file's
 * path (NUL-terminated, cut at `size` - 1); 1 when found. prim_is_program_module says whether
 * the module starting at `begin` is the program itself (not a DLL or shared object).
 * prim_read_file maps a file whole, followed by one 0 byte: NULL when it is missing, unreadable
 * or larger than `max` bytes, else *size its length and *mapped what prim_unmap takes back.
 * prim_file_time is the file's last write time in seconds since 1970, 0 when unknown.
 * prim_pdb_lookup asks the system's symbol engine (dbghelp.dll, loaded on the first call) for
 * the routine, file and line of a code address in a module with a PDB; 0 when it knows none (and
 * always natively). prim_dynamic_symbol names the exported routine at or before `addr`
 * natively (dladdr) and its start; 0 on Windows, where the PE reader does it. */
int prim_module_file(const void *addr, uintptr_t *begin, uintptr_t *end, uintptr_t *bias,
                     char *path, size_t size);
int prim_is_program_module(uintptr_t begin);
void *prim_read_file(const char *path, size_t max, size_t *size, size_t *mapped);
uint64_t prim_file_time(const char *path);
int prim_pdb_lookup(const void *addr, char *routine, size_t routine_size, char *file,
                    size_t file_size, unsigned *line);
int prim_dynamic_symbol(const void *addr, char *name, size_t size, uintptr_t *start);

/* Test hook: while non-zero, prim_map and prim_extend fail as if the OS had no memory left
 * (the reliability tests use it; it costs one load on a path that calls the OS anyway). */
extern volatile int prim_fail_maps;

#endif
