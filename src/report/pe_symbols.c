/* SPDX-License-Identifier: MIT */
/* A PE image's headers, export table and COFF symbol table: see pe_symbols.h. */
#include "pe_symbols.h"

#include <string.h>

static uint16_t rd16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 1 when [offset, offset + length) lies inside size bytes. */
static int inside(size_t size, uint64_t offset, uint64_t length) {
  return offset <= size && length <= size - offset;
}

int pe_parse(const unsigned char *image, size_t size, pe_info *pe) {
  memset(pe, 0, sizeof *pe);
  if (!inside(size, 0, 64) || image[0] != 'M' || image[1] != 'Z')
    return 0;
  uint32_t nt = rd32(image + 60);
  if (!inside(size, nt, 24) || memcmp(image + nt, "PE\0\0", 4) != 0)
    return 0;
  const unsigned char *file = image + nt + 4;
  unsigned sections = rd16(file + 2);
  uint32_t optional_size = rd16(file + 16);
  pe->machine = rd16(file);
  pe->symbols = rd32(file + 8);
  pe->symbol_count = rd32(file + 12);
  uint64_t optional = (uint64_t)nt + 24;
  if (!inside(size, optional, optional_size) || optional_size < 2)
    return 0;
  const unsigned char *opt = image + optional;
  unsigned magic = rd16(opt);
  uint32_t dirs_at, dir_count_at;
  if (magic == 0x10b && optional_size >= 96) {
    pe->image_base = rd32(opt + 28);
    dir_count_at = 92;
    dirs_at = 96;
  } else if (magic == 0x20b && optional_size >= 112) {
    pe->image_base = (uint64_t)rd32(opt + 24) | (uint64_t)rd32(opt + 28) << 32;
    dir_count_at = 108;
    dirs_at = 112;
  } else {
    return 0;
  }
  uint64_t table = optional + optional_size;
  if (sections > PE_SECTIONS_MAX || !inside(size, table, (uint64_t)sections * 40))
    return 0;
  for (unsigned i = 0; i < sections; i++) {
    const unsigned char *h = image + table + (uint64_t)i * 40;
    pe_section *s = &pe->sections[i];
    memcpy(s->name, h, 8);
    s->name[8] = 0;
    s->virtual_size = rd32(h + 8);
    s->rva = rd32(h + 12);
    s->raw_size = rd32(h + 16);
    s->raw_offset = rd32(h + 20);
    s->characteristics = rd32(h + 36);
  }
  pe->section_count = sections;
  /* The debug directory (entry 6): a CodeView entry "RSDS" means a PDB. */
  uint32_t dir_count = rd32(opt + dir_count_at);
  if (dir_count > 6 && (uint64_t)dirs_at + 7 * 8 <= optional_size) {
    uint32_t rva = rd32(opt + dirs_at + 6 * 8), bytes = rd32(opt + dirs_at + 6 * 8 + 4);
    const pe_section *s = pe_section_of(pe, rva);
    if (s != NULL && rva - s->rva < s->raw_size) {
      uint64_t at = (uint64_t)s->raw_offset + (rva - s->rva);
      for (uint32_t k = 0; k + 28 <= bytes && inside(size, at + k, 28); k += 28) {
        const unsigned char *d = image + at + k;
        uint32_t data = rd32(d + 24); /* PointerToRawData */
        if (rd32(d + 12) == 2 && inside(size, data, 4) && memcmp(image + data, "RSDS", 4) == 0)
          pe->has_pdb = 1;
      }
    }
  }
  return 1;
}

const pe_section *pe_section_of(const pe_info *pe, uint32_t rva) {
  for (unsigned i = 0; i < pe->section_count; i++) {
    const pe_section *s = &pe->sections[i];
    uint32_t extent = s->virtual_size ? s->virtual_size : s->raw_size;
    if (rva >= s->rva && rva - s->rva < extent)
      return s;
  }
  return NULL;
}

int pe_section_is_code(const pe_section *s) {
  return (s->characteristics & (0x20u /* CNT_CODE */ | 0x20000000u /* MEM_EXECUTE */)) != 0;
}

/* The file offset of rva when `length` bytes from it lie in one section's raw data, else 0. */
static uint64_t file_offset(const pe_info *pe, size_t size, uint32_t rva, uint32_t length) {
  const pe_section *s = pe_section_of(pe, rva);
  if (s == NULL || rva - s->rva > s->raw_size || length > s->raw_size - (rva - s->rva))
    return 0;
  uint64_t at = (uint64_t)s->raw_offset + (rva - s->rva);
  return at != 0 && inside(size, at, length) ? at : 0;
}

/* A NUL-terminated name at `at` of at most `max` bytes inside the file: its length, or 0. */
static size_t name_length(const unsigned char *image, size_t size, uint64_t at, size_t max) {
  size_t n = 0;
  while (at + n < size && n < max && image[at + n] != 0)
    n++;
  return at + n < size && n < max ? n : 0;
}

struct pe_table {
  sym_arena arena;
  sym_entry *entries; /* address: rva; a: offset of the name in names; b: its section index */
  size_t count;
  const char *names;
  pe_info pe;
};

#define PE_NAME_MAX 512u

typedef struct builder {
  const unsigned char *image;
  size_t size;
  const pe_info *pe;
  sym_entry *entries;
  size_t count, capacity;
  char *names;
  size_t names_used, names_capacity;
} builder;

/* Records one routine (counting only while entries is NULL). */
static void add(builder *b, uint32_t rva, const char *name, size_t length) {
  const pe_section *s = pe_section_of(b->pe, rva);
  if (s == NULL || !pe_section_is_code(s) || length == 0 || name[0] == '.')
    return;
  if (b->entries == NULL) {
    b->capacity++;
    b->names_capacity += length + 1;
    return;
  }
  if (b->count == b->capacity || length + 1 > b->names_capacity - b->names_used)
    return;
  sym_entry *e = &b->entries[b->count++];
  e->address = rva;
  e->a = (uint32_t)b->names_used;
  e->b = (uint32_t)(s - b->pe->sections);
  memcpy(b->names + b->names_used, name, length);
  b->names[b->names_used + length] = 0;
  b->names_used += length + 1;
}

static void add_exports(builder *b) {
  const unsigned char *image = b->image;
  const unsigned char *opt = NULL;
  uint32_t nt = rd32(image + 60);
  uint32_t optional_size = rd16(image + nt + 4 + 16);
  opt = image + nt + 24;
  unsigned magic = rd16(opt);
  uint32_t dirs_at = magic == 0x20b ? 112 : 96;
  if (dirs_at + 8 > optional_size || rd32(opt + dirs_at - 4) < 1)
    return;
  uint32_t dir = rd32(opt + dirs_at), dir_size = rd32(opt + dirs_at + 4);
  uint64_t at = file_offset(b->pe, b->size, dir, 40);
  if (dir == 0 || at == 0)
    return;
  uint32_t functions = rd32(image + at + 20), names = rd32(image + at + 24);
  uint64_t fn_at = file_offset(b->pe, b->size, rd32(image + at + 28), functions * 4u);
  uint64_t name_at = file_offset(b->pe, b->size, rd32(image + at + 32), names * 4u);
  uint64_t ord_at = file_offset(b->pe, b->size, rd32(image + at + 36), names * 2u);
  if (functions > 0x100000u || names > 0x100000u || fn_at == 0 || name_at == 0 || ord_at == 0)
    return;
  for (uint32_t i = 0; i < names; i++) {
    uint32_t ordinal = rd16(image + ord_at + 2u * i);
    if (ordinal >= functions)
      continue;
    uint32_t rva = rd32(image + fn_at + 4u * ordinal);
    if (rva >= dir && rva - dir < dir_size)
      continue; /* a forwarder: a name, not code */
    uint64_t n_at = file_offset(b->pe, b->size, rd32(image + name_at + 4u * i), 1);
    size_t length = n_at ? name_length(image, b->size, n_at, PE_NAME_MAX) : 0;
    if (length)
      add(b, rva, (const char *)image + n_at, length);
  }
}

static void add_coff_symbols(builder *b) {
  const pe_info *pe = b->pe;
  uint64_t table = pe->symbols, count = pe->symbol_count;
  if (table == 0 || count == 0 || count > 0x1000000u || !inside(b->size, table, count * 18))
    return;
  uint64_t strings = table + count * 18;
  uint32_t strings_size = inside(b->size, strings, 4) ? rd32(b->image + strings) : 0;
  if (!inside(b->size, strings, strings_size))
    strings_size = 0;
  for (uint64_t i = 0; i < count; i++) {
    const unsigned char *s = b->image + table + i * 18;
    int section = (int16_t)rd16(s + 12);
    unsigned type = rd16(s + 14), storage = s[16], aux = s[17];
    /* Functions (type 0x20), and external code symbols of assembly that has no type. */
    if (section > 0 && (unsigned)section <= pe->section_count &&
        ((type & 0xF0u) == 0x20u || storage == 2)) {
      const char *name;
      size_t length;
      if (rd32(s) == 0) {
        uint32_t offset = rd32(s + 4);
        if (offset < 4 || offset >= strings_size)
          continue;
        name = (const char *)b->image + strings + offset;
        length = name_length(b->image, b->size, strings + offset, PE_NAME_MAX);
      } else {
        name = (const char *)s;
        length = 0;
        while (length < 8 && name[length] != 0)
          length++;
      }
      /* i386 C names carry a leading underscore: the routine is named without it. */
      if (pe->machine == 0x14c && length > 1 && name[0] == '_') {
        name++;
        length--;
      }
      const pe_section *sec = &pe->sections[section - 1];
      uint32_t value = rd32(s + 8);
      if (value < sec->virtual_size)
        add(b, sec->rva + value, name, length);
    }
    i += aux;
  }
}

pe_table *pe_table_build(const unsigned char *image, size_t size, const pe_info *pe,
                         const char **why) {
  builder b;
  memset(&b, 0, sizeof b);
  b.image = image;
  b.size = size;
  b.pe = pe;
  /* Two passes: the first counts, the second fills tables of exactly that size. */
  add_exports(&b);
  add_coff_symbols(&b);
  if (b.capacity == 0) {
    *why = "no export table or COFF symbols";
    return NULL;
  }
  sym_arena arena = {NULL};
  pe_table *t = (pe_table *)sym_arena_alloc(&arena, sizeof *t);
  b.entries = t ? (sym_entry *)sym_arena_alloc(&arena, b.capacity * sizeof(sym_entry)) : NULL;
  b.names = b.entries ? (char *)sym_arena_alloc(&arena, b.names_capacity) : NULL;
  if (b.names == NULL) {
    sym_arena_free(&arena);
    *why = "out of memory";
    return NULL;
  }
  add_exports(&b);
  add_coff_symbols(&b);
  sym_sort(b.entries, b.count);
  t->arena = arena;
  t->entries = b.entries;
  t->count = b.count;
  t->names = b.names;
  t->pe = *pe;
  return t;
}

int pe_table_lookup(const pe_table *t, uint32_t rva, const char **name, uint32_t *start) {
  if (t == NULL)
    return 0;
  size_t i = sym_find(t->entries, t->count, rva);
  if (i == (size_t)-1)
    return 0;
  const sym_entry *e = &t->entries[i];
  /* Only within the section the routine is in. */
  const pe_section *s = pe_section_of(&t->pe, rva);
  if (s == NULL || (size_t)(s - t->pe.sections) != e->b)
    return 0;
  *name = t->names + e->a;
  *start = (uint32_t)e->address;
  return 1;
}

void pe_table_free(pe_table *t) {
  if (t != NULL) {
    sym_arena arena = t->arena;
    sym_arena_free(&arena);
  }
}
