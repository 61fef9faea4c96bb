/* SPDX-License-Identifier: MIT */
/* Stack traces of debug blocks: the program's routines when bound (debug_settings.h), else the
 * manager's own walk and module+offset text. */
#include "stack_trace.h"

#include <stdint.h>
#include <string.h>

#include "debug_settings.h"
#include "prim/prim.h"

/* This module's extent, looked up once at start-up (asking the OS for every frame made debug
 * mode several times slower); every thread reads it after heap_ensure_initialized. */
static uintptr_t own_begin, own_end;

void stack_trace_init(void) {
  if (own_end == 0)
    prim_module_range((const void *)(uintptr_t)stack_trace_capture, &own_begin, &own_end);
}

static int is_own(const void *a) {
  return (uintptr_t)a >= own_begin && (uintptr_t)a < own_end;
}

/* The walk asks for a few frames more than the depth: the ones inside this module are
 * dropped. */
#define OWN_FRAMES_MAX 8u
#define RAW_MAX (DEBUG_STACK_DEPTH_MAX + OWN_FRAMES_MAX)

unsigned stack_trace_capture(void **frames, unsigned depth, const void *caller) {
  void *raw[RAW_MAX];
  unsigned n = 0, want = depth + OWN_FRAMES_MAX;
  if (depth == 0)
    return 0;
  if (want > RAW_MAX)
    want = RAW_MAX;
#if defined(DEBUG_PASCAL_CALLS)
  debug_get_stack_trace_fn get = debug_bound_get_stack_trace();
  if (get != NULL) {
    /* The program's routine (FastMM5's FastMM_GetStackTrace, skip 0): its first frames are this
     * module's, left out here as FastMM5's skip count leaves out its own. */
    memset(raw, 0, sizeof raw);
    get(raw, want, 0);
    size_t i = 0;
    while (i < want && raw[i] != NULL && is_own(raw[i]))
      i++;
    for (; i < want && n < depth && raw[i] != NULL; i++)
      frames[n++] = raw[i];
    memset(frames + n, 0, (depth - n) * sizeof(void *));
    return n;
  }
#endif
  /* The caller's own return address first (exact even where frames are not chained), then what
   * the OS walk finds beyond this module. */
  if (caller != NULL)
    frames[n++] = (void *)caller;
  size_t got = prim_capture_stack(raw, want, 0);
  int skipping = 1;
  for (size_t i = 0; i < got && n < depth; i++) {
    if (skipping && (is_own(raw[i]) || raw[i] == caller || raw[i] == NULL))
      continue;
    skipping = 0;
    if (raw[i] == NULL)
      break;
    frames[n++] = raw[i];
  }
  memset(frames + n, 0, (depth - n) * sizeof(void *));
  return n;
}

unsigned stack_trace_count(void *const *frames, unsigned depth) {
  unsigned n = 0;
  while (n < depth && frames[n] != NULL)
    n++;
  return n;
}

/* UTF-16 to UTF-8, up to `size` - 1 bytes; returns the bytes written. */
static size_t utf16_to_utf8(const uint16_t *w, size_t count, char *out, size_t size) {
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t c = w[i];
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < count && w[i + 1] >= 0xDC00 && w[i + 1] < 0xE000)
      c = 0x10000u + ((c - 0xD800u) << 10) + (w[++i] - 0xDC00u);
    unsigned char b[4];
    size_t k;
    if (c < 0x80) {
      b[0] = (unsigned char)c;
      k = 1;
    } else if (c < 0x800) {
      b[0] = (unsigned char)(0xC0 | (c >> 6));
      b[1] = (unsigned char)(0x80 | (c & 0x3F));
      k = 2;
    } else if (c < 0x10000) {
      b[0] = (unsigned char)(0xE0 | (c >> 12));
      b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
      b[2] = (unsigned char)(0x80 | (c & 0x3F));
      k = 3;
    } else {
      b[0] = (unsigned char)(0xF0 | (c >> 18));
      b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
      b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
      b[3] = (unsigned char)(0x80 | (c & 0x3F));
      k = 4;
    }
    if (n + k >= size)
      break;
    memcpy(out + n, b, k);
    n += k;
  }
  return n;
}

static size_t append(char *out, size_t size, size_t n, const char *s) {
  while (*s && n + 1 < size)
    out[n++] = *s++;
  return n;
}

size_t stack_trace_text(void *const *frames, unsigned count, char *out, size_t size) {
  size_t n = 0;
  if (size == 0)
    return 0;
  out[0] = 0;
#if defined(DEBUG_PASCAL_CALLS)
  debug_convert_stack_trace_fn convert = debug_bound_convert_stack_trace();
  if (convert != NULL && count > 0) {
    /* The program's routine writes UTF-16 (FastMM5's FastMM_ConvertStackTraceToText); its
     * buffer is mapped for the call, as a report is rare and may run on a small stack. */
    size_t wide_size = 64u * 1024u;
    uint16_t *wide = (uint16_t *)prim_map(wide_size, 0);
    if (wide != NULL) {
      void *copy[DEBUG_STACK_DEPTH_MAX];
      memcpy(copy, frames, count * sizeof(void *));
      uint16_t *end = convert(copy, count, wide, wide + wide_size / sizeof(uint16_t) - 1);
      if (end >= wide && end < wide + wide_size / sizeof(uint16_t))
        n = utf16_to_utf8(wide, (size_t)(end - wide), out, size);
      prim_unmap(wide, wide_size);
      out[n] = 0;
      return n;
    }
  }
#endif
  for (unsigned i = 0; i < count; i++) {
    char where[512];
    prim_describe_address(frames[i], where, sizeof where);
    n = append(out, size, n, "  ");
    n = append(out, size, n, where);
    n = append(out, size, n, "\r\n");
  }
  out[n] = 0;
  return n;
}
