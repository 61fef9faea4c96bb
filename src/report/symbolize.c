/* SPDX-License-Identifier: MIT */
/* Code addresses named for the reports: see symbolize.h. The modules met so far are kept in a
 * fixed array, each with the tables its sources gave, under one lock (reports are rare; a
 * report of a thousand leaks looks each frame up in tables already built). */
#include "symbolize.h"

#include <string.h>

#include "core/lock.h"
#include "dwarf_reader.h"
#include "map_reader.h"
#include "path_name.h"
#include "pe_symbols.h"
#include "prim/prim.h"
#include "sym_table.h"

#define SYM_MODULES_MAX 64
#define SYM_PATH_MAX 520
/* A module or map larger than this is not read (its frames keep module+offset). */
#define SYM_FILE_MAX ((size_t)1 << 30)
/* A map written more than this before its module is taken as stale: a linker writes the map
 * and the module in one run, not always in that order. */
#define SYM_MAP_OLDER_SECONDS 120u

typedef struct sym_module {
  uintptr_t begin, end, bias;
  char path[SYM_PATH_MAX];
  const char *name; /* the file's name inside path */
  int is_program, is_pe;
  sym_arena arena; /* pe_info */
  const pe_info *pe;
  map_table *map;
  dwarf_table *dwarf;
  unsigned char *image; /* kept while the DWARF table may point into it */
  size_t image_mapped;
  pe_table *names;
  const char *why, *why_source; /* a source refused, said once */
  int why_said;
} sym_module;

static sym_module modules[SYM_MODULES_MAX];
static unsigned module_count;
static int closed; /* the process is ending: tables freed, nothing more read */
static fmm_lock sym_lock;

/* The frames already written, by address: a report of a thousand leaks names the same few
 * hundred return addresses over and over, and a PDB's or the dynamic linker's answer costs a
 * call into the system each time. Direct-mapped, mapped at the first frame, freed at exit; a
 * frame whose text does not fit an entry is not kept. */
#define SYM_CACHE_ENTRIES 1024u
#define SYM_CACHE_TEXT 248u
typedef struct sym_cached {
  uintptr_t addr;
  uint32_t length; /* 0: empty */
  char text[SYM_CACHE_TEXT];
} sym_cached;
static sym_cached *cache;
static size_t described; /* frames named without the cache: symbolize_uncached_count */

static void free_all(void) {
  /* A thread the ending process stopped in a report keeps the lock: the memory goes with it. */
  if (lock_acquire_within(&sym_lock, 100u * 1000u * 1000u) != 1)
    return;
  for (unsigned i = 0; i < module_count; i++) {
    sym_module *m = &modules[i];
    map_table_free(m->map);
    dwarf_table_free(m->dwarf);
    pe_table_free(m->names);
    if (m->image != NULL)
      prim_unmap(m->image, m->image_mapped);
    sym_arena_free(&m->arena);
    memset(m, 0, sizeof *m);
  }
  module_count = 0;
  if (cache != NULL)
    prim_unmap(cache, SYM_CACHE_ENTRIES * sizeof *cache);
  cache = NULL;
  closed = 1;
  lock_release(&sym_lock);
}

static void refuse(sym_module *m, const char *source, const char *why) {
  if (m->why == NULL) {
    m->why = why;
    m->why_source = source;
  }
}

/* The map beside the module: "<path without extension>.map". */
static void load_map(sym_module *m, size_t name_at) {
  char map_path[SYM_PATH_MAX + 8];
  size_t n = strlen(m->path), dot = n;
  for (size_t i = name_at; i < n; i++)
    if (m->path[i] == '.')
      dot = i;
  memcpy(map_path, m->path, dot);
  memcpy(map_path + dot, ".map", 5);
  size_t size = 0, mapped = 0;
  char *text = (char *)prim_read_file(map_path, SYM_FILE_MAX, &size, &mapped);
  if (text == NULL) {
    if (prim_file_time(map_path) != 0)
      refuse(m, "its map", "it cannot be read or is too large");
    return;
  }
  uint64_t map_time = prim_file_time(map_path), module_time = prim_file_time(m->path);
  const char *why = NULL;
  if (map_time != 0 && module_time != 0 && map_time + SYM_MAP_OLDER_SECONDS < module_time)
    why = "it is older than the module (stale)";
  else
    m->map = map_table_build(text, size, m->pe, &why);
  if (why != NULL)
    refuse(m, "its map", why);
  prim_unmap(text, mapped);
}

static void load(sym_module *m) {
  size_t n = strlen(m->path), name_at = 0;
  for (size_t i = 0; i < n; i++)
    if (m->path[i] == '\\' || m->path[i] == '/')
      name_at = i + 1;
  m->name = m->path + name_at;
  size_t size = 0, mapped = 0;
  unsigned char *image = (unsigned char *)prim_read_file(m->path, SYM_FILE_MAX, &size, &mapped);
  if (image == NULL)
    return;
  pe_info *pe = (pe_info *)sym_arena_alloc(&m->arena, sizeof *pe);
  if (pe != NULL && pe_parse(image, size, pe)) {
    m->pe = pe;
    m->is_pe = 1;
    load_map(m, name_at);
  }
  const char *why = NULL;
  /* The DWARF hook: the reader's table, for modules that have no usable map. */
  if (m->map == NULL) {
    m->dwarf = dwarf_table_build(image, size, &why);
    /* "no ..." means the module has none, which is no error. */
    if (m->dwarf == NULL && why != NULL && strncmp(why, "no ", 3) != 0)
      refuse(m, "its DWARF debug information", why);
  }
  if (m->is_pe)
    m->names = pe_table_build(image, size, m->pe, &why);
  if (m->dwarf != NULL) {
    m->image = image;
    m->image_mapped = mapped;
  } else {
    prim_unmap(image, mapped);
  }
}

/* The module holding addr, loaded at its first use; NULL when none holds it. */
static sym_module *module_of(const void *addr) {
  uintptr_t a = (uintptr_t)addr;
  for (unsigned i = 0; i < module_count; i++)
    if (a >= modules[i].begin && a < modules[i].end)
      return &modules[i];
  if (module_count == SYM_MODULES_MAX || closed)
    return NULL;
  sym_module *m = &modules[module_count];
  memset(m, 0, sizeof *m);
  if (!prim_module_file(addr, &m->begin, &m->end, &m->bias, m->path, sizeof m->path))
    return NULL;
  if (module_count == 0)
    prim_on_process_exit(free_all);
  module_count++;
  m->is_program = prim_is_program_module(m->begin);
  load(m);
  return m;
}

typedef struct out_text {
  char *buf;
  size_t size, n;
} out_text;

static void put(out_text *o, const char *s) {
  while (*s && o->n + 1 < o->size)
    o->buf[o->n++] = *s++;
}

/* v in `base` with the digits given (upper-case hex for addresses, lower-case for offsets). */
static void put_digits(out_text *o, uint64_t v, unsigned base, const char *digits) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = digits[v % base];
    v /= base;
  } while (v);
  while (n > 0 && o->n + 1 < o->size)
    o->buf[o->n++] = tmp[--n];
}

static void put_number(out_text *o, uint64_t v, unsigned base) {
  put_digits(o, v, base, "0123456789ABCDEF");
}

/* lower-case hex after "0x", as module+offset always read */
static void put_offset(out_text *o, uint64_t v) {
  put(o, "0x");
  put_digits(o, v, 16, "0123456789abcdef");
}

static void put_frame(out_text *o, const sym_frame *f, uint64_t routine_offset, int has_offset) {
  put(o, "[");
  put(o, f->file);
  put(o, "][");
  put(o, f->unit);
  put(o, "][");
  put(o, f->routine);
  if (has_offset) {
    put(o, "+");
    put_offset(o, routine_offset);
  }
  put(o, "][");
  if (f->line != 0)
    put_number(o, f->line, 10);
  put(o, "]");
}

/* The unit a PDB's file stands for: its name without the extension. */
static void pdb_unit(const char *file, char *unit, size_t size) {
  size_t n = 0, dot = (size_t)-1;
  for (; file[n] && n + 1 < size; n++) {
    unit[n] = file[n];
    if (file[n] == '.')
      dot = n;
  }
  unit[dot != (size_t)-1 ? dot : n] = 0;
}

static void describe(out_text *o, const void *addr) {
  uintptr_t a = (uintptr_t)addr;
  put_number(o, a, 16);
  put(o, " ");
  sym_module *m = module_of(addr);
  if (m == NULL)
    return;
  if (!m->is_program) {
    put(o, m->name);
    put(o, " ");
  }
  /* A return address: its call is the instruction before it. */
  uintptr_t look = a > m->begin ? a - 1 : a;
  uint32_t rva = (uint32_t)(look - m->begin);
  sym_frame f;
  f.file = f.unit = f.routine = "";
  f.line = 0;
  if (m->map != NULL && map_table_lookup(m->map, rva, &f)) {
    put_frame(o, &f, 0, 0);
    return;
  }
  uint64_t link = m->is_pe ? m->pe->image_base + rva : (uint64_t)(look - m->bias);
  if (m->dwarf != NULL && dwarf_table_lookup(m->dwarf, link, &f)) {
    put_frame(o, &f, 0, 0);
    return;
  }
  static char routine[256], file[SYM_PATH_MAX], unit[128]; /* under sym_lock */
  if (m->is_pe && m->pe->has_pdb &&
      prim_pdb_lookup((const void *)look, routine, sizeof routine, file, sizeof file, &f.line)) {
    f.routine = routine;
    f.file = path_base_name(file);
    pdb_unit(f.file, unit, sizeof unit);
    f.unit = unit;
    put_frame(o, &f, 0, 0);
    return;
  }
  const char *name;
  uint32_t start;
  if (m->names != NULL && pe_table_lookup(m->names, rva, &name, &start)) {
    f.routine = name;
    put_frame(o, &f, (uint64_t)(a - m->begin - start), 1);
    return;
  }
  uintptr_t symbol_start;
  if (!m->is_pe &&
      prim_dynamic_symbol((const void *)look, routine, sizeof routine, &symbol_start)) {
    f.routine = routine;
    put_frame(o, &f, (uint64_t)(a - symbol_start), 1);
    return;
  }
  if (m->is_program)
    put(o, m->name);
  else if (o->n > 0)
    o->n--; /* "name " was written: "name+0x..." */
  put(o, "+");
  put_offset(o, (uint64_t)(a - m->begin));
}

size_t symbolize_frame(const void *addr, char *out, size_t size) {
  out_text o = {out, size, 0};
  if (size == 0)
    return 0;
  lock_acquire(&sym_lock);
  if (cache == NULL && !closed)
    cache = (sym_cached *)prim_map(SYM_CACHE_ENTRIES * sizeof *cache, 0);
  sym_cached *c = NULL;
  if (cache != NULL) {
    c = &cache[((uintptr_t)addr >> 2) % SYM_CACHE_ENTRIES];
    if (c->length != 0 && c->addr == (uintptr_t)addr) {
      o.n = c->length < size ? c->length : size - 1;
      memcpy(out, c->text, o.n);
      lock_release(&sym_lock);
      out[o.n] = 0;
      return o.n;
    }
  }
  char whole[SYM_CACHE_TEXT];
  out_text w = {whole, sizeof whole, 0};
  describe(&w, addr);
  described++;
  /* an address in no module: the bare address, without the space after it */
  while (w.n > 0 && w.buf[w.n - 1] == ' ')
    w.n--;
  if (w.n + 1 < sizeof whole) {
    if (c != NULL) {
      c->addr = (uintptr_t)addr;
      c->length = (uint32_t)w.n;
      memcpy(c->text, whole, w.n);
    }
    o.n = w.n < size ? w.n : size - 1;
    memcpy(out, whole, o.n);
  } else {
    /* Longer than an entry: written again into the caller's buffer, not kept. */
    describe(&o, addr);
    while (o.n > 0 && o.buf[o.n - 1] == ' ')
      o.n--;
  }
  lock_release(&sym_lock);
  out[o.n] = 0;
  return o.n;
}

size_t symbolize_uncached_count(void) {
  lock_acquire(&sym_lock);
  size_t n = described;
  lock_release(&sym_lock);
  return n;
}

size_t symbolize_take_reason(char *out, size_t size) {
  out_text o = {out, size, 0};
  if (size == 0)
    return 0;
  lock_acquire(&sym_lock);
  for (unsigned i = 0; i < module_count && o.n == 0; i++) {
    sym_module *m = &modules[i];
    if (m->why == NULL || m->why_said)
      continue;
    m->why_said = 1;
    put(&o, "Symbols of ");
    put(&o, m->name);
    put(&o, ": ");
    put(&o, m->why_source);
    put(&o, " is not used: ");
    put(&o, m->why);
    put(&o, ".");
  }
  lock_release(&sym_lock);
  out[o.n] = 0;
  return o.n;
}
