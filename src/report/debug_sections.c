/* SPDX-License-Identifier: MIT */
/* Finding the DWARF sections in a PE or ELF file's bytes (debug_sections.h). */
#include "debug_sections.h"

#include <string.h>

/* Longer section names are none we look for: a name is read no further. */
#define SECTION_NAME_MAX 256u
#define PE_SCN_CNT_CODE 0x20u
#define PE_SCN_MEM_EXECUTE 0x20000000u
#define ELF_SHT_NOBITS 8u
#define ELF_SHF_EXECINSTR 0x4u
#define ELF_SHF_COMPRESSED 0x800u

/* Records one section by name; returns 0 for a compressed DWARF section. */
static int take(debug_sections *d, const char *name, size_t name_len, const unsigned char *p,
                size_t n) {
  static const struct {
    const char *name;
    size_t offset;
  } wanted[] = {
      {".debug_info", offsetof(debug_sections, info)},
      {".debug_abbrev", offsetof(debug_sections, abbrev)},
      {".debug_line", offsetof(debug_sections, line)},
      {".debug_line_str", offsetof(debug_sections, line_str)},
      {".debug_str", offsetof(debug_sections, str)},
      {".debug_str_offsets", offsetof(debug_sections, str_offsets)},
      {".debug_addr", offsetof(debug_sections, addr)},
      {".debug_ranges", offsetof(debug_sections, ranges)},
      {".debug_rnglists", offsetof(debug_sections, rnglists)},
  };
  if (name_len > 8 && memcmp(name, ".zdebug_", 8) == 0)
    return 0;
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
    if (strlen(wanted[i].name) == name_len && memcmp(wanted[i].name, name, name_len) == 0) {
      dw_span *s = (dw_span *)((char *)d + wanted[i].offset);
      if (s->p == NULL) { /* the first of a name counts */
        s->p = p;
        s->n = n;
      }
    }
  return 1;
}

static void add_code(debug_sections *d, uint64_t lo, uint64_t size) {
  uint64_t hi = lo + size;
  if (size == 0 || hi < lo)
    return;
  if (d->code_hi == 0 || lo < d->code_lo)
    d->code_lo = lo;
  if (hi > d->code_hi)
    d->code_hi = hi;
}

static int find_pe(const unsigned char *image, size_t size, debug_sections *d, const char **why) {
  dw_span all = {image, size};
  dw_cursor c = dw_at(all, 0x3c);
  uint64_t pe = dw_uint(&c, 4);
  c = dw_at(all, (size_t)(pe < size ? pe : size));
  if (dw_uint(&c, 4) != 0x4550u) {
    *why = c.bad ? "truncated PE headers" : "not a PE file";
    return 0;
  }
  dw_skip(&c, 2); /* Machine */
  unsigned n_sections = (unsigned)dw_uint(&c, 2);
  dw_skip(&c, 4);
  uint64_t symbols = dw_uint(&c, 4), n_symbols = dw_uint(&c, 4);
  unsigned optional_size = (unsigned)dw_uint(&c, 2);
  dw_skip(&c, 2);
  size_t optional = c.at;
  unsigned magic = (unsigned)dw_uint(&c, 2);
  uint64_t image_base;
  if (magic == 0x10b) {
    dw_skip(&c, 26);
    image_base = dw_uint(&c, 4);
  } else if (magic == 0x20b) {
    dw_skip(&c, 22);
    image_base = dw_uint(&c, 8);
  } else {
    *why = c.bad ? "truncated PE headers" : "unknown PE optional header";
    return 0;
  }
  /* The COFF string table, for section names longer than 8 bytes ("/N"). */
  dw_span strings = {NULL, 0};
  uint64_t strings_at = symbols + n_symbols * 18;
  if (symbols != 0 && strings_at < size) {
    strings.p = image + strings_at;
    strings.n = size - (size_t)strings_at;
  }
  c = dw_at(all, optional + optional_size);
  for (unsigned i = 0; i < n_sections; i++) {
    char short_name[9];
    const unsigned char *header = c.at + 40 <= size ? image + c.at : NULL;
    dw_skip(&c, 8);
    uint64_t vsize = dw_uint(&c, 4), rva = dw_uint(&c, 4);
    uint64_t raw_size = dw_uint(&c, 4), raw_at = dw_uint(&c, 4);
    dw_skip(&c, 12);
    uint64_t flags = dw_uint(&c, 4);
    if (c.bad || header == NULL) {
      *why = "truncated PE section table";
      return 0;
    }
    memcpy(short_name, header, 8);
    short_name[8] = 0;
    const char *name = short_name;
    if (short_name[0] == '/') {
      uint64_t at = 0;
      for (int k = 1; k < 8 && short_name[k] >= '0' && short_name[k] <= '9'; k++)
        at = at * 10 + (uint64_t)(short_name[k] - '0');
      name = dw_str_at(strings, at, SECTION_NAME_MAX, NULL);
      if (name == NULL)
        continue; /* a name we cannot read is not one we want */
    }
    if (flags & (PE_SCN_CNT_CODE | PE_SCN_MEM_EXECUTE))
      add_code(d, image_base + rva, vsize != 0 ? vsize : raw_size);
    uint64_t n = vsize != 0 && vsize < raw_size ? vsize : raw_size;
    if (raw_at > size || n > size - raw_at) {
      if (strncmp(name, ".debug_", 7) == 0) {
        *why = "truncated debug section";
        return 0;
      }
      continue;
    }
    if (!take(d, name, strlen(name), image + raw_at, (size_t)n)) {
      *why = "compressed debug sections";
      return 0;
    }
  }
  return 1;
}

/* ELF section header i: name offset, type, flags, address, file offset, size, link. */
static int elf_section(dw_span all, int wide, uint64_t shoff, unsigned shentsize, uint64_t i,
                       uint64_t sh[7]) {
  dw_cursor h = dw_at(all, 0);
  unsigned w = wide ? 8 : 4;
  if (!dw_skip(&h, shoff) || !dw_skip(&h, i * shentsize))
    return 0;
  sh[0] = dw_uint(&h, 4);
  sh[1] = dw_uint(&h, 4);
  sh[2] = dw_uint(&h, w);
  sh[3] = dw_uint(&h, w);
  sh[4] = dw_uint(&h, w);
  sh[5] = dw_uint(&h, w);
  sh[6] = dw_uint(&h, 4);
  return !h.bad;
}

static int find_elf(const unsigned char *image, size_t size, debug_sections *d, const char **why) {
  dw_span all = {image, size};
  int wide = image[4] == 2;
  if ((image[4] != 1 && image[4] != 2) || image[5] != 1) {
    *why = image[5] == 2 ? "big-endian ELF" : "unknown ELF class";
    return 0;
  }
  dw_cursor c = dw_at(all, 16);
  if (dw_uint(&c, 2) == 1) {
    *why = "relocatable ELF object";
    return 0;
  }
  c = dw_at(all, wide ? 0x28 : 0x20);
  uint64_t shoff = dw_uint(&c, wide ? 8 : 4);
  c = dw_at(all, wide ? 0x3a : 0x2e);
  unsigned shentsize = (unsigned)dw_uint(&c, 2);
  uint64_t shnum = dw_uint(&c, 2);
  uint64_t shstrndx = dw_uint(&c, 2);
  unsigned want = wide ? 64 : 40;
  if (c.bad || shentsize < want) {
    *why = "truncated ELF headers";
    return 0;
  }
  if (shoff == 0) {
    *why = "no sections";
    return 0;
  }
  if (shoff >= size) {
    *why = "truncated ELF section table";
    return 0;
  }
  uint64_t sh[7];
  if (shnum == 0 || shstrndx == 0xffff) { /* counts too big for the header: in section 0 */
    if (!elf_section(all, wide, shoff, shentsize, 0, sh)) {
      *why = "truncated ELF section table";
      return 0;
    }
    if (shnum == 0)
      shnum = sh[5];
    if (shstrndx == 0xffff)
      shstrndx = sh[6];
  }
  if (shnum > (size - shoff) / shentsize || shstrndx >= shnum) {
    *why = "truncated ELF section table";
    return 0;
  }
  if (!elf_section(all, wide, shoff, shentsize, shstrndx, sh)) {
    *why = "truncated ELF section table";
    return 0;
  }
  dw_span names = {NULL, 0};
  if (sh[1] != ELF_SHT_NOBITS && sh[4] < size && sh[5] <= size - sh[4]) {
    names.p = image + sh[4];
    names.n = (size_t)sh[5];
  }
  for (uint64_t i = 1; i < shnum; i++) {
    if (!elf_section(all, wide, shoff, shentsize, i, sh)) {
      *why = "truncated ELF section table";
      return 0;
    }
    const char *name = dw_str_at(names, sh[0], SECTION_NAME_MAX, NULL);
    if (sh[2] & ELF_SHF_EXECINSTR)
      add_code(d, sh[3], sh[5]);
    if (name == NULL || sh[1] == ELF_SHT_NOBITS)
      continue;
    int is_debug = strncmp(name, ".debug_", 7) == 0;
    if (is_debug && (sh[2] & ELF_SHF_COMPRESSED)) {
      *why = "compressed debug sections";
      return 0;
    }
    if (sh[4] > size || sh[5] > size - sh[4]) {
      if (is_debug) {
        *why = "truncated debug section";
        return 0;
      }
      continue;
    }
    if (!take(d, name, strlen(name), image + sh[4], (size_t)sh[5])) {
      *why = "compressed debug sections";
      return 0;
    }
  }
  return 1;
}

int debug_sections_find(const unsigned char *image, size_t size, debug_sections *out,
                        const char **why) {
  memset(out, 0, sizeof *out);
  if (image == NULL || size < 64) {
    *why = size == 0 ? "empty file" : "file too small";
    return 0;
  }
  int ok;
  if (image[0] == 'M' && image[1] == 'Z')
    ok = find_pe(image, size, out, why);
  else if (memcmp(image, "\177ELF", 4) == 0)
    ok = find_elf(image, size, out, why);
  else {
    *why = "not a PE or ELF file";
    return 0;
  }
  if (!ok)
    return 0;
  if (out->info.p == NULL || out->info.n == 0) {
    *why = "no .debug_info";
    return 0;
  }
  if (out->abbrev.p == NULL) {
    *why = "no .debug_abbrev";
    return 0;
  }
  return 1;
}
