/* SPDX-License-Identifier: MIT */
/* The ReallocMem entry points the DLL hands out, as one table a test loops over: the C export
 * fastmm_reallocmem, the Delphi record's ReallocMem (on Win32 the `register` entry; on Win32 and
 * Win64 both are the NASM fast path unless the build is pure C), and natively, when the test is
 * built with FASTMM_TEST_ELF_ASM, the Win64 NASM entry assembled as ELF64 and called through
 * ms_abi (tests/asm_elf_shim.c). The test calls fastmm_get_memory_manager(&delphi) first. */
#ifndef FASTMM_TEST_REALLOC_ENTRIES_H
#define FASTMM_TEST_REALLOC_ENTRIES_H

#include "test_blocks.h"

typedef void *(*realloc_fn)(void *p, size_t size);

static fastmm_memory_manager_ex delphi;

static void *via_c_export(void *p, size_t size) {
  return fastmm_reallocmem(p, size);
}

/* The record's entry takes a NativeInt; calling it through its declared type uses Delphi's
 * register convention on Win32. */
static void *via_delphi_record(void *p, size_t size) {
  return delphi.realloc_mem(p, (intptr_t)size);
}

#if defined(FASTMM_TEST_ELF_ASM)
__attribute__((ms_abi)) void *elf_fastmm_reallocmem(void *p, size_t size);
static void *via_win64_asm_as_elf(void *p, size_t size) {
  return elf_fastmm_reallocmem(p, size);
}
#endif

static const struct realloc_entry {
  const char *name;
  realloc_fn fn;
} realloc_entries[] = {
    {"fastmm_reallocmem", via_c_export},
    {"TMemoryManagerEx.ReallocMem", via_delphi_record},
#if defined(FASTMM_TEST_ELF_ASM)
    {"src/win64/realloc_fast.asm (ELF64, ms_abi)", via_win64_asm_as_elf},
#endif
};
#define REALLOC_ENTRY_COUNT (sizeof realloc_entries / sizeof realloc_entries[0])

#endif
