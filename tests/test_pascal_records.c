/* SPDX-License-Identifier: MIT */
/* The records a Pascal unit installs, bound to the manager they replace
 * (fastmm_get_fpc_memory_manager, fastmm_get_memory_manager_with_previous), called here as
 * plain C functions (natively) or through their typed pointers (Win32: regparm(3), Free
 * Pascal's and Delphi's `register`; Win64: the one convention).
 *
 * The previous manager is this program's C library, behind counting functions: its blocks are
 * "foreign" to fastmm-c. heap_error counts too and, when asked, leaves by longjmp, as a Pascal
 * exception would unwind through the library's frames (on Win64 MinGW's longjmp unwinds with
 * SEH, so the library's unwind data is exercised too); the heap must work on afterwards.
 *
 * Checked: the records' shape; Free Pascal's meanings (GetMem(0), FreeMem(nil), ReAllocMem by
 * reference with nil and 0, MemSize); data kept through ReAllocMem; the previous manager's
 * blocks freed, resized and measured by it; a double free, a ReAllocMem of a freed block, an
 * interior and a misaligned pointer reported as 204 with no call reaching the previous
 * manager, in normal and debug mode; out of memory as 203 or NULL with the block kept; the
 * slots (same bindings, same entries; eight bindings at most; incomplete ones refused). */
#include <setjmp.h>

#include "test_blocks.h"

/* ---- The previous manager and the error callback ----------------------------------------- */

static unsigned prev_free_calls, prev_realloc_calls, prev_size_calls, prev_get_calls;
static unsigned error_calls[2]; /* 203, 204 */
static const void *last_error_address;
static jmp_buf *raise_to;        /* set: heap_error leaves by longjmp */
static uint8_t return_nil;       /* ReturnNilIfGrowHeapFails */
static uint8_t from_library = 1; /* the unit's AllocateFromDll */

static size_t FASTMM_DELPHI_CALL prev_free(void *p) {
  prev_free_calls++;
  free(p);
  return 0;
}
static void *FASTMM_DELPHI_CALL prev_realloc(void **pp, size_t size) {
  prev_realloc_calls++;
  if (size == 0) {
    free(*pp);
    *pp = NULL;
    return NULL;
  }
  *pp = realloc(*pp, size);
  return *pp;
}
static size_t FASTMM_DELPHI_CALL prev_size(void *p) {
  (void)p;
  prev_size_calls++;
  return 777;
}
static void *FASTMM_DELPHI_CALL prev_get(size_t size) {
  prev_get_calls++;
  return malloc(size);
}
static void FASTMM_CDECL heap_error(int32_t code, const void *address) {
  CHECK_MSG(code == 203 || code == 204, "heap_error(%d)", (int)code);
  error_calls[code == 204] += 1;
  last_error_address = address;
  if (raise_to != NULL)
    longjmp(*raise_to, code);
}

static unsigned prev_calls(void) {
  return prev_free_calls + prev_realloc_calls + prev_size_calls + prev_get_calls;
}

static fastmm_fpc_bindings fpc_bindings(void) {
  fastmm_fpc_bindings b;
  memset(&b, 0, sizeof b);
  b.size = sizeof b;
  b.previous_free_mem = prev_free;
  b.previous_realloc_mem = prev_realloc;
  b.previous_mem_size = prev_size;
  b.previous_get_mem = prev_get;
  b.heap_error = heap_error;
  b.return_nil_if_grow_heap_fails = &return_nil;
  b.allocate_from_library = &from_library;
  return b;
}

static fastmm_fpc_memory_manager fpc;

/* ---- Free Pascal's record: what works ------------------------------------------------------ */

static void fpc_shape(void) {
  fastmm_fpc_memory_manager again;
  fastmm_fpc_bindings b = fpc_bindings();
  CHECK_EQ(sizeof fpc, 6 * sizeof(void *));
  memset(&fpc, 0, sizeof fpc);
  CHECK_EQ(fastmm_get_fpc_memory_manager(&fpc, &b), 1);
  CHECK(fpc.get_mem != NULL && fpc.free_mem != NULL && fpc.free_mem_size != NULL &&
        fpc.alloc_mem != NULL && fpc.realloc_mem != NULL && fpc.mem_size != NULL);
  /* The same bindings again (a unit installed a second time): the same slot. */
  memset(&again, 0, sizeof again);
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, &b), 1);
  CHECK(memcmp(&again, &fpc, sizeof fpc) == 0);
  /* Incomplete bindings are refused and the record left alone. */
  fastmm_fpc_bindings bad = b;
  bad.heap_error = NULL;
  memset(&again, 0x5A, sizeof again);
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, &bad), 0);
  bad = b;
  bad.size = sizeof bad - 1;
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, &bad), 0);
  bad = b;
  bad.allocate_from_library = NULL;
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, &bad), 0);
  CHECK_EQ(fastmm_get_fpc_memory_manager(NULL, &b), 0);
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, NULL), 0);
  CHECK(((const unsigned char *)&again)[0] == 0x5A);
}

/* in_place: the small in-place rule applies (not in debug mode, where every ReallocMem moves). */
static void fpc_blocks(int in_place) {
  static const size_t sizes[] = {0, 1, 12, 100, SMALL_MAX_USER, 5000, MEDIUM_MAX_USER, 3000000};
  unsigned calls0 = prev_calls();
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    unsigned char *p = (unsigned char *)fpc.get_mem(n);
    if (!CHECK_MSG(p != NULL, "GetMem(%zu)", n))
      continue;
    CHECK_EQ(fastmm_owns_block(p), 1);
    /* MemSize is the usable size, as the C export says. */
    CHECK_EQ(fpc.mem_size(p), fastmm_usable_size(p));
    CHECK(fpc.mem_size(p) >= n);
    tu_fill_pattern(p, n, (uint32_t)i);

    /* ReAllocMem by reference: up (moves), down, the data kept; the variable follows. */
    void *v = p;
    void *r = fpc.realloc_mem(&v, 2 * n + 100);
    if (!CHECK_MSG(r != NULL && r == v, "ReAllocMem(%zu -> %zu)", n, 2 * n + 100))
      continue;
    CHECK_MSG(tu_check_pattern(v, n, (uint32_t)i) == (size_t)-1, "ReAllocMem up lost data (%zu)",
              n);
    CHECK(fpc.mem_size(v) >= 2 * n + 100);
    r = fpc.realloc_mem(&v, n / 2 + 1);
    CHECK(r != NULL && r == v);
    CHECK_MSG(tu_check_pattern(v, n < n / 2 + 1 ? n : n / 2 + 1, (uint32_t)i) == (size_t)-1,
              "ReAllocMem down lost data (%zu)", n);
    /* To its usable size: in place, the same pointer and the variable untouched. */
    size_t usable = fpc.mem_size(v);
    void *same = v;
    r = fpc.realloc_mem(&v, usable);
    CHECK(r == v);
    if (in_place && usable <= MEDIUM_MAX_USER)
      CHECK_MSG(v == same, "ReAllocMem of a %zu-byte block to its usable size moved", usable);
    /* A medium block stays from half its usable size up (FastMM's rule), on the entry's fast
     * path: the same pointer, the data kept. */
    if (in_place && usable > SMALL_MAX_USER && usable <= MEDIUM_MAX_USER) {
      tu_fill_pattern(v, usable, 77);
      r = fpc.realloc_mem(&v, usable / 2 + 1);
      CHECK_MSG(r == same && v == same, "ReAllocMem of a %zu-byte medium block to half moved",
                usable);
      CHECK(tu_check_pattern(v, usable / 2 + 1, 77) == (size_t)-1);
      CHECK_EQ(fpc.mem_size(v), usable);
    }

    /* FreeMem returns 0; FreeMemSize ignores the size. */
    CHECK_EQ(fpc.free_mem(v), 0);
    CHECK_EQ(fastmm_owns_block(v), 0);
    p = (unsigned char *)fpc.get_mem(n);
    CHECK_EQ(fpc.free_mem_size(p, n + 12345), 0);

    /* AllocMem zeroes. */
    p = (unsigned char *)fpc.alloc_mem(n);
    if (CHECK(p != NULL)) {
      CHECK(tu_all_zero(p, n));
      CHECK_EQ(fpc.free_mem(p), 0);
    }
  }
  /* The seed's case: grown one byte at a time to 2,600 and cut back, as Free Pascal's string
   * routines resize. Every byte kept; the pointer stays wherever FastMM's rule says. */
  {
    void *v = NULL;
    size_t moved = 0;
    for (size_t n = 1; n <= 2600; n++) {
      void *old = v;
      size_t before = old != NULL ? fpc.mem_size(old) : 0;
      if (!CHECK(fpc.realloc_mem(&v, n) == v && v != NULL))
        break;
      if (in_place && n <= before && before <= SMALL_MAX_USER)
        CHECK_MSG(v == old, "grown to %zu within %zu usable bytes: moved", n, before);
      moved += v != old;
      ((unsigned char *)v)[n - 1] = (unsigned char)(n * 7);
    }
    for (size_t n = 2600; n >= 1; n--) {
      if (!CHECK(fpc.realloc_mem(&v, n) == v && v != NULL))
        break;
      int ok = 1;
      for (size_t i = 0; i < n; i++)
        ok &= ((unsigned char *)v)[i] == (unsigned char)((i + 1) * 7);
      if (!CHECK_MSG(ok, "cut back to %zu bytes: data lost", n))
        break;
    }
    CHECK(moved >= 5); /* it crossed classes on the way up (each move doubles the room) */
    CHECK_EQ(fpc.free_mem(v), 0);
  }
  CHECK_EQ(prev_calls(), calls0); /* nothing of this reached the previous manager */
}

/* nil and size 0 the way Free Pascal means them. */
static void fpc_nil_and_zero(void) {
  unsigned calls0 = prev_calls();
  void *v = NULL;
  CHECK_EQ(fpc.free_mem(NULL), 0);
  CHECK_EQ(fpc.free_mem_size(NULL, 10), 0);
  CHECK_EQ(fpc.mem_size(NULL), 0);
  CHECK(fpc.realloc_mem(&v, 0) == NULL && v == NULL);
  CHECK(fpc.realloc_mem(&v, 40) != NULL && v != NULL);
  CHECK_EQ(fastmm_owns_block(v), 1);
  void *kept = v;
  CHECK(fpc.realloc_mem(&v, 0) == NULL);
  CHECK(v == NULL);
  CHECK_EQ(fastmm_owns_block(kept), 0);
  CHECK_EQ(prev_calls(), calls0);
  CHECK_EQ(error_calls[0] + error_calls[1], 0);

  /* Once the unit has uninstalled, ReAllocMem(nil, n) allocates from the previous manager. */
  from_library = 0;
  CHECK(fpc.realloc_mem(&v, 64) != NULL);
  CHECK_EQ(prev_get_calls, 1);
  CHECK_EQ(fastmm_heap_contains(v), 0);
  CHECK(fpc.realloc_mem(&v, 0) == NULL && v == NULL); /* the previous manager's, freed by it */
  CHECK_EQ(prev_realloc_calls, 1);
  from_library = 1;
}

/* Blocks made by the previous manager before the install: freed, resized and measured by it,
 * data kept. */
static void fpc_previous_blocks(void) {
  unsigned char *p = (unsigned char *)malloc(3000);
  void *v;
  if (!CHECK(p != NULL))
    return;
  for (int i = 0; i < 3000; i++)
    p[i] = (unsigned char)i;
  CHECK_EQ(fpc.mem_size(p), 777);
  CHECK_EQ(prev_size_calls, 1);
  v = p;
  CHECK(fpc.realloc_mem(&v, 200000) == v && v != NULL);
  CHECK_EQ(prev_realloc_calls, 2);
  CHECK_EQ(fastmm_heap_contains(v), 0);
  int ok = 1;
  for (int i = 0; i < 3000; i++)
    ok &= ((unsigned char *)v)[i] == (unsigned char)i;
  CHECK_MSG(ok, "the previous manager's block lost data when resized");
  CHECK_EQ(fpc.free_mem(v), 0);
  CHECK_EQ(prev_free_calls, 1);
  p = (unsigned char *)malloc(50);
  CHECK_EQ(fpc.free_mem_size(p, 50), 0);
  CHECK_EQ(prev_free_calls, 2);
  CHECK_EQ(error_calls[0] + error_calls[1], 0);
}

/* ---- Free Pascal's record: what is refused ------------------------------------------------- */

/* Calls one refused operation with heap_error leaving by longjmp; returns the code it raised
 * (0: it returned normally). */
enum { OP_FREE, OP_FREE_SIZE, OP_REALLOC, OP_REALLOC_ZERO };
static int raised_by(int op, void *p, void **var_after) {
  jmp_buf here;
  volatile int code = 0;
  void *volatile v = p;
  raise_to = &here;
  int got = setjmp(here);
  if (got == 0) {
    void *w = v;
    switch (op) {
    case OP_FREE:
      fpc.free_mem(w);
      break;
    case OP_FREE_SIZE:
      fpc.free_mem_size(w, 100);
      break;
    case OP_REALLOC:
      fpc.realloc_mem(&w, 100);
      break;
    default:
      fpc.realloc_mem(&w, 0);
      break;
    }
    v = w;
  } else {
    code = got;
  }
  raise_to = NULL;
  if (var_after != NULL)
    *var_after = v;
  return code;
}

static void fpc_bad_pointers(const char *mode) {
  static const size_t sizes[] = {40, 2000, 50000, 500000};
  unsigned calls0 = prev_calls();
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    void *b = NULL, *mate = NULL, *after = NULL;
    if (fastmm_debug_mode_active()) { /* freed debug blocks stay mapped in the quarantine */
      b = fastmm_getmem(n);
      mate = fastmm_getmem(n);
    } else if (n <= MEDIUM_MAX_USER) {
      mate = tb_span_mate(&b, n); /* the span stays mapped after b is freed */
      if (!CHECK_MSG(mate != NULL, "no span mate for %zu bytes", n))
        continue;
    } else {
      b = fastmm_getmem(n);
      mate = fastmm_getmem(n); /* a large block is unmapped when freed: keep one to probe */
    }
    char *interior = (char *)mate + 16;
    CHECK_MSG(raised_by(OP_FREE, interior, NULL) == 204, "%s: FreeMem inside a %zu-byte block",
              mode, n);
    CHECK_MSG(raised_by(OP_FREE, interior + 1, NULL) == 204, "%s: FreeMem misaligned in %zu", mode,
              n);
    CHECK_MSG(raised_by(OP_REALLOC, interior, &after) == 204 && after == interior,
              "%s: ReAllocMem inside a %zu-byte block", mode, n);
    CHECK_EQ(fastmm_owns_block(mate), 1);
    if (n <= MEDIUM_MAX_USER || fastmm_debug_mode_active()) {
      CHECK_EQ(fpc.free_mem(b), 0);
      CHECK_MSG(raised_by(OP_FREE, b, NULL) == 204, "%s: a second FreeMem of %zu bytes", mode, n);
      CHECK_MSG(raised_by(OP_FREE_SIZE, b, NULL) == 204, "%s: FreeMemSize of a freed %zu", mode, n);
      CHECK_MSG(raised_by(OP_REALLOC, b, &after) == 204 && after == b,
                "%s: ReAllocMem of a freed %zu-byte block", mode, n);
      CHECK_MSG(raised_by(OP_REALLOC_ZERO, b, &after) == 204 && after == b,
                "%s: ReAllocMem(p, 0) of a freed %zu-byte block", mode, n);
      CHECK_MSG(fpc.mem_size(b) == 0, "%s: MemSize of a freed %zu-byte block", mode, n);
    } else {
      CHECK_EQ(fpc.free_mem(b), 0);
    }
    /* heap_error may also return: the call then returns 0 / NULL and changes nothing. */
    CHECK_EQ(fpc.free_mem(interior), 0);
    after = interior;
    CHECK(fpc.realloc_mem(&after, 100) == NULL && after == interior);
    CHECK_EQ(fpc.free_mem(mate), 0);
  }
  CHECK_MSG(prev_calls() == calls0, "%s: a bad pointer of ours reached the previous manager", mode);
  CHECK(last_error_address != NULL);
  /* Nothing was left locked or half done: the heap is whole and works. */
  CHECK_EQ(fastmm_check_heap(), 0);
  void *v = NULL;
  CHECK(fpc.realloc_mem(&v, 5000) != NULL);
  CHECK_EQ(fpc.free_mem(v), 0);
}

/* No memory: 203 unless ReturnNilIfGrowHeapFails, and ReAllocMem leaves the block as it was. */
static void fpc_out_of_memory(void) {
  unsigned e0 = error_calls[0];
  void *keep = fpc.get_mem(5000), *v;
  const size_t huge = (SIZE_MAX >> 1) - 0x20000; /* more than any address space holds */
  memset(keep, 0x42, 5000);
  return_nil = 0;
  CHECK(fpc.get_mem(huge) == NULL);
  CHECK_EQ(error_calls[0], e0 + 1);
  CHECK(fpc.alloc_mem(huge) == NULL);
  CHECK_EQ(error_calls[0], e0 + 2);
  v = keep;
  CHECK(fpc.realloc_mem(&v, huge) == NULL);
  CHECK(v == keep);
  CHECK_EQ(error_calls[0], e0 + 3);
  v = NULL;
  CHECK(fpc.realloc_mem(&v, huge) == NULL && v == NULL);
  CHECK_EQ(error_calls[0], e0 + 4);
  return_nil = 1;
  CHECK(fpc.get_mem(huge) == NULL);
  CHECK(fpc.alloc_mem(huge) == NULL);
  v = keep;
  CHECK(fpc.realloc_mem(&v, huge) == NULL && v == keep);
  CHECK_EQ(error_calls[0], e0 + 4);
  return_nil = 0;
  int intact = 1;
  for (size_t i = 0; i < 5000; i++)
    intact &= ((unsigned char *)keep)[i] == 0x42;
  CHECK_MSG(intact, "a ReAllocMem that found no memory changed the block");
  CHECK_EQ(fastmm_owns_block(keep), 1);
  /* The usage limit is out of memory too. */
  fastmm_set_memory_usage_limit(1);
  v = keep;
  CHECK(fpc.realloc_mem(&v, 4u << 20) == NULL && v == keep);
  CHECK_EQ(error_calls[0], e0 + 5);
  fastmm_set_memory_usage_limit(0);
  CHECK_EQ(fpc.free_mem(keep), 0);
}

/* ---- Delphi's record bound to a previous manager ------------------------------------------- */

static unsigned dprev_free_calls, dprev_realloc_calls;
static int32_t FASTMM_DELPHI_CALL dprev_free(void *p) {
  dprev_free_calls++;
  free(p);
  return 0;
}
static void *FASTMM_DELPHI_CALL dprev_realloc(void *p, intptr_t size) {
  dprev_realloc_calls++;
  return realloc(p, (size_t)size);
}

static fastmm_delphi_bindings delphi_bindings(void) {
  fastmm_delphi_bindings b;
  memset(&b, 0, sizeof b);
  b.size = sizeof b;
  b.previous_free_mem = dprev_free;
  b.previous_realloc_mem = dprev_realloc;
  b.heap_error = heap_error;
  return b;
}

static void delphi_record(void) {
  fastmm_delphi_bindings b = delphi_bindings();
  fastmm_memory_manager_ex mm, plain, again;
  unsigned e204 = error_calls[1];
  fastmm_get_memory_manager(&plain);
  CHECK_EQ(fastmm_get_memory_manager_with_previous(&mm, &b), 1);
  CHECK_EQ(fastmm_get_memory_manager_with_previous(&again, &b), 1);
  CHECK(memcmp(&again, &mm, sizeof mm) == 0);
  /* GetMem, AllocMem and the leak entries are the plain record's; FreeMem and ReallocMem the
   * slot's. */
  CHECK(mm.get_mem == plain.get_mem && mm.alloc_mem == plain.alloc_mem &&
        mm.register_expected_memory_leak == plain.register_expected_memory_leak &&
        mm.unregister_expected_memory_leak == plain.unregister_expected_memory_leak);
  CHECK(mm.free_mem != plain.free_mem && mm.realloc_mem != plain.realloc_mem);
  b.heap_error = NULL;
  CHECK_EQ(fastmm_get_memory_manager_with_previous(&again, &b), 0);
  b.heap_error = heap_error;

  /* The library's blocks, data kept through ReallocMem. */
  unsigned char *p = (unsigned char *)mm.get_mem(1000);
  tu_fill_pattern(p, 1000, 9);
  p = (unsigned char *)mm.realloc_mem(p, 200000);
  CHECK(p != NULL && tu_check_pattern(p, 1000, 9) == (size_t)-1);
  p = (unsigned char *)mm.realloc_mem(p, 10);
  CHECK(p != NULL && tu_check_pattern(p, 10, 9) == (size_t)-1);
  unsigned char *same = (unsigned char *)mm.realloc_mem(p, 11);
  CHECK(same == p);
  /* A medium block stays from half its usable size up (FastMM's rule), on the fast path. */
  unsigned char *m = (unsigned char *)mm.get_mem(20000);
  size_t m_usable = fastmm_usable_size(m);
  tu_fill_pattern(m, 20000, 5);
  CHECK(mm.realloc_mem(m, (intptr_t)m_usable) == m);
  CHECK(mm.realloc_mem(m, (intptr_t)(m_usable / 2 + 1)) == m);
  CHECK(tu_check_pattern(m, m_usable / 2 + 1, 5) == (size_t)-1);
  CHECK_EQ(fastmm_usable_size(m), m_usable);
  CHECK(mm.realloc_mem(m, -1) == NULL);
  CHECK_EQ(mm.free_mem(m), 0);
  CHECK(mm.realloc_mem(p, -1) == NULL);
  CHECK_EQ(mm.free_mem(p), 0);

  /* The previous manager's blocks go back to it. */
  unsigned char *f = (unsigned char *)malloc(300);
  f[0] = 42;
  f[299] = 43;
  f = (unsigned char *)mm.realloc_mem(f, 4000);
  CHECK(f != NULL && f[0] == 42 && f[299] == 43);
  CHECK_EQ(dprev_realloc_calls, 1);
  CHECK_EQ(mm.free_mem(f), 0);
  CHECK_EQ(dprev_free_calls, 1);

  /* Bad pointers of ours: FreeMem says so by its result, ReallocMem through heap_error; the
   * previous manager hears of none of them. */
  for (size_t n = 40; n <= 50000; n *= 35) {
    void *blk = NULL, *mate = tb_span_mate(&blk, n);
    if (!CHECK(mate != NULL))
      continue;
    CHECK_EQ(mm.free_mem(blk), 0);
    CHECK_MSG(mm.free_mem(blk) != 0, "a second FreeMem of %zu bytes accepted", n);
    CHECK_MSG(mm.free_mem((char *)mate + 16) != 0, "FreeMem inside a %zu-byte block", n);
    unsigned before = error_calls[1];
    CHECK(mm.realloc_mem(blk, 100) == NULL);
    CHECK_MSG(error_calls[1] == before + 1, "ReallocMem of a freed %zu-byte block: no 204", n);
    CHECK(mm.realloc_mem((char *)mate + 16, 100) == NULL);
    CHECK_EQ(error_calls[1], before + 2);
    CHECK_EQ(mm.free_mem(mate), 0);
  }
  CHECK_EQ(dprev_free_calls + dprev_realloc_calls, 2);
  CHECK(error_calls[1] > e204);
  /* Out of memory: NULL (System raises EOutOfMemory), the block as it was, no 204. */
  void *keep = mm.get_mem(100);
  unsigned before = error_calls[1];
  CHECK(mm.realloc_mem(keep, (intptr_t)(SIZE_MAX >> 1) - 0x20000) == NULL);
  CHECK_EQ(fastmm_owns_block(keep), 1);
  CHECK_EQ(error_calls[1], before);
  CHECK_EQ(mm.free_mem(keep), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* A stale pointer to a large block whose memory went back to the OS (freed, then
 * fastmm_release_free_memory: the state the idle thread leaves a second later) is no block of
 * the previous manager's: every entry of both records reports it as ours (204, FreeMem's
 * non-zero result, MemSize 0) and the previous manager hears of none of it (fastmm.h, "The
 * records a Pascal unit installs"). */
static void stale_large_after_release(void) {
  const size_t n = (size_t)5 * 1024 * 1024;
  unsigned calls0 = prev_calls(), dcalls0 = dprev_free_calls + dprev_realloc_calls;
  void *b = fpc.get_mem(n), *after = NULL;
  if (!CHECK(b != NULL))
    return;
  CHECK_EQ(fpc.free_mem(b), 0);
  fastmm_release_free_memory();
  CHECK_MSG(fastmm_heap_contains(b) == 0, "the freed large block's memory is still mapped");
  CHECK_MSG(raised_by(OP_FREE, b, NULL) == 204, "Free Pascal: FreeMem of a released large block");
  CHECK_MSG(raised_by(OP_FREE_SIZE, b, NULL) == 204,
            "Free Pascal: FreeMemSize of a released large block");
  CHECK_MSG(raised_by(OP_REALLOC, b, &after) == 204 && after == b,
            "Free Pascal: ReAllocMem of a released large block");
  CHECK_MSG(raised_by(OP_REALLOC_ZERO, b, &after) == 204 && after == b,
            "Free Pascal: ReAllocMem(p, 0) of a released large block");
  CHECK_MSG(fpc.mem_size(b) == 0, "Free Pascal: MemSize of a released large block");
  CHECK_MSG(prev_calls() == calls0, "Free Pascal: %u calls of the previous manager",
            prev_calls() - calls0);

  fastmm_delphi_bindings db = delphi_bindings();
  fastmm_memory_manager_ex mm;
  if (!CHECK_EQ(fastmm_get_memory_manager_with_previous(&mm, &db), 1))
    return;
  void *d = mm.get_mem((intptr_t)n);
  if (!CHECK(d != NULL))
    return;
  CHECK_EQ(mm.free_mem(d), 0);
  fastmm_release_free_memory();
  unsigned before = error_calls[1];
  CHECK_MSG(mm.free_mem(d) != 0, "Delphi: FreeMem of a released large block accepted");
  CHECK_MSG(mm.realloc_mem(d, 100) == NULL && error_calls[1] == before + 1,
            "Delphi: ReallocMem of a released large block: no 204");
  CHECK_MSG(dprev_free_calls + dprev_realloc_calls == dcalls0,
            "Delphi: %u calls of the previous manager",
            dprev_free_calls + dprev_realloc_calls - dcalls0);
  /* Foreign blocks still go to the previous manager. */
  void *f = malloc(64);
  CHECK_EQ(mm.free_mem(f), 0);
  CHECK_EQ(dprev_free_calls + dprev_realloc_calls, dcalls0 + 1);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* ---- The slots --------------------------------------------------------------------------- */

/* Eight bindings at most: each distinct one takes a slot, the ninth is refused, a bound one
 * still gets its own; each slot's entries reach their own previous manager. */
static void fpc_slots(void) {
  static uint8_t flags[16];
  fastmm_fpc_memory_manager taken[16];
  int bound = 0;
  for (int i = 0; i < 16; i++) {
    fastmm_fpc_bindings b = fpc_bindings();
    b.allocate_from_library = &flags[i];
    if (fastmm_get_fpc_memory_manager(&taken[bound], &b) != 1)
      break;
    bound++;
  }
  /* The test's first binding (fpc_shape) holds one slot. */
  CHECK_EQ(bound, 7);
  for (int i = 0; i < bound; i++) {
    void *foreign = malloc(10);
    unsigned before = prev_free_calls;
    CHECK(taken[i].realloc_mem != fpc.realloc_mem);
    CHECK_EQ(taken[i].free_mem(foreign), 0);
    CHECK_EQ(prev_free_calls, before + 1);
    /* flags[i] is 0: ReAllocMem(nil) of this slot goes to the previous manager. */
    void *v = NULL;
    before = prev_get_calls;
    CHECK(taken[i].realloc_mem(&v, 10) != NULL);
    CHECK_EQ(prev_get_calls, before + 1);
    free(v);
  }
  /* Each slot's ReAllocMem reaches its own slow path (its own flag, set for the odd slots only:
   * ReAllocMem(nil) allocates from the library there), stays in place and moves the library's
   * blocks with their bytes, and writes the variable. */
  for (int i = 0; i < bound; i++)
    flags[i] = (uint8_t)(i & 1);
  for (int i = 0; i < bound; i++) {
    void *v = NULL;
    unsigned before = prev_get_calls;
    if (!CHECK(taken[i].realloc_mem(&v, 64) == v && v != NULL))
      continue;
    CHECK_MSG(prev_get_calls == before + (i & 1 ? 0u : 1u), "slot %d: ReAllocMem(nil) went to %s",
              i, prev_get_calls == before ? "the library" : "the previous manager");
    if (!(i & 1)) {
      free(v);
      v = taken[i].get_mem(64);
    }
    tu_fill_pattern(v, 64, (unsigned)i);
    void *old = v;
    CHECK(taken[i].realloc_mem(&v, 63) == old && v == old);
    CHECK(taken[i].realloc_mem(&v, 64) == old && v == old);
    CHECK(taken[i].realloc_mem(&v, 3000) == v && v != old && v != NULL);
    CHECK(tu_check_pattern(v, 64, (unsigned)i) == (size_t)-1);
    old = v;
    size_t half = fastmm_usable_size(v) / 2 + 1; /* a medium block stays from here up */
    CHECK(taken[i].realloc_mem(&v, half) == old && v == old);
    CHECK(taken[i].realloc_mem(&v, 0) == NULL && v == NULL);
  }
  fastmm_fpc_bindings b = fpc_bindings();
  fastmm_fpc_memory_manager again;
  CHECK_EQ(fastmm_get_fpc_memory_manager(&again, &b), 1);
  CHECK(memcmp(&again, &fpc, sizeof fpc) == 0);
}

/* The Delphi record's slots: each slot's ReallocMem stays in place, moves the library's blocks
 * with their bytes, and sends its own previous manager's blocks to it. */
static unsigned dprev_slot_calls[8];
#define DPREV_SLOT(n)                                                                              \
  static void *FASTMM_DELPHI_CALL dprev_realloc_##n(void *p, intptr_t size) {                      \
    dprev_slot_calls[n]++;                                                                         \
    return realloc(p, (size_t)size);                                                               \
  }
DPREV_SLOT(0)
DPREV_SLOT(1)
DPREV_SLOT(2)
DPREV_SLOT(3)
DPREV_SLOT(4)
DPREV_SLOT(5)
DPREV_SLOT(6)
DPREV_SLOT(7)

static void delphi_slots(void) {
  void *(FASTMM_DELPHI_CALL * prev[8])(void *, intptr_t) = {
      dprev_realloc_0, dprev_realloc_1, dprev_realloc_2, dprev_realloc_3,
      dprev_realloc_4, dprev_realloc_5, dprev_realloc_6, dprev_realloc_7};
  fastmm_memory_manager_ex taken[8];
  int bound = 0;
  for (int i = 0; i < 8; i++) {
    fastmm_delphi_bindings b = delphi_bindings();
    b.previous_realloc_mem = prev[i];
    if (fastmm_get_memory_manager_with_previous(&taken[bound], &b) != 1)
      break;
    bound++;
  }
  /* delphi_record and the released-block test hold one slot (the same bindings). */
  CHECK_EQ(bound, 7);
  for (int i = 0; i < bound; i++) {
    unsigned char *p = (unsigned char *)taken[i].get_mem(64);
    if (!CHECK(p != NULL))
      continue;
    tu_fill_pattern(p, 64, (unsigned)i);
    CHECK(taken[i].realloc_mem(p, 63) == p && taken[i].realloc_mem(p, 64) == p);
    unsigned char *q = (unsigned char *)taken[i].realloc_mem(p, 3000);
    CHECK(q != NULL && q != p && tu_check_pattern(q, 64, (unsigned)i) == (size_t)-1);
    size_t half = fastmm_usable_size(q) / 2 + 1; /* a medium block stays from here up */
    CHECK(taken[i].realloc_mem(q, (intptr_t)half) == q);
    CHECK(taken[i].realloc_mem(q, -1) == NULL &&
          tu_check_pattern(q, 64, (unsigned)i) == (size_t)-1);
    CHECK_EQ(taken[i].free_mem(q), 0);
    /* A foreign block goes to this slot's previous manager and no other. */
    unsigned calls[8];
    memcpy(calls, dprev_slot_calls, sizeof calls);
    void *f = malloc(16);
    f = taken[i].realloc_mem(f, 32);
    CHECK(f != NULL);
    for (int j = 0; j < 8; j++)
      CHECK_MSG(dprev_slot_calls[j] == calls[j] + (j == i ? 1u : 0u),
                "slot %d: previous manager %d called %u times", i, j,
                dprev_slot_calls[j] - calls[j]);
    free(f);
  }
}

int main(void) {
  tb_start_quiet("test_pascal_records");
  fpc_shape();
  if (tu_failures())
    return tu_finish("test_pascal_records");
  fpc_blocks(1);
  fpc_nil_and_zero();
  fpc_previous_blocks();
  fpc_bad_pointers("normal");
  fastmm_enter_debug_mode();
  fpc_blocks(0);
  fpc_bad_pointers("debug mode");
  fastmm_exit_debug_mode();
  fpc_out_of_memory();
  delphi_record();
  stale_large_after_release();
  fpc_slots();
  delphi_slots();
  return tu_finish("test_pascal_records");
}
