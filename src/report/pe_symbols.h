/* SPDX-License-Identifier: MIT */
/* A PE image's own names (pe_symbols.c), read from the module's file: its headers (the preferred
 * image base and the sections, which a map is checked against), and a table of routines from
 * the export table and the COFF symbol table, for the routine alone. Every offset and count in
 * the file is checked against its size: a truncated or hostile file gives no table, never a
 * read outside it. */
#ifndef FASTMM_REPORT_PE_SYMBOLS_H
#define FASTMM_REPORT_PE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "sym_table.h"

#define PE_SECTIONS_MAX 96

typedef struct pe_section {
  char name[9]; /* as the header has it, NUL-terminated ("/4" for a long name) */
  uint32_t rva, virtual_size, raw_offset, raw_size, characteristics;
} pe_section;

typedef struct pe_info {
  uint64_t image_base; /* the preferred one, from the optional header */
  unsigned machine;    /* 0x14c i386, 0x8664 x64 */
  unsigned section_count;
  pe_section sections[PE_SECTIONS_MAX];
  int has_pdb;      /* a CodeView (RSDS) debug entry names a PDB */
  uint32_t symbols; /* file offset of the COFF symbol table, 0 when none */
  uint32_t symbol_count;
} pe_info;

/* 1 and *pe filled when image[0 .. size) is a PE file whose headers lie inside it. */
int pe_parse(const unsigned char *image, size_t size, pe_info *pe);
/* The section holding rva, or NULL. */
const pe_section *pe_section_of(const pe_info *pe, uint32_t rva);
/* 1 when the section is code (IMAGE_SCN_CNT_CODE or IMAGE_SCN_MEM_EXECUTE). */
int pe_section_is_code(const pe_section *s);

typedef struct pe_table pe_table;
/* The exports and COFF function symbols of a parsed image; NULL when it has neither, with *why
 * set to a short reason. */
pe_table *pe_table_build(const unsigned char *image, size_t size, const pe_info *pe,
                         const char **why);
/* The routine at or before rva inside the same code section: its name and its start. */
int pe_table_lookup(const pe_table *t, uint32_t rva, const char **name, uint32_t *start);
void pe_table_free(pe_table *t);

#endif
