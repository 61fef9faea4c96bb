/* SPDX-License-Identifier: MIT */
/* Routines and units from .debug_info (dwarf_info.h). */
#include "dwarf_info.h"

#include <string.h>

#include "report/dwarf_abbrev.h"

enum {
  TAG_compile_unit = 0x11,
  TAG_partial_unit = 0x3c,
  TAG_skeleton_unit = 0x4a,
  TAG_subprogram = 0x2e,
  TAG_inlined_subroutine = 0x1d,
  TAG_class_type = 0x02,
  TAG_structure_type = 0x13,
  TAG_interface_type = 0x38
};
enum { UT_compile = 1, UT_partial = 3, UT_skeleton = 4, UT_split_compile = 5 };

/* The attributes kept from a DIE, by slot. */
enum {
  S_NAME,
  S_LINKAGE,
  S_LOW,
  S_HIGH,
  S_RANGES,
  S_SPEC,
  S_ORIGIN,
  S_STMT,
  S_STR_BASE,
  S_ADDR_BASE,
  S_RNG_BASE,
  S_COUNT
};

static int slot_of(uint32_t attribute) {
  switch (attribute) {
  case 0x03:
    return S_NAME;
  case 0x6e:   /* DW_AT_linkage_name */
  case 0x2007: /* DW_AT_MIPS_linkage_name */
    return S_LINKAGE;
  case 0x11:
    return S_LOW;
  case 0x12:
    return S_HIGH;
  case 0x55:
    return S_RANGES;
  case 0x47:
    return S_SPEC;
  case 0x31:
    return S_ORIGIN;
  case 0x10:
    return S_STMT;
  case 0x72:
    return S_STR_BASE;
  case 0x73:
  case 0x2133: /* DW_AT_GNU_addr_base */
    return S_ADDR_BASE;
  case 0x74:
    return S_RNG_BASE;
  default:
    return -1;
  }
}

typedef struct die {
  const dw_abbrev *ab; /* NULL: a null entry, the end of a list of children */
  unsigned have;       /* 1 << slot for each slot read */
  dw_value v[S_COUNT];
} die;

/* Ranges [first, last) whose name is that of the DIE at `ref`, read once the walk is done. */
typedef struct pending {
  size_t first, last;
  uint64_t ref;
  const char *scope; /* the enclosing subprogram's name, or NULL */
} pending;

typedef struct unit_entry {
  dw_unit u;
  const char *name; /* base name without extension; "" when none */
  int walk;         /* a compile, partial or skeleton unit (not a type unit) */
} unit_entry;

#define MAX_DEPTH 256
#define MAX_HOPS 8

typedef struct reader {
  const debug_sections *d;
  dw_pool *pool;
  dw_vec *ranges;
  size_t max_ranges;
  dw_vec units;              /* unit_entry, in .debug_info's order */
  dw_abbrevs abbrevs, other; /* the walked unit's; another's, for references across units */
  const unit_entry *current;
  dw_vec starts;    /* one bit a byte of .debug_info: a DIE starts there (walked so far) */
  size_t walked_to; /* the walk's position: references at or past it are not checked yet */
  dw_vec pending;   /* pending: ranges named through a reference forward */
  uint64_t work, max_work;
  int fatal; /* a cap or memory stopped the build: *why is set */
  const char *why;
} reader;

static int fail(reader *r, const char *why) {
  r->fatal = 1;
  r->why = why;
  return 0;
}

static int has(const die *e, int slot) {
  return (e->have >> slot) & 1;
}

/* The DIE at the cursor with the unit's abbreviations: 1, or 0 (r->why) when malformed. */
/* The tags whose DIEs the walk reads; the others it only steps over. */
static int wanted(uint32_t tag) {
  return tag == TAG_subprogram || tag == TAG_inlined_subroutine || tag == TAG_class_type ||
         tag == TAG_structure_type || tag == TAG_interface_type || tag == TAG_compile_unit ||
         tag == TAG_partial_unit || tag == TAG_skeleton_unit;
}

/* The DIE at the cursor with the unit's abbreviations: 1, or 0 (r->why) when malformed. With
 * `skim`, a DIE whose tag the walk does not want is stepped over (out->have 0): at once when its
 * attributes' size is fixed. */
static int read_die(reader *r, dw_cursor *c, const dw_abbrevs *abbrevs, const dw_unit *u, die *out,
                    int skim) {
  uint64_t code = dw_uleb(c);
  out->ab = NULL;
  out->have = 0;
  if (c->bad)
    return fail(r, "truncated .debug_info");
  if (code == 0)
    return 1;
  const dw_abbrev *ab = dw_abbrevs_find(abbrevs, code);
  if (ab == NULL)
    return fail(r, "bad abbreviation code in .debug_info");
  if (skim && !wanted(ab->tag) && ab->fixed >= 0) {
    out->ab = ab;
    return dw_skip(c, (uint64_t)ab->fixed) || fail(r, "truncated .debug_info");
  }
  const dw_attr_spec *specs = (const dw_attr_spec *)abbrevs->specs.p;
  for (uint32_t k = 0; k < ab->count; k++) {
    uint32_t i = ab->first + k;
    dw_value v;
    if (!dw_form_read(c, specs[i].form, specs[i].implicit, u, &v))
      return fail(r, c->bad ? "truncated .debug_info" : "unknown form in .debug_info");
    int slot = slot_of(specs[i].name);
    if (slot >= 0) {
      out->v[slot] = v;
      out->have |= 1u << slot;
    }
  }
  out->ab = ab;
  return 1;
}

static const char *die_string(reader *r, const die *e, const dw_unit *u, int slot) {
  if (!has(e, slot))
    return NULL;
  const char *s = dw_value_string(r->d, u, &e->v[slot]);
  if (*r->d->string_bytes > DW_MAX_STRING_BYTES) {
    fail(r, "too much work in string sections");
    return NULL;
  }
  return s != NULL && s[0] != 0 ? s : NULL;
}

/* The unit holding .debug_info offset `at`, or NULL. */
static const unit_entry *unit_of(const reader *r, uint64_t at) {
  const unit_entry *units = (const unit_entry *)r->units.p;
  size_t lo = 0, hi = r->units.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (units[mid].u.end <= at)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == r->units.n || at < units[lo].u.die_start)
    return NULL;
  return &units[lo];
}

/* A unit's abbreviations into `abbrevs`, the bytes read counted as work: units that take turns
 * between two large tables must not make the build's time grow with their product. */
static int load_abbrevs(reader *r, dw_abbrevs *abbrevs, const dw_unit *u) {
  if (!dw_abbrevs_load(abbrevs, r->d->abbrev, u->abbrev_offset, u, &r->why))
    return fail(r, r->why);
  r->work += abbrevs->parsed / 16;
  return r->work <= r->max_work || fail(r, "too much work in .debug_abbrev");
}

static int is_start(const reader *r, uint64_t at) {
  return at < r->d->info.n && (r->starts.p[at >> 3] >> (at & 7)) & 1;
}

/* The subprogram DIE a reference names: 1; 0 when there is none there (or r->fatal); -1 when
 * it lies ahead of the walk. */
static int die_at(reader *r, uint64_t at, die *out, const unit_entry **in) {
  if (++r->work > r->max_work)
    return fail(r, "too much work in .debug_info references");
  if (!is_start(r, at))
    return at >= r->walked_to && at < r->d->info.n ? -1 : 0;
  const unit_entry *ue = unit_of(r, at);
  if (ue == NULL)
    return 0;
  dw_abbrevs *abbrevs = &r->abbrevs;
  if (ue != r->current) {
    /* Every table loaded once already, at the unit's first DIE: only memory can fail here. */
    abbrevs = &r->other;
    if (!load_abbrevs(r, abbrevs, &ue->u))
      return 0;
  }
  dw_cursor c = dw_at(r->d->info, 0);
  c.end = ue->u.end;
  c.at = (size_t)at;
  *in = ue;
  if (!read_die(r, &c, abbrevs, &ue->u, out, 0))
    return fail(r, r->why); /* it was read whole during the walk: cannot fail now */
  return out->ab != NULL && out->ab->tag == TAG_subprogram;
}

/* A routine's name: its linkage name (C++'s mangled name: unambiguous, as addr2line gives it)
 * or else its name; its own, or that of the subprogram its specification or abstract origin
 * names. NULL when there is none; then *ahead is the reference to read once the walk is done,
 * if it lies ahead of the walk (else ~0). */
static const char *name_of(reader *r, const die *e, const dw_unit *u, uint64_t *ahead) {
  die next;
  const unit_entry *in = NULL;
  *ahead = ~(uint64_t)0;
  for (int hops = 0;; hops++) {
    const char *s = die_string(r, e, u, S_LINKAGE);
    if (s == NULL)
      s = die_string(r, e, u, S_NAME);
    if (s != NULL)
      return s;
    int slot = has(e, S_SPEC) ? S_SPEC : has(e, S_ORIGIN) ? S_ORIGIN : -1;
    if (slot < 0 || e->v[slot].kind != DW_V_REF || hops == MAX_HOPS)
      return NULL;
    int found = die_at(r, e->v[slot].u, &next, &in);
    if (found < 0)
      *ahead = e->v[slot].u;
    if (found <= 0)
      return NULL;
    e = &next;
    u = &in->u;
  }
}

static int add_range(reader *r, uint64_t lo, uint64_t hi, const char *name, const char *unit,
                     uint32_t depth) {
  const debug_sections *d = r->d;
  if (hi <= lo || (d->code_hi != 0 && (lo < d->code_lo || lo >= d->code_hi)))
    return 1; /* empty, or code the linker dropped */
  dw_range *e = (dw_range *)dw_vec_push(r->ranges, r->max_ranges);
  if (e == NULL)
    return fail(r, r->ranges->n >= r->max_ranges ? "too many routine ranges" : "out of memory");
  e->lo = lo;
  e->hi = hi;
  e->name = name;
  e->unit = unit;
  e->depth = depth;
  return 1;
}

static int count_work(reader *r) {
  return ++r->work <= r->max_work || fail(r, "range lists too long");
}

/* A DWARF 2-4 range list in .debug_ranges. */
static int ranges_v4(reader *r, const dw_unit *u, uint64_t at, const char *name, const char *unit,
                     uint32_t depth) {
  dw_cursor c = dw_at(r->d->ranges, 0);
  uint64_t base = u->base_address, all = u->addr_size == 8 ? ~(uint64_t)0 : 0xffffffffu;
  if (!dw_skip(&c, at))
    return fail(r, "bad .debug_ranges offset");
  for (;;) {
    if (!count_work(r))
      return 0;
    uint64_t a = dw_uint(&c, u->addr_size), b = dw_uint(&c, u->addr_size);
    if (c.bad)
      return fail(r, "truncated .debug_ranges");
    if (a == 0 && b == 0)
      return 1;
    if (a == all)
      base = b;
    else if (!add_range(r, base + a, base + b, name, unit, depth))
      return 0;
  }
}

/* A DWARF 5 range list in .debug_rnglists. */
static int ranges_v5(reader *r, const dw_unit *u, const dw_value *v, const char *name,
                     const char *unit, uint32_t depth) {
  const debug_sections *d = r->d;
  uint64_t at = v->u, base = u->base_address, a, b;
  if (v->kind == DW_V_RNGLISTX) {
    dw_cursor x = dw_at(d->rnglists, 0);
    if (v->u > (SIZE_MAX >> 4) || !dw_skip(&x, u->rnglists_base) ||
        !dw_skip(&x, v->u * u->offset_size))
      return fail(r, "bad .debug_rnglists index");
    at = u->rnglists_base + dw_uint(&x, u->offset_size);
  }
  dw_cursor c = dw_at(d->rnglists, 0);
  if (!dw_skip(&c, at))
    return fail(r, "bad .debug_rnglists offset");
  for (;;) {
    if (!count_work(r))
      return 0;
    int ok = 1, add = 1;
    switch (dw_u8(&c)) {
    case 0: /* end_of_list */
      return c.bad ? fail(r, "truncated .debug_rnglists") : 1;
    case 1: /* base_addressx */
      ok = dw_addrx(d, u, dw_uleb(&c), &base);
      add = 0;
      break;
    case 2: /* startx_endx */
      ok = dw_addrx(d, u, dw_uleb(&c), &a) & dw_addrx(d, u, dw_uleb(&c), &b);
      break;
    case 3: /* startx_length */
      ok = dw_addrx(d, u, dw_uleb(&c), &a);
      b = a + dw_uleb(&c);
      break;
    case 4: /* offset_pair */
      a = base + dw_uleb(&c);
      b = base + dw_uleb(&c);
      break;
    case 5: /* base_address */
      base = dw_uint(&c, u->addr_size);
      add = 0;
      break;
    case 6: /* start_end */
      a = dw_uint(&c, u->addr_size);
      b = dw_uint(&c, u->addr_size);
      break;
    case 7: /* start_length */
      a = dw_uint(&c, u->addr_size);
      b = a + dw_uleb(&c);
      break;
    default:
      return fail(r, "bad .debug_rnglists entry");
    }
    if (c.bad || !ok)
      return fail(r, c.bad ? "truncated .debug_rnglists" : "bad .debug_addr index");
    if (add && !add_range(r, a, b, name, unit, depth))
      return 0;
  }
}

/* The address ranges of a routine's DIE. */
static int die_ranges(reader *r, const die *e, const dw_unit *u, const char *name, const char *unit,
                      uint32_t depth) {
  uint64_t lo, hi;
  if (has(e, S_LOW) && has(e, S_HIGH)) {
    if (!dw_value_addr(r->d, u, &e->v[S_LOW], &lo))
      return fail(r, "bad DW_AT_low_pc");
    if (e->v[S_HIGH].kind == DW_V_CONST)
      hi = lo + e->v[S_HIGH].u;
    else if (!dw_value_addr(r->d, u, &e->v[S_HIGH], &hi))
      return fail(r, "bad DW_AT_high_pc");
    return add_range(r, lo, hi, name, unit, depth);
  }
  if (!has(e, S_RANGES))
    return 1;
  const dw_value *v = &e->v[S_RANGES];
  if (v->kind == DW_V_RNGLISTX || (u->version >= 5 && v->kind == DW_V_SECOFF))
    return ranges_v5(r, u, v, name, unit, depth);
  if (v->kind == DW_V_SECOFF || v->kind == DW_V_CONST)
    return ranges_v4(r, u, v->u, name, unit, depth);
  return fail(r, "bad DW_AT_ranges");
}

/* The unit headers of .debug_info. */
static int read_units(reader *r) {
  dw_span info = r->d->info;
  size_t at = 0;
  while (at < info.n) {
    dw_cursor c = dw_at(info, at);
    unit_entry e;
    memset(&e, 0, sizeof e);
    uint64_t length = dw_unit_length(&c, &e.u.offset_size);
    if (c.bad || length > dw_left(&c))
      return fail(r, "truncated .debug_info");
    e.u.start = at;
    e.u.end = c.at + (size_t)length;
    c.end = e.u.end;
    e.u.version = (unsigned)dw_uint(&c, 2);
    unsigned type = UT_compile;
    if (e.u.version < 2 || e.u.version > 5)
      return fail(r, "unknown .debug_info version");
    if (e.u.version >= 5) {
      type = dw_u8(&c);
      e.u.addr_size = dw_u8(&c);
      e.u.abbrev_offset = dw_uint(&c, e.u.offset_size);
      if (type == UT_skeleton || type == UT_split_compile)
        dw_skip(&c, 8);
      else if (type == 2 || type == 6) /* type units */
        dw_skip(&c, 8 + e.u.offset_size);
    } else {
      e.u.abbrev_offset = dw_uint(&c, e.u.offset_size);
      e.u.addr_size = dw_u8(&c);
    }
    if (c.bad)
      return fail(r, "truncated .debug_info");
    if (e.u.addr_size != 4 && e.u.addr_size != 8)
      return fail(r, "bad address size in .debug_info");
    e.u.die_start = c.at;
    e.walk = type == UT_compile || type == UT_partial || type == UT_skeleton;
    e.name = "";
    /* The v5 bases' defaults: just past their sections' headers. */
    e.u.str_offsets_base = e.u.addr_base = e.u.offset_size == 8 ? 16 : 8;
    e.u.rnglists_base = e.u.offset_size == 8 ? 20 : 12;
    unit_entry *slot = (unit_entry *)dw_vec_push(&r->units, SIZE_MAX);
    if (slot == NULL)
      return fail(r, "out of memory");
    *slot = e;
    at = e.u.end;
  }
  return 1;
}

/* The unit name's base name without its extension, copied to the pool. */
static const char *unit_name(reader *r, const char *path) {
  const char *b = path, *dot = NULL;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\')
      b = p + 1;
  for (const char *p = b; *p; p++)
    if (*p == '.')
      dot = p;
  size_t n = dot != NULL && dot != b ? (size_t)(dot - b) : strlen(b);
  const char *s = dw_pool_copy(r->pool, b, n);
  if (s == NULL)
    fail(r, "out of memory");
  return s;
}

/* A unit's first DIE: its bases, its name, its line table. */
static int read_unit_die(reader *r, unit_entry *ue, dw_vec *line_units) {
  dw_unit *u = &ue->u;
  die e;
  if (!load_abbrevs(r, &r->abbrevs, u))
    return 0;
  dw_cursor c = dw_at(r->d->info, u->die_start);
  c.end = u->end;
  if (!read_die(r, &c, &r->abbrevs, u, &e, 0))
    return 0;
  if (e.ab == NULL)
    return 1;
  if (has(&e, S_STR_BASE))
    u->str_offsets_base = e.v[S_STR_BASE].u;
  if (has(&e, S_ADDR_BASE))
    u->addr_base = e.v[S_ADDR_BASE].u;
  if (has(&e, S_RNG_BASE))
    u->rnglists_base = e.v[S_RNG_BASE].u;
  if (has(&e, S_LOW) && !dw_value_addr(r->d, u, &e.v[S_LOW], &u->base_address))
    return fail(r, "bad DW_AT_low_pc");
  const char *name = die_string(r, &e, u, S_NAME);
  if (r->fatal || (name != NULL && (ue->name = unit_name(r, name)) == NULL))
    return 0;
  if (has(&e, S_STMT) && (e.v[S_STMT].kind == DW_V_SECOFF || e.v[S_STMT].kind == DW_V_CONST)) {
    dw_line_unit *l = (dw_line_unit *)dw_vec_push(line_units, SIZE_MAX);
    if (l == NULL)
      return fail(r, "out of memory");
    l->offset = e.v[S_STMT].u;
    l->unit = ue->name;
    l->u = *u;
  }
  return 1;
}

/* Ranges [first, ranges->n) named later, through the DIE at `ref`. */
static int add_pending(reader *r, size_t first, uint64_t ref, const char *scope) {
  if (first == r->ranges->n)
    return 1;
  pending *p = (pending *)dw_vec_push(&r->pending, SIZE_MAX);
  if (p == NULL)
    return fail(r, "out of memory");
  p->first = first;
  p->last = r->ranges->n;
  p->ref = ref;
  p->scope = scope;
  return 1;
}

/* Every DIE of a unit: the routines' ranges. */
static int walk_unit(reader *r, const unit_entry *ue) {
  const dw_unit *u = &ue->u;
  const char *scope[MAX_DEPTH]; /* the enclosing subprogram's name at each level, or NULL */
  uint32_t level = 0;
  die e;
  if (!load_abbrevs(r, &r->abbrevs, u))
    return 0;
  r->current = ue;
  scope[0] = NULL;
  dw_cursor c = dw_at(r->d->info, u->die_start);
  c.end = u->end;
  while (c.at < c.end) {
    size_t at = c.at;
    r->walked_to = at;
    if (!read_die(r, &c, &r->abbrevs, u, &e, 1))
      return 0;
    if (e.ab == NULL) {
      if (level > 0)
        level--;
      continue;
    }
    r->starts.p[at >> 3] |= (unsigned char)(1u << (at & 7));
    uint32_t tag = e.ab->tag;
    const char *inner = scope[level];
    if (tag == TAG_subprogram || tag == TAG_inlined_subroutine) {
      int has_pc = has(&e, S_LOW) || has(&e, S_RANGES);
      if (has_pc || (tag == TAG_subprogram && e.ab->has_children)) {
        uint64_t ahead;
        const char *name = name_of(r, &e, u, &ahead);
        const char *outer = tag == TAG_subprogram ? scope[level] : NULL;
        if (r->fatal)
          return 0;
        if (has_pc && name != NULL && outer != NULL &&
            (name = dw_pool_join(r->pool, outer, '.', name)) == NULL)
          return fail(r, "out of memory");
        if (tag == TAG_subprogram && name != NULL)
          inner = name;
        size_t first = r->ranges->n;
        /* A routine without a name is left out: the routine around it holds the address. */
        if (has_pc && (name != NULL || ahead != ~(uint64_t)0)) {
          if (!die_ranges(r, &e, u, name, ue->name, level))
            return 0;
          if (name == NULL && !add_pending(r, first, ahead, outer))
            return 0;
        }
      }
    } else if ((tag == TAG_class_type || tag == TAG_structure_type || tag == TAG_interface_type) &&
               e.ab->has_children) {
      /* Methods defined inside their class (Free Pascal's) are named "Class.Method". */
      const char *name = die_string(r, &e, u, S_NAME);
      if (r->fatal)
        return 0;
      if (name != NULL && scope[level] != NULL &&
          (name = dw_pool_join(r->pool, scope[level], '.', name)) == NULL)
        return fail(r, "out of memory");
      if (name != NULL)
        inner = name;
    }
    if (e.ab->has_children) {
      if (level + 1 >= MAX_DEPTH)
        return fail(r, "DIEs nested too deep in .debug_info");
      scope[++level] = inner;
    }
  }
  return !c.bad || fail(r, "truncated .debug_info");
}

/* The names that lay ahead of the walk; ranges left without one are dropped. */
static int name_pending(reader *r) {
  r->walked_to = SIZE_MAX;
  r->current = NULL;
  for (size_t i = 0; i < r->pending.n; i++) {
    const pending *p = (const pending *)dw_vec_at(&r->pending, i);
    die e;
    const unit_entry *in = NULL;
    const char *name = NULL;
    uint64_t ahead;
    int found = die_at(r, p->ref, &e, &in);
    if (r->fatal)
      return 0;
    if (found > 0)
      name = name_of(r, &e, &in->u, &ahead);
    if (r->fatal)
      return 0;
    if (name != NULL && p->scope != NULL &&
        (name = dw_pool_join(r->pool, p->scope, '.', name)) == NULL)
      return fail(r, "out of memory");
    for (size_t k = p->first; k < p->last; k++)
      ((dw_range *)dw_vec_at(r->ranges, k))->name = name;
  }
  /* Compaction: the ranges still without a name go. */
  size_t kept = 0;
  for (size_t k = 0; k < r->ranges->n; k++) {
    dw_range *e = (dw_range *)dw_vec_at(r->ranges, k);
    if (e->name != NULL)
      *(dw_range *)dw_vec_at(r->ranges, kept++) = *e;
  }
  r->ranges->n = kept;
  return 1;
}

int dwarf_info_read(const debug_sections *d, dw_pool *pool, dw_vec *ranges, size_t max_ranges,
                    dw_vec *line_units, uint64_t max_work, const char **why) {
  reader r;
  memset(&r, 0, sizeof r);
  r.d = d;
  r.pool = pool;
  r.ranges = ranges;
  r.max_ranges = max_ranges;
  r.max_work = max_work;
  dw_vec_init(&r.units, sizeof(unit_entry));
  dw_vec_init(&r.starts, 1);
  dw_vec_init(&r.pending, sizeof(pending));
  dw_abbrevs_init(&r.abbrevs);
  dw_abbrevs_init(&r.other);
  int ok = read_units(&r);
  for (size_t i = 0; ok && i < r.units.n; i++) {
    unit_entry *ue = (unit_entry *)dw_vec_at(&r.units, i);
    if (ue->walk)
      ok = read_unit_die(&r, ue, line_units);
  }
  if (ok && !dw_vec_reserve(&r.starts, d->info.n / 8 + 1))
    ok = fail(&r, "out of memory");
  for (size_t i = 0; ok && i < r.units.n; i++) {
    const unit_entry *ue = (const unit_entry *)dw_vec_at(&r.units, i);
    if (ue->walk)
      ok = walk_unit(&r, ue);
  }
  ok = ok && name_pending(&r);
  dw_vec_free(&r.units);
  dw_vec_free(&r.starts);
  dw_vec_free(&r.pending);
  dw_abbrevs_free(&r.abbrevs);
  dw_abbrevs_free(&r.other);
  if (!ok)
    *why = r.why;
  return ok;
}
