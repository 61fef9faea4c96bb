/* SPDX-License-Identifier: MIT */
/* A unit's abbreviation table (.debug_abbrev): for each code, the DIE's tag, whether it has
 * children, and its attributes' names and forms; looked up by code with a binary search. */
#ifndef FASTMM_REPORT_DWARF_ABBREV_H
#define FASTMM_REPORT_DWARF_ABBREV_H

#include <stdint.h>

#include "report/dwarf_cursor.h"
#include "report/dwarf_form.h"
#include "report/dwarf_store.h"

typedef struct dw_attr_spec {
  uint32_t name, form;
  int64_t implicit; /* DW_FORM_implicit_const's value */
} dw_attr_spec;

typedef struct dw_abbrev {
  uint64_t code;
  uint32_t tag, has_children;
  uint32_t first, count; /* its attributes: specs[first .. first + count) */
  int64_t fixed;         /* the bytes its attributes always take, or -1 when that varies */
} dw_abbrev;

typedef struct dw_abbrevs {
  dw_vec list, specs;                       /* dw_abbrev sorted by code, dw_attr_spec */
  uint64_t offset;                          /* the table loaded: its offset in .debug_abbrev */
  unsigned addr_size, offset_size, version; /* and the unit whose sizes `fixed` counts */
  size_t parsed; /* the bytes the last load read (0 when the table was loaded already) */
  int loaded;
} dw_abbrevs;

void dw_abbrevs_init(dw_abbrevs *a);
/* Loads the table at `offset` for unit `u` (nothing to do when it is the one loaded for a unit
 * of the same sizes): 1, or 0 when it is malformed (*why says how) or memory ran out. */
int dw_abbrevs_load(dw_abbrevs *a, dw_span abbrev, uint64_t offset, const dw_unit *u,
                    const char **why);
const dw_abbrev *dw_abbrevs_find(const dw_abbrevs *a, uint64_t code);
void dw_abbrevs_free(dw_abbrevs *a);

#endif
