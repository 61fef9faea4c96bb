/* SPDX-License-Identifier: MIT */
/* DWARF debug information carried in a module (Free Pascal -gw, MinGW GCC and clang -g; ELF
 * natively): the symbolizer's second source, after a Delphi map and before a PDB. */
#ifndef FASTMM_REPORT_DWARF_READER_H
#define FASTMM_REPORT_DWARF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "sym_frame.h"

typedef struct dwarf_table dwarf_table;
/* image: the module's file read whole (PE or ELF); NULL when it carries no usable DWARF, with
 * *why set to a short static reason ("no .debug_info", "truncated .debug_line", ...). */
dwarf_table *dwarf_table_build(const unsigned char *image, size_t size, const char **why);
/* address: the link-time address: for PE the preferred ImageBase (from the optional header) +
 * RVA; for ELF the runtime address minus the load bias. 1 and *out filled when found, else 0. */
int dwarf_table_lookup(const dwarf_table *t, uint64_t address, sym_frame *out);
void dwarf_table_free(dwarf_table *t);

#endif
