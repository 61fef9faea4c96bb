/* SPDX-License-Identifier: MIT */
/* The event log's text builder: see text.h. */
#include "text.h"

#include "fastmm.h"
#include "prim/prim.h"
#include "stack_text.h"

#define TEXT_BYTES ((size_t)64 * 1024)

int text_open(text *t) {
  t->buf = (char *)prim_map(TEXT_BYTES, 0);
  t->n = 0;
  if (t->buf != NULL)
    t->buf[0] = 0;
  return t->buf != NULL;
}

void text_close(text *t) {
  if (t->buf != NULL)
    prim_unmap(t->buf, TEXT_BYTES);
  t->buf = NULL;
}

void text_put(text *t, const char *s) {
  while (*s && t->n + 1 < TEXT_BYTES)
    t->buf[t->n++] = *s++;
  t->buf[t->n] = 0;
}

/* The digits of v in `base`, least significant first, at least `digits` of them. */
static void put_digits(text *t, uint64_t v, unsigned base, int digits) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = "0123456789ABCDEF"[v % base];
    v /= base;
  } while ((v || n < digits) && n < (int)sizeof tmp - 1);
  while (n > 0 && t->n + 1 < TEXT_BYTES)
    t->buf[t->n++] = tmp[--n];
  t->buf[t->n] = 0;
}

void text_put_hex(text *t, uintptr_t v, int digits) {
  put_digits(t, v, 16, digits);
}

void text_put_dec(text *t, uint64_t v) {
  put_digits(t, v, 10, 0);
}

void text_put_stack(text *t, const char *title, void *const *frames, size_t count) {
  text_put(t, title);
  text_put(t, count ? ":\r\n" : ": (none captured)\r\n");
  if (count > FASTMM_DEBUG_EVENT_FRAMES)
    count = FASTMM_DEBUG_EVENT_FRAMES;
  t->n += stack_trace_text(frames, (unsigned)count, t->buf + t->n, TEXT_BYTES - t->n);
  if (t->n > 0 && t->buf[t->n - 1] != '\n')
    text_put(t, "\r\n");
}

void text_put_hex_dump(text *t, const void *p, size_t size) {
  const unsigned char *b = (const unsigned char *)p;
  if (size > 64)
    size = 64;
  for (size_t row = 0; row < size; row += 16) {
    text_put(t, "  ");
    text_put_hex(t, row, 4);
    text_put(t, ": ");
    for (size_t i = row; i < row + 16; i++) {
      if (i < size)
        text_put_hex(t, b[i], 2);
      else
        text_put(t, "  ");
      text_put(t, " ");
    }
    text_put(t, " ");
    for (size_t i = row; i < row + 16 && i < size; i++) {
      char c[2] = {(char)(b[i] >= 32 && b[i] < 127 ? b[i] : '.'), 0};
      text_put(t, c);
    }
    text_put(t, "\r\n");
  }
}
