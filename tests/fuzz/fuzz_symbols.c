/* SPDX-License-Identifier: MIT */
/* The symbol readers' fuzzer: the first byte chooses the reader, the rest is its file.
 *   even: a Delphi detailed map (report/map_reader.c), read against a fixed module (image base
 *         0x400000, .text at 0x1000 of 0x8000 bytes, .data at 0x9000 of 0x1000), then looked up
 *         at addresses across the module;
 *   odd:  a PE file (report/pe_symbols.c): headers, export table and COFF symbols, looked up.
 * A reader may refuse its input (with a reason) but must never read outside it, hang, or answer
 * a lookup with anything but terminated strings inside the module's code. Built with libFuzzer
 * (fuzz_symbols, clang) and as fuzz_symbols_replay, which runs the seed corpus
 * (corpus_symbols/) on every preset; the replay links the readers' sources with a prim_map of
 * the C library's (FUZZ_SYMBOLS_OWN_MAP), the libFuzzer build the library's own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/map_reader.h"
#include "report/pe_symbols.h"

#if defined(FUZZ_SYMBOLS_OWN_MAP)
#include "prim/prim.h"
void *prim_map(size_t size, int top_down) {
  (void)top_down;
  return calloc(1, size);
}
void prim_unmap(void *p, size_t size) {
  (void)size;
  free(p);
}
#endif

#define FUZZ_CHECK(c)                                                                              \
  do {                                                                                             \
    if (!(c))                                                                                      \
      abort();                                                                                     \
  } while (0)

static void check_frame(const sym_frame *f) {
  FUZZ_CHECK(f->file != NULL && f->unit != NULL && f->routine != NULL);
  FUZZ_CHECK(strlen(f->file) <= 1024 && strlen(f->unit) <= 1024 && strlen(f->routine) <= 1024);
}

static void fuzz_map(const unsigned char *in, size_t n) {
  pe_info pe;
  memset(&pe, 0, sizeof pe);
  pe.image_base = 0x400000;
  pe.section_count = 2;
  memcpy(pe.sections[0].name, ".text", 6);
  pe.sections[0].rva = 0x1000;
  pe.sections[0].virtual_size = 0x8000;
  pe.sections[0].characteristics = 0x60000020u;
  memcpy(pe.sections[1].name, ".data", 6);
  pe.sections[1].rva = 0x9000;
  pe.sections[1].virtual_size = 0x1000;
  pe.sections[1].characteristics = 0xC0000040u;
  const char *why = NULL;
  map_table *t = map_table_build((const char *)in, n, &pe, &why);
  FUZZ_CHECK((t == NULL) == (why != NULL));
  for (uint32_t rva = 0; rva < 0xA100; rva += 0x35) {
    sym_frame f;
    int found = map_table_lookup(t, rva, &f);
    check_frame(&f);
    /* Only addresses inside the checked code segment are ever named. */
    FUZZ_CHECK(!found || (rva >= 0x1000 && rva < 0x9000));
  }
  map_table_free(t);
}

static void fuzz_pe(const unsigned char *in, size_t n) {
  pe_info pe;
  if (!pe_parse(in, n, &pe))
    return;
  FUZZ_CHECK(pe.section_count <= PE_SECTIONS_MAX);
  const char *why = NULL;
  pe_table *t = pe_table_build(in, n, &pe, &why);
  FUZZ_CHECK((t == NULL) == (why != NULL));
  for (uint32_t rva = 0; rva < 0x20000; rva += 0x3b) {
    const char *name = NULL;
    uint32_t start = 0;
    if (pe_table_lookup(t, rva, &name, &start)) {
      FUZZ_CHECK(name != NULL && strlen(name) <= 512 && start <= rva);
      const pe_section *s = pe_section_of(&pe, rva);
      FUZZ_CHECK(s != NULL && pe_section_is_code(s));
    }
  }
  pe_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  if (data[0] & 1)
    fuzz_pe(data + 1, size - 1);
  else
    fuzz_map(data + 1, size - 1);
  return 0;
}
