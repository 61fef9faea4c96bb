/* SPDX-License-Identifier: MIT */
/* The modes reach every entry point although the fast paths never test the mode word: a mode
 * closes the gates of src/modes/gate.h (the size bound of GetMem, the page-map bound of
 * FreeMem and ReallocMem), and these checks fail when one of them stays open. Each one is arranged
 * so the fast path would give a different answer: a block waits in the thread cache, so a GetMem
 * that stayed on the fast path would return it unmarked; a FreeMem that stayed there would
 * leave the freed bytes as they were; an in-place ReallocMem that stayed there would skip the
 * scan. Run through the C exports and through the Delphi record (on Win32 and Win64 its
 * ReallocMem is the NASM code), and again after the modes end, when the blocks must travel the
 * normal way again. */
#include "test_blocks.h"

typedef struct entry {
  const char *name;
  void *(*get)(size_t);
  int (*free_)(void *);
  void *(*realloc_)(void *, size_t);
} entry;

static fastmm_memory_manager_ex mm;
static void *rec_get(size_t n) {
  return mm.get_mem((intptr_t)n);
}
static int rec_free(void *p) {
  return (int)mm.free_mem(p);
}
static void *rec_realloc(void *p, size_t n) {
  return mm.realloc_mem(p, (intptr_t)n);
}
static void *c_get(size_t n) {
  return fastmm_getmem(n);
}
static int c_free(void *p) {
  return fastmm_freemem(p);
}
static void *c_realloc(void *p, size_t n) {
  return fastmm_reallocmem(p, n);
}

static const size_t sizes[] = {1, 24, 100, 1000, SMALL_MAX_USER};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

/* Leaves one block of each size, full of 0xA5, at the top of this thread's cache. */
static void prime_cache(const entry *e) {
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    unsigned char *p = (unsigned char *)e->get(sizes[i]);
    if (CHECK(p != NULL)) {
      memset(p, 0xA5, sizes[i]);
      CHECK_EQ(e->free_(p), FASTMM_OK);
    }
  }
}

static int all_bytes(const unsigned char *p, size_t from, size_t to, unsigned char v) {
  for (size_t i = from; i < to; i++)
    if (p[i] != v)
      return 0;
  return 1;
}

static void debug_mode_gets(const entry *e) {
  prime_cache(e);
  fastmm_enter_debug_mode();
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    unsigned char *p = (unsigned char *)e->get(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    CHECK_MSG(tb_kind(p) == TB_KIND_DEBUG, "%s: GetMem(%zu) in debug mode gave a %s block", e->name,
              sizes[i], tb_kind_name(tb_kind(p)));
    CHECK_MSG(all_bytes(p, 0, sizes[i], 0x90), "%s: GetMem(%zu) in debug mode: not filled", e->name,
              sizes[i]);
    CHECK_EQ(e->free_(p), FASTMM_OK);
  }
  fastmm_exit_debug_mode();
}

static void erase_allocated_gets(const entry *e) {
  prime_cache(e);
  fastmm_begin_erase_allocated_block_content();
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    unsigned char *p = (unsigned char *)e->get(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    CHECK_MSG(all_bytes(p, 0, sizes[i], 0x90),
              "%s: GetMem(%zu) with erase-allocated on came back unfilled (0x%02x)", e->name,
              sizes[i], p[0]);
    CHECK_EQ(e->free_(p), FASTMM_OK);
  }
  fastmm_end_erase_allocated_block_content();
}

static void erase_freed_frees(const entry *e) {
  unsigned char *blocks[SIZE_COUNT];
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    blocks[i] = (unsigned char *)e->get(sizes[i]);
    if (blocks[i])
      memset(blocks[i], 0xA5, sizes[i]);
  }
  fastmm_begin_erase_freed_block_content();
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    if (!CHECK(blocks[i] != NULL))
      continue;
    CHECK_EQ(e->free_(blocks[i]), FASTMM_OK);
    /* Still our memory (a span of the manager's); the first pointer links the free list. */
    CHECK_MSG(all_bytes(blocks[i], sizeof(void *), sizes[i], 0x80),
              "%s: FreeMem of a %zu-byte block with erase-freed on left its bytes", e->name,
              sizes[i]);
  }
  fastmm_end_erase_freed_block_content();
}

static void scan_before_realloc(const entry *e) {
  /* A debug block with an overrun, left live after debug mode: every scan reports it. */
  fastmm_enter_debug_mode();
  unsigned char *bad = (unsigned char *)fastmm_getmem(40);
  fastmm_exit_debug_mode();
  if (!CHECK(bad != NULL))
    return;
  unsigned char saved = bad[40];
  bad[40] ^= 0xFF;
  unsigned char *p = (unsigned char *)e->get(100);
  if (CHECK(p != NULL)) {
    fastmm_set_scan_before_every_operation(1);
    size_t before = fastmm_get_debug_event_count(FASTMM_EVENT_GUARD_CORRUPTED);
    /* 100 -> 96 stays in place under the small policy: the fast path's case. */
    unsigned char *q = (unsigned char *)e->realloc_(p, 96);
    CHECK_MSG(q == p, "%s: ReallocMem(100 -> 96) moved", e->name);
    CHECK_MSG(fastmm_get_debug_event_count(FASTMM_EVENT_GUARD_CORRUPTED) > before,
              "%s: an in-place ReallocMem with scan-before-every-operation on did not scan",
              e->name);
    fastmm_set_scan_before_every_operation(0);
    CHECK_EQ(e->free_(q ? q : p), FASTMM_OK);
  }
  bad[40] = saved;
  CHECK_EQ(fastmm_freemem(bad), FASTMM_OK);
  fastmm_release_free_memory(); /* empties the quarantine, so no debug block is left */
}

/* After the modes: a freed block is the next one of its size again (the thread cache's LIFO),
 * its bytes are left alone, and the heap is whole. */
static void normal_again(const entry *e) {
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    unsigned char *p = (unsigned char *)e->get(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    CHECK_EQ(tb_kind(p), BLOCK_FLAG_SMALL);
    memset(p, 0xA5, sizes[i]);
    CHECK_EQ(e->free_(p), FASTMM_OK);
    CHECK_MSG(all_bytes(p, sizeof(void *), sizes[i], 0xA5), "%s: a mode still erases", e->name);
    unsigned char *q = (unsigned char *)e->get(sizes[i]);
    CHECK_MSG(q == p, "%s: GetMem(%zu) after FreeMem did not reuse the block", e->name, sizes[i]);
    CHECK_MSG(e->realloc_(q, sizes[i]) == q, "%s: ReallocMem to the same size moved", e->name);
    CHECK_EQ(e->free_(q), FASTMM_OK);
  }
}

int main(void) {
  tb_start_quiet("test_mode_gates");
  fastmm_get_memory_manager(&mm);
  const entry entries[] = {{"C exports", c_get, c_free, c_realloc},
                           {"Delphi record", rec_get, rec_free, rec_realloc}};
  for (size_t k = 0; k < 2; k++) {
    const entry *e = &entries[k];
    normal_again(e);
    debug_mode_gets(e);
    erase_allocated_gets(e);
    erase_freed_frees(e);
    scan_before_realloc(e);
    normal_again(e);
  }
  CHECK(!fastmm_debug_mode_active());
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_mode_gates");
}
