/* SPDX-License-Identifier: MIT */
/* Code addresses named for the reports (symbolize.c), from the debug information each module
 * already has, read once per module at the first report that needs it: a Delphi detailed map
 * beside the module, then DWARF in it, then its PDB through the system's symbol engine, then
 * its export table and COFF symbols (the routine alone), else module+offset. Nothing is read
 * on GetMem or FreeMem; the tables are freed when the process ends. */
#ifndef FASTMM_REPORT_SYMBOLIZE_H
#define FASTMM_REPORT_SYMBOLIZE_H

#include <stddef.h>

/* One frame as FastMM's FullDebugMode writes it: "404A1E [System.pas][System][@GetMem$qqri][4843]"
 * (the hex address, then file, unit, routine and line, each empty where unknown), with the
 * module's name after the address where it is not the program ("7FF81234 kernel32.dll [][]
 * [BaseThreadInitThunk+0x14][]"), and "address module+0xoffset" where nothing names it. `addr`
 * is a return address: its call is what is looked up. Writes at most size - 1 bytes and a 0;
 * returns the length. */
size_t symbolize_frame(const void *addr, char *out, size_t size);
/* How many frames symbolize_frame has named by looking them up rather than from its cache of
 * the frames already written (each distinct address once, while it stays in the cache): for
 * the tests. */
size_t symbolize_uncached_count(void);
/* Why a module's map or debug information was refused, once per module: one line (no line
 * end) for the next module not said yet, 0 when there is none. */
size_t symbolize_take_reason(char *out, size_t size);

#endif
