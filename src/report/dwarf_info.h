/* SPDX-License-Identifier: MIT */
/* The routines of .debug_info: every DW_TAG_subprogram and DW_TAG_inlined_subroutine with
 * addresses, as address ranges with a name, a unit and a nesting depth (the innermost range
 * holding an address names its routine), and each unit's line table. */
#ifndef FASTMM_REPORT_DWARF_INFO_H
#define FASTMM_REPORT_DWARF_INFO_H

#include <stdint.h>

#include "report/debug_sections.h"
#include "report/dwarf_form.h"
#include "report/dwarf_store.h"

typedef struct dw_range {
  uint64_t lo, hi;
  const char *name, *unit;
  uint32_t depth; /* the DIE's nesting level in its unit: deeper is more inner */
} dw_range;

typedef struct dw_line_unit {
  uint64_t offset;  /* DW_AT_stmt_list: the unit's line table in .debug_line */
  const char *unit; /* the unit's name: base name, no extension */
  dw_unit u;
} dw_line_unit;

/* Appends dw_range to ranges (at most max_ranges) and dw_line_unit to line_units; strings made
 * here (units, nested names) come from `pool`. `work` counts the range-list entries and the
 * DIEs read by reference, and the build fails when it passes max_work. 1, or 0 with *why. */
int dwarf_info_read(const debug_sections *d, dw_pool *pool, dw_vec *ranges, size_t max_ranges,
                    dw_vec *line_units, uint64_t max_work, const char **why);

#endif
