/* SPDX-License-Identifier: MIT */
/* The debug sections of a module's file (PE32/PE32+ or little-endian ELF32/ELF64), found by
 * name, and the span of its executable sections' link-time addresses (PE: ImageBase + RVA). */
#ifndef FASTMM_REPORT_DEBUG_SECTIONS_H
#define FASTMM_REPORT_DEBUG_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "report/dwarf_cursor.h"

typedef struct debug_sections {
  dw_span info, abbrev, line, line_str, str, str_offsets, addr, ranges, rnglists;
  uint64_t code_lo, code_hi; /* [code_lo, code_hi): every executable section; 0, 0 when none */
  /* The bytes string lookups by offset have looked at (a counter of the caller's, which
   * debug_sections_find leaves NULL: set it before reading): many references to one long string
   * must not make a build's time grow with their product. */
  uint64_t *string_bytes;
} debug_sections;

/* 1 and *out filled, or 0 and *why a short static reason (not PE or ELF, truncated headers,
 * compressed debug sections, no .debug_info...). */
int debug_sections_find(const unsigned char *image, size_t size, debug_sections *out,
                        const char **why);

#endif
