/* SPDX-License-Identifier: MIT */
/* Every number that encodes a policy, in one place, with the reason for it. */
#ifndef FASTMM_POLICY_H
#define FASTMM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "block_header.h"

/* ---- Small blocks ------------------------------------------------------------------------
 * Slot sizes (header included) step by 16 up to 256, then by 32 to 512, 64 to 1024, 128 to
 * 2048 and 256 to 2560: from 256 on, the step is 1/8 of the size, so rounding a request up to
 * its class wastes at most ~12.5% (and at most 15 bytes below 256, where Delphi's objects and
 * short strings live). Every slot is a multiple of 16, so every user pointer is 16-aligned on
 * Win32 too; the cost on Win32 is that the smallest usable size is 12 bytes, not FastMM's 6.
 * 42 classes keep the per-thread cache (one bin per class) small. The table is in
 * size_class.c. */
#define SMALL_CLASS_COUNT 42u
#define SMALL_MAX_SLOT 2560u
#define SMALL_MAX_USER (SMALL_MAX_SLOT - BLOCK_HEADER_SIZE) /* 2556: larger requests are medium */

/* A small span aims at SMALL_SPAN_TARGET_BLOCKS blocks, within [MIN, MAX] bytes: small classes get
 * spans of 16 KB (1000+ blocks of 16 bytes), large ones 64 KB (25 blocks of 2560). Spans are
 * medium blocks, so they come from and go back to a medium arena. Each is a multiple of 16 KB less
 * the medium header, placed at a multiple of 16 KB (medium_alloc_small_span), so spans pack with
 * no gap and each 16 KB granule belongs to at most one span: its span record (span_record.h) names
 * it.
 * The span's header lies SMALL_SPAN_PACKING (64) bytes times one more than its class modulo
 * SMALL_SPAN_COLOURS into the block: with every span starting at a multiple of 16 KB, the first
 * blocks of all spans would share one set of the L1 cache (small_churn_lifo had twice the L1
 * misses with no colour). */
#define SMALL_SPAN_TARGET_BLOCKS 64u
#define SMALL_SPAN_MIN_BYTES (16u * 1024u)
#define SMALL_SPAN_MAX_BYTES (64u * 1024u)
#define SMALL_SPAN_PACKING 64u
#define SMALL_SPAN_COLOURS 8u
/* While a manager has fewer than SMALL_SPAN_GROW_SPANS spans, a new one is SMALL_SPAN_MIN_BYTES
 * times two to the number it has (16 KB, then 32 KB), whatever the class: a class a program holds
 * a few blocks of (the largest classes, in a Pascal program's mix) then pins 16 KB, not 64 KB, of
 * touched pages and of a medium arena's room; a class in real use gets its full span size from
 * the third span on. A class whose spans all went back starts small again. */
#define SMALL_SPAN_GROW_SPANS 2u
/* SMALL_SPAN_HEADER_SIZE (block_header.h): the first user pointer sits 64 bytes into the span. */

/* ---- Per-thread caches -------------------------------------------------------------------
 * Each thread keeps, per small class, a LIFO list of free blocks, so that most small GetMem
 * and FreeMem calls take no lock and no atomic instruction. A bin holds at most
 * THREAD_CACHE_BIN_BYTES worth of blocks (bounded to [MIN_COUNT, MAX_COUNT] blocks); when full,
 * half of it goes back to the arenas; when empty, it is refilled with half its capacity in one
 * locked visit. That bounds what an idle thread can sit on to ~42 x 32 KB. */
#define THREAD_CACHE_BIN_BYTES (32u * 1024u)
/* Bins of slots above 256 bytes hold half as many bytes (still THREAD_CACHE_BIN_MIN_COUNT blocks
 * at least): every block a bin holds is one its class carved and touched, and with 32 KB for them
 * pas_mixed faulted in about 210 more pages (Win64, with the other two span changes of the same
 * experiment in). The classes up to 256 bytes, where small_churn_random and the string workloads
 * live, keep the full bin. */
#define THREAD_CACHE_BIN_BYTES_LARGE_SLOTS (16u * 1024u)
#define THREAD_CACHE_LARGE_SLOT 256u
#define THREAD_CACHE_BIN_MIN_COUNT 8u
#define THREAD_CACHE_BIN_MAX_COUNT 128u
/* A bin stops keeping blocks once its thread has freed this many blocks of its class while no
 * thread took one of that class from the arenas (the heap is shrinking there: a program freeing
 * what it built). Twice the largest bin, so that a consumer thread whose producer refills every
 * half bin never gets there; a free-all empties the bins of every class freed more than about
 * this often, so the blocks left cached cannot pin spans (thread_cache.c). */
#define THREAD_CACHE_SHRINK_AFTER (2u * THREAD_CACHE_BIN_MAX_COUNT)

/* ---- Arenas ------------------------------------------------------------------------------
 * Small-block managers and medium arenas come ARENA_COUNT times each (FastMM5's default is 4;
 * its notes put the best count at 0.5-1x the threads inside the manager at once). A thread
 * starts at its own arena and takes the first one whose lock it can get without waiting. */
#define ARENA_COUNT 4u
/* Of those, a process uses one per ARENA_CPUS_PER_ARENA CPUs it may run on (at least one; the
 * count is read at start-up, arena_init): the threads inside the manager at once are at most the
 * CPUs, the top of FastMM5's best range. Each arena in use keeps partly used spans of every class
 * its threads allocate, so arenas the CPUs cannot keep busy cost memory and buy nothing. On 2
 * CPUs, two arenas against four: no workload slower beyond its interval, fc_short_threads 31%
 * and mstressN 36% faster, pas_mixed_mt4's peak 6.3 MB against 7.7 MB (fpcx64mm 5.5 MB) and the
 * suite's peaks a quarter lower. One arena (one per two CPUs) was 2.2x slower on
 * fc_mt_alloc_realloc and 1.4x on larsonN and xmalloc-testN (docs/experiments). */
#define ARENA_CPUS_PER_ARENA 1u
/* Spins of the pause instruction before a waiting thread yields its time slice. */
#define LOCK_SPINS_BEFORE_YIELD 64u

/* ---- Medium blocks -----------------------------------------------------------------------
 * Medium block sizes are multiples of 16 with a 16-byte header. The smallest is the smallest
 * block a request above SMALL_MAX_USER needs; a split leaves a free remainder only when it is at
 * least that big, so every free block fits some medium request. The largest medium request is
 * 512 KB - 16: above it a block is large (an OS mapping of its own). */
#define MEDIUM_MIN_BLOCK_SIZE 2576u
#define MEDIUM_MAX_BLOCK_SIZE (512u * 1024u)
#define MEDIUM_MAX_USER (MEDIUM_MAX_BLOCK_SIZE - MEDIUM_HEADER_SIZE)
/* Spans are mapped 2 MB at a time: four of the largest medium blocks, and a bounded amount to
 * keep mapped while a span is in partial use. The optimization strategy (FastMM5's
 * FastMM_SetOptimizationStrategy, which sets the size of new medium spans: 4, 3 or 1.5 MB)
 * chooses among three sizes; spans already mapped keep theirs.
 *   speed       4 MB: half the mappings (and page map writes) of a growing heap, at the cost of
 *               up to 4 MB held by a span that is in partial use; FastMM5's largest span.
 *   balanced    2 MB: the default, the size the published figures were measured with.
 *   low memory  1 MB: a span in partial use pins half as much; still two of the largest
 *               medium blocks, so a span never holds fewer than two.
 * Every size is a multiple of 64 KB (the page map's region) and at most 4 MB (a whole span as one
 * free block must fit the bins: MEDIUM_BIN_MAX_LOG2). */
#define MEDIUM_SPAN_SIZE_SPEED (4u * 1024u * 1024u)
#define MEDIUM_SPAN_SIZE_BALANCED (2u * 1024u * 1024u)
#define MEDIUM_SPAN_SIZE_LOW_MEMORY (1u * 1024u * 1024u)
#define MEDIUM_SPAN_SIZE MEDIUM_SPAN_SIZE_BALANCED /* the default strategy's */
#define MEDIUM_SPAN_MAX_SIZE MEDIUM_SPAN_SIZE_SPEED
/* A span is mapped this much larger than its strategy's size: its first 64 KB region holds the
 * span's header alone, and its blocks fill the strategy's size after it. The fast paths take a
 * block only in a span's later regions (REGION_MEDIUM_SPAN), so a span header is never taken for
 * a block's header word there; its pages past the header are never written (no resident memory;
 * committed on Windows). Blocks keep the strategy's whole size: a span 64 KB short held one array
 * fewer of a workload that grows four to 512 KB each. */
#define MEDIUM_SPAN_HEAD_BYTES (64u * 1024u)
/* Free lists: two-level segregated fit. A free block of size s goes to bin
 * (floor(log2 s) - MEDIUM_BIN_MIN_LOG2) * 32 + the next 5 bits of s; a search starts at the bin
 * whose every block is big enough, so the first set bit of the bitmaps is a fit (within 1/32). */
#define MEDIUM_BIN_SUBDIVISION_LOG2 5u
#define MEDIUM_BIN_MIN_LOG2 11u /* 2048 <= MEDIUM_MIN_BLOCK_SIZE */
#define MEDIUM_BIN_MAX_LOG2 21u /* a whole span of up to 4 MB, as one free block */
#define MEDIUM_BIN_GROUPS (MEDIUM_BIN_MAX_LOG2 - MEDIUM_BIN_MIN_LOG2 + 1u)
#define MEDIUM_BIN_COUNT (MEDIUM_BIN_GROUPS << MEDIUM_BIN_SUBDIVISION_LOG2)
/* A small span must lie in one 64 KB region; the bin that guarantees such a place in every block
 * holds twice the span, so a new span first looks at this many free blocks of the bins that
 * merely hold it, smallest first, for one that has such a place (medium.c, fit_in_region): a
 * bounded walk on a path taken once per span. Without it, spans cut into the largest free blocks
 * (often a medium span's untouched tail) while the holes they fit stayed empty: pas_mixed
 * faulted in about 120 more pages (Win64). */
#define MEDIUM_REGION_FIT_SCAN 16u

/* ---- Large blocks ------------------------------------------------------------------------
 * Sizes come in LARGE_GRANULARITY units: VirtualAlloc's allocation granularity, and the page
 * map's region. */
#define LARGE_GRANULARITY (64u * 1024u)
/* A large block reserves address space ahead of what it commits, so that growing commits more
 * of it in place (no new mapping, no copy): strings and dynamic arrays grow by FastMM's 25%
 * steps. Ahead = committed * TIMES >> SHIFT. 32-bit: a quarter more (one step), as 2 GB of
 * address space is not plentiful; a reservation that fails is made without room ahead.
 * 64-bit where the OS moves a block's pages with it (PRIM_CAN_REMAP: Linux): three times more
 * (six steps), so that a cached block reused for a request that crept past its size grows in
 * place (fc_addr_creep natively 14% faster, fc_realloc_large 3-9% in three runs, no peak moved).
 * 64-bit where moving a block copies it (Windows): as much again (three steps). There three times
 * more made fc_addr_creep 36% faster under Wine, but fc_realloc_large 5-7% slower at a higher
 * peak (1.34x its live bytes against 1.22x): a block grown in place commits fresh pages where
 * it moved into a cached block whose pages were in memory
 * (docs/experiments/2026-12-05-large-reserve-ahead-4x.md). Reserved, uncommitted address space
 * is not memory: the usage limit and os_bytes_reserved do not count it. */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define LARGE_RESERVE_AHEAD_SHIFT 0u
#define LARGE_RESERVE_AHEAD_TIMES_MOVING 3u  /* where PRIM_CAN_REMAP */
#define LARGE_RESERVE_AHEAD_TIMES_COPYING 1u /* elsewhere */
#else
#define LARGE_RESERVE_AHEAD_SHIFT 2u
#define LARGE_RESERVE_AHEAD_TIMES_MOVING 1u
#define LARGE_RESERVE_AHEAD_TIMES_COPYING 1u
#endif
/* Blocks above this size reserve no room ahead, and a block grows in place past its reservation
 * by at most this much: address space is reserved in one call together with the memory, which
 * fails at once for a size the OS cannot commit, where reserving it first costs time in
 * proportion to its size (Wine took 11 s to reserve 64 TB and 8 s to release it; Windows and
 * Linux take no time). The growth of such blocks is rare next to their size. */
#define LARGE_RESERVE_AHEAD_LIMIT ((size_t)256u * 1024u * 1024u)
/* Freed large blocks are kept for reuse, their pages still committed (a reused block costs no
 * system call and no page fault; a fresh one costs a fault per page written): at most the
 * larger of LARGE_CACHE_MIN_BYTES and 1/8 of the live large blocks' bytes, and at most
 * LARGE_CACHE_MAX_BLOCKS blocks; the ones cached longest ago make way. A block bigger than
 * that bound goes straight back to the OS. The cache is given back after an idle spell
 * (RELEASE_IDLE_INTERVAL_MS), by fastmm_release_free_memory and when memory runs short, and
 * counts as large bytes reserved and as OS bytes (it is committed memory). */
#define LARGE_CACHE_MIN_BYTES ((size_t)32u * 1024u * 1024u)
#define LARGE_CACHE_LIVE_SHIFT 3u
/* Blocks FreeMem freed may use only part of that: what keeps the committed large bytes (live
 * and cached, a reused block's kept pages included) within this of the most the live blocks
 * have held; they make way as soon as new blocks take the live bytes up. Cached pages are in
 * memory, so the process's peak is the live blocks' peak plus at most this. The slack lets a
 * block freed and allocated again in turn (1 MB: 1.06 MB committed) stay cached. (Measured
 * natively on the benchmark's `mixed`, since a GetMem keeps no pages beyond its request (below):
 * 1.08x its live bytes at its peak, and as fast as with 8 MB or the whole bound, at the same
 * peak. While a GetMem kept up to 8x its request, this bound cost `mixed` 15% of its time against
 * the whole bound, at 1.09x against 1.17x.) Blocks a ReallocMem moved away from (it
 * shrank below half) have the whole bound: a program that resizes its blocks grows them again,
 * and growing into pages kept in memory saves a fault per page (`fc_realloc_large`: 17,100
 * faults with them kept, 30,000 under this bound, about 2.5x its time). Blocks a ReallocMem
 * moved to a bigger one (where the OS cannot move pages: Windows) have this bound: given back
 * to the OS, fc_realloc_large under Wine faulted 5 times as often as mimalloc; cached under this
 * bound it ran 19.5% faster at a lower peak (1.22x its live bytes against 1.30x), under the
 * whole bound 30% faster at 1.33x, and a block grown alone keeps at most this of its old copies. */
#define LARGE_CACHE_ABOVE_PEAK_BYTES ((size_t)2u * 1024u * 1024u)
#define LARGE_CACHE_MAX_BLOCKS 64u
/* A cached block reused for a smaller request of a ReallocMem (a move, or ReallocMem of nil: a
 * block that is resized is likely to grow again) keeps its pages in memory unless it has more
 * than this many times what the request needs: pages given back are faulted in again when the
 * block grows (measured on fc_realloc_large, sizes 256 KB-4 MB: trimming at 2x took 29,300 page
 * faults and 90 ms of CPU, at 8x 17,200 and 55 ms, mimalloc 16,800 and 56 ms). One reused for a
 * GetMem keeps only the pages the request needs: the rest would sit in memory unused for the
 * block's life and count against LARGE_CACHE_ABOVE_PEAK_BYTES, so that cached blocks a later
 * request could have reused whole made way (`mixed` natively, 10,000 replacements after its
 * fill: 11,800 page faults while a GetMem kept up to 8x, 8,400 now, mimalloc 9,200; 11-14%
 * faster natively and under Wine, the same peak). A request no cached block can hold takes the
 * biggest one and grows it (in place, or natively by moving its pages): a fresh block would
 * fault every page in again. */
#define LARGE_CACHE_TRIM_FACTOR 8u
/* A request no cached block's reservation holds takes the biggest cached block that has at least
 * this fraction of it and grows it, rather than mapping a fresh block while the cache makes way
 * (under LARGE_CACHE_ABOVE_PEAK_BYTES it must): its pages are in memory already. 8 rather than 2
 * (measured natively in paired runs: fc_addr_creep 7% faster (4-12%), mixed 3% (-3 to 8%),
 * fc_realloc_large unchanged). */
#define LARGE_CACHE_GROW_FACTOR 8u

/* ---- Aligned blocks ----------------------------------------------------------------------
 * Every block is 16-aligned. A minimum alignment of 32 or 64 (FastMM5's
 * FastMM_EnterMinimumAddressAlignment) is served as FastMM5 serves it: GetMem uses only the small
 * classes whose slots are multiples of it (every small span starts 64-aligned, so their blocks
 * are), medium blocks are placed at a multiple of it, large blocks are 64-aligned anyway. One
 * block may ask for more (fastmm_getmem_aligned): up to ALIGNED_MAX (VirtualAlloc's granularity,
 * the coarsest alignment the OS itself gives). */
#define ALIGNMENT_MIN 16u
#define ALIGNMENT_SMALL_MAX 64u /* small spans start 64-aligned: coarser needs a medium block */
#define ALIGNED_MAX (64u * 1024u)

/* ---- Walking the blocks (fastmm_walk_blocks) ----------------------------------------------
 * The walk copies what it finds into a buffer of WALK_BATCH_BLOCKS entries under the locks of
 * one arena, releases them, and only then calls the program back: a callback may allocate, and
 * no allocation waits longer than one batch takes to copy (a few hundred microseconds). */
#define WALK_BATCH_BLOCKS 4096u

/* ---- Giving memory back ------------------------------------------------------------------
 * An empty small span goes back to its medium arena at once; an empty medium span is kept as a
 * process-wide spare instead of being unmapped: up to MEDIUM_SPARE_SHARE_MAX_SPANS of them while
 * the arenas' spans total 8x their bytes (MEDIUM_SPARE_SHARE_SHIFT), MEDIUM_SPARE_SPANS however
 * small the heap. A span emptied when no slot the bound allows is free is unmapped, and so are the
 * spares beyond the bound whenever a span empties: a heap that shrinks keeps fewer, and one that
 * frees everything ends with MEDIUM_SPARE_SPANS at most. A heap of 50-100 MB of medium blocks
 * that churns empties a span now and then and needs one soon after: with one spare, it mapped
 * spans anew and faulted every page of them in again (fc_size_spread natively: 5 spans unmapped
 * and 11 mapped during its churn; with the bound it measured 13-18% faster natively, and
 * 4-5% under Wine within the interval, in paired runs against one spare). 1/8
 * is the large cache's share (above). With the thread caches in front, a loop that allocates and
 * frees one block of any size below large maps nothing after its first turn, and a burst that
 * empties spans maps again only those beyond the bound. Freed large blocks are cached (above). What
 * is kept (the spare spans, the large cache) goes back to the OS once it has sat unused for a whole
 * idle period: the manager's idle thread (release.c) wakes every RELEASE_IDLE_INTERVAL_MS while
 * something is kept, so memory kept at the end of a burst is back with the OS 0.5-1 s after it;
 * fastmm_set_idle_release_interval changes the period. */
#define MEDIUM_SPARE_SPANS 1u
#define MEDIUM_SPARE_SHARE_MAX_SPANS 8u
/* A heap that churns: it empties spans and needs them again within moments, past the share bound
 * above (a producer thread filling a queue of 30 MB of small blocks that its consumers empty, as
 * mimalloc-bench's xmalloc-test does: the heap swings from near 0 to its peak and back tens of
 * times a second; mstress alike). Unmapping then costs a system call and, worse, a page fault per
 * page of the span mapped anew: xmalloc-test natively spent a quarter of its time in page faults
 * (130,000 in 2 s against mimalloc's 9,000). So each span mapped within MEDIUM_SPARE_CHURN_MS of
 * one being unmapped allows one more spare beyond the share bound (up to MEDIUM_SPARE_MAX_SPANS),
 * and the allowance ends once a whole window passes in which no span was mapped or taken from the
 * spares. Spares never raise the peak: a span is mapped only when no spare is left, so what is
 * mapped never exceeds the most the heap had in use at once; they only keep memory after a fall,
 * for the window or until the idle pass gives back those unused for a period. A heap that shrinks
 * for good keeps the share bound's spares once the window has passed, and
 * fastmm_release_free_memory (or a shortage of memory) ends the allowance at once. */
#define MEDIUM_SPARE_CHURN_MS RELEASE_IDLE_INTERVAL_MS /* tests may change it: medium.h */
#define MEDIUM_SPARE_MAX_SPANS 32u  /* 64 MB of default spans: xmalloc-test's swings need 16-20 */
#define MEDIUM_SPARE_SHARE_SHIFT 3u /* spares up to 1/8 of the arenas' span bytes */
#define RELEASE_IDLE_INTERVAL_MS 500u
/* The idle thread starts only once more than this is kept (a running one still gives back
 * whatever is kept): a thread costs memory and time too. Under Wine about 1 MB of resident memory
 * per thread, measured on Win32 and Win64 (tens of KB on Windows), and a program's peak often
 * comes while the thread sleeps (the Pascal demo's did: 0.9 MB of its 1.3 MB above Free Pascal's
 * heap on Win32); and 1-4 ms to start under Wine (measured: a 1 MB GetMem + FreeMem loop of
 * 20,000 turns spent most of its time starting it). 2 MB (and a span's header region) is what a
 * program that freed everything may keep without an explicit call (test_idle_release holds it to
 * that): one default spare span as mapped, or a 1 MB large block, alone starts no thread; anything
 * kept beside them, or a larger spare (the speed strategy's 4 MB), does.
 * fastmm_release_free_memory and a shortage of memory give it back as before. */
#define RELEASE_THREAD_MIN_KEPT ((size_t)2u * 1024u * 1024u + MEDIUM_SPAN_HEAD_BYTES)

/* ---- ReallocMem (FastMM's numbers; code that was tuned on FastMM expects them) -------------
 * Small, downsize: stays in place while new*4 + 64 >= old usable (a block may shrink to about
 * a quarter of its class before it moves); otherwise it moves to the right class.
 * Small, upsize: the new block gets max(2*old usable + 32, new), which makes repeated appends
 * (strings, lists) cheap; the old usable bytes are copied. A new size that fits a small block gets
 * one (the headroom ends at the largest class): in a medium block the next resize could be a
 * downsize below half, which moves (the medium rule below). */
#define REALLOC_SMALL_DOWNSIZE_SHIFT 2u
#define REALLOC_SMALL_DOWNSIZE_ADDER 64u
#define REALLOC_SMALL_UPSIZE_ADDER 32u
/* Medium: nothing moves unless the new size is below half of the old usable size. An upsize
 * grows into a free next neighbour when it can, by at least 25%, else moves with 25% headroom.
 * A downsize below half always leaves a block that the new size fills at least half of: the
 * block shrinks in place (to no less than the smallest medium block) and frees the tail, alone
 * or merged into a free next neighbour; or, when the tail would be too small to be a free block
 * either way, it moves to a small block. FastMM instead keeps such a block as it is down to a
 * quarter of the smallest medium block; callers that shrink by halves then ask again on every
 * call, and Free Pascal's SetLength does: it calls ReallocMem whenever the length falls to half
 * of MemSize or below, so a string of 2.6 KB cut back one character at a time made 1,676 calls
 * that changed nothing (docs/experiments). Below half the smallest medium block's usable size the
 * block moves to a small one, so the smallest medium block too is never kept below half. */
#define REALLOC_MEDIUM_GROWTH_SHIFT 2u /* old + old/4 */
#define REALLOC_MEDIUM_TO_SMALL_BELOW ((MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE) / 2u)
/* Large: an upsize grows by at least 25% (old + old/4), extending the mapping in place first;
 * a downsize stays in place while new >= old/2. */
#define REALLOC_LARGE_GROWTH_SHIFT 2u

/* The largest request accepted at all: far beyond what any address space can hold, and far
 * enough below SIZE_MAX that rounding it up cannot overflow. */
#define MAX_REQUEST_SIZE (((size_t)-1) / 2u - 2u * LARGE_GRANULARITY)

/* ---- Copies and zeroes on Windows (copy.h) ----------------------------------------------
 * A ReallocMem that moves copies the old block; AllocMem zeroes what is not known to be zero.
 * From this many bytes on, the copy is one `rep movsb` (and the zero one `rep stosb`); below it
 * a loop (16 bytes a step for the copy, 8 for the zero), which starts at once where the string
 * instruction first spends some tens of cycles. The loop moves 4 (Win32) or 8 (Win64) bytes a
 * store; the string instruction a cache line or more per step, so Win64's fc_realloc_medium took
 * 17% and Win32's 26% less time. 64 and 1,024 bytes measured the same as 256 on every workload that
 * moves small blocks (docs/experiments/2026-12-05-string-copies.md). */
#ifndef COPY_STRING_MIN_BYTES
#define COPY_STRING_MIN_BYTES 256u
#endif

/* ---- The records Pascal units install (src/api/pascal_records.h) -------------------------
 * Slots of bound entry points: one per module of a process that installs fastmm-c (the exe,
 * each library with its own runtime and so its own previous manager). Eight: an exe and the
 * Pascal libraries it loads rarely come to more; a module that finds no free slot keeps its
 * own adapters (still correct, one call slower), and a module that binds again with the same
 * bindings (installed again, a library loaded again at the same address) gets its slot back.
 * Each slot costs about 1 KB of code. include/fastmm.h names the count. */
#define PASCAL_SLOT_COUNT 8

/* How long fastmm_check_heap waits for each lock before it gives up with
 * FASTMM_CHECK_HEAP_LOCKED (include/fastmm.h). No path holds a lock across a call to the OS,
 * so a lock held for seconds belongs to a thread that cannot run: one ExitProcess ended before
 * a DLL's DLL_PROCESS_DETACH checks the heap, or one stopped in a debugger. Long enough that a
 * thread merely descheduled on a loaded machine lets go first; short enough that a process
 * ending is not held up for long (the check gives up at the first lock it cannot have). */
#define HEAP_CHECK_LOCK_TIMEOUT_MS 2000u
/* How long the ownership question of the bound Pascal records (core/region_handover.h) waits for
 * memory that is leaving the heap: a departure takes one OS call, so only a thread stopped inside
 * one (killed by ExitProcess, held in a debugger) makes it wait this long; then it answers as the
 * page map and the memory read at that moment. As long as the heap check waits for a lock. */
#define REGION_HANDOVER_WAIT_MS HEAP_CHECK_LOCK_TIMEOUT_MS

#endif
