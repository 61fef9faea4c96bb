/* SPDX-License-Identifier: MIT */
/* Names for addresses from the DWARF debug information a module carries (Free Pascal -gw/-gw3,
 * MinGW GCC and clang -g, ELF natively): routine, unit, file and line, built once into sorted
 * tables and searched by binary search.
 *
 * Containers: PE32 and PE32+ (long section names through the COFF string table), ELF32 and ELF64
 * little-endian executables and shared objects (not relocatable objects, not compressed debug
 * sections). DWARF versions 2 to 5: .debug_info with .debug_abbrev (and .debug_str,
 * .debug_line_str, .debug_str_offsets, .debug_addr, .debug_ranges, .debug_rnglists) and
 * .debug_line.
 *
 * Names:
 *  - routine: the innermost DW_TAG_subprogram or DW_TAG_inlined_subroutine whose ranges hold the
 *    address; its DW_AT_linkage_name (C++'s mangled name, as addr2line gives it), else its
 *    DW_AT_name, else those of the subprogram its DW_AT_specification / DW_AT_abstract_origin
 *    names (followed at most 8 deep). A subprogram whose DIE lies inside another's (GNU C's
 *    nested functions) is named "Outer.Inner"; one inside a class's DIE (Free Pascal's methods)
 *    "TClass.Method". Free Pascal writes a nested routine's DIE beside its outer one's, so the
 *    format names it "Inner" alone. An address no subprogram covers (code folded into another's
 *    by the linker or compiler, hand-written assembly) has routine "" but may have file and line:
 *    the caller may take the routine from the module's symbols then.
 *  - unit: the compile unit's DW_AT_name, its base name without the extension ("Unit1", "main").
 *  - file and line: the line table's row for the address; file is the file's base name.
 *
 * Memory: every table and string comes from the prim layer (prim_map, prim_reserve and
 * prim_commit), never from an allocator. Strings point into `image` (names, file names) or into
 * the table's own memory (units, nested names): the image must stay mapped, unchanged, until
 * dwarf_table_free. A built table is only read: lookups may run on several threads at once.
 *
 * Bad input: every read is bounds-checked; a truncated or malformed section makes the whole build
 * fail (NULL and a reason), never a partial table. Caps, beyond which the build fails with a
 * reason ("too many line rows", "too many routine ranges", "too much work in ..."):
 * DWARF_MAX_ROWS line rows kept, DWARF_MAX_RANGES routine address ranges, DWARF_MAX_WORK units
 * of work of each kind (range-list entries read and DIEs followed by reference; 16 bytes of
 * abbreviation tables read; 16 bytes of line tables), DW_MAX_STRING_BYTES (1 GB) looked at by
 * string lookups; a string longer than DW_MAX_STRING (64 KB) counts as none. Building reads each
 * section once (line tables once per distinct offset), so its time grows with the debug
 * sections' size: about 0.3 s of CPU for a 50 MB image. */
#ifndef FASTMM_REPORT_DWARF_READER_H
#define FASTMM_REPORT_DWARF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "report/sym_frame.h"

#define DWARF_MAX_ROWS (8u << 20)
#define DWARF_MAX_RANGES (4u << 20)
#define DWARF_MAX_WORK (64u << 20)

typedef struct dwarf_table dwarf_table;

/* image: the module's file read whole (PE or ELF); NULL when it carries no usable DWARF, with
 * *why set to a short static reason ("no .debug_info", "truncated .debug_line", ...). */
dwarf_table *dwarf_table_build(const unsigned char *image, size_t size, const char **why);

/* address: the link-time address: for PE the preferred ImageBase (from the optional header) +
 * RVA; for ELF the runtime address minus the load bias. For a return address, look up the
 * address - 1 (inside the call), or a call at a routine's end names the next routine and line.
 * 1 and *out filled when found (a routine or a line row holds the address; the fields not known
 * are "" and 0), else 0 and *out all "" and 0. */
int dwarf_table_lookup(const dwarf_table *t, uint64_t address, sym_frame *out);

void dwarf_table_free(dwarf_table *t);

#endif
