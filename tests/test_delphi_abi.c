/* SPDX-License-Identifier: MIT */
/* The record Delphi's SetMemoryManager takes (fastmm_get_memory_manager): all six entry points
 * through their typed pointers, which on Win32 are regparm(3), Delphi's `register` convention.
 * On Win32 a small assembly harness also calls each of them with the stack misaligned (Delphi
 * does not keep it 16-aligned) and checks that EBX, ESI and EDI survive. */
#include "test_blocks.h"

#if defined(_WIN32) && !defined(_WIN64) && defined(__GNUC__) && defined(__i386__)
#define HAVE_MISALIGNED_HARNESS 1
/* cdecl: calls fn(a0, a1) with a0 in EAX, a1 in EDX (and junk in ECX), with ESP lowered by
 * `misalign` bytes below a 16-byte boundary at the call instruction, and EBX/ESI/EDI loaded
 * with sentinels. Returns EAX; *regs_ok = 1 when the sentinels survived. */
typedef void (*fmt_any_fn)(void);
uint32_t fmt_call_misaligned(fmt_any_fn fn, uintptr_t a0, uintptr_t a1, uint32_t misalign,
                             uint32_t *regs_ok) __asm__("fmt_call_misaligned");
__asm__(".text\n"
        ".globl fmt_call_misaligned\n"
        "fmt_call_misaligned:\n"
        "  pushl %ebp\n"
        "  movl %esp, %ebp\n"
        "  pushl %ebx\n"
        "  pushl %esi\n"
        "  pushl %edi\n"
        "  movl $0x1BADB002, %ebx\n"
        "  movl $0x5EED5EED, %esi\n"
        "  movl $0xD00DFEED, %edi\n"
        "  movl 20(%ebp), %ecx\n"
        "  andl $-16, %esp\n"
        "  subl %ecx, %esp\n"
        "  movl 12(%ebp), %eax\n"
        "  movl 16(%ebp), %edx\n"
        "  movl $0xC0FFEE11, %ecx\n"
        "  call *8(%ebp)\n"
        "  xorl %ecx, %ecx\n"
        "  cmpl $0x1BADB002, %ebx\n"
        "  jne 1f\n"
        "  cmpl $0x5EED5EED, %esi\n"
        "  jne 1f\n"
        "  cmpl $0xD00DFEED, %edi\n"
        "  jne 1f\n"
        "  movl $1, %ecx\n"
        "1:\n"
        "  movl 24(%ebp), %edx\n"
        "  movl %ecx, (%edx)\n"
        "  leal -12(%ebp), %esp\n"
        "  popl %edi\n"
        "  popl %esi\n"
        "  popl %ebx\n"
        "  popl %ebp\n"
        "  ret\n");
#else
#define HAVE_MISALIGNED_HARNESS 0
#endif

static void typed_calls(const fastmm_memory_manager_ex *mm) {
  static const intptr_t sizes[] = {1, 100, SMALL_MAX_USER, 5000, MEDIUM_MAX_USER, 3000000};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = (size_t)sizes[i];
    unsigned char *p = (unsigned char *)mm->get_mem(sizes[i]), *q;
    if (!CHECK_MSG(p != NULL, "GetMem(%zu)", n))
      continue;
    CHECK(tu_is_aligned(p, 16));
    CHECK(fastmm_usable_size(p) >= n);
    CHECK(fastmm_owns_block(p) == 1);
    tu_fill_pattern(p, n, (uint32_t)i);

    /* ReallocMem up, then down, keeps the common bytes. */
    q = (unsigned char *)mm->realloc_mem(p, sizes[i] * 2 + 10);
    if (!CHECK_MSG(q != NULL, "ReallocMem(%zu -> %zu)", n, n * 2 + 10))
      continue;
    CHECK_MSG(tu_check_pattern(q, n, (uint32_t)i) == (size_t)-1, "ReallocMem %zu up lost data", n);
    p = (unsigned char *)mm->realloc_mem(q, sizes[i] / 2 + 1);
    if (!CHECK_MSG(p != NULL, "ReallocMem(%zu -> %zu)", n * 2 + 10, n / 2 + 1))
      continue;
    CHECK_MSG(tu_check_pattern(p, n / 2 + 1, (uint32_t)i) == (size_t)-1,
              "ReallocMem %zu down lost data", n);

    /* Expected leaks: register once, then refused; unregister once, then refused. */
    CHECK_EQ(mm->register_expected_memory_leak(p), 1);
    CHECK_EQ(mm->register_expected_memory_leak(p), 0);
    CHECK_EQ(mm->unregister_expected_memory_leak(p), 1);
    CHECK_EQ(mm->unregister_expected_memory_leak(p), 0);

    /* FreeMem: 0 on success. */
    CHECK_EQ(mm->free_mem(p), 0);

    /* AllocMem zeroes, also when it reuses a dirtied block. */
    p = (unsigned char *)mm->get_mem(sizes[i]);
    if (!CHECK(p != NULL))
      continue;
    memset(p, 0xCC, n);
    CHECK_EQ(mm->free_mem(p), 0);
    p = (unsigned char *)mm->alloc_mem(sizes[i]);
    if (!CHECK_MSG(p != NULL, "AllocMem(%zu)", n))
      continue;
    CHECK_MSG(tu_all_zero(p, n), "AllocMem(%zu) not zeroed", n);
    /* The C API and the record are one manager. */
    CHECK_EQ(fastmm_freemem(p), FASTMM_OK);

    /* FreeMem of a block that is no longer live is refused (non-zero). The block has a live
     * neighbour in its span, so the span is still mapped when it is freed the second time. */
    if (n <= MEDIUM_MAX_USER) {
      void *b = NULL, *mate = tb_span_mate(&b, n);
      p = (unsigned char *)b;
      if (CHECK_MSG(mate != NULL, "no two %zu-byte blocks in one span", n)) {
        CHECK_EQ(mm->free_mem(p), 0);
        CHECK_MSG(mm->free_mem(p) != 0, "second FreeMem of a %zu-byte block accepted", n);
        CHECK_EQ(mm->register_expected_memory_leak(p), 0);
        CHECK_EQ(mm->unregister_expected_memory_leak(p), 0);
        CHECK_EQ(fastmm_freemem(mate), FASTMM_OK);
      }
    }
  }
  /* The C and Delphi expected-leak lists are the same list. */
  {
    void *p = fastmm_getmem(64);
    if (CHECK(p != NULL)) {
      CHECK_EQ(fastmm_register_expected_leak(p), 1);
      CHECK_EQ(mm->register_expected_memory_leak(p), 0);
      CHECK_EQ(mm->unregister_expected_memory_leak(p), 1);
      CHECK_EQ(fastmm_unregister_expected_leak(p), 0);
      CHECK_EQ(mm->free_mem(p), 0);
    }
  }
}

#if HAVE_MISALIGNED_HARNESS
static uint32_t call2(fmt_any_fn fn, uintptr_t a0, uintptr_t a1, uint32_t misalign) {
  uint32_t ok = 0, r = fmt_call_misaligned(fn, a0, a1, misalign, &ok);
  CHECK_MSG(ok == 1, "EBX/ESI/EDI not preserved (stack %u below a 16-byte boundary)",
            (unsigned)misalign);
  return r;
}

static void misaligned_calls(const fastmm_memory_manager_ex *mm) {
  static const uint32_t misaligns[] = {0, 4, 8, 12};
  static const uintptr_t sizes[] = {24, 1000, 5000, 200000, 1500000};
  size_t m, i;
  for (m = 0; m < 4; m++) {
    uint32_t mis = misaligns[m];
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      size_t n = sizes[i];
      unsigned char *p, *q;
      p = (unsigned char *)(uintptr_t)call2((fmt_any_fn)mm->get_mem, n, 0, mis);
      if (!CHECK_MSG(p != NULL, "GetMem(%zu), stack -%u", n, (unsigned)mis))
        continue;
      CHECK(fastmm_usable_size(p) >= n);
      tu_fill_pattern(p, n, (uint32_t)n);
      q = (unsigned char *)(uintptr_t)call2((fmt_any_fn)mm->realloc_mem, (uintptr_t)p, n * 3, mis);
      if (!CHECK_MSG(q != NULL, "ReallocMem(%zu -> %zu), stack -%u", n, n * 3, (unsigned)mis))
        continue;
      CHECK(tu_check_pattern(q, n, (uint32_t)n) == (size_t)-1);
      CHECK_EQ(call2((fmt_any_fn)mm->register_expected_memory_leak, (uintptr_t)q, 0, mis) & 0xFFu,
               1);
      CHECK_EQ(call2((fmt_any_fn)mm->register_expected_memory_leak, (uintptr_t)q, 0, mis) & 0xFFu,
               0);
      CHECK_EQ(call2((fmt_any_fn)mm->unregister_expected_memory_leak, (uintptr_t)q, 0, mis) & 0xFFu,
               1);
      CHECK_EQ(call2((fmt_any_fn)mm->unregister_expected_memory_leak, (uintptr_t)q, 0, mis) & 0xFFu,
               0);
      CHECK_EQ(call2((fmt_any_fn)mm->free_mem, (uintptr_t)q, 0, mis), 0);
      if (n <= MEDIUM_MAX_USER) { /* a second FreeMem, with the span kept mapped by a mate */
        void *b = NULL, *mate = tb_span_mate(&b, n);
        q = (unsigned char *)b;
        if (CHECK(mate != NULL)) {
          CHECK_EQ(call2((fmt_any_fn)mm->free_mem, (uintptr_t)q, 0, mis), 0);
          CHECK(call2((fmt_any_fn)mm->free_mem, (uintptr_t)q, 0, mis) != 0);
          CHECK_EQ(fastmm_freemem(mate), FASTMM_OK);
        }
      }
      p = (unsigned char *)(uintptr_t)call2((fmt_any_fn)mm->alloc_mem, n, 0, mis);
      if (!CHECK_MSG(p != NULL, "AllocMem(%zu), stack -%u", n, (unsigned)mis))
        continue;
      CHECK(tu_all_zero(p, n));
      CHECK_EQ(call2((fmt_any_fn)mm->free_mem, (uintptr_t)p, 0, mis), 0);
      /* A negative size fails cleanly here too. */
      CHECK_EQ(call2((fmt_any_fn)mm->get_mem, (uintptr_t)-1, 0, mis), 0);
    }
  }
}
/* The records bound to a previous manager (Free Pascal's and Delphi's FreeMem/ReallocMem), the
 * same way: every entry, fast and slow paths, with the stack misaligned and the registers
 * Delphi and Free Pascal keep checked. Their previous manager is never reached here. */
static size_t FASTMM_DELPHI_CALL never_free(void *p) {
  (void)p;
  CHECK_MSG(0, "the previous manager's FreeMem was called");
  return 0;
}
static void *FASTMM_DELPHI_CALL never_realloc(void **p, size_t n) {
  (void)p, (void)n;
  CHECK_MSG(0, "the previous manager's ReAllocMem was called");
  return NULL;
}
static size_t FASTMM_DELPHI_CALL never_size(void *p) {
  (void)p;
  CHECK_MSG(0, "the previous manager's MemSize was called");
  return 0;
}
static void *FASTMM_DELPHI_CALL never_get(size_t n) {
  (void)n;
  CHECK_MSG(0, "the previous manager's GetMem was called");
  return NULL;
}
static int32_t FASTMM_DELPHI_CALL never_free_delphi(void *p) {
  (void)p;
  CHECK_MSG(0, "the previous manager's FreeMem was called");
  return 0;
}
static void *FASTMM_DELPHI_CALL never_realloc_delphi(void *p, intptr_t n) {
  (void)p, (void)n;
  CHECK_MSG(0, "the previous manager's ReallocMem was called");
  return NULL;
}
static unsigned bad_pointer_reports;
static void FASTMM_CDECL count_error(int32_t code, const void *address) {
  (void)address;
  CHECK_EQ(code, 204);
  bad_pointer_reports++;
}

static void misaligned_bound_calls(void) {
  static uint8_t no = 0, yes = 1;
  fastmm_fpc_bindings fb = {sizeof fb, never_free,  never_realloc, never_size,
                            never_get, count_error, &no,           &yes};
  fastmm_delphi_bindings db = {sizeof db, never_free_delphi, never_realloc_delphi, count_error};
  fastmm_fpc_memory_manager fpc;
  fastmm_memory_manager_ex dmm;
  static const uint32_t misaligns[] = {0, 4, 8, 12};
  static const uintptr_t sizes[] = {24, 1000, 5000, 200000, 1500000};
  if (!CHECK(fastmm_get_fpc_memory_manager(&fpc, &fb) == 1) ||
      !CHECK(fastmm_get_memory_manager_with_previous(&dmm, &db) == 1))
    return;
  for (size_t m = 0; m < 4; m++) {
    uint32_t mis = misaligns[m];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      size_t n = sizes[i];
      void *v = (void *)(uintptr_t)call2((fmt_any_fn)fpc.get_mem, n, 0, mis);
      if (!CHECK_MSG(v != NULL, "FPC GetMem(%zu), stack -%u", n, (unsigned)mis))
        continue;
      CHECK(call2((fmt_any_fn)fpc.mem_size, (uintptr_t)v, 0, mis) == fastmm_usable_size(v));
      tu_fill_pattern(v, n, (uint32_t)n);
      void *before = v;
      uintptr_t r = call2((fmt_any_fn)fpc.realloc_mem, (uintptr_t)&v, n - 1, mis); /* in place */
      CHECK(r == (uintptr_t)v && (n > SMALL_MAX_USER || v == before));
      r = call2((fmt_any_fn)fpc.realloc_mem, (uintptr_t)&v, n * 3, mis); /* moves */
      CHECK(r == (uintptr_t)v && tu_check_pattern(v, n - 1, (uint32_t)n) == (size_t)-1);
      CHECK_EQ(call2((fmt_any_fn)fpc.free_mem_size, (uintptr_t)v, n, mis), 0);
      unsigned reports = bad_pointer_reports;
      v = (void *)(uintptr_t)call2((fmt_any_fn)fpc.alloc_mem, n, 0, mis);
      CHECK(v != NULL && tu_all_zero(v, n));
      CHECK_EQ(call2((fmt_any_fn)fpc.free_mem, (uintptr_t)((char *)v + 32), 0, mis), 0);
      CHECK_EQ(bad_pointer_reports, reports + 1); /* inside a block: 204, from the slow path */
      CHECK_EQ(call2((fmt_any_fn)fpc.free_mem, (uintptr_t)v, 0, mis), 0);
      /* Delphi's bound FreeMem and ReallocMem. */
      v = dmm.get_mem((intptr_t)n);
      r = call2((fmt_any_fn)dmm.realloc_mem, (uintptr_t)v, n * 2, mis);
      CHECK(r != 0);
      CHECK(call2((fmt_any_fn)dmm.free_mem, r + 16, 0, mis) != 0);
      CHECK_EQ(call2((fmt_any_fn)dmm.free_mem, r, 0, mis), 0);
    }
  }
}
#endif

int main(void) {
  fastmm_memory_manager_ex mm;
  printf("test_delphi_abi (%s, %u-bit pointers, misaligned-stack harness %s)\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8), HAVE_MISALIGNED_HARNESS ? "on" : "off");
  memset(&mm, 0, sizeof mm);
  fastmm_get_memory_manager(&mm);
  /* Six pointers, in TMemoryManagerEx's order, no padding. */
  CHECK_EQ(sizeof mm, 6 * sizeof(void *));
  CHECK(mm.get_mem != NULL);
  CHECK(mm.free_mem != NULL);
  CHECK(mm.realloc_mem != NULL);
  CHECK(mm.alloc_mem != NULL);
  CHECK(mm.register_expected_memory_leak != NULL);
  CHECK(mm.unregister_expected_memory_leak != NULL);
  if (tu_failures())
    return tu_finish("test_delphi_abi");
  typed_calls(&mm);
#if HAVE_MISALIGNED_HARNESS
  misaligned_calls(&mm);
  misaligned_bound_calls();
#endif
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_delphi_abi");
}
