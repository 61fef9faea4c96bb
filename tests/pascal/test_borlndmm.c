/* SPDX-License-Identifier: MIT */
/* borlndmm.dll, the drop-in for Delphi's ShareMem (src/api/borlndmm.c): loaded by name as ShareMem
 * loads it, its export table holds exactly the names ShareMem imports, and each export is
 * called with Delphi's convention and checked:
 *   - the memory manager entries allocate, resize, zero, free, refuse bad pointers and
 *     negative sizes, and register expected leaks;
 *   - GetAllocMemCount, GetAllocMemSize and GetHeapStatus give real numbers that follow what
 *     the test allocates, and GetHeapStatus writes no byte past Delphi's THeapStatus;
 *   - HeapAddRef / HeapRelease count; DumpBlocks returns; GetMemory, FreeMemory and
 *     ReallocMemory are cdecl, with System's rules for nil.
 * Win32: every register-convention export is also called from an assembly harness with the
 * stack 4 bytes off a 16-byte boundary (Delphi keeps it 4-aligned) and EBX, ESI, EDI, EBP
 * loaded with sentinels that must survive. Win64: a harness loads XMM4-XMM15 with sentinels,
 * which must survive too (Delphi's Win64 code expects XMM4 and XMM5 kept). */
#include "test_util.h"

#include <stdint.h>

#if defined(_WIN32) && !defined(_WIN64)
#define DELPHI_REGISTER __attribute__((regparm(3)))
#else
#define DELPHI_REGISTER
#endif

typedef struct delphi_heap_status {
  size_t total_addr_space, total_uncommitted, total_committed, total_allocated, total_free,
      free_small, free_big, unused, overhead;
  uint32_t heap_error_code;
} delphi_heap_status;

/* Delphi's SizeOf(THeapStatus) without tail padding: what GetHeapStatus may write. */
#define HEAP_STATUS_BYTES (9u * sizeof(size_t) + 4u)

typedef void *(DELPHI_REGISTER *sys_get_mem_fn)(intptr_t);
typedef int32_t(DELPHI_REGISTER *sys_free_mem_fn)(void *);
typedef void *(DELPHI_REGISTER *sys_realloc_mem_fn)(void *, intptr_t);
typedef uint8_t(DELPHI_REGISTER *sys_leak_fn)(void *);
typedef int32_t(DELPHI_REGISTER *int_fn)(void);
typedef void(DELPHI_REGISTER *proc_fn)(void);
typedef void *(DELPHI_REGISTER *heap_status_fn)(delphi_heap_status *);
typedef void *(__cdecl *get_memory_fn)(intptr_t);
typedef int32_t(__cdecl *free_memory_fn)(void *);
typedef void *(__cdecl *realloc_memory_fn)(void *, intptr_t);

static const char *const expected_names[] = {
    "@Borlndmm@SysGetMem$qqri",
    "@Borlndmm@SysFreeMem$qqrpv",
    "@Borlndmm@SysReallocMem$qqrpvi",
    "@Borlndmm@SysAllocMem$qqri",
    "@Borlndmm@SysRegisterExpectedMemoryLeak$qqrpi",
    "@Borlndmm@SysUnregisterExpectedMemoryLeak$qqrpi",
    "@Borlndmm@HeapAddRef$qqrv",
    "@Borlndmm@HeapRelease$qqrv",
    "GetHeapStatus",
    "GetAllocMemCount",
    "GetAllocMemSize",
    "DumpBlocks",
    "GetMemory",
    "FreeMemory",
    "ReallocMemory",
};
#define EXPECTED_COUNT (sizeof expected_names / sizeof expected_names[0])

static struct {
  sys_get_mem_fn get_mem;
  sys_free_mem_fn free_mem;
  sys_realloc_mem_fn realloc_mem;
  sys_get_mem_fn alloc_mem;
  sys_leak_fn register_leak;
  sys_leak_fn unregister_leak;
  int_fn add_ref;
  int_fn release;
  heap_status_fn heap_status;
  int_fn alloc_count;
  int_fn alloc_size;
  proc_fn dump_blocks;
  get_memory_fn get_memory;
  free_memory_fn free_memory;
  realloc_memory_fn realloc_memory;
} dm;

/* ---- The export table, read from the loaded image ------------------------------------------ */

static void check_export_names(HMODULE m) {
  const unsigned char *base = (const unsigned char *)m;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
  const IMAGE_DATA_DIRECTORY *dir = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
  if (!CHECK_MSG(dir->VirtualAddress != 0, "borlndmm.dll has no export table"))
    return;
  const IMAGE_EXPORT_DIRECTORY *exp = (const IMAGE_EXPORT_DIRECTORY *)(base + dir->VirtualAddress);
  const DWORD *names = (const DWORD *)(base + exp->AddressOfNames);
  CHECK_MSG(exp->NumberOfNames == EXPECTED_COUNT,
            "borlndmm.dll exports %lu names, ShareMem imports %u",
            (unsigned long)exp->NumberOfNames, (unsigned)EXPECTED_COUNT);
  for (DWORD i = 0; i < exp->NumberOfNames; i++) {
    const char *name = (const char *)(base + names[i]);
    int known = 0;
    for (size_t k = 0; k < EXPECTED_COUNT; k++)
      known |= strcmp(name, expected_names[k]) == 0;
    CHECK_MSG(known, "borlndmm.dll exports %s, which ShareMem does not import", name);
  }
  for (size_t k = 0; k < EXPECTED_COUNT; k++)
    CHECK_MSG(GetProcAddress(m, expected_names[k]) != NULL, "borlndmm.dll does not export %s",
              expected_names[k]);
}

/* ---- Calling-convention harnesses ------------------------------------------------------------ */

#if defined(_WIN32) && !defined(_WIN64) && defined(__GNUC__)
#define HAVE_HARNESS 1
/* cdecl: calls fn with EAX = a0, EDX = a1, ECX = junk, ESP 4 bytes off a 16-byte boundary and
 * EBX, ESI, EDI, EBP holding sentinels. Returns EAX; *kept = 1 when the sentinels survived. */
uintptr_t bm_call_register(void *fn, uintptr_t a0, uintptr_t a1,
                           uint32_t *kept) __asm__("bm_call_register");
__asm__(".text\n"
        ".globl bm_call_register\n"
        "bm_call_register:\n"
        "  pushl %ebp\n"
        "  movl %esp, %ebp\n"
        "  pushl %ebx\n"
        "  pushl %esi\n"
        "  pushl %edi\n"
        "  movl 8(%ebp), %eax\n" /* fn, kept in a memory slot the callee cannot see */
        "  movl %eax, bm_target\n"
        "  movl 20(%ebp), %eax\n"
        "  movl %eax, bm_kept\n"
        "  movl %ebp, bm_frame\n"
        "  movl 12(%ebp), %eax\n"
        "  movl 16(%ebp), %edx\n"
        "  andl $-16, %esp\n"
        "  subl $4, %esp\n"
        "  movl $0xB0B0B0B0, %ebx\n"
        "  movl $0x51515151, %esi\n"
        "  movl $0xD1D1D1D1, %edi\n"
        "  movl $0xEBEBEBEB, %ebp\n"
        "  movl $0xC0C0C0C0, %ecx\n"
        "  call *bm_target\n"
        "  xorl %ecx, %ecx\n"
        "  cmpl $0xB0B0B0B0, %ebx\n"
        "  jne 1f\n"
        "  cmpl $0x51515151, %esi\n"
        "  jne 1f\n"
        "  cmpl $0xD1D1D1D1, %edi\n"
        "  jne 1f\n"
        "  cmpl $0xEBEBEBEB, %ebp\n"
        "  jne 1f\n"
        "  movl $1, %ecx\n"
        "1:\n"
        "  movl bm_frame, %ebp\n"
        "  movl bm_kept, %edx\n"
        "  movl %ecx, (%edx)\n"
        "  leal -12(%ebp), %esp\n"
        "  popl %edi\n"
        "  popl %esi\n"
        "  popl %ebx\n"
        "  popl %ebp\n"
        "  ret\n"
        ".data\n"
        "bm_target: .long 0\n"
        "bm_kept: .long 0\n"
        "bm_frame: .long 0\n"
        ".text\n");
#elif defined(_WIN64) && defined(__GNUC__)
#define HAVE_HARNESS 1
/* Windows x64: calls fn(a0, a1) with XMM4-XMM15 holding sentinels (their low 64 bits) and
 * checks them afterwards. XMM6-XMM15 are saved and restored around the call for our caller. */
uintptr_t bm_call_register(void *fn, uintptr_t a0, uintptr_t a1,
                           uint32_t *kept) __asm__("bm_call_register");
__asm__(".text\n"
        ".globl bm_call_register\n"
        "bm_call_register:\n"
        "  pushq %rbp\n"
        "  movq %rsp, %rbp\n"
        "  pushq %rbx\n"
        "  pushq %rsi\n"
        "  pushq %rdi\n"
        "  pushq %r12\n"
        "  subq $192, %rsp\n" /* 32 shadow bytes, then XMM6-XMM15 */
        "  movdqu %xmm6, 32(%rsp)\n"
        "  movdqu %xmm7, 48(%rsp)\n"
        "  movdqu %xmm8, 64(%rsp)\n"
        "  movdqu %xmm9, 80(%rsp)\n"
        "  movdqu %xmm10, 96(%rsp)\n"
        "  movdqu %xmm11, 112(%rsp)\n"
        "  movdqu %xmm12, 128(%rsp)\n"
        "  movdqu %xmm13, 144(%rsp)\n"
        "  movdqu %xmm14, 160(%rsp)\n"
        "  movdqu %xmm15, 176(%rsp)\n"
        "  movq %r9, %r12\n"
        "  movq %rcx, %rax\n"
        "  movabsq $0x4444444444444404, %rbx\n"
        "  movq %rbx, %xmm4\n"
        "  movabsq $0x5555555555555505, %rbx\n"
        "  movq %rbx, %xmm5\n"
        "  movabsq $0x6666666666666606, %rbx\n"
        "  movq %rbx, %xmm6\n"
        "  movabsq $0x7777777777777707, %rbx\n"
        "  movq %rbx, %xmm7\n"
        "  movabsq $0x8888888888888808, %rbx\n"
        "  movq %rbx, %xmm8\n"
        "  movabsq $0x9999999999999909, %rbx\n"
        "  movq %rbx, %xmm9\n"
        "  movabsq $0xAAAAAAAAAAAAAA0A, %rbx\n"
        "  movq %rbx, %xmm10\n"
        "  movabsq $0xBBBBBBBBBBBBBB0B, %rbx\n"
        "  movq %rbx, %xmm11\n"
        "  movabsq $0xCCCCCCCCCCCCCC0C, %rbx\n"
        "  movq %rbx, %xmm12\n"
        "  movabsq $0xDDDDDDDDDDDDDD0D, %rbx\n"
        "  movq %rbx, %xmm13\n"
        "  movabsq $0xEEEEEEEEEEEEEE0E, %rbx\n"
        "  movq %rbx, %xmm14\n"
        "  movabsq $0xFFFFFFFFFFFFFF0F, %rbx\n"
        "  movq %rbx, %xmm15\n"
        "  movq %rdx, %rcx\n"
        "  movq %r8, %rdx\n"
        "  callq *%rax\n"
        "  xorl %ecx, %ecx\n"
        "  movq %xmm4, %rbx\n"
        "  movabsq $0x4444444444444404, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm5, %rbx\n"
        "  movabsq $0x5555555555555505, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm6, %rbx\n"
        "  movabsq $0x6666666666666606, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm7, %rbx\n"
        "  movabsq $0x7777777777777707, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm8, %rbx\n"
        "  movabsq $0x8888888888888808, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm9, %rbx\n"
        "  movabsq $0x9999999999999909, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm10, %rbx\n"
        "  movabsq $0xAAAAAAAAAAAAAA0A, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm11, %rbx\n"
        "  movabsq $0xBBBBBBBBBBBBBB0B, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm12, %rbx\n"
        "  movabsq $0xCCCCCCCCCCCCCC0C, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm13, %rbx\n"
        "  movabsq $0xDDDDDDDDDDDDDD0D, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm14, %rbx\n"
        "  movabsq $0xEEEEEEEEEEEEEE0E, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movq %xmm15, %rbx\n"
        "  movabsq $0xFFFFFFFFFFFFFF0F, %rsi\n"
        "  cmpq %rsi, %rbx\n"
        "  jne 1f\n"
        "  movl $1, %ecx\n"
        "1:\n"
        "  movl %ecx, (%r12)\n"
        "  movdqu 32(%rsp), %xmm6\n"
        "  movdqu 48(%rsp), %xmm7\n"
        "  movdqu 64(%rsp), %xmm8\n"
        "  movdqu 80(%rsp), %xmm9\n"
        "  movdqu 96(%rsp), %xmm10\n"
        "  movdqu 112(%rsp), %xmm11\n"
        "  movdqu 128(%rsp), %xmm12\n"
        "  movdqu 144(%rsp), %xmm13\n"
        "  movdqu 160(%rsp), %xmm14\n"
        "  movdqu 176(%rsp), %xmm15\n"
        "  addq $192, %rsp\n"
        "  popq %r12\n"
        "  popq %rdi\n"
        "  popq %rsi\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  retq\n");
#else
#define HAVE_HARNESS 0
#endif

#if HAVE_HARNESS
#if defined(_WIN64)
#define HARNESS_KEEPS "XMM4-XMM15"
#else
#define HARNESS_KEEPS "EBX, ESI, EDI and EBP with ESP 4 bytes off a 16-byte boundary"
#endif
/* Calls a register-convention export through the harness; the result in EAX / RAX. */
static uintptr_t call_checked(const char *name, void *fn, uintptr_t a0, uintptr_t a1) {
  uint32_t kept = 0;
  uintptr_t r = bm_call_register(fn, a0, a1, &kept);
  CHECK_MSG(kept == 1, "%s does not keep %s", name, HARNESS_KEEPS);
  return r;
}

static void harness_calls(void) {
  uintptr_t p = call_checked("SysGetMem", (void *)dm.get_mem, 100, 0);
  CHECK(p != 0 && p % 16 == 0);
  memset((void *)p, 0x3C, 100);
  uintptr_t q = call_checked("SysReallocMem", (void *)dm.realloc_mem, p, 70000);
  CHECK(q != 0 && ((unsigned char *)q)[99] == 0x3C);
  CHECK_EQ((uint8_t)call_checked("SysRegisterExpectedMemoryLeak", (void *)dm.register_leak, q, 0),
           1);
  CHECK_EQ(
      (uint8_t)call_checked("SysUnregisterExpectedMemoryLeak", (void *)dm.unregister_leak, q, 0),
      1);
  CHECK_EQ((uint32_t)call_checked("SysFreeMem", (void *)dm.free_mem, q, 0), 0);
  p = call_checked("SysAllocMem", (void *)dm.alloc_mem, 5000, 0);
  CHECK(p != 0 && ((unsigned char *)p)[4999] == 0);
  CHECK_EQ((uint32_t)call_checked("SysFreeMem", (void *)dm.free_mem, p, 0), 0);
  int32_t refs = (int32_t)call_checked("HeapAddRef", (void *)dm.add_ref, 0, 0);
  CHECK_EQ((int32_t)call_checked("HeapRelease", (void *)dm.release, 0, 0), refs - 1);
  CHECK((int32_t)call_checked("GetAllocMemCount", (void *)dm.alloc_count, 0, 0) >= 0);
  CHECK((int32_t)call_checked("GetAllocMemSize", (void *)dm.alloc_size, 0, 0) >= 0);
  delphi_heap_status hs;
  memset(&hs, 0xEE, sizeof hs);
  call_checked("GetHeapStatus", (void *)dm.heap_status, (uintptr_t)&hs, 0);
  CHECK_EQ(hs.heap_error_code, 0);
  CHECK(hs.total_committed == hs.total_allocated + hs.total_free + hs.overhead);
  call_checked("DumpBlocks", (void *)dm.dump_blocks, 0, 0);
}
#endif

/* ---- The exports, called with their types -----------------------------------------------------
 */

static void check_memory_manager(void) {
  unsigned char *p = (unsigned char *)dm.get_mem(1000);
  CHECK(p != NULL && (uintptr_t)p % 16 == 0);
  for (int i = 0; i < 1000; i++)
    p[i] = (unsigned char)i;
  unsigned char *q = (unsigned char *)dm.realloc_mem(p, 300000);
  int same = q != NULL;
  for (int i = 0; same && i < 1000; i++)
    same = q[i] == (unsigned char)i;
  CHECK_MSG(same, "SysReallocMem keeps the data");
  q = (unsigned char *)dm.realloc_mem(q, 10);
  CHECK(q != NULL && q[9] == 9);
  CHECK_EQ(dm.free_mem(q), 0);
  CHECK_MSG(dm.free_mem(q) != 0, "SysFreeMem refuses a block freed already");
  int local;
  CHECK_MSG(dm.free_mem(&local) != 0, "SysFreeMem refuses a pointer that is not a block");
  CHECK(dm.get_mem(-1) == NULL);
  CHECK(dm.alloc_mem(-5) == NULL);
  p = (unsigned char *)dm.get_mem(64);
  CHECK(dm.realloc_mem(p, -1) == NULL);
  CHECK_EQ(dm.free_mem(p), 0); /* the failed resize left it alive */
  p = (unsigned char *)dm.alloc_mem(100000);
  int zero = p != NULL;
  for (int i = 0; zero && i < 100000; i++)
    zero = p[i] == 0;
  CHECK_MSG(zero, "SysAllocMem gives zeroed memory");
  CHECK_EQ(dm.register_leak(p), 1);
  CHECK_EQ(dm.register_leak(p), 0);
  CHECK_EQ(dm.unregister_leak(p), 1);
  CHECK_EQ(dm.unregister_leak(p), 0);
  CHECK_EQ(dm.free_mem(p), 0);
  CHECK_EQ(dm.register_leak(p), 0); /* no longer a live block */
}

static void check_statistics(void) {
  enum { N = 500, SIZE = 200 };
  static void *blocks[N];
  int32_t c0 = dm.alloc_count(), s0 = dm.alloc_size();
  delphi_heap_status h0;
  dm.heap_status(&h0);
  CHECK_EQ(h0.total_allocated, (size_t)s0);
  for (int i = 0; i < N; i++)
    blocks[i] = dm.get_mem(SIZE);
  int32_t c1 = dm.alloc_count(), s1 = dm.alloc_size();
  CHECK_MSG(c1 == c0 + N, "GetAllocMemCount: %ld before, %ld after %d blocks", (long)c0, (long)c1,
            N);
  CHECK_MSG(s1 >= s0 + N * SIZE && s1 <= s0 + N * (SIZE + 64),
            "GetAllocMemSize: %ld before, %ld after %d blocks of %d bytes", (long)s0, (long)s1, N,
            SIZE);
  unsigned char raw[sizeof(delphi_heap_status) + 32];
  memset(raw, 0xA5, sizeof raw);
  void *r = dm.heap_status((delphi_heap_status *)raw);
  CHECK(r == raw);
  delphi_heap_status h1;
  memcpy(&h1, raw, HEAP_STATUS_BYTES);
  int untouched = 1;
  for (size_t i = HEAP_STATUS_BYTES; i < sizeof raw; i++)
    untouched &= raw[i] == 0xA5;
  CHECK_MSG(untouched, "GetHeapStatus wrote past Delphi's THeapStatus (%u bytes)",
            (unsigned)HEAP_STATUS_BYTES);
  CHECK_EQ(h1.total_allocated, (size_t)s1);
  CHECK(h1.total_allocated >= h0.total_allocated + N * SIZE);
  CHECK(h1.total_addr_space == h1.total_committed && h1.total_uncommitted == 0);
  CHECK(h1.total_committed >= h1.total_allocated);
  CHECK_EQ(h1.total_free, h1.free_small + h1.free_big + h1.unused);
  CHECK_EQ(h1.total_committed, h1.total_allocated + h1.total_free + h1.overhead);
  CHECK_EQ(h1.heap_error_code, 0);
  for (int i = 0; i < N; i++)
    CHECK_EQ(dm.free_mem(blocks[i]), 0);
  CHECK_EQ(dm.alloc_count(), c0);
  CHECK_EQ(dm.alloc_size(), s0);

  void *big = dm.get_mem(3 * 1024 * 1024);
  CHECK(dm.alloc_size() >= s0 + 3 * 1024 * 1024);
  dm.free_mem(big);

  int32_t refs = dm.add_ref();
  CHECK(refs >= 1);
  CHECK_EQ(dm.add_ref(), refs + 1);
  CHECK_EQ(dm.release(), refs);
  CHECK_EQ(dm.release(), refs - 1);
  dm.dump_blocks();
}

static void check_cdecl_trio(void) {
  unsigned char *p = (unsigned char *)dm.get_memory(100);
  CHECK(p != NULL);
  memset(p, 0x77, 100);
  p = (unsigned char *)dm.realloc_memory(p, 20000);
  CHECK(p != NULL && p[99] == 0x77);
  CHECK_EQ(dm.free_memory(p), 0);
  CHECK_EQ(dm.free_memory(NULL), 0);
  p = (unsigned char *)dm.realloc_memory(NULL, 50);
  CHECK(p != NULL);
  CHECK(dm.realloc_memory(p, 0) == NULL); /* size 0 frees */
  CHECK(dm.get_memory(-1) == NULL);
}

int main(void) {
  HMODULE m = LoadLibraryA("borlndmm.dll");
  if (!CHECK_MSG(m != NULL, "borlndmm.dll does not load (error %lu)",
                 (unsigned long)GetLastError()))
    return tu_finish("test_borlndmm");
  check_export_names(m);
  dm.get_mem = (sys_get_mem_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@SysGetMem$qqri");
  dm.free_mem = (sys_free_mem_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@SysFreeMem$qqrpv");
  dm.realloc_mem =
      (sys_realloc_mem_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@SysReallocMem$qqrpvi");
  dm.alloc_mem = (sys_get_mem_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@SysAllocMem$qqri");
  dm.register_leak = (sys_leak_fn)(void (*)(void))GetProcAddress(
      m, "@Borlndmm@SysRegisterExpectedMemoryLeak$qqrpi");
  dm.unregister_leak = (sys_leak_fn)(void (*)(void))GetProcAddress(
      m, "@Borlndmm@SysUnregisterExpectedMemoryLeak$qqrpi");
  dm.add_ref = (int_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@HeapAddRef$qqrv");
  dm.release = (int_fn)(void (*)(void))GetProcAddress(m, "@Borlndmm@HeapRelease$qqrv");
  dm.heap_status = (heap_status_fn)(void (*)(void))GetProcAddress(m, "GetHeapStatus");
  dm.alloc_count = (int_fn)(void (*)(void))GetProcAddress(m, "GetAllocMemCount");
  dm.alloc_size = (int_fn)(void (*)(void))GetProcAddress(m, "GetAllocMemSize");
  dm.dump_blocks = (proc_fn)(void (*)(void))GetProcAddress(m, "DumpBlocks");
  dm.get_memory = (get_memory_fn)(void (*)(void))GetProcAddress(m, "GetMemory");
  dm.free_memory = (free_memory_fn)(void (*)(void))GetProcAddress(m, "FreeMemory");
  dm.realloc_memory = (realloc_memory_fn)(void (*)(void))GetProcAddress(m, "ReallocMemory");
  if (tu_failures() != 0)
    return tu_finish("test_borlndmm");
  check_memory_manager();
  check_statistics();
  check_cdecl_trio();
#if HAVE_HARNESS
  harness_calls();
#endif
  return tu_finish("test_borlndmm");
}
