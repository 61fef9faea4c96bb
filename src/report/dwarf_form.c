/* SPDX-License-Identifier: MIT */
/* DWARF attribute values by form (dwarf_form.h). */
#include "dwarf_form.h"

/* The forms, DWARF 5 section 7.5.6, and the GNU ones split DWARF uses. */
enum {
  F_addr = 0x01,
  F_block2 = 0x03,
  F_block4 = 0x04,
  F_data2 = 0x05,
  F_data4 = 0x06,
  F_data8 = 0x07,
  F_string = 0x08,
  F_block = 0x09,
  F_block1 = 0x0a,
  F_data1 = 0x0b,
  F_flag = 0x0c,
  F_sdata = 0x0d,
  F_strp = 0x0e,
  F_udata = 0x0f,
  F_ref_addr = 0x10,
  F_ref1 = 0x11,
  F_ref2 = 0x12,
  F_ref4 = 0x13,
  F_ref8 = 0x14,
  F_ref_udata = 0x15,
  F_indirect = 0x16,
  F_sec_offset = 0x17,
  F_exprloc = 0x18,
  F_flag_present = 0x19,
  F_strx = 0x1a,
  F_addrx = 0x1b,
  F_ref_sup4 = 0x1c,
  F_strp_sup = 0x1d,
  F_data16 = 0x1e,
  F_line_strp = 0x1f,
  F_ref_sig8 = 0x20,
  F_implicit_const = 0x21,
  F_loclistx = 0x22,
  F_rnglistx = 0x23,
  F_ref_sup8 = 0x24,
  F_strx1 = 0x25,
  F_strx2 = 0x26,
  F_strx3 = 0x27,
  F_strx4 = 0x28,
  F_addrx1 = 0x29,
  F_addrx2 = 0x2a,
  F_addrx3 = 0x2b,
  F_addrx4 = 0x2c,
  F_GNU_addr_index = 0x1f01,
  F_GNU_str_index = 0x1f02,
  F_GNU_ref_alt = 0x1f20,
  F_GNU_strp_alt = 0x1f21
};

static void set(dw_value *v, enum dw_value_kind kind, uint64_t u) {
  v->kind = kind;
  v->u = u;
  v->s = NULL;
}

int dw_form_read(dw_cursor *c, unsigned form, int64_t implicit, const dw_unit *u, dw_value *out) {
  unsigned os = u->offset_size;
  for (int hops = 0; form == F_indirect; hops++) {
    if (hops == 4)
      return 0;
    form = (unsigned)dw_uleb(c);
  }
  switch (form) {
  case F_addr:
    set(out, DW_V_ADDR, dw_uint(c, u->addr_size));
    break;
  case F_data1:
  case F_ref1:
  case F_flag:
    set(out, form == F_ref1 ? DW_V_REF : DW_V_CONST, dw_uint(c, 1));
    break;
  case F_data2:
  case F_ref2:
    set(out, form == F_ref2 ? DW_V_REF : DW_V_CONST, dw_uint(c, 2));
    break;
  case F_data4:
  case F_ref4:
    set(out, form == F_ref4 ? DW_V_REF : DW_V_CONST, dw_uint(c, 4));
    break;
  case F_data8:
  case F_ref8:
    set(out, form == F_ref8 ? DW_V_REF : DW_V_CONST, dw_uint(c, 8));
    break;
  case F_ref_sig8:
  case F_ref_sup8:
    set(out, DW_V_OTHER, dw_uint(c, 8));
    break;
  case F_ref_sup4:
    set(out, DW_V_OTHER, dw_uint(c, 4));
    break;
  case F_data16:
    set(out, DW_V_OTHER, 0);
    dw_skip(c, 16);
    break;
  case F_sdata:
    set(out, DW_V_CONST, (uint64_t)dw_sleb(c));
    break;
  case F_udata:
  case F_ref_udata:
    set(out, form == F_ref_udata ? DW_V_REF : DW_V_CONST, dw_uleb(c));
    break;
  case F_implicit_const:
    set(out, DW_V_CONST, (uint64_t)implicit);
    break;
  case F_flag_present:
    set(out, DW_V_CONST, 1);
    break;
  case F_string:
    set(out, DW_V_STRING, 0);
    out->s = dw_cstr(c);
    break;
  case F_strp:
    set(out, DW_V_STRP, dw_uint(c, os));
    break;
  case F_line_strp:
    set(out, DW_V_LINE_STRP, dw_uint(c, os));
    break;
  case F_strp_sup:
  case F_GNU_strp_alt:
  case F_GNU_ref_alt:
    set(out, DW_V_OTHER, dw_uint(c, os)); /* in a supplementary file we do not have */
    break;
  case F_ref_addr: /* an offset in .debug_info; DWARF 2 wrote it address-sized */
    set(out, DW_V_REF, dw_uint(c, u->version <= 2 ? u->addr_size : os));
    return !c->bad; /* absolute already */
  case F_sec_offset:
    set(out, DW_V_SECOFF, dw_uint(c, os));
    break;
  case F_strx:
  case F_GNU_str_index:
    set(out, DW_V_STRX, dw_uleb(c));
    break;
  case F_strx1:
  case F_strx2:
  case F_strx3:
  case F_strx4:
    set(out, DW_V_STRX, dw_uint(c, form - F_strx1 + 1));
    break;
  case F_addrx:
  case F_GNU_addr_index:
    set(out, DW_V_ADDRX, dw_uleb(c));
    break;
  case F_addrx1:
  case F_addrx2:
  case F_addrx3:
  case F_addrx4:
    set(out, DW_V_ADDRX, dw_uint(c, form - F_addrx1 + 1));
    break;
  case F_rnglistx:
    set(out, DW_V_RNGLISTX, dw_uleb(c));
    break;
  case F_loclistx:
    set(out, DW_V_OTHER, dw_uleb(c));
    break;
  case F_block1:
  case F_block2:
  case F_block4:
  case F_block:
  case F_exprloc: {
    uint64_t n = form == F_block1   ? dw_uint(c, 1)
                 : form == F_block2 ? dw_uint(c, 2)
                 : form == F_block4 ? dw_uint(c, 4)
                                    : dw_uleb(c);
    set(out, DW_V_OTHER, 0);
    dw_skip(c, n);
    break;
  }
  default:
    return 0;
  }
  if (out->kind == DW_V_REF && form != F_ref_addr)
    out->u += u->start; /* unit-relative: made absolute */
  return !c->bad;
}

int dw_form_fixed_size(unsigned form, const dw_unit *u) {
  switch (form) {
  case F_flag_present:
  case F_implicit_const:
    return 0;
  case F_data1:
  case F_ref1:
  case F_flag:
  case F_strx1:
  case F_addrx1:
    return 1;
  case F_data2:
  case F_ref2:
  case F_strx2:
  case F_addrx2:
    return 2;
  case F_strx3:
  case F_addrx3:
    return 3;
  case F_data4:
  case F_ref4:
  case F_strx4:
  case F_addrx4:
  case F_ref_sup4:
    return 4;
  case F_data8:
  case F_ref8:
  case F_ref_sig8:
  case F_ref_sup8:
    return 8;
  case F_data16:
    return 16;
  case F_addr:
    return (int)u->addr_size;
  case F_ref_addr:
    return (int)(u->version <= 2 ? u->addr_size : u->offset_size);
  case F_strp:
  case F_line_strp:
  case F_sec_offset:
  case F_strp_sup:
  case F_GNU_strp_alt:
  case F_GNU_ref_alt:
    return (int)u->offset_size;
  default:
    return -1;
  }
}

const char *dw_value_string(const debug_sections *d, const dw_unit *u, const dw_value *v) {
  switch (v->kind) {
  case DW_V_STRING:
    return v->s;
  case DW_V_STRP:
    return dw_str_at(d->str, v->u, DW_MAX_STRING, d->string_bytes);
  case DW_V_LINE_STRP:
    return dw_str_at(d->line_str, v->u, DW_MAX_STRING, d->string_bytes);
  case DW_V_STRX: {
    dw_cursor c = dw_at(d->str_offsets, 0);
    if (v->u > (SIZE_MAX >> 4) || !dw_skip(&c, u->str_offsets_base) ||
        !dw_skip(&c, v->u * u->offset_size))
      return NULL;
    uint64_t at = dw_uint(&c, u->offset_size);
    return c.bad ? NULL : dw_str_at(d->str, at, DW_MAX_STRING, d->string_bytes);
  }
  default:
    return NULL;
  }
}

int dw_addrx(const debug_sections *d, const dw_unit *u, uint64_t index, uint64_t *out) {
  dw_cursor c = dw_at(d->addr, 0);
  if (index > (SIZE_MAX >> 4) || !dw_skip(&c, u->addr_base) || !dw_skip(&c, index * u->addr_size))
    return 0;
  *out = dw_uint(&c, u->addr_size);
  return !c.bad;
}

int dw_value_addr(const debug_sections *d, const dw_unit *u, const dw_value *v, uint64_t *out) {
  if (v->kind == DW_V_ADDR) {
    *out = v->u;
    return 1;
  }
  if (v->kind == DW_V_ADDRX)
    return dw_addrx(d, u, v->u, out);
  return 0;
}
