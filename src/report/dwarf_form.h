/* SPDX-License-Identifier: MIT */
/* DWARF attribute values (DWARF 2 to 5 and the GNU forms of split DWARF): reading one from a
 * DIE or a v5 line-table entry by its form, and resolving it as a string or an address once the
 * unit's bases (DW_AT_str_offsets_base, DW_AT_addr_base) are known. */
#ifndef FASTMM_REPORT_DWARF_FORM_H
#define FASTMM_REPORT_DWARF_FORM_H

#include <stdint.h>

#include "report/debug_sections.h"
#include "report/dwarf_cursor.h"

/* What a value is read with: a unit's (or line table's) header facts. */
typedef struct dw_unit {
  size_t start, die_start, end; /* .debug_info offsets: header, first DIE, next unit */
  unsigned version, offset_size, addr_size;
  uint64_t abbrev_offset;
  uint64_t str_offsets_base, addr_base, rnglists_base; /* from the unit DIE; defaults for v5 */
  uint64_t base_address;                               /* the unit DIE's DW_AT_low_pc, or 0 */
} dw_unit;

enum dw_value_kind {
  DW_V_NONE,
  DW_V_CONST,
  DW_V_ADDR,
  DW_V_ADDRX,
  DW_V_STRING,
  DW_V_STRP,
  DW_V_LINE_STRP,
  DW_V_STRX,
  DW_V_REF,
  DW_V_SECOFF,
  DW_V_RNGLISTX,
  DW_V_OTHER
};

typedef struct dw_value {
  enum dw_value_kind kind;
  uint64_t u;    /* the constant, address, index, section offset, or absolute .debug_info offset */
  const char *s; /* DW_V_STRING: the string */
} dw_value;

/* Reads a value of `form` (implicit: DW_FORM_implicit_const's value from the abbreviation).
 * 0 for an unknown form or a read past the end (then the DIE cannot be walked). */
int dw_form_read(dw_cursor *c, unsigned form, int64_t implicit, const dw_unit *u, dw_value *out);

/* The bytes a value of `form` takes in a unit like `u` whatever the value, or -1 when that
 * varies (LEB128 numbers, strings, blocks, DW_FORM_indirect) or the form is unknown. */
int dw_form_fixed_size(unsigned form, const dw_unit *u);

/* The longest string read by offset: a longer one (a C++ name of that length is possible but
 * rare) is taken as no string. */
#define DW_MAX_STRING ((size_t)64 << 10)
/* The most bytes a build's string lookups may look at in all (debug_sections.string_bytes):
 * past it the build fails. */
#define DW_MAX_STRING_BYTES ((uint64_t)1 << 30)

/* The string a value names, or NULL (not a string, a bad offset, longer than DW_MAX_STRING). */
const char *dw_value_string(const debug_sections *d, const dw_unit *u, const dw_value *v);
/* The address a value names: 1 and *out, or 0. */
int dw_value_addr(const debug_sections *d, const dw_unit *u, const dw_value *v, uint64_t *out);
/* Entry `index` of .debug_addr from the unit's base. */
int dw_addrx(const debug_sections *d, const dw_unit *u, uint64_t index, uint64_t *out);

#endif
