/* SPDX-License-Identifier: MIT */
/* Lets the native build run src/win64/realloc_fast.asm: assembled as ELF64 with its symbols
 * prefixed `elf_` (nasm --prefix), it expects Windows x64 callers and a Windows x64 slow path.
 * This file is that slow path, ms_abi wrappers of the core's own (with and without the page map's
 * answer the entry hands on); the page map it reads is the core's (linked under the prefixed name
 * by --defsym). */
#include <stddef.h>

void *entry_realloc_slow(void *p, size_t size);
void *entry_realloc_slow_region(void *p, size_t size, unsigned region);

__attribute__((ms_abi)) void *elf_entry_realloc_slow(void *p, size_t size);
__attribute__((ms_abi)) void *elf_entry_realloc_slow(void *p, size_t size) {
  return entry_realloc_slow(p, size);
}

__attribute__((ms_abi)) void *elf_entry_realloc_slow_region(void *p, size_t size, unsigned region);
__attribute__((ms_abi)) void *elf_entry_realloc_slow_region(void *p, size_t size, unsigned region) {
  return entry_realloc_slow_region(p, size, region);
}
