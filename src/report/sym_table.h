/* SPDX-License-Identifier: MIT */
/* What the symbol readers build their tables of (sym_table.c): memory mapped from the OS in
 * chunks and given back all at once (the library never calls an allocator), and arrays of
 * address entries sorted in place and searched by binary search. */
#ifndef FASTMM_REPORT_SYM_TABLE_H
#define FASTMM_REPORT_SYM_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sym_chunk sym_chunk;
typedef struct sym_arena {
  sym_chunk *head;
} sym_arena;

/* `size` zeroed bytes, 8-aligned, living until sym_arena_free; NULL when the OS refuses. */
void *sym_arena_alloc(sym_arena *a, size_t size);
/* A NUL-terminated copy of s[0 .. n). */
char *sym_arena_copy(sym_arena *a, const char *s, size_t n);
void sym_arena_free(sym_arena *a);

/* One entry: an address and two values whose meaning is the table's. */
typedef struct sym_entry {
  uint64_t address;
  uint32_t a, b;
} sym_entry;

/* Sorts by address (heapsort: no memory, no recursion; equal addresses keep no order). */
void sym_sort(sym_entry *e, size_t n);
/* The index of the last entry whose address is at most `address`, or (size_t)-1 when none. */
size_t sym_find(const sym_entry *e, size_t n, uint64_t address);

#endif
