/* SPDX-License-Identifier: MIT */
/* Debug mode (issue 6): every fault class is injected on purpose and must be detected,
 * counted, reported to the event log with the allocation stack frame of the function that
 * allocated the block, and leave a heap that still works. */
#include "fastmm_test.h"
#include "test_blocks.h"

#include <setjmp.h>
#include <stdio.h>

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __declspec(noinline)
#endif

static const char *log_name = "test_debug_events.txt";

/* Each fault's block comes from its own function, so the report can be checked for it. */
NOINLINE static char *alloc_for_overrun(void) {
  char *p = (char *)fastmm_getmem(24);
  if (p) /* work after the call, so it is not a tail call and the frame is this function */
    p[1] = (char)0x90;
  return p;
}
NOINLINE static char *alloc_for_underrun(void) {
  char *p = (char *)fastmm_getmem(40);
  if (p) /* work after the call, so it is not a tail call and the frame is this function */
    p[1] = (char)0x90;
  return p;
}
NOINLINE static char *alloc_for_write_after_free(void) {
  char *p = (char *)fastmm_getmem(64);
  if (p) /* work after the call, so it is not a tail call and the frame is this function */
    p[1] = (char)0x90;
  return p;
}
NOINLINE static char *alloc_for_double_free(void) {
  char *p = (char *)fastmm_getmem(100);
  if (p) /* work after the call, so it is not a tail call and the frame is this function */
    p[1] = (char)0x90;
  return p;
}
NOINLINE static char *alloc_for_leak(void) {
  char *p = (char *)fastmm_getmem(72);
  if (p) /* work after the call, so it is not a tail call and the frame is this function */
    p[1] = (char)0x90;
  return p;
}

/* The allocation's first recorded frame lies inside `fn`. */
static int allocated_in(const fastmm_debug_event *e, void *(*fn)(void)) {
  uintptr_t start = (uintptr_t)fn;
  return e->alloc_frame_count > 0 && (uintptr_t)e->alloc_frames[0] > start &&
         (uintptr_t)e->alloc_frames[0] < start + 256;
}

static size_t count(int kind) {
  return fastmm_get_debug_event_count(kind);
}

static char log_text[1 << 20];
static const char *read_log(void) {
  FILE *f = fopen(log_name, "rb");
  size_t n = 0;
  if (f) {
    n = fread(log_text, 1, sizeof log_text - 1, f);
    fclose(f);
  }
  log_text[n] = 0;
  return log_text;
}

static void heap_still_works(void) {
  CHECK_EQ(fastmm_check_heap(), 0);
  void *a = fastmm_getmem(30), *b = fastmm_getmem(5000), *c = fastmm_getmem(1 << 20);
  CHECK(a && b && c);
  memset(a, 1, 30);
  memset(b, 2, 5000);
  CHECK_EQ(fastmm_freemem(a), 0);
  CHECK_EQ(fastmm_freemem(b), 0);
  CHECK_EQ(fastmm_freemem(c), 0);
}

static void fault(int kind, void *(*alloc_fn)(void), const char *title) {
  fastmm_debug_event e;
  fastmm_get_last_debug_event(&e);
  CHECK_MSG(e.kind == kind, "%s: last event %d, expected %d", title, e.kind, kind);
  CHECK_MSG(allocated_in(&e, alloc_fn), "%s: allocation frame %p not in its function %p", title,
            e.alloc_frame_count ? e.alloc_frames[0] : NULL, (void *)alloc_fn);
  heap_still_works();
}

static jmp_buf trap_return;
static int trap_calls;
static void on_freed_object_call(void) {
  trap_calls++;
  longjmp(trap_return, 1);
}

/* A fake Delphi class: VMT with vmtSelfPtr (-22), vmtClassName (-14), vmtInstanceSize (-13). */
static void *fake_vmt_area[24];
static const unsigned char fake_class_name[] = "\x0bTLeakedItem";

int main(void) {
  remove(log_name);
  fastmm_set_event_log_filename(log_name);
  CHECK(strcmp(fastmm_test_get_event_log_filename(), log_name) == 0);
  CHECK_EQ(fastmm_get_debug_mode_stack_trace_entry_count(), 20);

  /* The nesting counter follows the calls. */
  CHECK(!fastmm_debug_mode_active());
  void *normal = fastmm_getmem(48);
  CHECK_EQ(tb_kind(normal), BLOCK_FLAG_SMALL);
  fastmm_enter_debug_mode();
  fastmm_enter_debug_mode();
  fastmm_exit_debug_mode();
  CHECK(fastmm_debug_mode_active());
  void *dbg = fastmm_getmem(48);
  CHECK_EQ(tb_kind(dbg), TB_KIND_DEBUG);
  CHECK_EQ(fastmm_usable_size(dbg), 48);
  CHECK(((unsigned char *)dbg)[0] == 0x90 && ((unsigned char *)dbg)[47] == 0x90);
  CHECK_EQ(fastmm_freemem(normal), 0); /* a normal block freed in debug mode */
  fastmm_exit_debug_mode();
  CHECK(!fastmm_debug_mode_active());
  CHECK_EQ(fastmm_freemem(dbg), 0); /* a debug block freed in normal mode */
  fastmm_exit_debug_mode();         /* counter at 0: stays 0 (test_mode_balance) */
  CHECK(!fastmm_debug_mode_active());
  fastmm_enter_debug_mode(); /* 1: on for the rest */
  CHECK(fastmm_debug_mode_active());

  /* A zero-size debug block is still a block of ours. */
  void *zero = fastmm_getmem(0);
  CHECK(zero != NULL && fastmm_owns_block(zero) && fastmm_heap_contains(zero));
  CHECK(fastmm_register_expected_leak(zero) && fastmm_unregister_expected_leak(zero));
  CHECK_EQ(fastmm_freemem(zero), 0);
  CHECK(!fastmm_owns_block(zero));

  /* Leaks: one expected, one not, one a (fake) Delphi object. */
  char *expected = alloc_for_leak();
  CHECK(fastmm_register_expected_leak(expected));
  char *leaked = alloc_for_leak();
  void **object = (void **)fastmm_getmem(32);
  fake_vmt_area[0] = NULL;
  void **vmt = &fake_vmt_area[22];
  vmt[-22] = vmt;
  vmt[-14] = (void *)fake_class_name;
  vmt[-13] = (void *)(uintptr_t)32;
  object[0] = vmt;
  CHECK_EQ(fastmm_report_leaks(), 2);
  CHECK(strstr(read_log(), "1 x TLeakedItem") != NULL);
  CHECK(strstr(log_text, "1 x 72 bytes") != NULL);
  /* The allocating routine's frame: named from the exe's COFF symbols on Windows (or its DWARF),
   * natively module+offset until a DWARF reader names it. */
#if defined(_WIN32)
  CHECK(strstr(log_text, "[alloc_for_leak+0x") != NULL ||
        strstr(log_text, "[alloc_for_leak]") != NULL);
#else
  CHECK(strstr(log_text, "test_debug+0x") != NULL || strstr(log_text, "[alloc_for_leak]") != NULL);
#endif
  CHECK_EQ(fastmm_freemem(leaked), 0);
  CHECK_EQ(fastmm_freemem(object), 0);
  CHECK_EQ(fastmm_report_leaks(), 0); /* the expected one is left out */
  CHECK(fastmm_unregister_expected_leak(expected));
  CHECK_EQ(fastmm_freemem(expected), 0);

  /* Overrun by one byte. */
  size_t before = count(FASTMM_EVENT_GUARD_CORRUPTED);
  char *p = alloc_for_overrun();
  char guard_byte = p[24];
  p[24] = (char)(guard_byte ^ 0x5A); /* one byte past the end, certainly changed */
  CHECK(fastmm_scan_debug_blocks_for_corruption() == 0);
  CHECK(fastmm_freemem(p) != 0);
  CHECK_EQ(count(FASTMM_EVENT_GUARD_CORRUPTED), before + 2); /* the scan and the free */
  fault(FASTMM_EVENT_GUARD_CORRUPTED, (void *(*)(void))alloc_for_overrun, "overrun");
  p[24] = guard_byte; /* mended: later scans are clean, and it frees */
  CHECK_EQ(fastmm_freemem(p), 0);

  /* Underrun by one byte. */
  before = count(FASTMM_EVENT_HEADER_CORRUPTED);
  p = alloc_for_underrun();
  char saved = p[-1];
  p[-1] = (char)(saved ^ 0x5A);
  CHECK(fastmm_freemem(p) != 0);
  CHECK_EQ(count(FASTMM_EVENT_HEADER_CORRUPTED), before + 1);
  CHECK(fastmm_get_debug_event_count(FASTMM_EVENT_HEADER_CORRUPTED) > 0);
  heap_still_works();
  p[-1] = saved;
  CHECK_EQ(fastmm_freemem(p), 0); /* mended: now it frees */

  /* Write after free, found by the scan (the block is in quarantine). */
  before = count(FASTMM_EVENT_WRITE_AFTER_FREE);
  p = alloc_for_write_after_free();
  CHECK_EQ(fastmm_freemem(p), 0);
  CHECK(((unsigned char *)p)[20] == 0x80);
  p[20] = 1;
  CHECK(fastmm_scan_debug_blocks_for_corruption() == 0);
  CHECK_EQ(count(FASTMM_EVENT_WRITE_AFTER_FREE), before + 1);
  fault(FASTMM_EVENT_WRITE_AFTER_FREE, (void *(*)(void))alloc_for_write_after_free,
        "write after free");
  p[20] = (char)0x80;
  CHECK(fastmm_scan_debug_blocks_for_corruption() == 1);

  /* Double free, and realloc of the freed block. */
  p = alloc_for_double_free();
  CHECK_EQ(fastmm_freemem(p), 0);
  before = count(FASTMM_EVENT_DOUBLE_FREE);
  CHECK(fastmm_freemem(p) != 0);
  CHECK_EQ(count(FASTMM_EVENT_DOUBLE_FREE), before + 1);
  fault(FASTMM_EVENT_DOUBLE_FREE, (void *(*)(void))alloc_for_double_free, "double free");
  fastmm_debug_event e;
  fastmm_get_last_debug_event(&e);
  CHECK(e.free_frame_count > 0); /* where it was freed the first time */
  before = count(FASTMM_EVENT_REALLOC_OF_FREED);
  CHECK(fastmm_reallocmem(p, 10) == NULL);
  CHECK_EQ(count(FASTMM_EVENT_REALLOC_OF_FREED), before + 1);
  heap_still_works();

  /* Free of an interior pointer. */
  char *q = (char *)fastmm_getmem(200);
  before = count(FASTMM_EVENT_INVALID_POINTER);
  CHECK(fastmm_freemem(q + 16) != 0);
  CHECK_EQ(count(FASTMM_EVENT_INVALID_POINTER), before + 1);
  CHECK_EQ(fastmm_freemem(q), 0);
  heap_still_works();

  /* ReallocMem of a debug block keeps the data and moves. */
  q = (char *)fastmm_getmem(10);
  memcpy(q, "0123456789", 10);
  char *r = (char *)fastmm_reallocmem(q, 5000);
  CHECK(r != NULL && r != q && memcmp(r, "0123456789", 10) == 0);
  CHECK_EQ(tb_kind(r), TB_KIND_DEBUG);
  CHECK_EQ(fastmm_freemem(r), 0);

  /* A virtual call on a freed object lands in a trap. */
  void **obj = (void **)fastmm_getmem(32);
  CHECK_EQ(fastmm_freemem(obj), 0);
  fastmm_set_freed_object_call_handler(on_freed_object_call);
  before = count(FASTMM_EVENT_FREED_OBJECT_CALL);
  if (setjmp(trap_return) == 0) {
    void (**table)(void) = (void (**)(void))obj[0];
    table[3](); /* a virtual method slot */
  }
  CHECK_EQ(trap_calls, 1);
  CHECK_EQ(count(FASTMM_EVENT_FREED_OBJECT_CALL), before + 1);
  fastmm_set_freed_object_call_handler(NULL);

  /* The log reads as a person would want it. */
  read_log();
  CHECK(strstr(log_text, "a write past the end of the block") != NULL);
  CHECK(strstr(log_text, "A block was freed twice") != NULL);
  CHECK(strstr(log_text, "Stack trace of the allocation:") != NULL);
  CHECK(strstr(log_text, "Stack trace of the free") != NULL);
  CHECK(strstr(log_text, "The block starts with:") != NULL);

  /* Leaving debug mode empties the quarantine; the erase modes work without it. */
  fastmm_exit_debug_mode();
  CHECK(!fastmm_debug_mode_active());
  fastmm_begin_erase_freed_block_content();
  CHECK(fastmm_erase_freed_block_content_active());
  unsigned char *z = (unsigned char *)fastmm_getmem(64);
  memset(z, 0x11, 64);
  CHECK_EQ(fastmm_freemem(z), 0);
  CHECK(z[32] == 0x80 && z[59] == 0x80);
  fastmm_end_erase_freed_block_content();
  CHECK(!fastmm_erase_freed_block_content_active());
  fastmm_begin_erase_allocated_block_content();
  z = (unsigned char *)fastmm_getmem(64);
  CHECK(z[0] == 0x90 && z[63] == 0x90);
  CHECK_EQ(fastmm_freemem(z), 0);
  fastmm_end_erase_allocated_block_content();

  /* Per-class usage counts live blocks, not cached ones. */
  enum { N = 10 };
  void *blocks[N];
  fastmm_kind_usage before_use[64], after_use[64];
  size_t classes = fastmm_get_small_class_usage(before_use, 64);
  CHECK_EQ(classes, SMALL_CLASS_COUNT);
  int c = tb_small_class_for(100);
  for (int i = 0; i < N; i++)
    blocks[i] = fastmm_getmem(100);
  fastmm_get_small_class_usage(after_use, 64);
  CHECK_EQ(after_use[c].blocks_in_use, before_use[c].blocks_in_use + N);
  CHECK_EQ(after_use[c].bytes_in_use, after_use[c].blocks_in_use * tb_small_usable((size_t)c));
  CHECK(after_use[c].bytes_reserved > 0);
  for (int i = 0; i < N; i++)
    fastmm_freemem(blocks[i]);
  fastmm_get_small_class_usage(after_use, 64);
  CHECK_EQ(after_use[c].blocks_in_use, before_use[c].blocks_in_use);
  char local;
  CHECK(!fastmm_heap_contains(&local));

  CHECK_EQ(fastmm_check_heap(), 0);
  printf("event log: %s\n", fastmm_test_get_event_log_filename());
  return tu_finish("test_debug");
}
