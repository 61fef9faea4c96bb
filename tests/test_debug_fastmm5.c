/* SPDX-License-Identifier: MIT */
/* FastMM5's debug blocks, entry points, options and variables (issue 13), through the public
 * API only:
 *
 *   - layout: a debug block of each outer kind (small, medium, large) is FastMM5's
 *     TFastMM_DebugBlockHeader at p - 64 (fastmm_debug_block_header), every field right, both
 *     checksums computed here FastMM5's way from the bytes, the footer at p + UserSize, the
 *     allocation trace in it; freed: flags 33, FreedByThread, PreviouslyUsedByClass, the fill
 *     and the trap pointer, checksums still valid; the outer block is not the program's;
 *   - ReallocMem in place (the footer moves) and by moving (the debug information kept);
 *   - the debug entry points in normal mode, the options, stack depth 64;
 *   - the bound variables: allocation group and number, the break (a breakpoint caught here),
 *     scan before every operation, FastMM_GetStackTrace / ConvertStackTraceToText, top-down;
 *   - the event handler (called with no lock held: it allocates), leaks through it;
 *   - the quarantine counts as free, and fastmm_process_all_pending_frees empties it;
 *   - a virtual call on a freed object names its slot and its block.
 *
 * Every event goes to the null device or to the handler. */
#include "fastmm_test.h"
#include "test_blocks.h"

#include <setjmp.h>

#if !defined(_WIN32)
#include <signal.h>
#include <unistd.h>
#endif

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __declspec(noinline)
#endif

#define P sizeof(void *)

/* ---- FastMM5's checksums, written out again from its definition ---------------------------- */

static uint32_t xor_words(const unsigned char *b, size_t bytes) {
  uint32_t x = 0xFFFFFFFFu;
  size_t i;
  for (i = 0; i + 4 <= bytes; i += 4) {
    uint32_t w = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
                 (uint32_t)b[i + 3] << 24;
    x ^= w;
  }
  return x;
}

static const fastmm_debug_block_header *header_of(const void *p) {
  return (const fastmm_debug_block_header *)((const char *)p - 64);
}

static uint32_t header_sum(const fastmm_debug_block_header *h) {
  size_t from = offsetof(fastmm_debug_block_header, header_checksum) + 4;
  return xor_words((const unsigned char *)h + from, 64 - from);
}

static const unsigned char *footer_of(const fastmm_debug_block_header *h) {
  return (const unsigned char *)h + 64 + h->user_size;
}

static uint32_t footer_sum(const fastmm_debug_block_header *h) {
  return xor_words(footer_of(h) + 4, 2u * h->stack_trace_entry_count * P);
}

static uint32_t footer_stored(const fastmm_debug_block_header *h) {
  uint32_t c;
  memcpy(&c, footer_of(h), 4);
  return c;
}

static void *trace_entry(const fastmm_debug_block_header *h, int which, unsigned i) {
  void *a;
  memcpy(&a, footer_of(h) + 4 + ((size_t)which * h->stack_trace_entry_count + i) * P, P);
  return a;
}

static int checksums_valid(const void *p) {
  const fastmm_debug_block_header *h = header_of(p);
  return h->header_checksum == header_sum(h) && footer_stored(h) == footer_sum(h);
}

static int all_bytes(const void *p, size_t from, size_t to, unsigned char v) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = from; i < to; i++)
    if (b[i] != v)
      return 0;
  return 1;
}

static size_t events(int kind) {
  return fastmm_get_debug_event_count(kind);
}

static void quiet_log(void) {
#if defined(_WIN32)
  fastmm_set_event_log_filename("NUL");
#else
  fastmm_set_event_log_filename("/dev/null");
#endif
}

/* A virtual call on a freed object ends in the trap's handler, which leaves by longjmp. */
static jmp_buf trap_return;
static void on_freed_object(void) {
  longjmp(trap_return, 1);
}

/* ---- layout ---------------------------------------------------------------------------------- */

static void *volatile last_allocated;
NOINLINE static void *allocate_here(size_t size) {
  void *p = fastmm_getmem(size);
  last_allocated = p; /* work after the call: not a tail call, this frame is in the trace */
  return p;
}

static void layout_of(size_t size, const char *kind) {
  unsigned depth = (unsigned)fastmm_get_debug_mode_stack_trace_entry_count();
  unsigned char *p = (unsigned char *)allocate_here(size);
  if (!CHECK_MSG(p != NULL, "%s: GetMem(%zu) in debug mode", kind, size))
    return;
  const fastmm_debug_block_header *h = header_of(p);
  const unsigned char *outer = (const unsigned char *)h;
  CHECK_EQ(((uintptr_t)p & 15u), 0);
  CHECK_EQ(h->user_size, size);
  CHECK_EQ(h->debug_block_flags, FASTMM_DEBUG_BLOCK_LIVE);
  CHECK_EQ(h->debug_feature_flags, FASTMM_DEBUG_FEATURE_CHECKSUMS);
  CHECK_EQ(h->stack_trace_entry_count, depth);
  CHECK_EQ(h->freed_by_thread, 0);
  CHECK(h->allocated_by_thread != 0);
  CHECK(h->previously_used_by_class == NULL);
  CHECK(h->allocation_number != 0);
  CHECK_MSG(checksums_valid(p), "%s: checksums of a new block", kind);
  /* The header word at p - 4 is the header's last 4 bytes. */
  CHECK_EQ(block_header(p), (uint32_t)h->debug_feature_flags |
                                (uint32_t)h->stack_trace_entry_count << 8 |
                                (uint32_t)(uint16_t)h->debug_block_flags << 16);
  CHECK(block_header_is_debug(block_header(p)));
  /* The allocation trace starts in allocate_here; the free trace is empty. */
  uintptr_t first = (uintptr_t)trace_entry(h, 0, 0), fn = (uintptr_t)allocate_here;
  CHECK_MSG(depth == 0 || (first > fn && first < fn + 256),
            "%s: first allocation frame %p, allocate_here at %p", kind, (void *)first, (void *)fn);
  for (unsigned i = 0; i < depth; i++)
    CHECK(trace_entry(h, 1, i) == NULL);
  CHECK(all_bytes(p, 1, size, 0x90));
  /* The outer block is the manager's: not usable, not owned, not freeable by the program. */
  CHECK_MSG((block_header(outer) & BLOCK_FLAG_DEBUG_OUTER) != 0, "%s: outer word %#x", kind,
            (unsigned)block_header(outer));
  CHECK_EQ(fastmm_usable_size(outer), 0);
  CHECK_EQ(fastmm_owns_block(outer), 0);
  CHECK_EQ(fastmm_usable_size(p), size);
  CHECK_EQ(fastmm_owns_block(p), 1);

  /* Freed: FastMM5's freed header, fill and trap; checksums recomputed. */
  if (size >= P)
    memcpy(p, &p, P); /* a recognisable first pointer (a VMT, for an object) */
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  CHECK_EQ(h->debug_block_flags, FASTMM_DEBUG_BLOCK_FREED);
  CHECK_EQ(h->debug_feature_flags,
           FASTMM_DEBUG_FEATURE_CHECKSUMS | FASTMM_DEBUG_FEATURE_FILL_PATTERN);
  CHECK_EQ(h->freed_by_thread, h->allocated_by_thread);
  CHECK(size < P || h->previously_used_by_class == (void *)p);
  CHECK_MSG(checksums_valid(p), "%s: checksums of a freed block", kind);
  CHECK(depth == 0 || trace_entry(h, 1, 0) != NULL);
  if (size >= 2 * P) {
    void *first_ptr;
    memcpy(&first_ptr, p, P);
    CHECK(first_ptr != NULL && first_ptr != (void *)p); /* the traps */
    CHECK(all_bytes(p, P, size, 0x80));
  } else {
    CHECK(all_bytes(p, 0, size, 0x80));
  }
  CHECK_EQ(fastmm_usable_size(p), 0);
  CHECK_EQ(fastmm_owns_block(p), 0);
}

static void layouts(void) {
  fastmm_enter_debug_mode();
  layout_of(37, "small");
  layout_of(0, "empty");
  layout_of(20000, "medium");
  layout_of(700000, "large");
  fastmm_set_debug_mode_stack_trace_entry_count(64);
  CHECK_EQ(fastmm_get_debug_mode_stack_trace_entry_count(), 64);
  layout_of(100, "64 entries");
  fastmm_set_debug_mode_stack_trace_entry_count(1000);
  CHECK_EQ(fastmm_get_debug_mode_stack_trace_entry_count(), 64);
  fastmm_set_debug_mode_stack_trace_entry_count(0);
  layout_of(100, "no entries");
  fastmm_set_debug_mode_stack_trace_entry_count(20);
  /* Numbers count up by one per debug block. */
  void *a = fastmm_getmem(10), *b = fastmm_getmem(10);
  if (CHECK(a && b))
    CHECK_EQ(header_of(b)->allocation_number, header_of(a)->allocation_number + 1);
  fastmm_freemem(a);
  fastmm_freemem(b);
  fastmm_exit_debug_mode();
}

/* ---- ReallocMem --------------------------------------------------------------------------------
 */

static void resizes(void) {
  fastmm_enter_debug_mode();
  unsigned char *p = (unsigned char *)fastmm_getmem(2000);
  if (!CHECK(p != NULL))
    return;
  tu_fill_pattern(p, 2000, 7);
  uint32_t number = header_of(p)->allocation_number;
  void *alloc0 = trace_entry(header_of(p), 0, 0);
  /* Smaller: in place, the footer follows the new end. */
  unsigned char *q = (unsigned char *)fastmm_reallocmem(p, 1000);
  CHECK(q == p);
  CHECK_EQ(header_of(q)->user_size, 1000);
  CHECK(checksums_valid(q));
  CHECK(tu_check_pattern(q, 1000, 7) == (size_t)-1);
  CHECK(trace_entry(header_of(q), 0, 0) == alloc0);
  /* Back up within the outer block: still in place. */
  q = (unsigned char *)fastmm_reallocmem(q, 1900);
  CHECK(q == p);
  CHECK(checksums_valid(q));
  CHECK(tu_check_pattern(q, 1000, 7) == (size_t)-1);
  /* Far larger: a new outer block, the same allocation number and trace, data kept. */
  unsigned char *r = (unsigned char *)fastmm_reallocmem(q, 100000);
  if (CHECK(r != NULL && r != q)) {
    CHECK_EQ(tb_kind(r), TB_KIND_DEBUG);
    CHECK_EQ(header_of(r)->allocation_number, number);
    CHECK_EQ(header_of(r)->user_size, 100000);
    CHECK(trace_entry(header_of(r), 0, 0) == alloc0);
    CHECK(checksums_valid(r));
    CHECK(tu_check_pattern(r, 1000, 7) == (size_t)-1);
    CHECK_EQ(header_of(q)->debug_block_flags, FASTMM_DEBUG_BLOCK_FREED); /* the old, freed */
    CHECK_EQ(fastmm_freemem(r), FASTMM_OK);
  }
  fastmm_exit_debug_mode();
}

/* ---- the debug entry points in normal mode, and the options ------------------------------------
 */

static void entry_points(void) {
  CHECK(!fastmm_debug_mode_active());
  unsigned char *p = (unsigned char *)fastmm_debug_getmem(50);
  if (CHECK(p != NULL)) {
    CHECK_EQ(tb_kind(p), TB_KIND_DEBUG);
    CHECK(all_bytes(p, 0, 50, 0x90));
    CHECK(checksums_valid(p));
  }
  unsigned char *z = (unsigned char *)fastmm_debug_allocmem(3000);
  if (CHECK(z != NULL)) {
    CHECK_EQ(tb_kind(z), TB_KIND_DEBUG);
    CHECK(all_bytes(z, 0, 3000, 0));
  }
  CHECK(fastmm_debug_getmem(-1) == NULL);
  CHECK(fastmm_debug_allocmem(-5) == NULL);
  /* A normal block becomes a debug block, its bytes copied. */
  unsigned char *n = (unsigned char *)fastmm_getmem(40);
  tu_fill_pattern(n, 40, 3);
  unsigned char *d = (unsigned char *)fastmm_debug_reallocmem(n, 30);
  if (CHECK(d != NULL)) {
    CHECK_EQ(tb_kind(d), TB_KIND_DEBUG);
    CHECK(tu_check_pattern(d, 30, 3) == (size_t)-1);
    CHECK_EQ(fastmm_debug_freemem(d), FASTMM_OK);
  }
  CHECK(fastmm_debug_reallocmem(p, -1) == NULL);
  /* Freed through the debug entry: a second free is a double free; a normal block frees. */
  CHECK_EQ(fastmm_debug_freemem(p), FASTMM_OK);
  size_t before = events(FASTMM_EVENT_DOUBLE_FREE);
  CHECK(fastmm_debug_freemem(p) != FASTMM_OK);
  CHECK_EQ(events(FASTMM_EVENT_DOUBLE_FREE), before + 1);
  before = events(FASTMM_EVENT_REALLOC_OF_FREED);
  CHECK(fastmm_debug_reallocmem(p, 10) == NULL);
  CHECK_EQ(events(FASTMM_EVENT_REALLOC_OF_FREED), before + 1);
  CHECK_EQ(fastmm_debug_freemem(z), FASTMM_OK);
  void *plain = fastmm_getmem(100);
  CHECK_EQ(fastmm_debug_freemem(plain), FASTMM_OK);
  CHECK_EQ(fastmm_debug_freemem(NULL), FASTMM_OK);
  /* The normal entry points still give normal blocks. */
  void *still = fastmm_getmem(50);
  CHECK_EQ(tb_kind(still), BLOCK_FLAG_SMALL);
  fastmm_freemem(still);
}

static void options(void) {
  CHECK_EQ(fastmm_test_get_debug_mode_options(),
           FASTMM_DMO_NEVER_FREE_SMALL_BLOCK_SPANS | FASTMM_DMO_NEVER_MERGE_FREE_MEDIUM_BLOCKS);
  fastmm_set_debug_mode_options(0xFFu);
  CHECK_EQ(fastmm_test_get_debug_mode_options(), 15);

  /* No checksums: the block says so, and an overrun is not caught (FastMM5). */
  fastmm_set_debug_mode_options(FASTMM_DMO_NO_BLOCK_CHECKSUMS);
  unsigned char *p = (unsigned char *)fastmm_debug_getmem(24);
  if (CHECK(p != NULL)) {
    CHECK_EQ(header_of(p)->debug_feature_flags, 0);
    CHECK(all_bytes(p, 0, 24, 0x90));
    p[24] ^= 0xFF;
    CHECK_EQ(fastmm_scan_debug_blocks_for_corruption(), 1);
    CHECK_EQ(fastmm_debug_freemem(p), FASTMM_OK);
    CHECK_EQ(header_of(p)->debug_feature_flags, FASTMM_DEBUG_FEATURE_FILL_PATTERN);
  }
  /* No fill patterns: new data is not filled, freed data is left, a write after free is not
   * looked for; with checksums, an overrun still is. */
  fastmm_set_debug_mode_options(FASTMM_DMO_NO_BLOCK_FILL_PATTERNS);
  p = (unsigned char *)fastmm_debug_getmem(64);
  if (CHECK(p != NULL)) {
    CHECK_EQ(header_of(p)->debug_feature_flags, FASTMM_DEBUG_FEATURE_CHECKSUMS);
    memset(p, 0x11, 64);
    CHECK_EQ(fastmm_debug_freemem(p), FASTMM_OK);
    CHECK_EQ(header_of(p)->debug_feature_flags, FASTMM_DEBUG_FEATURE_CHECKSUMS);
    CHECK(all_bytes(p, 0, 64, 0x11));
    p[10] = 0x22;
    CHECK_EQ(fastmm_scan_debug_blocks_for_corruption(), 1);
  }
  /* ... unless an erase mode is on, which always fills. */
  fastmm_begin_erase_allocated_block_content();
  p = (unsigned char *)fastmm_debug_getmem(64);
  if (CHECK(p != NULL))
    CHECK(all_bytes(p, 0, 64, 0x90));
  fastmm_end_erase_allocated_block_content();
  fastmm_begin_erase_freed_block_content();
  if (p != NULL) {
    CHECK_EQ(fastmm_debug_freemem(p), FASTMM_OK);
    CHECK(all_bytes(p, P, 64, 0x80));
  }
  fastmm_end_erase_freed_block_content();
  fastmm_set_debug_mode_options(FASTMM_DMO_NEVER_FREE_SMALL_BLOCK_SPANS |
                                FASTMM_DMO_NEVER_MERGE_FREE_MEDIUM_BLOCKS);
  fastmm_process_all_pending_frees();
}

/* ---- the bound variables -----------------------------------------------------------------------
 */

static volatile uint32_t group, last_number, break_number, small_waits, medium_waits, large_waits;
static volatile uint8_t top_down, scan_every;
static void *volatile get_trace_var, *volatile convert_var;
static int breaks;

#if defined(_WIN32)
static LONG CALLBACK on_breakpoint(EXCEPTION_POINTERS *x) {
  if (x->ExceptionRecord->ExceptionCode != EXCEPTION_BREAKPOINT)
    return EXCEPTION_CONTINUE_SEARCH;
  breaks++;
  /* Past the int3 (the context points at it, or already past it). */
#if defined(_WIN64)
  if (*(unsigned char *)x->ContextRecord->Rip == 0xCC)
    x->ContextRecord->Rip++;
#else
  if (*(unsigned char *)x->ContextRecord->Eip == 0xCC)
    x->ContextRecord->Eip++;
#endif
  return EXCEPTION_CONTINUE_EXECUTION;
}
#else
static void on_sigtrap(int sig) {
  (void)sig;
  breaks++;
}
#endif

/* FastMM5's handler types, with Delphi's convention (register on Win32). */
#if defined(_WIN32) && !defined(_WIN64)
#define PASCAL_CALL __attribute__((regparm(3)))
#define PASCAL_CALL_4 __attribute__((regparm(3), stdcall))
#else
#define PASCAL_CALL
#define PASCAL_CALL_4
#endif
static unsigned get_trace_calls, convert_calls;
static void PASCAL_CALL noop_get(void **frames, uint32_t depth, uint32_t skip) {
  (void)skip;
  memset(frames, 0, depth * P);
}
static uint16_t *PASCAL_CALL_4 noop_convert(void **f, uint32_t n, uint16_t *b, uint16_t *e) {
  (void)f;
  (void)n;
  (void)e;
  return b;
}
static void PASCAL_CALL fake_get(void **frames, uint32_t depth, uint32_t skip) {
  get_trace_calls++;
  CHECK_EQ(skip, 0);
  memset(frames, 0, depth * P);
  for (uint32_t i = 0; i < depth && i < 3; i++)
    frames[i] = (void *)(uintptr_t)(0x1000u * (i + 1));
}
static uint16_t *PASCAL_CALL_4 fake_convert(void **frames, uint32_t n, uint16_t *b, uint16_t *e) {
  static const char text[] = "\r\n  fake frame 0x";
  convert_calls++;
  for (uint32_t i = 0; i < n && frames[i] != NULL; i++) {
    for (const char *c = text; *c && b < e; c++)
      *b++ = (uint16_t)*c;
    if (b < e)
      *b++ = (uint16_t)('0' + ((uintptr_t)frames[i] >> 12));
  }
  if (b < e)
    *b++ = 0x00E9; /* a non-ASCII character, to see the UTF-8 */
  return b;
}

static const char *log_name = "test_debug_fastmm5_events.txt";

static int log_contains(const char *what) {
  static char text[1 << 16];
  FILE *f = fopen(log_name, "rb");
  size_t n = 0;
  if (f) {
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
  }
  text[n] = 0;
  return strstr(text, what) != NULL;
}

static void variables(void) {
  fastmm_pascal_variables v;
  memset(&v, 0, sizeof v);
  v.size = sizeof v;
  v.current_allocation_group = &group;
  v.last_allocation_number = &last_number;
  v.debug_break_allocation_number = &break_number;
  v.small_block_thread_contention_count = &small_waits;
  v.medium_block_thread_contention_count = &medium_waits;
  v.large_block_thread_contention_count = &large_waits;
  v.allocate_top_down = &top_down;
  v.scan_before_every_operation = &scan_every;
  v.get_stack_trace = (void *const volatile *)&get_trace_var;
  v.convert_stack_trace_to_text = (void *const volatile *)&convert_var;
  v.noop_get_stack_trace = (void *)(uintptr_t)noop_get;
  v.noop_convert_stack_trace_to_text = (void *)(uintptr_t)noop_convert;
  get_trace_var = v.noop_get_stack_trace;
  convert_var = v.noop_convert_stack_trace_to_text;
  last_number = 1000;
  group = 7;
  fastmm_bind_variables(&v);

  /* Group and number come from the variables, which the manager updates. */
  void *a = fastmm_debug_getmem(10);
  if (CHECK(a != NULL)) {
    CHECK_EQ(header_of(a)->allocation_number, 1001);
    CHECK_EQ(header_of(a)->allocation_group, 7);
  }
  CHECK_EQ(last_number, 1001);
  group = 8;
  void *b = fastmm_debug_getmem(10);
  if (CHECK(b != NULL)) {
    CHECK_EQ(header_of(b)->allocation_number, 1002);
    CHECK_EQ(header_of(b)->allocation_group, 8);
  }
  /* The number wraps at 2^32, as FastMM5's Cardinal. */
  last_number = 0xFFFFFFFFu;
  void *c = fastmm_debug_getmem(10);
  if (CHECK(c != NULL))
    CHECK_EQ(header_of(c)->allocation_number, 0);
  fastmm_debug_freemem(a);
  fastmm_debug_freemem(b);
  fastmm_debug_freemem(c);

  /* The break: exactly at the block of that number. */
#if defined(_WIN32)
  void *veh = AddVectoredExceptionHandler(1, on_breakpoint);
#else
  signal(SIGTRAP, on_sigtrap);
#endif
  last_number = 40;
  break_number = 42;
  void *n41 = fastmm_debug_getmem(8);
  CHECK_EQ(breaks, 0);
  void *n42 = fastmm_debug_getmem(8);
  CHECK_EQ(breaks, 1);
  void *n43 = fastmm_debug_getmem(8);
  CHECK_EQ(breaks, 1);
  if (CHECK(n42 != NULL))
    CHECK_EQ(header_of(n42)->allocation_number, 42);
  break_number = 0;
  fastmm_debug_freemem(n41);
  fastmm_debug_freemem(n42);
  fastmm_debug_freemem(n43);
#if defined(_WIN32)
  RemoveVectoredExceptionHandler(veh);
#else
  signal(SIGTRAP, SIG_DFL);
#endif

  /* Scan before every operation, read at each operation while debug mode is on. */
  unsigned char *bad = (unsigned char *)fastmm_debug_getmem(16);
  if (CHECK(bad != NULL)) {
    unsigned char saved = bad[16];
    bad[16] ^= 0xFF;
    size_t before = events(FASTMM_EVENT_GUARD_CORRUPTED);
    scan_every = 1;
    void *x = fastmm_getmem(10); /* normal mode: no scan */
    CHECK_EQ(events(FASTMM_EVENT_GUARD_CORRUPTED), before);
    fastmm_freemem(x);
    fastmm_enter_debug_mode();
    x = fastmm_getmem(10);
    CHECK_MSG(events(FASTMM_EVENT_GUARD_CORRUPTED) > before, "GetMem did not scan");
    before = events(FASTMM_EVENT_GUARD_CORRUPTED);
    fastmm_freemem(x);
    CHECK_MSG(events(FASTMM_EVENT_GUARD_CORRUPTED) > before, "FreeMem did not scan");
    scan_every = 0;
    before = events(FASTMM_EVENT_GUARD_CORRUPTED);
    x = fastmm_getmem(10);
    CHECK_EQ(events(FASTMM_EVENT_GUARD_CORRUPTED), before);
    fastmm_freemem(x);
    fastmm_exit_debug_mode();
    bad[16] = saved;
    CHECK_EQ(fastmm_freemem(bad), FASTMM_OK);
  }

  /* The program's stack trace routines: taken while they are not the no-op ones. */
  get_trace_var = (void *)(uintptr_t)fake_get;
  void *t = fastmm_debug_getmem(10);
  CHECK(get_trace_calls > 0);
  if (CHECK(t != NULL)) {
    CHECK(trace_entry(header_of(t), 0, 0) == (void *)(uintptr_t)0x1000);
    CHECK(trace_entry(header_of(t), 0, 2) == (void *)(uintptr_t)0x3000);
    CHECK(trace_entry(header_of(t), 0, 3) == NULL);
  }
  convert_var = (void *)(uintptr_t)fake_convert;
  fastmm_debug_freemem(t);
  remove(log_name);
  fastmm_set_event_log_filename(log_name);
  fastmm_debug_freemem(t); /* a double free, written to the log through fake_convert */
  CHECK(convert_calls > 0);
  CHECK_MSG(log_contains("fake frame 0x1\r\n  fake frame 0x2\r\n  fake frame 0x3\xC3\xA9"),
            "the event log does not show FastMM_ConvertStackTraceToText's text");
  get_trace_var = v.noop_get_stack_trace;
  convert_var = v.noop_convert_stack_trace_to_text;
  unsigned calls = get_trace_calls;
  t = fastmm_debug_getmem(10);
  CHECK_EQ(get_trace_calls, calls); /* no-op again: the manager's own walk */
  if (CHECK(t != NULL))
    CHECK(trace_entry(header_of(t), 0, 0) != (void *)(uintptr_t)0x1000);
  fastmm_debug_freemem(t);
  quiet_log();

#if defined(_WIN32)
  /* Top down: a new mapping comes from higher addresses than the one before. */
  void *low = fastmm_getmem(4u << 20);
  top_down = 1;
  void *high = fastmm_getmem(4u << 20);
  top_down = 0;
  CHECK_MSG(low && high && (uintptr_t)high > (uintptr_t)low, "top-down mapping at %p, before %p",
            high, low);
  fastmm_freemem(low);
  fastmm_freemem(high);
#endif

  /* Unbound: the manager's own numbers go on from the variable's. */
  last_number = 500;
  fastmm_bind_variables(NULL);
  void *u = fastmm_debug_getmem(10);
  if (CHECK(u != NULL)) {
    CHECK_EQ(header_of(u)->allocation_number, 501);
    CHECK_EQ(header_of(u)->allocation_group, 0);
  }
  CHECK_EQ(last_number, 500);
  fastmm_debug_freemem(u);
  fastmm_process_all_pending_frees();
}

/* ---- the event handler -------------------------------------------------------------------------
 */

static fastmm_debug_event seen[8];
static unsigned seen_count;

static void FASTMM_CDECL on_event(const fastmm_debug_event *e) {
  if (seen_count < 8) {
    seen[seen_count] = *e;
    if (e->debug_header != NULL) /* it points into the event: the copy's into the copy */
      seen[seen_count].debug_header = &seen[seen_count].header;
  }
  seen_count++;
  /* No lock of the manager is held: the handler may allocate, in debug mode too. */
  void *p = fastmm_getmem(100);
  CHECK(p != NULL);
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
}

static void handler(void) {
  remove(log_name);
  fastmm_set_event_log_filename(log_name);
  fastmm_set_event_handler(on_event);
  fastmm_enter_debug_mode();
  unsigned char *p = (unsigned char *)fastmm_getmem(48);
  uint32_t number = header_of(p)->allocation_number;
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  CHECK(fastmm_freemem(p) != FASTMM_OK);
  if (CHECK_EQ(seen_count, 1)) {
    CHECK_EQ(seen[0].kind, FASTMM_EVENT_DOUBLE_FREE);
    CHECK(seen[0].block == p);
    if (CHECK(seen[0].debug_header != NULL)) {
      CHECK_EQ(seen[0].debug_header->allocation_number, number);
      CHECK_EQ(seen[0].debug_header->user_size, 48);
      CHECK_EQ(seen[0].debug_header->debug_block_flags, FASTMM_DEBUG_BLOCK_FREED);
    }
    CHECK(seen[0].alloc_frame_count > 0 && seen[0].free_frame_count > 0);
    CHECK(seen[0].call_frame_count > 0);
  }
  /* A write after free: the changed ranges (FastMM5's token 15). */
  p = (unsigned char *)fastmm_getmem(100);
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  p[20] = 1;
  p[21] = 2;
  p[60] = 3;
  CHECK_EQ(fastmm_scan_debug_blocks_for_corruption(), 0);
  if (CHECK_EQ(seen_count, 2)) {
    CHECK_EQ(seen[1].kind, FASTMM_EVENT_WRITE_AFTER_FREE);
    CHECK_EQ(seen[1].modified_range_count, 2);
    CHECK_EQ(seen[1].modified_ranges[0].offset, 20);
    CHECK_EQ(seen[1].modified_ranges[0].length, 2);
    CHECK_EQ(seen[1].modified_ranges[1].offset, 60);
    CHECK_EQ(seen[1].modified_ranges[1].length, 1);
  }
  p[20] = p[21] = p[60] = 0x80;
  /* Leaks: one event per block, through the handler. */
  void *l1 = fastmm_getmem(11), *l2 = fastmm_getmem(22);
  seen_count = 0;
  CHECK_EQ(fastmm_report_leaks(), 2);
  CHECK_EQ(seen_count, 2);
  CHECK(seen[0].kind == FASTMM_EVENT_LEAK && seen[1].kind == FASTMM_EVENT_LEAK);
  CHECK((seen[0].block == l1 && seen[1].block == l2) ||
        (seen[0].block == l2 && seen[1].block == l1));
  fastmm_freemem(l1);
  fastmm_freemem(l2);
  fastmm_exit_debug_mode();
  fastmm_set_event_handler(NULL);
  CHECK_MSG(!log_contains("FastMM-C"), "events went to the log while a handler was set");
  quiet_log();
  seen_count = 0;
}

/* ---- the quarantine is free memory
 * --------------------------------------------------------------- */

static void quarantine_is_free(void) {
  enum { N = 300 };
  void *blocks[N];
  fastmm_state before, during, after, flushed;
  fastmm_flush_thread_cache();
  fastmm_get_state(&before);
  fastmm_enter_debug_mode();
  for (int i = 0; i < N; i++)
    blocks[i] = fastmm_getmem(500);
  fastmm_flush_thread_cache();
  fastmm_get_state(&during);
  CHECK_EQ(tb_blocks_in_use(&during), tb_blocks_in_use(&before) + N);
  for (int i = 0; i < N; i++)
    fastmm_freemem(blocks[i]);
  fastmm_flush_thread_cache();
  fastmm_get_state(&after); /* all N in the quarantine, counted free */
  CHECK_MSG(tb_blocks_in_use(&after) == tb_blocks_in_use(&before),
            "%zu blocks in use with the quarantine full, %zu before", tb_blocks_in_use(&after),
            tb_blocks_in_use(&before));
  CHECK_EQ(after.small.bytes_in_use + after.medium.bytes_in_use + after.large.bytes_in_use,
           before.small.bytes_in_use + before.medium.bytes_in_use + before.large.bytes_in_use);
  fastmm_kind_usage classes[64];
  size_t n = fastmm_get_small_class_usage(classes, 64), live = 0;
  for (size_t c = 0; c < n; c++)
    live += classes[c].blocks_in_use;
  CHECK_EQ(live, after.small.blocks_in_use);
  /* Still there, still checked (debug mode is on), until the pending frees are processed. */
  CHECK(((unsigned char *)blocks[0])[100] == 0x80);
  fastmm_process_all_pending_frees();
  fastmm_get_state(&flushed);
  CHECK_EQ(tb_blocks_in_use(&flushed), tb_blocks_in_use(&before));
  CHECK(fastmm_freemem(blocks[0]) != FASTMM_OK); /* freed for good: still refused */
  fastmm_exit_debug_mode();
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* ---- a virtual call on a freed object
 * ------------------------------------------------------------ */

static void freed_object_call(void) {
  fastmm_set_event_handler(on_event);
  fastmm_enter_debug_mode();
  void **obj = (void **)fastmm_getmem(40);
  void *vmt = (void *)&fastmm_getmem; /* a first pointer to remember */
  obj[0] = vmt;
  uint32_t number = header_of(obj)->allocation_number;
  CHECK_EQ(fastmm_freemem(obj), FASTMM_OK);
  seen_count = 0;
  if (setjmp(trap_return) == 0) {
    void(FASTMM_DELPHI_CALL * *table)(void *) = (void(FASTMM_DELPHI_CALL **)(void *))obj[0];
    table[3](obj); /* Self is the object: Delphi's convention */
  }
  if (CHECK_EQ(seen_count, 1)) {
    CHECK_EQ(seen[0].kind, FASTMM_EVENT_FREED_OBJECT_CALL);
    CHECK_EQ(seen[0].virtual_method_index, 3);
    CHECK(seen[0].block == obj);
    if (CHECK(seen[0].debug_header != NULL)) {
      CHECK_EQ(seen[0].debug_header->allocation_number, number);
      CHECK(seen[0].debug_header->previously_used_by_class == vmt);
    }
    CHECK(seen[0].call_frame_count > 0);
  }
  seen_count = 0;
  if (setjmp(trap_return) == 0) {
    void(FASTMM_DELPHI_CALL * *table)(void *) = (void(FASTMM_DELPHI_CALL **)(void *))obj[0];
    table[-1](obj); /* Delphi's Destroy slot */
  }
  if (CHECK_EQ(seen_count, 1))
    CHECK_EQ(seen[0].virtual_method_index, -1);
  fastmm_exit_debug_mode();
  fastmm_set_event_handler(NULL);
  seen_count = 0;
}

int main(void) {
  tb_start_quiet("test_debug_fastmm5");
  fastmm_set_freed_object_call_handler(on_freed_object);
  layouts();
  resizes();
  entry_points();
  options();
  variables();
  handler();
  quarantine_is_free();
  freed_object_call();
  fastmm_process_all_pending_frees();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_debug_fastmm5");
}
