/* SPDX-License-Identifier: MIT */
/* A bounds-checked little-endian reader over one span of bytes, for the debug-information
 * readers: a read past the end (or a LEB128 number longer than 10 bytes) sets `bad`, returns 0
 * and leaves the cursor at the end, so a loop over a truncated section stops. */
#ifndef FASTMM_REPORT_DWARF_CURSOR_H
#define FASTMM_REPORT_DWARF_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct dw_span {
  const unsigned char *p; /* NULL when absent */
  size_t n;
} dw_span;

typedef struct dw_cursor {
  const unsigned char *p;
  size_t at, end;
  int bad;
} dw_cursor;

static inline dw_cursor dw_at(dw_span s, size_t at) {
  dw_cursor c;
  c.p = s.p;
  c.end = s.n;
  c.at = at;
  c.bad = at > s.n;
  if (c.bad)
    c.at = s.n;
  return c;
}

static inline size_t dw_left(const dw_cursor *c) {
  return c->end - c->at;
}

static inline int dw_skip(dw_cursor *c, uint64_t n) {
  if (n > dw_left(c)) {
    c->bad = 1;
    c->at = c->end;
    return 0;
  }
  c->at += (size_t)n;
  return 1;
}

/* n (0..8) bytes, little-endian. */
static inline uint64_t dw_uint(dw_cursor *c, unsigned n) {
  uint64_t v = 0;
  if (n > dw_left(c)) {
    c->bad = 1;
    c->at = c->end;
    return 0;
  }
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)c->p[c->at + i] << (8 * i);
  c->at += n;
  return v;
}

static inline unsigned dw_u8(dw_cursor *c) {
  return (unsigned)dw_uint(c, 1);
}

/* A LEB128 number's bits, and in *bits how many it had (7 a byte); at most 10 bytes. */
static inline uint64_t dw_leb(dw_cursor *c, unsigned *bits) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (c->at >= c->end)
      break;
    unsigned char b = c->p[c->at++];
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *bits = shift + 7;
      return v;
    }
  }
  c->bad = 1;
  c->at = c->end;
  *bits = 0;
  return 0;
}

static inline uint64_t dw_uleb(dw_cursor *c) {
  unsigned bits;
  return dw_leb(c, &bits);
}

static inline int64_t dw_sleb(dw_cursor *c) {
  unsigned bits;
  uint64_t v = dw_leb(c, &bits);
  if (bits > 0 && bits < 64 && ((v >> (bits - 1)) & 1))
    v |= ~(uint64_t)0 << bits; /* the sign bit of the last byte */
  return (int64_t)v;
}

/* A NUL-terminated string inside the span, or NULL (and `bad`) when it runs off the end. */
static inline const char *dw_cstr(dw_cursor *c) {
  const unsigned char *nul = c->at < c->end ? memchr(c->p + c->at, 0, c->end - c->at) : NULL;
  if (nul != NULL) {
    const char *s = (const char *)c->p + c->at;
    c->at = (size_t)(nul - c->p) + 1;
    return s;
  }
  c->bad = 1;
  c->at = c->end;
  return NULL;
}

/* The string at `offset` of a string section, or NULL when it is not one: no NUL in the section
 * or within `max` bytes. *scanned (when not NULL) grows by the bytes looked at. */
static inline const char *dw_str_at(dw_span s, uint64_t offset, size_t max, uint64_t *scanned) {
  if (s.p == NULL || offset >= s.n)
    return NULL;
  size_t left = s.n - (size_t)offset, n = left < max ? left : max;
  const unsigned char *nul = (const unsigned char *)memchr(s.p + offset, 0, n);
  if (scanned != NULL)
    *scanned += nul != NULL ? (uint64_t)(nul - (s.p + offset)) + 1 : n;
  return nul != NULL ? (const char *)s.p + offset : NULL;
}

/* A unit's initial length: 32-bit, or 0xffffffff and 64-bit. Sets *offset_size (4 or 8) and
 * returns the length, or sets `bad` for the reserved values. */
static inline uint64_t dw_unit_length(dw_cursor *c, unsigned *offset_size) {
  uint64_t n = dw_uint(c, 4);
  *offset_size = 4;
  if (n == 0xffffffffu) {
    *offset_size = 8;
    n = dw_uint(c, 8);
  } else if (n >= 0xfffffff0u) {
    c->bad = 1;
  }
  return n;
}

#endif
