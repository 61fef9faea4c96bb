/* SPDX-License-Identifier: MIT */
/* DWARF line-number programs (.debug_line, versions 2 to 5): run into rows of address, file and
 * line, one row for each address where the file or the line changes, and a row marking each
 * sequence's end. Sequences that start outside the module's code (code the linker dropped,
 * left at address 0) are left out. */
#ifndef FASTMM_REPORT_DWARF_LINE_H
#define FASTMM_REPORT_DWARF_LINE_H

#include <stdint.h>

#include "report/debug_sections.h"
#include "report/dwarf_form.h"
#include "report/dwarf_store.h"

#define DW_ROW_END UINT32_MAX            /* a row's file: the end of a sequence */
#define DW_FILE_UNKNOWN (UINT32_MAX - 1) /* a row's file: an index the table does not have */
#define DW_MAX_FILES (4u << 20)

typedef struct dw_row {
  uint64_t addr;
  uint32_t file; /* an index into the files vector, or DW_ROW_END / DW_FILE_UNKNOWN */
  uint32_t line;
} dw_row;

typedef struct dw_file {
  const char *name; /* the base name, in the image */
  const char *unit; /* the unit whose line table names it */
} dw_file;

/* Runs the line program at `offset` of .debug_line, for the unit `u` (its string bases and
 * address size) named `unit`: appends dw_row to rows (at most `max_rows` in all) and dw_file to
 * files. 1, or 0 with *why. */
int dwarf_line_read(const debug_sections *d, uint64_t offset, const dw_unit *u, const char *unit,
                    dw_vec *rows, size_t max_rows, dw_vec *files, const char **why);

#endif
