/* SPDX-License-Identifier: MIT */
/* Line-number programs into rows (dwarf_line.h). */
#include "dwarf_line.h"

#include <string.h>

#include "path_name.h"

#define LNCT_path 1u
#define MAX_FORMATS 16u
#define MAX_ENTRIES (1u << 20)

static int add_file(dw_vec *files, const char *path, const char *unit) {
  dw_file *f = (dw_file *)dw_vec_push(files, DW_MAX_FILES);
  if (f == NULL)
    return 0;
  f->name = path != NULL ? path_base_name(path) : "";
  f->unit = unit;
  return 1;
}

/* DWARF 5's directory or file entries: a format, a count, the entries. Files (paths != 0) are
 * added to `files`; directories are only skipped. */
static int v5_entries(dw_cursor *c, const debug_sections *d, const dw_unit *lu, int are_files,
                      const char *unit, dw_vec *files) {
  uint64_t content[MAX_FORMATS], form[MAX_FORMATS];
  unsigned n_formats = dw_u8(c);
  if (n_formats > MAX_FORMATS)
    return 0;
  for (unsigned i = 0; i < n_formats; i++) {
    content[i] = dw_uleb(c);
    form[i] = dw_uleb(c);
  }
  uint64_t count = dw_uleb(c);
  if (c->bad || count > MAX_ENTRIES || (count > 0 && n_formats == 0))
    return 0;
  for (uint64_t k = 0; k < count; k++) {
    const char *path = NULL;
    for (unsigned i = 0; i < n_formats; i++) {
      dw_value v;
      if (form[i] > UINT32_MAX || !dw_form_read(c, (unsigned)form[i], 0, lu, &v))
        return 0;
      if (content[i] == LNCT_path)
        path = dw_value_string(d, lu, &v);
    }
    if (*d->string_bytes > DW_MAX_STRING_BYTES)
      return 0;
    if (are_files && !add_file(files, path, unit))
      return 0;
  }
  return !c->bad;
}

typedef struct machine {
  dw_vec *rows;
  size_t max_rows;
  size_t seq_start;                         /* the rows index where the current sequence began */
  uint32_t files_base, n_files, first_file; /* the table's files: vector indexes, count, first */
  uint64_t code_lo, code_hi;
  const char *why;
} machine;

/* A row of the current sequence; 0 when the cap or memory stops it. */
static int emit(machine *m, uint64_t addr, uint64_t file, uint64_t line, int end) {
  uint32_t f = DW_ROW_END;
  if (!end)
    f = file >= m->first_file && file - m->first_file < m->n_files
            ? m->files_base + (uint32_t)(file - m->first_file)
            : DW_FILE_UNKNOWN;
  uint32_t l = end ? 0 : line > UINT32_MAX ? 0 : (uint32_t)line;
  if (m->rows->n > m->seq_start) {
    dw_row *last = (dw_row *)dw_vec_at(m->rows, m->rows->n - 1);
    if (last->addr == addr) { /* several rows at one address: the last one holds */
      last->file = f;
      last->line = l;
      return 1;
    }
    if (!end && last->file == f && last->line == l)
      return 1; /* the row before covers this address already */
  }
  dw_row *r = (dw_row *)dw_vec_push(m->rows, m->max_rows);
  if (r == NULL) {
    m->why = m->rows->n >= m->max_rows ? "too many line rows" : "out of memory";
    return 0;
  }
  r->addr = addr;
  r->file = f;
  r->line = l;
  return 1;
}

/* The end of a sequence: kept when it starts inside the module's code. */
static void end_sequence(machine *m) {
  if (m->rows->n > m->seq_start && m->code_hi != 0) {
    uint64_t start = ((dw_row *)dw_vec_at(m->rows, m->seq_start))->addr;
    if (start < m->code_lo || start >= m->code_hi)
      m->rows->n = m->seq_start;
  }
  m->seq_start = m->rows->n;
}

int dwarf_line_read(const debug_sections *d, uint64_t offset, const dw_unit *u, const char *unit,
                    dw_vec *rows, size_t max_rows, dw_vec *files, const char **why) {
  dw_cursor c = dw_at(d->line, 0);
  if (d->line.p == NULL || !dw_skip(&c, offset)) {
    *why = d->line.p == NULL ? "no .debug_line" : "bad .debug_line offset";
    return 0;
  }
  dw_unit lu = *u;
  uint64_t length = dw_unit_length(&c, &lu.offset_size);
  if (c.bad || length > dw_left(&c)) {
    *why = "truncated .debug_line";
    return 0;
  }
  size_t end = c.at + (size_t)length;
  c.end = end;
  unsigned version = (unsigned)dw_uint(&c, 2);
  if (version < 2 || version > 5) {
    *why = "unknown .debug_line version";
    return 0;
  }
  lu.version = version;
  if (version >= 5) {
    lu.addr_size = dw_u8(&c);
    dw_u8(&c); /* segment selector size */
    if (lu.addr_size != 2 && lu.addr_size != 4 && lu.addr_size != 8) {
      *why = "bad .debug_line header";
      return 0;
    }
  }
  uint64_t header_length = dw_uint(&c, lu.offset_size);
  if (header_length > dw_left(&c)) {
    *why = "truncated .debug_line";
    return 0;
  }
  size_t program = c.at + (size_t)header_length;
  unsigned min_inst = dw_u8(&c);
  if (version >= 4)
    dw_u8(&c); /* maximum operations per instruction: VLIW only, taken as 1 */
  unsigned default_is_stmt = dw_u8(&c);
  int line_base = (int)(signed char)dw_u8(&c);
  unsigned line_range = dw_u8(&c);
  unsigned opcode_base = dw_u8(&c);
  unsigned char lengths[256];
  (void)default_is_stmt;
  if (line_range == 0 || opcode_base == 0) {
    *why = "bad .debug_line header";
    return 0;
  }
  for (unsigned i = 1; i < opcode_base; i++)
    lengths[i] = (unsigned char)dw_u8(&c);
  machine m;
  memset(&m, 0, sizeof m);
  m.rows = rows;
  m.max_rows = max_rows;
  m.seq_start = rows->n;
  m.files_base = (uint32_t)files->n;
  m.first_file = version >= 5 ? 0 : 1;
  m.code_lo = d->code_lo;
  m.code_hi = d->code_hi;
  if (version >= 5) {
    if (!v5_entries(&c, d, &lu, 0, unit, files) || !v5_entries(&c, d, &lu, 1, unit, files)) {
      *why = c.bad                                    ? "truncated .debug_line"
             : *d->string_bytes > DW_MAX_STRING_BYTES ? "too much work in string sections"
                                                      : "bad .debug_line header";
      return 0;
    }
  } else {
    const char *dir;
    while ((dir = dw_cstr(&c)) != NULL && dir[0] != 0) /* include directories: not needed */
      ;
    for (;;) {
      const char *path = dw_cstr(&c);
      if (path == NULL || path[0] == 0)
        break;
      dw_uleb(&c); /* directory, time, size */
      dw_uleb(&c);
      dw_uleb(&c);
      if (!add_file(files, path, unit)) {
        *why = "too many files";
        return 0;
      }
    }
  }
  if (c.bad || c.at > program) {
    *why = "truncated .debug_line";
    return 0;
  }
  m.n_files = (uint32_t)(files->n - m.files_base);
  c.at = program;

  uint64_t addr = 0, file = 1, line = 1;
  while (c.at < end) {
    unsigned op = dw_u8(&c);
    if (op >= opcode_base) { /* special opcode */
      unsigned adjusted = op - opcode_base;
      addr += (uint64_t)(adjusted / line_range) * min_inst;
      line += (uint64_t)(int64_t)(line_base + (int)(adjusted % line_range));
      if (!emit(&m, addr, file, line, 0))
        goto fail;
      continue;
    }
    switch (op) {
    case 0: { /* extended */
      uint64_t n = dw_uleb(&c);
      if (n == 0 || n > dw_left(&c)) {
        c.bad = 1;
        break;
      }
      size_t next = c.at + (size_t)n;
      unsigned sub = dw_u8(&c);
      if (sub == 1) { /* end_sequence */
        if (!emit(&m, addr, 0, 0, 1))
          goto fail;
        end_sequence(&m);
        addr = 0;
        file = 1;
        line = 1;
      } else if (sub == 2) { /* set_address */
        addr = n - 1 <= 8 ? dw_uint(&c, (unsigned)(n - 1)) : 0;
      } else if (sub == 3 && version < 5) { /* define_file */
        const char *path = dw_cstr(&c);
        if (path != NULL && files->n - m.files_base == m.n_files) {
          if (!add_file(files, path, unit)) {
            *why = "too many files";
            return 0;
          }
          m.n_files++;
        }
      }
      c.at = next;
      break;
    }
    case 1: /* copy */
      if (!emit(&m, addr, file, line, 0))
        goto fail;
      break;
    case 2: /* advance_pc */
      addr += dw_uleb(&c) * min_inst;
      break;
    case 3: /* advance_line */
      line += (uint64_t)dw_sleb(&c);
      break;
    case 4: /* set_file */
      file = dw_uleb(&c);
      break;
    case 8: /* const_add_pc */
      addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
      break;
    case 9: /* fixed_advance_pc */
      addr += dw_uint(&c, 2);
      break;
    default: /* the rest: their operands skipped, as many as the header says */
      for (unsigned k = 0; k < lengths[op]; k++)
        dw_uleb(&c);
      break;
    }
  }
  if (c.bad || m.rows->n > m.seq_start) {
    *why = "truncated .debug_line";
    m.rows->n = m.seq_start;
    return 0;
  }
  return 1;
fail:
  *why = m.why;
  return 0;
}
