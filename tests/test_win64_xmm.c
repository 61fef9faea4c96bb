/* SPDX-License-Identifier: MIT */
/* Win64: the Delphi record's entry points leave XMM4-XMM15 as they found them, on the fast
 * paths and on the slow ones (new spans, large mappings, moves, frees that give memory back),
 * in every mode: normal, debug mode (entered by fastmm_enter_debug_mode, and
 * fastmm_get_memory_manager_debug's record), debug mode with no stack traces (as
 * FASTMMC_STACK_DEPTH=0), a double free that reports an event to the event log, and the erase
 * modes; through the plain record and the bound Free Pascal and Delphi records.
 * tests/win64/xmm_harness.asm loads sentinels, calls, and reports what changed. */
#include "test_blocks.h"

uint32_t xmm_clobbered_by(void *fn, void *a, void *b, void **result);
void *xmm_clobbering_function(void *a);

static fastmm_memory_manager_ex mm;

static const char *mode = "normal mode";

static void *call(void *fn, void *a, void *b, const char *what) {
  void *result = NULL;
  uint32_t clobbered = xmm_clobbered_by(fn, a, b, &result);
  CHECK_MSG(clobbered == 0, "%s: %s changed XMM registers (mask %#x)", mode, what,
            (unsigned)clobbered);
  return result;
}

/* The records bound to a previous manager: Free Pascal's six entries and Delphi's bound FreeMem
 * and ReallocMem (their previous manager is not reached here). */
static size_t never_free(void *p) {
  (void)p;
  CHECK_MSG(0, "the previous manager was called");
  return 0;
}
static void *never_realloc(void **p, size_t n) {
  (void)p, (void)n;
  CHECK_MSG(0, "the previous manager was called");
  return NULL;
}
static void *never_get(size_t n) {
  (void)n;
  CHECK_MSG(0, "the previous manager was called");
  return NULL;
}
static int32_t never_free_delphi(void *p) {
  (void)p;
  CHECK_MSG(0, "the previous manager was called");
  return 0;
}
static void *never_realloc_delphi(void *p, intptr_t n) {
  (void)p, (void)n;
  CHECK_MSG(0, "the previous manager was called");
  return NULL;
}
static void ignore_error(int32_t code, const void *address) {
  (void)code, (void)address;
}

static void bound_records(void) {
  static uint8_t no = 0, yes = 1;
  fastmm_fpc_bindings fb = {sizeof fb, never_free,   never_realloc, never_free,
                            never_get, ignore_error, &no,           &yes};
  fastmm_delphi_bindings db = {sizeof db, never_free_delphi, never_realloc_delphi, ignore_error};
  fastmm_fpc_memory_manager fpc;
  fastmm_memory_manager_ex dmm;
  if (!CHECK(fastmm_get_fpc_memory_manager(&fpc, &fb) == 1) ||
      !CHECK(fastmm_get_memory_manager_with_previous(&dmm, &db) == 1))
    return;
  size_t sizes[] = {8, 100, 2000, 3000, 100000, 600000, 5u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p = call((void *)fpc.get_mem, (void *)sizes[i], NULL, "FPC GetMem");
    call((void *)fpc.mem_size, p, NULL, "FPC MemSize");
    call((void *)fpc.realloc_mem, &p, (void *)(sizes[i] - 1), "FPC ReAllocMem (down)");
    call((void *)fpc.realloc_mem, &p, (void *)(sizes[i] * 3), "FPC ReAllocMem (up)");
    call((void *)fpc.free_mem, (char *)p + 16, NULL, "FPC FreeMem (inside a block)");
    call((void *)fpc.free_mem_size, p, (void *)sizes[i], "FPC FreeMemSize");
    p = call((void *)fpc.alloc_mem, (void *)sizes[i], NULL, "FPC AllocMem");
    call((void *)fpc.free_mem, p, NULL, "FPC FreeMem");
    p = dmm.get_mem((intptr_t)sizes[i]);
    p = call((void *)dmm.realloc_mem, p, (void *)(sizes[i] * 2), "bound ReallocMem");
    call((void *)dmm.free_mem, p, NULL, "bound FreeMem");
  }
}

static void plain_record(const fastmm_memory_manager_ex *m, int rounds) {
  size_t sizes[] = {8, 100, 2000, 3000, 100000, 600000, 5u << 20};
  for (int round = 0; round < rounds; round++) {
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      void *p = call((void *)m->get_mem, (void *)(intptr_t)sizes[i], NULL, "GetMem");
      CHECK(p != NULL);
      p = call((void *)m->realloc_mem, p, (void *)(intptr_t)(sizes[i] - 1), "ReallocMem (down)");
      p = call((void *)m->realloc_mem, p, (void *)(intptr_t)(sizes[i] * 3), "ReallocMem (up)");
      CHECK(p != NULL);
      call((void *)m->free_mem, p, NULL, "FreeMem");
      void *z = call((void *)m->alloc_mem, (void *)(intptr_t)sizes[i], NULL, "AllocMem");
      CHECK(z != NULL);
      call((void *)m->register_expected_memory_leak, z, NULL, "RegisterExpectedMemoryLeak");
      call((void *)m->unregister_expected_memory_leak, z, NULL, "UnregisterExpectedMemoryLeak");
      call((void *)m->free_mem, z, NULL, "FreeMem");
    }
    fastmm_release_free_memory(); /* so the next round maps spans again */
  }
}

/* A double free in debug mode: the event is found, written to the event log, and FreeMem
 * fails; ReallocMem of the freed block is reported too. */
static void double_free(const fastmm_memory_manager_ex *m) {
  size_t sizes[] = {40, 5000, 700000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t events = fastmm_get_debug_event_count(FASTMM_EVENT_DOUBLE_FREE);
    void *p = m->get_mem((intptr_t)sizes[i]);
    CHECK(p != NULL);
    CHECK(m->free_mem(p) == 0);
    CHECK((intptr_t)call((void *)m->free_mem, p, NULL, "FreeMem (double free)") != 0);
    CHECK_MSG(fastmm_get_debug_event_count(FASTMM_EVENT_DOUBLE_FREE) == events + 1,
              "%s: the double free of %zu bytes was not reported", mode, sizes[i]);
    call((void *)m->realloc_mem, p, (void *)100, "ReallocMem (of a freed block)");
  }
}

static void debug_mode_calls(const fastmm_memory_manager_ex *m) {
  plain_record(m, 1);
  bound_records();
  double_free(m);
}

int main(void) {
  fastmm_get_memory_manager(&mm);
  /* The harness sees a clobber when there is one. */
  void *r = NULL;
  CHECK_EQ(xmm_clobbered_by((void *)xmm_clobbering_function, (void *)7, NULL, &r),
           (1u << 4) | (1u << 15));
  CHECK(r == (void *)7);
  fastmm_set_event_log_filename("test_win64_xmm_events.txt");
  plain_record(&mm, 3);
  bound_records();

  mode = "debug mode";
  fastmm_enter_debug_mode();
  debug_mode_calls(&mm);
  fastmm_exit_debug_mode();

  mode = "fastmm_get_memory_manager_debug's record";
  fastmm_memory_manager_ex dbg;
  fastmm_get_memory_manager_debug(&dbg);
  debug_mode_calls(&dbg);
  fastmm_exit_debug_mode();

  mode = "debug mode, stack depth 0";
  size_t depth = fastmm_get_debug_mode_stack_trace_entry_count();
  fastmm_set_debug_mode_stack_trace_entry_count(0);
  fastmm_enter_debug_mode();
  debug_mode_calls(&mm);
  fastmm_exit_debug_mode();
  fastmm_set_debug_mode_stack_trace_entry_count(depth);

  mode = "erase freed";
  fastmm_begin_erase_freed_block_content();
  plain_record(&mm, 1);
  bound_records();
  fastmm_end_erase_freed_block_content();
  mode = "erase allocated";
  fastmm_begin_erase_allocated_block_content();
  plain_record(&mm, 1);
  bound_records();
  fastmm_end_erase_allocated_block_content();
  remove("test_win64_xmm_events.txt");
  return tu_finish("test_win64_xmm");
}
