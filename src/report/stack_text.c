/* SPDX-License-Identifier: MIT */
/* A stack trace as text, for the reports: through the program's FastMM_ConvertStackTraceToText
 * when it bound one (debug_settings.h), else one line a frame in FastMM's format, named from the
 * modules' own debug information (symbolize.h), and why a module's was refused. */
#include "stack_text.h"

#include <stdint.h>
#include <string.h>

#include "modes/debug_settings.h"
#include "prim/prim.h"
#include "symbolize.h"

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
  char line[1024];
  for (unsigned i = 0; i < count; i++) {
    symbolize_frame(frames[i], line, sizeof line);
    n = append(out, size, n, "  ");
    n = append(out, size, n, line);
    n = append(out, size, n, "\r\n");
  }
  while (symbolize_take_reason(line, sizeof line) > 0) {
    n = append(out, size, n, "  (");
    n = append(out, size, n, line);
    n = append(out, size, n, ")\r\n");
  }
  out[n] = 0;
  return n;
}
