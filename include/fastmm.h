/* fastmm-c public C interface.
 *
 * The same functions are exported by fastmmc32.dll / fastmmc64.dll (cdecl on Win32) and by the
 * native library libfastmmc. Delphi and Free Pascal programs normally reach the manager through
 * fastmm_get_memory_manager(), which fills a record laid out like Delphi's TMemoryManagerEx. */
#ifndef FASTMM_H
#define FASTMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define FASTMM_CDECL __cdecl
#else
#define FASTMM_CDECL
#endif

/* FASTMM_API marks what the library exports: exactly the functions declared with it here. The
 * build defines FASTMM_BUILDING_LIBRARY for the library's own sources: the DLL then exports them
 * (dllexport; cdecl names are undecorated on Win32 too), and the shared library, built with
 * hidden visibility, makes them its only visible symbols. A program that uses the library sees
 * plain declarations. */
#if defined(_WIN32)
#if defined(FASTMM_BUILDING_LIBRARY)
#define FASTMM_API __declspec(dllexport)
#else
#define FASTMM_API
#endif
#elif defined(__GNUC__)
#define FASTMM_API __attribute__((visibility("default")))
#else
#define FASTMM_API
#endif

#define FASTMM_VERSION_STRING "0.1.0"

/* Result of fastmm_freemem(). */
#define FASTMM_OK 0
#define FASTMM_ERROR_INVALID_POINTER 1 /* not a live block of this manager (or already freed) */

/* Allocates `size` bytes, 16-byte aligned. size 0 gives a unique minimal block. Returns NULL
 * when the memory cannot be had or the size is beyond what the address space could hold. */
FASTMM_API void *FASTMM_CDECL fastmm_getmem(size_t size);

/* Frees a block. NULL is accepted and does nothing (FASTMM_OK). A pointer that is not a live
 * block of this manager (freed, double-freed, interior, foreign) is refused with
 * FASTMM_ERROR_INVALID_POINTER and the heap is left as it was. */
FASTMM_API int FASTMM_CDECL fastmm_freemem(void *p);

/* Resizes a block with FastMM's policy (see src/core/policy.h): it often stays in place.
 * p == NULL: like fastmm_getmem(size). size == 0: frees p and returns NULL (Delphi's meaning).
 * On failure returns NULL and the old block is left intact and still owned by the caller. */
FASTMM_API void *FASTMM_CDECL fastmm_reallocmem(void *p, size_t size);

/* Like fastmm_getmem, with the block zeroed. */
FASTMM_API void *FASTMM_CDECL fastmm_allocmem(size_t size);

/* Bytes the caller may use in a live block (at least what was asked for); 0 for NULL or a
 * pointer that is not a live block of this manager. */
FASTMM_API size_t FASTMM_CDECL fastmm_usable_size(const void *p);

/* 1 if p is the start of a live block of this manager, else 0. It checks the block header and
 * the span the header names, not every address in the process: see README "Bad input". */
FASTMM_API int FASTMM_CDECL fastmm_owns_block(const void *p);

/* 1 if p lies in memory this manager maps for blocks (live or not): a pointer for which this
 * is 0 is certainly another allocator's. */
FASTMM_API int FASTMM_CDECL fastmm_heap_contains(const void *p);

/* Expected leaks (FastMM's RegisterExpectedMemoryLeak): returns 1 on success, 0 when p is not
 * a live block, is already registered (register) or was not registered (unregister). */
FASTMM_API int FASTMM_CDECL fastmm_register_expected_leak(void *p);
FASTMM_API int FASTMM_CDECL fastmm_unregister_expected_leak(void *p);

/* What the manager holds. All byte figures are in bytes; "usable" is what callers may use. */
typedef struct fastmm_kind_usage {
  size_t blocks_in_use;  /* live blocks of this kind */
  size_t bytes_in_use;   /* their usable bytes */
  size_t bytes_reserved; /* memory this kind holds: small spans, medium spans, large mappings */
} fastmm_kind_usage;

typedef struct fastmm_state {
  fastmm_kind_usage small;
  fastmm_kind_usage medium;
  fastmm_kind_usage large;
  size_t os_bytes_reserved;    /* memory currently mapped from the OS (committed) */
  size_t os_bytes_peak;        /* the most that was ever mapped at once */
  size_t os_map_calls;         /* how many times memory was mapped from the OS */
  size_t os_unmap_calls;       /* how many times memory was given back */
  size_t thread_cached_blocks; /* free small blocks held in per-thread caches */
  size_t small_class_count;    /* number of small size classes */
} fastmm_state;

FASTMM_API void FASTMM_CDECL fastmm_get_state(fastmm_state *state);

/* Per small size class (as for FastMM_GetMemoryManagerState): fills out[i] for
 * i < min(count, class count) with the class's live blocks (thread-cached ones are free),
 * their usable bytes and the bytes of its spans; returns the number of classes. */
FASTMM_API size_t FASTMM_CDECL fastmm_get_small_class_usage(fastmm_kind_usage *out, size_t count);

/* Walks every span and block and checks the headers, boundary tags, free lists and bins.
 * Returns 0 when the heap is consistent, else a non-zero code naming the first fault found
 * (see src/core/heap_check.c). Takes every lock: a diagnostic, not for hot paths. */
FASTMM_API int FASTMM_CDECL fastmm_check_heap(void);

/* Returns the calling thread's cached free small blocks to the shared arenas. Threads do this
 * by themselves when they end; call it to make statistics exact or before a long sleep. */
FASTMM_API void FASTMM_CDECL fastmm_flush_thread_cache(void);

/* A limit on the memory the manager maps from the OS (FastMM's memory usage limit), in bytes;
 * 0 means none (the default). Allocations that would need more fail as when the OS has no
 * memory left: GetMem returns NULL, ReallocMem returns NULL and leaves the block intact. A limit
 * below what is mapped already only stops further mapping. */
FASTMM_API void FASTMM_CDECL fastmm_set_memory_usage_limit(size_t max_bytes);
FASTMM_API size_t FASTMM_CDECL fastmm_get_memory_usage_limit(void);

/* Returns spare spans kept for reuse to the OS. */
FASTMM_API void FASTMM_CDECL fastmm_release_free_memory(void);

/* Small size classes, for tools and tests: slot size (header included) of class i, or 0
 * when i is out of range. The usable size of a small block is its slot size minus 4. */
FASTMM_API size_t FASTMM_CDECL fastmm_small_class_slot_size(size_t class_index);

/* ---- Debug mode ------------------------------------------------------------------------
 * While debug mode is on, GetMem hands out debug blocks: a checksummed header before the data
 * (allocation number, size, thread, time, the allocation stack), a guard after it, new data
 * filled with 0x90; FreeMem checks them, records the freeing stack, fills the data with 0x80,
 * points its first pointer at traps (a freed Delphi object's VMT) and keeps the block in a
 * quarantine, where a later change is caught as a write after free. Blocks of either kind are
 * freed correctly in either mode. Errors and leaks go to the event log,
 * <program>_MemoryManager_EventLog.txt beside the program. FASTMMC_DEBUG_MODE=1 in the
 * environment starts a program in debug mode; FASTMMC_STACK_DEPTH sets the trace depth. */
FASTMM_API int FASTMM_CDECL fastmm_enter_debug_mode(void);  /* nesting counter +1; returns 1 */
FASTMM_API int FASTMM_CDECL fastmm_exit_debug_mode(void);   /* nesting counter -1; returns 1 */
FASTMM_API int FASTMM_CDECL fastmm_debug_mode_active(void); /* 1 while the counter is above zero */
/* Checks every live and quarantined debug block; 1 when all are intact, else 0 (and each fault
 * is reported). */
FASTMM_API int FASTMM_CDECL fastmm_scan_debug_blocks_for_corruption(void);
FASTMM_API void FASTMM_CDECL fastmm_set_scan_before_every_operation(int on);
FASTMM_API void FASTMM_CDECL
fastmm_set_debug_mode_stack_trace_entry_count(size_t count); /* max 62 */
FASTMM_API size_t FASTMM_CDECL fastmm_get_debug_mode_stack_trace_entry_count(void);
/* Outside debug mode too: fill freed blocks with 0x80 / new blocks with 0x90 (nesting). */
FASTMM_API void FASTMM_CDECL fastmm_begin_erase_freed_block_content(void);
FASTMM_API void FASTMM_CDECL fastmm_end_erase_freed_block_content(void);
FASTMM_API int FASTMM_CDECL fastmm_erase_freed_block_content_active(void);
FASTMM_API void FASTMM_CDECL fastmm_begin_erase_allocated_block_content(void);
FASTMM_API void FASTMM_CDECL fastmm_end_erase_allocated_block_content(void);
FASTMM_API int FASTMM_CDECL fastmm_erase_allocated_block_content_active(void);
/* The event log's path (empty or NULL: the default beside the program), and whether events
 * also go to OutputDebugString (standard error natively). */
FASTMM_API void FASTMM_CDECL fastmm_set_event_log_filename(const char *path);
FASTMM_API const char *FASTMM_CDECL fastmm_get_event_log_filename(void);
FASTMM_API void FASTMM_CDECL fastmm_set_output_debug_string_events(int on);
/* Writes the leak report of live debug blocks not registered as expected leaks; returns how
 * many there were. It runs by itself when the process ends if debug mode was ever on. */
FASTMM_API size_t FASTMM_CDECL fastmm_report_leaks(void);
/* Called (if set) when a virtual method is called on a freed object, before the manager ends
 * the call with an exception (Windows) or abort (natively); a handler may leave by longjmp. */
FASTMM_API void FASTMM_CDECL fastmm_set_freed_object_call_handler(void (*handler)(void));

/* What debug mode found: fastmm_debug_event.kind and fastmm_get_debug_event_count's argument. */
typedef enum fastmm_event_kind {
  FASTMM_EVENT_NONE = 0,             /* no event (the last event before there was any) */
  FASTMM_EVENT_HEADER_CORRUPTED = 1, /* a write before the block (underrun) or a wild write */
  FASTMM_EVENT_GUARD_CORRUPTED = 2,  /* a write past the end of the block (overrun) */
  FASTMM_EVENT_WRITE_AFTER_FREE = 3,
  FASTMM_EVENT_DOUBLE_FREE = 4,
  FASTMM_EVENT_REALLOC_OF_FREED = 5,
  FASTMM_EVENT_INVALID_POINTER = 6, /* FreeMem or ReallocMem of a pointer that is no block */
  FASTMM_EVENT_LEAK = 7,
  FASTMM_EVENT_FREED_OBJECT_CALL = 8, /* a virtual method called on a freed object */
  FASTMM_EVENT_KIND_COUNT             /* one more than the last kind */
} fastmm_event_kind;
#define FASTMM_DEBUG_EVENT_FRAMES 16

typedef struct fastmm_debug_event {
  int kind; /* a fastmm_event_kind */
  const void *block;
  size_t user_size;
  uint64_t allocation_number;
  size_t alloc_frame_count;
  void *alloc_frames[FASTMM_DEBUG_EVENT_FRAMES];
  size_t free_frame_count;
  void *free_frames[FASTMM_DEBUG_EVENT_FRAMES];
} fastmm_debug_event;

FASTMM_API size_t FASTMM_CDECL fastmm_get_debug_event_count(int kind); /* events of a kind so far */
FASTMM_API void FASTMM_CDECL fastmm_get_last_debug_event(fastmm_debug_event *event);

/* The record Delphi's SetMemoryManager takes (System.TMemoryManagerEx): six entry points in
 * this order. On Win32 they use Delphi's `register` convention (EAX, EDX), on Win64 the one
 * Windows x64 convention, natively the platform's C convention. Sizes are NativeInt: a
 * negative size fails cleanly (GetMem/AllocMem/ReallocMem return NULL). FreeMem returns 0 on
 * success, non-zero for a pointer the manager does not own. */
#if defined(_WIN32) && !defined(_WIN64) && defined(__GNUC__)
#define FASTMM_DELPHI_CALL __attribute__((regparm(3)))
#else
#define FASTMM_DELPHI_CALL
#endif
typedef struct fastmm_memory_manager_ex {
  void *(FASTMM_DELPHI_CALL *get_mem)(intptr_t size);
  int32_t(FASTMM_DELPHI_CALL *free_mem)(void *p);
  void *(FASTMM_DELPHI_CALL *realloc_mem)(void *p, intptr_t size);
  void *(FASTMM_DELPHI_CALL *alloc_mem)(intptr_t size);
  uint8_t(FASTMM_DELPHI_CALL *register_expected_memory_leak)(void *p);   /* Boolean in AL */
  uint8_t(FASTMM_DELPHI_CALL *unregister_expected_memory_leak)(void *p); /* Boolean in AL */
} fastmm_memory_manager_ex;

FASTMM_API void FASTMM_CDECL fastmm_get_memory_manager(fastmm_memory_manager_ex *mm);
/* The same, after entering debug mode (fastmm_enter_debug_mode). */
FASTMM_API void FASTMM_CDECL fastmm_get_memory_manager_debug(fastmm_memory_manager_ex *mm);

/* ---- The records a Pascal unit installs, bound to the manager they replace -----------------
 * A program's runtime allocates before the unit that installs fastmm-c runs (Free Pascal's RTL
 * does), so the record installed is later handed blocks of the manager it replaced. The two
 * functions below fill a record whose FreeMem, ReallocMem (and for Free Pascal MemSize) are the
 * library's own and pass such blocks back to the previous manager themselves, on their slow
 * path only. A pointer in memory of ours that is not a live block (freed twice, resized after
 * it was freed, inside a block) is an error and never reaches the previous manager: only a
 * pointer in no memory of ours does (fastmm_heap_contains says which).
 *
 * Each call binds one slot: a set of entry points that knows its bindings. A process has 8 of
 * them, one per module that installs (an exe and the libraries it loads each have their own
 * runtime and previous manager); a call with bindings equal to a bound slot's gets that slot's
 * entries again. Both return 1, or 0 (the record left as it was) when every slot is bound to
 * other bindings or the bindings are incomplete (a NULL function, `size` too small): the caller
 * then keeps entry points of its own.
 *
 * heap_error(code, address), a cdecl callback of the unit's own (the previous manager's entries
 * keep their Pascal convention), is called for 204 (invalid pointer) and 203 (out of memory,
 * Free Pascal only) with the return address into the program, while the library holds no lock:
 * it may raise a Pascal exception that unwinds through the library's frames (Win32: Free
 * Pascal's and Delphi's own unwinding; Win64: SEH, whose unwind data the library carries). */
typedef struct fastmm_delphi_bindings {
  size_t size; /* sizeof(fastmm_delphi_bindings) */
  /* the previous manager's TMemoryManagerEx entries */
  int32_t(FASTMM_DELPHI_CALL *previous_free_mem)(void *p);
  void *(FASTMM_DELPHI_CALL *previous_realloc_mem)(void *p, intptr_t size);
  /* 204 for a ReallocMem of a pointer that is not a live block (Delphi's System would report
   * the NULL result as out of memory); should not return (System.Error raises). FreeMem
   * reports it by its result (non-zero), as Delphi expects. */
  void(FASTMM_CDECL *heap_error)(int32_t code, const void *address);
} fastmm_delphi_bindings;

/* fastmm_get_memory_manager's record with FreeMem and ReallocMem bound to a previous manager. */
FASTMM_API int FASTMM_CDECL fastmm_get_memory_manager_with_previous(
    fastmm_memory_manager_ex *mm, const fastmm_delphi_bindings *bindings);

/* Free Pascal's System.TMemoryManager, its fields from GetMem to MemSize (NeedLock before them
 * and InitThread .. GetFPCHeapStatus after them stay the unit's). Sizes are PtrUInt; FreeMem
 * and FreeMemSize return 0 (Free Pascal ignores it); ReAllocMem takes the pointer by reference
 * and updates it. Win32: Free Pascal's default `register` convention, as Delphi's. */
typedef struct fastmm_fpc_memory_manager {
  void *(FASTMM_DELPHI_CALL *get_mem)(size_t size);
  size_t(FASTMM_DELPHI_CALL *free_mem)(void *p);
  size_t(FASTMM_DELPHI_CALL *free_mem_size)(void *p, size_t size); /* size not needed */
  void *(FASTMM_DELPHI_CALL *alloc_mem)(size_t size);
  void *(FASTMM_DELPHI_CALL *realloc_mem)(void **p, size_t size);
  size_t(FASTMM_DELPHI_CALL *mem_size)(void *p);
} fastmm_fpc_memory_manager;

typedef struct fastmm_fpc_bindings {
  size_t size; /* sizeof(fastmm_fpc_bindings) */
  /* the previous manager's entries: its blocks are freed, resized and measured by it */
  size_t(FASTMM_DELPHI_CALL *previous_free_mem)(void *p);
  void *(FASTMM_DELPHI_CALL *previous_realloc_mem)(void **p, size_t size);
  size_t(FASTMM_DELPHI_CALL *previous_mem_size)(void *p);
  /* ReAllocMem(nil, n) allocates here while *allocate_from_library is 0 (uninstalled) */
  void *(FASTMM_DELPHI_CALL *previous_get_mem)(size_t size);
  /* 204: FreeMem / FreeMemSize / ReAllocMem of a pointer of ours that is not a live block;
   * 203: no memory for GetMem, AllocMem or ReAllocMem while *return_nil_if_grow_heap_fails
   * is 0 (ReAllocMem then leaves the block as it was). If it returns, the call returns 0 or
   * NULL. */
  void(FASTMM_CDECL *heap_error)(int32_t code, const void *address);
  const volatile uint8_t *return_nil_if_grow_heap_fails; /* System.ReturnNilIfGrowHeapFails */
  const volatile uint8_t *allocate_from_library;         /* non-zero while installed */
} fastmm_fpc_bindings;

/* The six entry points, in Free Pascal's conventions and with its meanings: GetMem(0) gives a
 * block; FreeMem(nil) does nothing; ReAllocMem(p, 0) frees and sets p to nil, ReAllocMem(nil,
 * n) allocates; MemSize is the usable size of a live block of ours, 0 for nil and for a
 * pointer of ours that is not a live block, the previous manager's answer for its blocks. */
FASTMM_API int FASTMM_CDECL fastmm_get_fpc_memory_manager(fastmm_fpc_memory_manager *mm,
                                                          const fastmm_fpc_bindings *bindings);

#ifdef __cplusplus
}
#endif
#endif
