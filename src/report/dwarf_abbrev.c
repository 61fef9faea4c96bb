/* SPDX-License-Identifier: MIT */
/* Abbreviation tables (dwarf_abbrev.h). */
#include "dwarf_abbrev.h"

#define DW_FORM_implicit_const 0x21u
/* Far more than any compiler writes in one table; bounds the work a hostile table costs. */
#define MAX_ABBREVS (1u << 20)
#define MAX_SPECS (4u << 20)

void dw_abbrevs_init(dw_abbrevs *a) {
  dw_vec_init(&a->list, sizeof(dw_abbrev));
  dw_vec_init(&a->specs, sizeof(dw_attr_spec));
  a->offset = 0;
  a->loaded = 0;
}

static int by_code(const void *a, const void *b) {
  return ((const dw_abbrev *)a)->code < ((const dw_abbrev *)b)->code;
}

int dw_abbrevs_load(dw_abbrevs *a, dw_span abbrev, uint64_t offset, const dw_unit *u,
                    const char **why) {
  if (a->loaded && a->offset == offset && a->addr_size == u->addr_size &&
      a->offset_size == u->offset_size && a->version == u->version) {
    a->parsed = 0;
    return 1;
  }
  a->loaded = 0;
  a->list.n = a->specs.n = 0;
  if (offset >= abbrev.n) {
    *why = "bad .debug_abbrev offset";
    return 0;
  }
  dw_cursor c = dw_at(abbrev, (size_t)offset);
  int sorted = 1;
  for (;;) {
    uint64_t code = dw_uleb(&c);
    if (c.bad)
      break;
    if (code == 0) {
      if (!sorted && !dw_sort(&a->list, by_code)) {
        *why = "out of memory";
        return 0;
      }
      a->parsed = c.at - (size_t)offset;
      a->offset = offset;
      a->addr_size = u->addr_size;
      a->offset_size = u->offset_size;
      a->version = u->version;
      a->loaded = 1;
      return 1;
    }
    dw_abbrev *e = (dw_abbrev *)dw_vec_push(&a->list, MAX_ABBREVS);
    if (e == NULL) {
      *why = a->list.n >= MAX_ABBREVS ? "too many abbreviations" : "out of memory";
      return 0;
    }
    if (a->list.n > 1 && ((dw_abbrev *)dw_vec_at(&a->list, a->list.n - 2))->code >= code)
      sorted = 0;
    e->code = code;
    e->tag = (uint32_t)dw_uleb(&c);
    e->has_children = dw_u8(&c) != 0;
    e->first = (uint32_t)a->specs.n;
    for (;;) {
      uint64_t name = dw_uleb(&c), form = dw_uleb(&c);
      if (c.bad)
        break;
      if (name == 0 && form == 0)
        break;
      dw_attr_spec *s = (dw_attr_spec *)dw_vec_push(&a->specs, MAX_SPECS);
      if (s == NULL) {
        *why = a->specs.n >= MAX_SPECS ? "too many abbreviations" : "out of memory";
        return 0;
      }
      s->name = name > UINT32_MAX ? UINT32_MAX : (uint32_t)name;
      s->form = form > UINT32_MAX ? UINT32_MAX : (uint32_t)form;
      s->implicit = form == DW_FORM_implicit_const ? dw_sleb(&c) : 0;
      int size = form > UINT32_MAX ? -1 : dw_form_fixed_size((unsigned)form, u);
      e->fixed = e->fixed < 0 || size < 0 ? -1 : e->fixed + size;
      e->count++;
    }
  }
  *why = "truncated .debug_abbrev";
  return 0;
}

const dw_abbrev *dw_abbrevs_find(const dw_abbrevs *a, uint64_t code) {
  const dw_abbrev *list = (const dw_abbrev *)a->list.p;
  size_t n = a->list.n;
  if (code >= 1 && code <= n && list[code - 1].code == code)
    return &list[code - 1]; /* codes 1, 2, 3...: what compilers write */
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (list[mid].code < code)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && list[lo].code == code ? &list[lo] : NULL;
}

void dw_abbrevs_free(dw_abbrevs *a) {
  dw_vec_free(&a->list);
  dw_vec_free(&a->specs);
  a->loaded = 0;
}
