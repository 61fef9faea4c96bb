/* SPDX-License-Identifier: MIT */
/* Delphi's detailed map file: see map_reader.h. The text is read twice, the first time to count
 * (so that every table is mapped once, at its size), the second to fill; nothing in it is
 * trusted: numbers are bounded, names cut, addresses kept only inside the segment they name. */
#include "map_reader.h"

#include <string.h>

#include "sym_table.h"

#define MAP_SEGMENTS_MAX 32u
#define MAP_NAME_MAX 1024u

typedef struct map_segment {
  unsigned number; /* the map's segment number, 0001 .. */
  uint32_t rva, length;
  int code, checked; /* class CODE or ICODE; compared with a section of the module */
} map_segment;

typedef struct map_unit {
  const char *unit, *file;
} map_unit;

struct map_table {
  sym_arena arena;
  map_segment segments[MAP_SEGMENTS_MAX];
  unsigned segment_count;
  sym_entry *publics; /* a: name's offset in names; b: segment index */
  sym_entry *lines;   /* a: line; b: unit index */
  sym_entry *ranges;  /* "Detailed map of segments": a: unit index; b: length */
  size_t public_count, line_count, range_count, unit_count;
  map_unit *units;
  char *names;
  size_t names_used;
};

enum { PART_HEAD, PART_DETAILED, PART_BY_NAME, PART_BY_VALUE, PART_LINES, PART_OTHER };

typedef struct map_builder {
  const char *p, *end; /* the text left */
  const char *line, *line_end;
  map_table *t; /* counting while t->publics is NULL */
  int filling, part, ended;
  unsigned line_unit;    /* the unit of the current line-number section */
  unsigned line_segment; /* its segment index, or MAP_SEGMENTS_MAX */
  size_t names_needed, units_needed;
  size_t publics_max, lines_max, ranges_max; /* what the first pass counted */
  /* the units seen, by name (an open-addressing hash of unit indexes + 1) */
  uint32_t *unit_hash;
  size_t unit_hash_size;
} map_builder;

static int next_line(map_builder *b) {
  if (b->p >= b->end)
    return 0;
  b->line = b->p;
  while (b->p < b->end && *b->p != '\n')
    b->p++;
  b->line_end = b->p;
  if (b->p < b->end)
    b->p++;
  while (b->line_end > b->line &&
         (b->line_end[-1] == '\r' || b->line_end[-1] == ' ' || b->line_end[-1] == '\t'))
    b->line_end--;
  return 1;
}

static void skip_spaces(const char **s, const char *end) {
  while (*s < end && (**s == ' ' || **s == '\t'))
    (*s)++;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

/* A hex number of 1 to 16 digits. */
static int read_hex(const char **s, const char *end, uint64_t *v) {
  int n = 0;
  *v = 0;
  while (*s < end && hex_digit(**s) >= 0) {
    if (++n > 16)
      return 0;
    *v = *v << 4 | (uint64_t)hex_digit(**s);
    (*s)++;
  }
  return n > 0;
}

static int read_dec(const char **s, const char *end, uint32_t *v) {
  int n = 0;
  *v = 0;
  while (*s < end && **s >= '0' && **s <= '9') {
    if (++n > 9)
      return 0;
    *v = *v * 10 + (uint32_t)(**s - '0');
    (*s)++;
  }
  return n > 0;
}

/* "SSSS:OFFSET" */
static int read_address(const char **s, const char *end, uint64_t *segment, uint64_t *offset) {
  if (!read_hex(s, end, segment) || *s >= end || **s != ':')
    return 0;
  (*s)++;
  return read_hex(s, end, offset);
}

static int starts(const char *s, const char *end, const char *word) {
  size_t n = strlen(word);
  return (size_t)(end - s) >= n && memcmp(s, word, n) == 0;
}

static const char *find(const char *s, const char *end, const char *word) {
  for (; s < end; s++)
    if (starts(s, end, word))
      return s;
  return NULL;
}

static int word_is(const char *s, size_t n, const char *word) {
  return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* A line of the segment table: " 0001:00401000 000A1234H .text                   CODE". The
 * first pass checks it against the module's sections; both record it. */
static const char *segment_line(map_builder *b, const pe_info *pe) {
  const char *s = b->line, *end = b->line_end;
  uint64_t number, start, length;
  skip_spaces(&s, end);
  if (!read_address(&s, end, &number, &start))
    return NULL; /* not a segment line (the heading) */
  skip_spaces(&s, end);
  if (!read_hex(&s, end, &length) || s >= end || (*s != 'H' && *s != 'h'))
    return "a line of its segment table cannot be read";
  s++;
  skip_spaces(&s, end);
  const char *name = s;
  while (s < end && *s != ' ' && *s != '\t')
    s++;
  size_t name_length = (size_t)(s - name);
  skip_spaces(&s, end);
  const char *cls = s;
  size_t class_length = (size_t)(end - s);
  map_table *t = b->t;
  if (t->segment_count == MAP_SEGMENTS_MAX || number == 0 || number > 0xFFFF)
    return "its segment table is too long";
  map_segment *seg = &t->segments[t->segment_count++];
  seg->number = (unsigned)number;
  seg->code = find(cls, cls + class_length, "CODE") != NULL;
  /* A TLS segment's addresses are offsets in each thread's block: nothing to check. */
  if (word_is(cls, class_length, "TLS") || start == 0)
    return NULL;
  const pe_section *found = NULL;
  for (unsigned i = 0; i < pe->section_count && found == NULL; i++)
    if (word_is(name, name_length, pe->sections[i].name))
      found = &pe->sections[i];
  if (found == NULL || start < pe->image_base || start - pe->image_base != found->rva ||
      length != found->virtual_size || (seg->code && !pe_section_is_code(found)))
    return "its segment table does not match the module's sections (a map of another build?)";
  seg->rva = found->rva;
  seg->length = (uint32_t)length;
  seg->checked = 1;
  return NULL;
}

/* The index of a checked segment by number, or MAP_SEGMENTS_MAX. */
static unsigned segment_index(const map_table *t, uint64_t number) {
  for (unsigned i = 0; i < t->segment_count; i++)
    if (t->segments[i].number == number && t->segments[i].checked)
      return i;
  return MAP_SEGMENTS_MAX;
}

/* The rva of SSSS:OFFSET when it lies inside a checked segment. */
static int to_rva(const map_table *t, uint64_t segment, uint64_t offset, unsigned *index,
                  uint32_t *rva) {
  *index = segment_index(t, segment);
  if (*index == MAP_SEGMENTS_MAX || offset >= t->segments[*index].length)
    return 0;
  *rva = t->segments[*index].rva + (uint32_t)offset;
  return 1;
}

static uint32_t hash_name(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* The unit named s[0 .. n), added when new (with `file` when given); its index, or
 * (unsigned)-1 while counting or when the tables are full. */
static unsigned unit_index(map_builder *b, const char *s, size_t n, const char *file,
                           size_t file_length) {
  map_table *t = b->t;
  if (n > MAP_NAME_MAX)
    n = MAP_NAME_MAX;
  if (file_length > MAP_NAME_MAX)
    file_length = MAP_NAME_MAX;
  if (!b->filling) {
    b->units_needed++;
    b->names_needed += n + file_length + 2;
    return (unsigned)-1;
  }
  size_t slot = hash_name(s, n) & (b->unit_hash_size - 1);
  for (;;) {
    uint32_t at = b->unit_hash[slot];
    if (at == 0)
      break;
    map_unit *u = &t->units[at - 1];
    if (strlen(u->unit) == n && memcmp(u->unit, s, n) == 0) {
      if (u->file[0] == 0 && file_length > 0 &&
          t->names_used + file_length + 1 <= b->names_needed) {
        char *f = t->names + t->names_used;
        memcpy(f, file, file_length);
        f[file_length] = 0;
        t->names_used += file_length + 1;
        u->file = f;
      }
      return at - 1;
    }
    slot = (slot + 1) & (b->unit_hash_size - 1);
  }
  if (t->unit_count == b->units_needed || t->names_used + n + file_length + 2 > b->names_needed)
    return (unsigned)-1;
  char *name = t->names + t->names_used;
  memcpy(name, s, n);
  name[n] = 0;
  char *f = name + n + 1;
  memcpy(f, file, file_length);
  f[file_length] = 0;
  t->names_used += n + file_length + 2;
  t->units[t->unit_count].unit = name;
  t->units[t->unit_count].file = f;
  b->unit_hash[slot] = (uint32_t)++t->unit_count;
  return (unsigned)(t->unit_count - 1);
}

/* " 0001:00000000 0000A123 C=CODE     S=.text    G=(none)   M=System   ACBP=A9" */
static void detailed_line(map_builder *b) {
  const char *s = b->line, *end = b->line_end;
  uint64_t segment, offset, length;
  skip_spaces(&s, end);
  if (!read_address(&s, end, &segment, &offset))
    return;
  skip_spaces(&s, end);
  const char *m = find(s, end, " M=");
  unsigned index;
  uint32_t rva;
  if (!read_hex(&s, end, &length) || m == NULL || length > 0xFFFFFFFFu ||
      !to_rva(b->t, segment, offset, &index, &rva))
    return;
  m += 3;
  const char *name_end = m;
  while (name_end < end && *name_end != ' ')
    name_end++;
  if (name_end == m)
    return;
  map_table *t = b->t;
  unsigned unit = unit_index(b, m, (size_t)(name_end - m), "", 0);
  if (!b->filling) {
    t->range_count++;
  } else if (unit != (unsigned)-1 && t->range_count < b->ranges_max) {
    sym_entry *e = &t->ranges[t->range_count++];
    e->address = rva;
    e->a = unit;
    e->b = (uint32_t)length;
  }
}

/* " 0001:00000010       System.TObject.Create" */
static void public_line(map_builder *b) {
  const char *s = b->line, *end = b->line_end;
  uint64_t segment, offset;
  unsigned index;
  uint32_t rva;
  skip_spaces(&s, end);
  if (!read_address(&s, end, &segment, &offset))
    return;
  skip_spaces(&s, end);
  size_t n = (size_t)(end - s);
  if (n == 0 || !to_rva(b->t, segment, offset, &index, &rva) || !b->t->segments[index].code)
    return;
  if (n > MAP_NAME_MAX)
    n = MAP_NAME_MAX;
  map_table *t = b->t;
  if (!b->filling) {
    t->public_count++;
    b->names_needed += n + 1;
    return;
  }
  if (t->names_used + n + 1 > b->names_needed || t->public_count == b->publics_max)
    return;
  sym_entry *e = &t->publics[t->public_count++];
  e->address = rva;
  e->a = (uint32_t)t->names_used;
  e->b = index;
  memcpy(t->names + t->names_used, s, n);
  t->names[t->names_used + n] = 0;
  t->names_used += n + 1;
}

/* "Line numbers for System(System.pas) segment .text" */
static void lines_heading(map_builder *b) {
  const char *s = b->line + strlen("Line numbers for "), *end = b->line_end;
  const char *open = s;
  while (open < end && *open != '(')
    open++;
  const char *seg = find(open, end, ") segment ");
  b->line_unit = (unsigned)-1;
  if (open == end || seg == NULL || open == s)
    return;
  b->line_unit = unit_index(b, s, (size_t)(open - s), open + 1, (size_t)(seg - open - 1));
}

/* "   123 0001:00000010   124 0001:00000014 ..." */
static void numbers_line(map_builder *b) {
  const char *s = b->line, *end = b->line_end;
  map_table *t = b->t;
  for (;;) {
    uint32_t line;
    uint64_t segment, offset;
    unsigned index;
    uint32_t rva;
    skip_spaces(&s, end);
    if (s >= end || !read_dec(&s, end, &line))
      return;
    skip_spaces(&s, end);
    if (!read_address(&s, end, &segment, &offset))
      return;
    if (!to_rva(t, segment, offset, &index, &rva) || !t->segments[index].code)
      continue;
    if (!b->filling) {
      t->line_count++;
    } else if (b->line_unit != (unsigned)-1 && t->line_count < b->lines_max) {
      sym_entry *e = &t->lines[t->line_count++];
      e->address = rva;
      e->a = line;
      e->b = b->line_unit;
    }
  }
}

/* One pass over the text; returns NULL or why the map cannot be used. */
static const char *scan(map_builder *b, const char *text, size_t size, const pe_info *pe) {
  b->p = text;
  b->end = text + size;
  b->part = PART_HEAD;
  b->ended = 0;
  int headed = 0;
  while (next_line(b)) {
    const char *s = b->line, *end = b->line_end;
    skip_spaces(&s, end);
    if (s == end)
      continue;
    /* Data lines start with a number; only the others can be headings. */
    if (*s >= '0' && *s <= '9') {
      if (b->part == PART_HEAD) {
        if (!headed)
          return "it does not start with a segment table";
        if (!b->filling) {
          const char *why = segment_line(b, pe);
          if (why != NULL)
            return why;
        }
      } else if (b->part == PART_DETAILED) {
        detailed_line(b);
      } else if (b->part == PART_BY_VALUE) {
        public_line(b);
      } else if (b->part == PART_LINES) {
        numbers_line(b);
      }
      continue;
    }
    if (starts(s, end, "Start") && find(s, end, "Length") != NULL) {
      headed = 1;
      continue;
    }
    if (starts(s, end, "Detailed map of segments")) {
      b->part = PART_DETAILED;
    } else if (find(s, end, "Publics by Name") != NULL) {
      b->part = PART_BY_NAME;
    } else if (find(s, end, "Publics by Value") != NULL) {
      b->part = PART_BY_VALUE;
    } else if (starts(s, end, "Line numbers for ")) {
      b->part = PART_LINES;
      lines_heading(b);
    } else if (starts(s, end, "Program entry point at")) {
      b->ended = 1;
      b->part = PART_OTHER;
    } else if (starts(s, end, "Bound resource files")) {
      b->part = PART_OTHER;
    } else if (b->part == PART_HEAD) {
      return "it does not start with a segment table";
    }
  }
  if (!headed)
    return "it does not start with a segment table";
  if (!b->ended)
    return "it is truncated (no \"Program entry point\" line at its end)";
  return NULL;
}

map_table *map_table_build(const char *text, size_t size, const pe_info *pe, const char **why) {
  sym_arena arena = {NULL};
  map_table *t = (map_table *)sym_arena_alloc(&arena, sizeof *t);
  if (t == NULL) {
    *why = "out of memory";
    return NULL;
  }
  map_builder b;
  memset(&b, 0, sizeof b);
  b.t = t;
  *why = scan(&b, text, size, pe);
  int code = 0;
  for (unsigned i = 0; i < t->segment_count; i++)
    code |= t->segments[i].checked && t->segments[i].code;
  if (*why == NULL && !code)
    *why = "its segment table names no code segment of the module";
  if (*why == NULL && t->public_count == 0 && t->line_count == 0)
    *why = "it has no publics and no line numbers";
  if (*why != NULL) {
    sym_arena_free(&arena);
    return NULL;
  }
  /* The tables at the sizes counted, then the second pass. */
  size_t publics = t->public_count, lines = t->line_count, ranges = t->range_count;
  b.unit_hash_size = 16;
  while (b.unit_hash_size < 2 * b.units_needed + 2)
    b.unit_hash_size *= 2;
  t->publics = (sym_entry *)sym_arena_alloc(&arena, (publics + 1) * sizeof(sym_entry));
  t->lines = (sym_entry *)sym_arena_alloc(&arena, (lines + 1) * sizeof(sym_entry));
  t->ranges = (sym_entry *)sym_arena_alloc(&arena, (ranges + 1) * sizeof(sym_entry));
  t->units = (map_unit *)sym_arena_alloc(&arena, (b.units_needed + 1) * sizeof(map_unit));
  t->names = (char *)sym_arena_alloc(&arena, b.names_needed + 1);
  b.unit_hash = (uint32_t *)sym_arena_alloc(&arena, b.unit_hash_size * sizeof(uint32_t));
  if (t->publics == NULL || t->lines == NULL || t->ranges == NULL || t->units == NULL ||
      t->names == NULL || b.unit_hash == NULL) {
    sym_arena_free(&arena);
    *why = "out of memory";
    return NULL;
  }
  b.publics_max = publics;
  b.lines_max = lines;
  b.ranges_max = ranges;
  t->public_count = t->line_count = t->range_count = 0;
  b.filling = 1;
  scan(&b, text, size, pe);
  /* The second pass finds what the first counted, never more. */
  sym_sort(t->publics, t->public_count);
  sym_sort(t->lines, t->line_count);
  sym_sort(t->ranges, t->range_count);
  t->arena = arena;
  return t;
}

int map_table_lookup(const map_table *t, uint32_t rva, sym_frame *out) {
  out->file = out->unit = out->routine = "";
  out->line = 0;
  if (t == NULL)
    return 0;
  unsigned segment = MAP_SEGMENTS_MAX;
  for (unsigned i = 0; i < t->segment_count; i++)
    if (t->segments[i].checked && t->segments[i].code && rva >= t->segments[i].rva &&
        rva - t->segments[i].rva < t->segments[i].length)
      segment = i;
  if (segment == MAP_SEGMENTS_MAX)
    return 0;
  uint32_t begin = t->segments[segment].rva;
  uint64_t routine_start = begin;
  int found = 0;
  size_t i = sym_find(t->publics, t->public_count, rva);
  if (i != (size_t)-1 && t->publics[i].b == segment) {
    out->routine = t->names + t->publics[i].a;
    routine_start = t->publics[i].address;
    found = 1;
  }
  const map_unit *unit = NULL;
  i = sym_find(t->lines, t->line_count, rva);
  if (i != (size_t)-1 && t->lines[i].address >= routine_start) {
    out->line = t->lines[i].a;
    unit = &t->units[t->lines[i].b];
    found = 1;
  }
  i = sym_find(t->ranges, t->range_count, rva);
  if (unit == NULL && i != (size_t)-1 && rva - t->ranges[i].address < t->ranges[i].b)
    unit = &t->units[t->ranges[i].a];
  if (unit != NULL) {
    out->unit = unit->unit;
    out->file = unit->file;
    /* Delphi's publics are "Unit.Routine": the unit is said once. */
    size_t n = strlen(unit->unit);
    if (n > 0 && strncmp(out->routine, unit->unit, n) == 0 && out->routine[n] == '.')
      out->routine += n + 1;
    found = 1;
  }
  return found;
}

void map_table_free(map_table *t) {
  if (t != NULL) {
    sym_arena arena = t->arena;
    sym_arena_free(&arena);
  }
}
