/* SPDX-License-Identifier: MIT */
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

/* FASTMM_API marks what the library exports: exactly the functions declared with it here and in
 * fastmm_test.h (the ones only the project's tests call). The build defines FASTMM_BUILDING_LIBRARY
 * for the library's own sources: the DLL then exports them (dllexport; cdecl names are undecorated
 * on Win32 too), and the shared library, built with hidden visibility, makes them its only visible
 * symbols. A program that uses the library sees plain declarations. */
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

/* The version of this header and of the library built from it: CMake's project() version (the
 * test version_matches keeps them equal). 0.x: a new minor version may change the interface. */
#define FASTMM_VERSION_MAJOR 0
#define FASTMM_VERSION_MINOR 2
#define FASTMM_VERSION_PATCH 0
#define FASTMM_VERSION_STRING "0.2.0"

/* Output pointers: an export that writes its answer through a pointer (fastmm_get_state,
 * fastmm_get_small_class_usage, fastmm_get_last_debug_event, fastmm_get_memory_manager,
 * fastmm_get_memory_manager_debug, fastmm_get_memory_manager_with_previous,
 * fastmm_get_fpc_memory_manager) does nothing when that pointer is NULL: it writes nothing,
 * changes nothing (fastmm_get_memory_manager_debug does not enter debug mode) and returns 0 if
 * it returns a value. */

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
 * the span the header names, not every address in the process: see docs/bad-input.md. */
FASTMM_API int FASTMM_CDECL fastmm_owns_block(const void *p);

/* 1 if p lies in memory this manager maps for blocks (live or not): a pointer for which this
 * is 0 is certainly another allocator's. */
FASTMM_API int FASTMM_CDECL fastmm_heap_contains(const void *p);

/* Expected leaks (FastMM's RegisterExpectedMemoryLeak): returns 1 on success, 0 when p is not
 * a live block, is already registered (register) or was not registered (unregister). */
FASTMM_API int FASTMM_CDECL fastmm_register_expected_leak(void *p);
FASTMM_API int FASTMM_CDECL fastmm_unregister_expected_leak(void *p);

/* The same registry counted as FastMM5 counts it (the Pascal unit's
 * FastMM_RegisterExpectedMemoryLeak): any pointer, a second registration counted twice. Returns
 * 1, or 0 when out of memory; unregister: 1 when p was registered (one count off; the last one
 * removes it), else 0. */
FASTMM_API int FASTMM_CDECL fastmm_register_expected_leak_counted(const void *p);
FASTMM_API int FASTMM_CDECL fastmm_unregister_expected_leak_counted(const void *p);
/* Expected leaks by class and by size, FastMM5's other two kinds. A class is its VMT (Delphi's
 * TClass), with its instance size. `count` is added to the registration's count (unregister:
 * taken off). Returns 1 on success; 0 when vmt is NULL, size is negative (register), count is 0
 * (unregister: not above 0), the count would drop below 0, nothing is registered to take it
 * from, or out of memory. A count that reaches 0 removes the registration. */
FASTMM_API int FASTMM_CDECL fastmm_register_expected_class_leak(const void *vmt,
                                                                size_t instance_size, int count);
FASTMM_API int FASTMM_CDECL fastmm_unregister_expected_class_leak(const void *vmt, int count);
FASTMM_API int FASTMM_CDECL fastmm_register_expected_size_leak(ptrdiff_t size, int count);
FASTMM_API int FASTMM_CDECL fastmm_unregister_expected_size_leak(ptrdiff_t size, int count);

/* One registration: by pointer (`pointer` set), by class (`vmt` set, with its instance size) or
 * by size (neither set), and its count. */
typedef struct fastmm_expected_leak {
  const void *pointer;
  const void *vmt;
  size_t instance_size;
  ptrdiff_t size;
  size_t count;
} fastmm_expected_leak;
/* Copies up to `capacity` registrations to out (by pointer first, then by class and size);
 * returns how many there are, so a larger buffer can be asked for. out may be NULL when
 * capacity is 0. */
FASTMM_API size_t FASTMM_CDECL fastmm_get_expected_leaks(fastmm_expected_leak *out,
                                                         size_t capacity);
/* FastMM5's matching of leaked blocks against the registrations, which debug mode's leak report
 * uses too. begin takes a copy of the counts by class and size; then each leaked block is
 * matched once: 1 when it is an expected leak (registered by pointer; else its first pointer,
 * first_pointer, is a registered class whose instance fits in its `usable` bytes; else the
 * closest registered size it holds), which takes one off the copy's count; 0 when it is not.
 * One matching at a time in a process. */
FASTMM_API void FASTMM_CDECL fastmm_begin_expected_leak_match(void);
FASTMM_API int FASTMM_CDECL fastmm_match_expected_leak(const void *block, size_t usable,
                                                       const void *first_pointer);

/* The Delphi or Free Pascal class of the object at p (a block, or any memory holding an object)
 * as the leak reports name it: its first pointer must be a VMT that agrees with itself (Delphi's
 * self pointer, Free Pascal's instance size and its negation), with a class name, whose
 * instances fit in the `size` bytes at p (SIZE_MAX when that is not known). Returns that VMT
 * (Delphi's TClass), its name in name (at most capacity - 1 characters and a 0; a name has at
 * most 255); else NULL and "" in name. name may be NULL when capacity is 0. Every byte is read
 * only after the OS says it can be, so any pointer may be asked about. */
FASTMM_API const void *FASTMM_CDECL fastmm_get_block_class(const void *p, size_t size, char *name,
                                                           size_t capacity);

/* What the manager holds. All byte figures are in bytes; "usable" is what callers may use. */
typedef struct fastmm_kind_usage {
  size_t blocks_in_use;  /* live blocks of this kind */
  size_t bytes_in_use;   /* their usable bytes */
  size_t bytes_reserved; /* memory this kind holds: small spans, medium spans, large blocks
                            (committed; for large, freed blocks kept in the cache too) */
} fastmm_kind_usage;

typedef struct fastmm_state {
  fastmm_kind_usage small;
  fastmm_kind_usage medium;
  fastmm_kind_usage large;
  size_t os_bytes_reserved;    /* memory committed from the OS now (kept for reuse included;
                                  address space reserved ahead of large blocks is not) */
  size_t os_bytes_peak;        /* the most that was ever committed at once */
  size_t os_map_calls;         /* how many OS calls committed memory */
  size_t os_unmap_calls;       /* how many OS calls gave committed memory back */
  size_t thread_cached_blocks; /* free small blocks held in per-thread caches */
  size_t small_class_count;    /* number of small size classes */
} fastmm_state;

FASTMM_API void FASTMM_CDECL fastmm_get_state(fastmm_state *state);

/* Per small size class (as for FastMM_GetMemoryManagerState): fills out[i] for
 * i < min(count, class count) with the class's live blocks (thread-cached ones are free),
 * their usable bytes and the bytes of its spans; returns the number of classes. */
FASTMM_API size_t FASTMM_CDECL fastmm_get_small_class_usage(fastmm_kind_usage *out, size_t count);

/* Walks every span and block and checks the headers, boundary tags, free lists and bins.
 * Returns 0 when the heap is consistent, else a positive code naming the first fault found
 * (see src/core/heap_check.c). Takes every lock: a diagnostic, not for hot paths. It waits for
 * each lock a bounded time (seconds: as fastmm_walk_blocks, src/core/policy.h says how long);
 * when one stays held, as when the thread holding it was ended by ExitProcess before a DLL's
 * DLL_PROCESS_DETACH, it checks nothing and returns FASTMM_CHECK_HEAP_LOCKED: not a fault, the
 * heap could not be checked. */
#define FASTMM_CHECK_HEAP_LOCKED (-2) /* FastMMC.pas gives -1 when the DLL is not loaded */
FASTMM_API int FASTMM_CDECL fastmm_check_heap(void);

/* Runs the library's start-up, which the loader runs by itself when the library loads (a
 * constructor; DllMain on Windows). A program linked with the static library libfastmmc.a whose
 * own start-up runs no constructors (Free Pascal's: its _start hands __libc_start_main no init
 * routine, so the program's .init_array never runs) calls it before its first allocation from the
 * library; FastMMC.pas does, built with FASTMMC_STATIC. Once run, later calls do nothing. */
FASTMM_API void FASTMM_CDECL fastmm_run_startup(void);

/* Returns the calling thread's cached free small blocks to the shared arenas. Threads do this
 * by themselves when they end; call it to make statistics exact or before a long sleep. */
FASTMM_API void FASTMM_CDECL fastmm_flush_thread_cache(void);

/* A limit on the memory the manager maps from the OS (FastMM's memory usage limit), in bytes;
 * 0 means none (the default). Allocations that would need more fail as when the OS has no
 * memory left: GetMem returns NULL, ReallocMem returns NULL and leaves the block intact. A limit
 * below what is mapped already only stops further mapping. */
FASTMM_API void FASTMM_CDECL fastmm_set_memory_usage_limit(size_t max_bytes);
FASTMM_API size_t FASTMM_CDECL fastmm_get_memory_usage_limit(void);

/* Returns what the manager keeps for reuse to the OS now: the spare span and the cache of freed
 * large blocks. */
FASTMM_API void FASTMM_CDECL fastmm_release_free_memory(void);

/* Memory kept for reuse also goes back by itself once it has sat unused for a whole idle period:
 * while anything is kept, a thread of the manager's own wakes every period (500 ms by default)
 * and gives back what was kept before its previous wake-up. fastmm_set_idle_release_interval
 * sets the period in milliseconds; 0 stops the thread (it waits for the thread to see it), and
 * then memory goes back only through the calls here, or when a request would otherwise fail.
 * fastmm_release_idle_memory does what one wake-up of the thread does: a program that keeps the
 * thread off can call it from its own idle loop, and tests drive the idle clock with it. Free
 * small blocks in a thread's cache are not kept this way: a thread's cache shrinks by itself
 * while the thread frees far more than it allocates, and goes back when the thread ends or calls
 * fastmm_flush_thread_cache. */
FASTMM_API void FASTMM_CDECL fastmm_release_idle_memory(void);
FASTMM_API void FASTMM_CDECL fastmm_set_idle_release_interval(unsigned milliseconds);
FASTMM_API unsigned FASTMM_CDECL fastmm_get_idle_release_interval(void);

/* Small size classes, for tools and tests: slot size (header included) of class i, or 0
 * when i is out of range. The usable size of a small block is its slot size minus 4. */
FASTMM_API size_t FASTMM_CDECL fastmm_small_class_slot_size(size_t class_index);

/* ---- The blocks one by one (FastMM5's FastMM_WalkBlocks) ---------------------------------
 * The kinds of what the walk reports, in the order of FastMM5's
 * TFastMM_WalkAllocatedBlocksBlockType. A medium span is what the OS mapped for medium blocks (1-4
 * MB); a small span is a medium block cut into the slots of one small size class. */
enum fastmm_block_type {
  FASTMM_BLOCK_LARGE = 0,       /* btLargeBlock */
  FASTMM_BLOCK_MEDIUM_SPAN = 1, /* btMediumBlockSpan */
  FASTMM_BLOCK_MEDIUM = 2,      /* btMediumBlock (not one that holds a small span) */
  FASTMM_BLOCK_SMALL_SPAN = 3,  /* btSmallBlockSpan */
  FASTMM_BLOCK_SMALL = 4        /* btSmallBlock */
};
#define FASTMM_WALK_TYPE(t) (1u << (t)) /* fastmm_walk_blocks's `types`: 0 means all five */

typedef struct fastmm_block_info {
  /* The block's user pointer; for a block that holds a debug block (debug mode), the debug
   * block's (what the program holds); a span's first byte. */
  void *block_address;
  void *debug_header; /* that debug block's FastMM5-layout header (TFastMM_DebugBlockHeader), or
                         NULL (always NULL until debug blocks take FastMM5's layout) */
  size_t block_size;  /* bytes of the block or span, its header included: a small block's slot,
                         a large block's committed memory */
  size_t usable_size; /* what the program may use: a debug block's requested size; a small
                         span's slots times its slot size; a medium span's size less its header */
  uint32_t allocation_group; /* a debug block's allocation group; 0 for every other block */
  uint8_t arena_index;
  uint8_t block_type;    /* enum fastmm_block_type */
  uint8_t block_is_free; /* in a free list, a thread's cache, the large cache, or a debug block in
                            the quarantine */
  uint8_t is_sequential_feed_span;       /* a small span some of whose slots were never used */
  uint32_t sequential_feed_unused_bytes; /* the bytes of those slots */
  uint32_t small_block_span_block_size;  /* a small span's slot size */
} fastmm_block_info;

typedef void(FASTMM_CDECL *fastmm_walk_callback)(const fastmm_block_info *info, void *user_data);

/* Calls `callback` once for each block and span of the kinds in `types` (FASTMM_WALK_TYPE bits;
 * 0: all), only for blocks in use when `used_blocks_only` is non-zero, and only for blocks whose
 * allocation group is in [min_allocation_group, max_allocation_group] (with a minimum above 0 no
 * span is reported). It is safe while other threads allocate: it takes an arena's locks (each
 * within `lock_timeout_ms`), copies what it finds, releases them, and calls back with no lock
 * held, so the callback may allocate and free (a block freed meanwhile may still be reported).
 * Order: by arena, spans in address order, large blocks first. Returns 1 when every arena was
 * walked, 0 when one was skipped because a lock could not be had in time. callback NULL: 1. */
FASTMM_API int FASTMM_CDECL fastmm_walk_blocks(fastmm_walk_callback callback, void *user_data,
                                               unsigned types, int used_blocks_only,
                                               uint32_t lock_timeout_ms,
                                               uint32_t min_allocation_group,
                                               uint32_t max_allocation_group);

/* ---- Alignment ------------------------------------------------------------------------
 * Every block is 16-byte aligned. A minimum alignment of 32 or 64 (FastMM5's
 * FastMM_EnterMinimumAddressAlignment) makes every block handed out after the call, of every
 * kind and by every entry point (GetMem, AllocMem, ReallocMem's moves, the Delphi record), aligned
 * to it; values below 16 give 16, 17..32 give 32, above 32 give 64. Returns the alignment now in
 * effect. Blocks made before keep their place. */
FASTMM_API size_t FASTMM_CDECL fastmm_set_minimum_alignment(size_t alignment);
FASTMM_API size_t FASTMM_CDECL fastmm_get_minimum_alignment(void);
/* One block of `size` bytes whose address is a multiple of `alignment`, a power of two up to
 * 65536 (NULL for any other alignment, or when memory is exhausted). It is freed, measured and
 * resized by the ordinary calls, and ReallocMem keeps its alignment when it moves it. (In debug
 * mode it is an ordinary block, not a debug block.) */
FASTMM_API void *FASTMM_CDECL fastmm_getmem_aligned(size_t size, size_t alignment);

/* ---- Optimization strategy (FastMM5's FastMM_SetOptimizationStrategy) --------------------
 * The size of the medium spans mapped from now on: 4 MB for speed (fewer mappings), 2 MB balanced
 * (the default), 1 MB for low memory use (less held by partly used spans). Any other value is
 * ignored. */
#define FASTMM_OPTIMIZE_FOR_SPEED 0
#define FASTMM_BALANCED 1
#define FASTMM_OPTIMIZE_FOR_LOW_MEMORY 2
FASTMM_API void FASTMM_CDECL fastmm_set_optimization_strategy(int strategy);
FASTMM_API int FASTMM_CDECL fastmm_get_optimization_strategy(void);

/* ---- The usage report ------------------------------------------------------------------
 * Writes one self-contained HTML page (no script, style sheet or image from elsewhere) to `path`:
 * the state (fastmm_get_state), a map of the address space the manager holds (each 64 KB region
 * coloured by what it holds and shaded by how full it is, as FastMM's usage tracker shows it),
 * the usage of each small size class, and the largest blocks in use. The page names the program
 * by its file name; FASTMMC_USAGE_REPORT_FULL_PATH=1 in the environment names its full path.
 * Returns 1 when written, 0 when the file could not be (path NULL or empty: 0). */
FASTMM_API int FASTMM_CDECL fastmm_write_usage_report(const char *path);

/* ---- Debug mode ------------------------------------------------------------------------
 * While debug mode is on, GetMem hands out debug blocks, laid out as FastMM5's
 * (fastmm_debug_block_header below): a 64-byte header before the data (allocation number and
 * group, size, thread, time, header checksum), and after the data a footer (its checksum, the
 * allocation and the free stack traces); new data is filled with 0x90. FreeMem checks them,
 * records the freeing stack, fills the data with 0x80, points its first pointer at traps (a
 * freed Delphi object's VMT) and keeps the block in a quarantine, where a later change is caught
 * as a write after free; the quarantine counts as free memory in every statistic. Blocks of
 * either kind are freed correctly in either mode. Errors and leaks go to the event log,
 * <program>_MemoryManager_EventLog.txt beside the program, or to an event handler
 * (fastmm_set_event_handler). FASTMMC_DEBUG_MODE=1 in the environment starts a program in
 * debug mode; FASTMMC_STACK_DEPTH sets the trace depth. */
FASTMM_API int FASTMM_CDECL fastmm_enter_debug_mode(void);  /* nesting counter +1; returns 1 */
FASTMM_API int FASTMM_CDECL fastmm_exit_debug_mode(void);   /* nesting counter -1; returns 1 */
FASTMM_API int FASTMM_CDECL fastmm_debug_mode_active(void); /* 1 while the counter is above zero */
/* The nesting counters (debug mode's and each erase mode's) never go below zero: an exit with
 * the counter at zero does nothing, so an extra exit cannot cancel a later enter. */
/* Checks every live and quarantined debug block; 1 when all are intact, else 0 (and each fault
 * is reported). */
FASTMM_API int FASTMM_CDECL fastmm_scan_debug_blocks_for_corruption(void);
FASTMM_API void FASTMM_CDECL fastmm_set_scan_before_every_operation(int on);
/* Entries in each of a new debug block's two stack traces: default 20, at most 64 (FastMM5's
 * maximum; a larger count is taken as 64). */
FASTMM_API void FASTMM_CDECL fastmm_set_debug_mode_stack_trace_entry_count(size_t count);
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
FASTMM_API void FASTMM_CDECL fastmm_set_output_debug_string_events(int on);
/* Writes the leak report of live debug blocks not registered as expected leaks; returns how
 * many there were. It runs by itself when the process ends if debug mode was ever on. */
FASTMM_API size_t FASTMM_CDECL fastmm_report_leaks(void);
/* One stack frame as the reports write it, FastMM's FullDebugMode line: the address in hex, then
 * [file][unit][routine][line] from the module's Delphi map, DWARF, PDB or export and COFF
 * symbols (the module's name after the address where it is not the program's), or
 * "address module+0xoffset" when nothing names it (docs/debug-mode.md). `addr` is taken as a
 * return address (its call's line is named). Writes at most size - 1 bytes and a 0; returns the
 * length written. The first call for a module reads its debug information. */
FASTMM_API size_t FASTMM_CDECL fastmm_describe_address(const void *addr, char *buffer, size_t size);
/* Called (if set) when a virtual method is called on a freed object, before the manager ends
 * the call with an exception (Windows) or abort (natively); a handler may leave by longjmp. */
FASTMM_API void FASTMM_CDECL fastmm_set_freed_object_call_handler(void (*handler)(void));

/* FastMM5's TFastMM_DebugBlockHeader, the 64 bytes before a debug block's user pointer, on
 * Win32 and Win64 alike (natively the layout of the same pointer size). Fields are FastMM5's;
 * the layout has no padding (the offsets are checked below). After the UserSize user bytes
 * follows the footer: a 32-bit checksum, the allocation stack trace and the free stack trace
 * (StackTraceEntryCount pointers each, unused entries 0), then 4 reserved bytes; it is not
 * aligned. Both checksums are an xor of 32-bit words seeded with 0xFFFFFFFF: the header's over
 * the words after header_checksum to the header's end, the footer's over both stack traces.
 * The first 16 (Win64) or 28 (Win32) bytes are the manager's (FastMM5: room for a free list). */
#define FASTMM_DEBUG_HEADER_SIZE 64
#define FASTMM_DEBUG_BLOCK_LIVE 32          /* debug_block_flags: CIsDebugBlockFlag */
#define FASTMM_DEBUG_BLOCK_FREED 33         /* ... or CBlockIsFreeFlag */
#define FASTMM_DEBUG_FEATURE_CHECKSUMS 1    /* debug_feature_flags: the block has checksums */
#define FASTMM_DEBUG_FEATURE_FILL_PATTERN 2 /* freed: its data was filled with 0x80 */
typedef struct fastmm_debug_block_header {
  void *reserved1;
  void *reserved2;
  uint8_t reserved_space1[36 - 4 * sizeof(void *)];
  uint32_t header_checksum;
  uint32_t allocation_tick_count; /* GetTickCount at allocation (ms since boot) */
  uint32_t allocation_number;     /* debug allocations numbered from 1 */
  intptr_t user_size;             /* what the program asked for */
  void *previously_used_by_class; /* freed: the data's first pointer before the free */
  uint32_t allocation_group;
  uint32_t allocated_by_thread;
  uint32_t freed_by_thread; /* 0 while live */
  uint8_t debug_feature_flags;
  uint8_t stack_trace_entry_count;
  int16_t debug_block_flags; /* FASTMM_DEBUG_BLOCK_LIVE or _FREED */
} fastmm_debug_block_header;
#define FASTMM_LAYOUT_CHECK_(name, cond) typedef char fastmm_layout_check_##name[(cond) ? 1 : -1]
FASTMM_LAYOUT_CHECK_(size, sizeof(fastmm_debug_block_header) == 64);
FASTMM_LAYOUT_CHECK_(checksum, offsetof(fastmm_debug_block_header, header_checksum) ==
                                   36 - 2 * sizeof(void *));
FASTMM_LAYOUT_CHECK_(tick, offsetof(fastmm_debug_block_header, allocation_tick_count) ==
                               40 - 2 * sizeof(void *));
FASTMM_LAYOUT_CHECK_(number, offsetof(fastmm_debug_block_header, allocation_number) ==
                                 44 - 2 * sizeof(void *));
FASTMM_LAYOUT_CHECK_(user_size,
                     offsetof(fastmm_debug_block_header, user_size) == 48 - 2 * sizeof(void *));
FASTMM_LAYOUT_CHECK_(class, offsetof(fastmm_debug_block_header, previously_used_by_class) ==
                                48 - sizeof(void *));
FASTMM_LAYOUT_CHECK_(group, offsetof(fastmm_debug_block_header, allocation_group) == 48);
FASTMM_LAYOUT_CHECK_(by, offsetof(fastmm_debug_block_header, allocated_by_thread) == 52);
FASTMM_LAYOUT_CHECK_(freed, offsetof(fastmm_debug_block_header, freed_by_thread) == 56);
FASTMM_LAYOUT_CHECK_(features, offsetof(fastmm_debug_block_header, debug_feature_flags) == 60);
FASTMM_LAYOUT_CHECK_(entries, offsetof(fastmm_debug_block_header, stack_trace_entry_count) == 61);
FASTMM_LAYOUT_CHECK_(flags, offsetof(fastmm_debug_block_header, debug_block_flags) == 62);

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
#define FASTMM_DEBUG_EVENT_FRAMES 64 /* FastMM5's CFastMM_StackTrace_MaximumEntryCount */
#define FASTMM_DEBUG_EVENT_RANGES 32 /* FastMM5's CMaxLoggedChanges */

typedef struct fastmm_debug_modified_range {
  uint32_t offset; /* from the user pointer */
  uint32_t length;
} fastmm_debug_modified_range;

/* One event, as fastmm_get_last_debug_event and an event handler see it. Laid out without
 * padding but at its end, so a Pascal record can mirror it (FastMMC.pas). */
typedef struct fastmm_debug_event {
  int kind;                 /* a fastmm_event_kind */
  int virtual_method_index; /* FREED_OBJECT_CALL: the VMT slot called (Delphi's Destroy is -1) */
  uint64_t allocation_number;
  const void *block; /* the pointer the program passed or holds */
  size_t user_size;
  /* The block's debug header as it was when the event was found, or NULL when it could not be
   * trusted (damaged, or no debug block). It points at `header` below, in the same event: a
   * copy of the event must point it at its own. */
  const fastmm_debug_block_header *debug_header;
  size_t alloc_frame_count; /* non-zero entries of alloc_frames */
  size_t free_frame_count;
  size_t call_frame_count; /* where the error was detected (a virtual call: where it was made) */
  size_t modified_range_count; /* WRITE_AFTER_FREE: the bytes changed since the free */
  void *alloc_frames[FASTMM_DEBUG_EVENT_FRAMES];
  void *free_frames[FASTMM_DEBUG_EVENT_FRAMES];
  void *call_frames[FASTMM_DEBUG_EVENT_FRAMES];
  fastmm_debug_modified_range modified_ranges[FASTMM_DEBUG_EVENT_RANGES];
  fastmm_debug_block_header header;
} fastmm_debug_event;
FASTMM_LAYOUT_CHECK_(event_block, offsetof(fastmm_debug_event, block) == 16);
FASTMM_LAYOUT_CHECK_(event_frames,
                     offsetof(fastmm_debug_event, alloc_frames) == 16 + 7 * sizeof(void *));
FASTMM_LAYOUT_CHECK_(event_header, offsetof(fastmm_debug_event, header) ==
                                       16 + (7 + 3 * FASTMM_DEBUG_EVENT_FRAMES) * sizeof(void *) +
                                           8 * FASTMM_DEBUG_EVENT_RANGES);

FASTMM_API size_t FASTMM_CDECL fastmm_get_debug_event_count(int kind); /* events of a kind so far */
FASTMM_API void FASTMM_CDECL fastmm_get_last_debug_event(fastmm_debug_event *event);

/* With a handler set, each debug event (a leak found by fastmm_report_leaks too, one event per
 * block) goes to it instead of the event log; the manager still counts it and keeps it as the
 * last event. The handler runs on the thread that found the error, possibly inside FreeMem,
 * with no lock of the manager held; it may allocate. When it returns the operation fails as
 * without a handler. NULL: back to the event log. */
typedef void(FASTMM_CDECL *fastmm_event_handler)(const fastmm_debug_event *event);
FASTMM_API void FASTMM_CDECL fastmm_set_event_handler(fastmm_event_handler handler);
/* 0: no leak report of debug blocks when the process ends (a program that reports leaks
 * itself). Default 1. */
FASTMM_API void FASTMM_CDECL fastmm_set_leak_report_at_exit(int on);

/* ---- FastMM5's debug entry points and options ---------------------------------------------
 * FastMM_DebugGetMem & co.: a debug block whatever the mode. getmem fills the data with 0x90
 * (options permitting), allocmem zeroes it; NULL for a negative size or no memory. With
 * fastmm_set_scan_before_every_operation(1) each scans every debug block first. freemem
 * frees a debug block the debug way (checked, filled, quarantined) and any other block normally;
 * 0, or non-zero for a pointer that is no live block (a freed debug block is reported as a
 * double free). reallocmem resizes a debug block keeping its debug information (in place when
 * it fits its outer block), turns a normal block into a debug block (the data copied), reports a
 * freed debug block and returns NULL; NULL p allocates, size 0 frees. */
FASTMM_API void *FASTMM_CDECL fastmm_debug_getmem(intptr_t size);
FASTMM_API int32_t FASTMM_CDECL fastmm_debug_freemem(void *p);
FASTMM_API void *FASTMM_CDECL fastmm_debug_reallocmem(void *p, intptr_t size);
FASTMM_API void *FASTMM_CDECL fastmm_debug_allocmem(intptr_t size);

/* FastMM5's TFastMM_DebugModeOptions, bit i = option i. Default NEVER_FREE_SMALL_BLOCK_SPANS |
 * NEVER_MERGE_FREE_MEDIUM_BLOCKS. They apply to blocks made or freed after the call; each block
 * keeps what it got (its header's debug_feature_flags). docs/debug-mode.md ("FastMM5's options")
 * says what each one does here. */
#define FASTMM_DMO_NEVER_FREE_SMALL_BLOCK_SPANS 1u
#define FASTMM_DMO_NEVER_MERGE_FREE_MEDIUM_BLOCKS 2u
#define FASTMM_DMO_NO_BLOCK_FILL_PATTERNS                                                          \
  4u                                     /* no 0x90 / 0x80 fill (unless an erase mode is on)       \
                                          */
#define FASTMM_DMO_NO_BLOCK_CHECKSUMS 8u /* no header and footer checksums */
FASTMM_API void FASTMM_CDECL fastmm_set_debug_mode_options(uint32_t options);

/* ---- FastMM5's variables ------------------------------------------------------------------
 * FastMM5 keeps some settings and counters in variables a program reads and writes. A program
 * (FastMMC.pas, for the module that installed the manager first; or a C program) hands their
 * addresses over and the manager uses them from then on, as FastMM5 does its own:
 *   current_allocation_group       each new debug block records it (AllocationGroup);
 *   last_allocation_number         incremented atomically for each new debug block, which
 *                                  records the new value (AllocationNumber);
 *   debug_break_allocation_number  non-zero: the debug block given that number breaks into the
 *                                  debugger once made (DebugBreak; SIGTRAP natively);
 *   *_thread_contention_count      incremented each time a thread finds every arena of a kind
 *                                  locked and has to wait (GetMem and ReallocMem);
 *   allocate_top_down              non-zero: memory is mapped from the top of the address space
 *                                  (MEM_TOP_DOWN; natively the kernel's own order already);
 *   scan_before_every_operation    non-zero: while debug mode is on, every debug block is checked
 *                                  before each GetMem, FreeMem, ReallocMem (damage is reported;
 *                                  the operation goes on);
 *   get_stack_trace / convert_stack_trace_to_text: the addresses of the variables holding
 *                                  FastMM5's FastMM_GetStackTrace / FastMM_ConvertStackTraceToText;
 *                                  while one holds anything but its no-op routine (noop_*), debug
 *                                  blocks' traces are taken / written through it. They are called
 *                                  with Delphi's convention (register on Win32; not in a build
 *                                  made with MSVC for Win32, which has no such convention).
 * `size` is sizeof(fastmm_pascal_variables) as the caller knows it; a member beyond it or NULL
 * is not bound. NULL: back to the manager's own variables (all 0 but the allocation number,
 * which goes on from where it is). */
typedef struct fastmm_pascal_variables {
  uint32_t size;
  const volatile uint32_t *current_allocation_group;
  volatile uint32_t *last_allocation_number;
  const volatile uint32_t *debug_break_allocation_number;
  volatile uint32_t *small_block_thread_contention_count;
  volatile uint32_t *medium_block_thread_contention_count;
  volatile uint32_t *large_block_thread_contention_count;
  const volatile uint8_t *allocate_top_down;
  const volatile uint8_t *scan_before_every_operation;
  void *const volatile *get_stack_trace;
  void *const volatile *convert_stack_trace_to_text;
  void *noop_get_stack_trace;
  void *noop_convert_stack_trace_to_text;
} fastmm_pascal_variables;
FASTMM_API void FASTMM_CDECL fastmm_bind_variables(const fastmm_pascal_variables *vars);

/* FastMM_ProcessAllPendingFrees: the calling thread's cached blocks and every arena's pending
 * frees back to their spans, and the quarantine of freed debug blocks emptied (each checked for
 * writes after free first, as when it leaves the quarantine by age). */
FASTMM_API void FASTMM_CDECL fastmm_process_all_pending_frees(void);

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
 * pointer in no memory of ours does (fastmm_heap_contains says which). Memory of ours given
 * back to the OS (a large block freed and released, by the idle thread or
 * fastmm_release_free_memory) stays an error: a pointer whose first byte cannot be read is no
 * block of any manager's, so it is reported as ours (204), never handed on. Only address space the
 * OS has since mapped again for someone else is that someone's.
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
