/* SPDX-License-Identifier: MIT */
/* A module's DWARF as two sorted tables, routines by address range and line rows by address,
 * searched by binary search (dwarf_reader.h). */
#include "dwarf_reader.h"

#include <string.h>

#include "prim/prim.h"
#include "report/debug_sections.h"
#include "report/dwarf_info.h"
#include "report/dwarf_line.h"
#include "report/dwarf_store.h"

/* An address range and the innermost routine holding it; the table's ranges are disjoint. */
typedef struct segment {
  uint64_t lo, hi;
  const char *name, *unit;
} segment;

struct dwarf_table {
  dw_vec segments; /* segment, by lo */
  dw_vec rows;     /* dw_row, by address */
  dw_vec files;    /* dw_file */
  dw_pool pool;    /* unit names and nested routines' names */
};

#define TABLE_BYTES ((size_t)64 << 10)

static int row_less(const void *a, const void *b) {
  const dw_row *x = (const dw_row *)a, *y = (const dw_row *)b;
  /* At one address a sequence's end goes before the next sequence's start. */
  return x->addr < y->addr ||
         (x->addr == y->addr && x->file == DW_ROW_END && y->file != DW_ROW_END);
}

static int range_less(const void *a, const void *b) {
  const dw_range *x = (const dw_range *)a, *y = (const dw_range *)b;
  if (x->lo != y->lo)
    return x->lo < y->lo;
  if (x->hi != y->hi)
    return x->hi > y->hi; /* the outer first */
  return x->depth < y->depth;
}

static int line_unit_less(const void *a, const void *b) {
  return ((const dw_line_unit *)a)->offset < ((const dw_line_unit *)b)->offset;
}

/* [lo, hi) belongs to `owner`: appended, or joined to the segment before when it continues it. */
static int emit(dw_vec *segments, uint64_t lo, uint64_t hi, const segment *owner) {
  if (lo >= hi)
    return 1;
  if (segments->n > 0) {
    segment *last = (segment *)dw_vec_at(segments, segments->n - 1);
    if (last->hi == lo && last->name == owner->name && last->unit == owner->unit) {
      last->hi = hi;
      return 1;
    }
  }
  segment *s = (segment *)dw_vec_push(segments, SIZE_MAX);
  if (s == NULL)
    return 0;
  s->lo = lo;
  s->hi = hi;
  s->name = owner->name;
  s->unit = owner->unit;
  return 1;
}

/* Nested ranges (a routine, the routines inlined in it, those inlined in them) into disjoint
 * segments, each owned by the innermost range holding it: a sweep by start address with the
 * open ranges on a stack. A range that overlaps the one around it without nesting in it (only
 * bad input does) is cut at that one's end. */
static int flatten(dw_vec *ranges, dw_vec *segments) {
  dw_vec stack;
  uint64_t pos = 0;
  int ok = 1;
  dw_vec_init(&stack, sizeof(segment));
  if (!dw_sort(ranges, range_less) || !dw_vec_reserve(&stack, ranges->n))
    ok = 0;
  segment *open = (segment *)stack.p;
  for (size_t i = 0; ok && i < ranges->n; i++) {
    const dw_range *r = (const dw_range *)dw_vec_at(ranges, i);
    while (ok && stack.n > 0 && open[stack.n - 1].hi <= r->lo) {
      ok = emit(segments, pos, open[stack.n - 1].hi, &open[stack.n - 1]);
      if (open[stack.n - 1].hi > pos)
        pos = open[stack.n - 1].hi;
      stack.n--;
    }
    if (ok && stack.n > 0)
      ok = emit(segments, pos, r->lo, &open[stack.n - 1]);
    pos = r->lo;
    segment *s = &open[stack.n++];
    s->lo = r->lo;
    s->hi = stack.n > 1 && r->hi > open[stack.n - 2].hi ? open[stack.n - 2].hi : r->hi;
    s->name = r->name;
    s->unit = r->unit;
  }
  while (ok && stack.n > 0) {
    ok = emit(segments, pos, open[stack.n - 1].hi, &open[stack.n - 1]);
    if (open[stack.n - 1].hi > pos)
      pos = open[stack.n - 1].hi;
    stack.n--;
  }
  dw_vec_free(&stack);
  return ok;
}

/* Every distinct line table the units name, in .debug_line's order. */
static int read_lines(const debug_sections *d, dw_vec *line_units, dwarf_table *t,
                      const char **why) {
  if (!dw_sort(line_units, line_unit_less)) {
    *why = "out of memory";
    return 0;
  }
  uint64_t work = 0;
  for (size_t i = 0; i < line_units->n; i++) {
    const dw_line_unit *l = (const dw_line_unit *)dw_vec_at(line_units, i);
    if (i > 0 && l->offset == ((const dw_line_unit *)dw_vec_at(line_units, i - 1))->offset)
      continue;
    /* Tables at distinct offsets may still overlap (only in bad input): the bytes they span are
     * counted, so that many of them cannot make the build's time grow with their product. */
    dw_cursor c = dw_at(d->line, 0);
    unsigned offset_size;
    if (dw_skip(&c, l->offset))
      work += dw_unit_length(&c, &offset_size) / 16;
    if (work > DWARF_MAX_WORK) {
      *why = "too much work in .debug_line";
      return 0;
    }
    if (!dwarf_line_read(d, l->offset, &l->u, l->unit, &t->rows, DWARF_MAX_ROWS, &t->files, why))
      return 0;
  }
  if (!dw_sort(&t->rows, row_less)) {
    *why = "out of memory";
    return 0;
  }
  return 1;
}

static size_t at_most(size_t n, size_t cap) {
  return n < cap ? n : cap;
}

dwarf_table *dwarf_table_build(const unsigned char *image, size_t size, const char **why) {
  debug_sections d;
  const char *reason = "out of memory";
  uint64_t string_bytes = 0;
  if (!debug_sections_find(image, size, &d, why))
    return NULL;
  d.string_bytes = &string_bytes;
  dwarf_table *t = (dwarf_table *)prim_map(TABLE_BYTES, 0);
  if (t == NULL) {
    *why = reason;
    return NULL;
  }
  dw_vec_init(&t->segments, sizeof(segment));
  dw_vec_init(&t->rows, sizeof(dw_row));
  dw_vec_init(&t->files, sizeof(dw_file));
  memset(&t->pool, 0, sizeof t->pool);
  dw_vec ranges, line_units;
  dw_vec_init(&ranges, sizeof(dw_range));
  dw_vec_init(&line_units, sizeof(dw_line_unit));
  /* Address space reserved for what compilers' output needs (a line row for every 4 bytes of
   * line program, a routine's range for every 32 of .debug_info; gcc's and clang's output kept
   * one row for 8-12 bytes and one range for 36-150), so the arrays grow in place and the build
   * copies nothing; input that needs more grows by copying. Reserved, not committed: a 32-bit
   * process's address space is spent only for the build's duration. */
  dw_vec_expect(&t->rows, at_most(d.line.n / 4 + 64, DWARF_MAX_ROWS));
  dw_vec_expect(&t->files, at_most(d.line.n / 64 + 64, DW_MAX_FILES));
  dw_vec_expect(&ranges,
                at_most(d.info.n / 32 + d.rnglists.n / 4 + d.ranges.n / 16 + 64, DWARF_MAX_RANGES));
  int ok = dwarf_info_read(&d, &t->pool, &ranges, DWARF_MAX_RANGES, &line_units, DWARF_MAX_WORK,
                           &reason) &&
           read_lines(&d, &line_units, t, &reason);
  dw_vec_expect(&t->segments, 2 * ranges.n + 1); /* each range adds a segment and may split one */
  if (ok && !flatten(&ranges, &t->segments)) {
    ok = 0;
    reason = "out of memory";
  }
  if (ok && t->segments.n == 0 && t->rows.n == 0) {
    ok = 0;
    reason = "no code in the debug information";
  }
  dw_vec_free(&ranges);
  dw_vec_free(&line_units);
  if (!ok) {
    dwarf_table_free(t);
    *why = reason;
    return NULL;
  }
  return t;
}

int dwarf_table_lookup(const dwarf_table *t, uint64_t address, sym_frame *out) {
  const segment *segments = (const segment *)t->segments.p;
  const dw_row *rows = (const dw_row *)t->rows.p;
  size_t lo = 0, hi = t->segments.n;
  int found = 0;
  out->file = out->unit = out->routine = "";
  out->line = 0;
  while (lo < hi) { /* the first segment starting past the address */
    size_t mid = lo + (hi - lo) / 2;
    if (segments[mid].lo <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0 && address < segments[lo - 1].hi) {
    out->routine = segments[lo - 1].name;
    out->unit = segments[lo - 1].unit;
    found = 1;
  }
  lo = 0;
  hi = t->rows.n;
  while (lo < hi) { /* the first row past the address */
    size_t mid = lo + (hi - lo) / 2;
    if (rows[mid].addr <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0 && rows[lo - 1].file != DW_ROW_END) {
    const dw_row *r = &rows[lo - 1];
    out->line = r->line;
    if (r->file != DW_FILE_UNKNOWN) {
      const dw_file *f = (const dw_file *)dw_vec_at(&t->files, r->file);
      out->file = f->name;
      if (!found)
        out->unit = f->unit;
    }
    found = 1;
  }
  return found;
}

void dwarf_table_free(dwarf_table *t) {
  if (t == NULL)
    return;
  dw_vec_free(&t->segments);
  dw_vec_free(&t->rows);
  dw_vec_free(&t->files);
  dw_pool_free(&t->pool);
  prim_unmap(t, TABLE_BYTES);
}
