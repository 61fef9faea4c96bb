/* SPDX-License-Identifier: MIT */
/* Delphi's detailed map file (map_reader.c): the linker's "Map file: Detailed" beside a module.
 * Read are its segment table (checked against the module's sections: a map of another build
 * is refused), "Detailed map of segments" (which unit each range of code is), "Publics by
 * Value" (the routines) and every "Line numbers for Unit(File) segment .text" (the lines); the
 * map must end with its "Program entry point at" line, else it is taken as truncated. */
#ifndef FASTMM_REPORT_MAP_READER_H
#define FASTMM_REPORT_MAP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "pe_symbols.h"
#include "sym_frame.h"

typedef struct map_table map_table;

/* text[0 .. size): the map's bytes, anything at all; pe: the module's headers. NULL when the map
 * cannot be used, with *why set to a short static reason. */
map_table *map_table_build(const char *text, size_t size, const pe_info *pe, const char **why);
/* rva: an address in the module less its base. 1 and *out filled when the map names anything
 * there. */
int map_table_lookup(const map_table *t, uint32_t rva, sym_frame *out);
void map_table_free(map_table *t);

#endif
