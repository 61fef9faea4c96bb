/* SPDX-License-Identifier: MIT */
/* A text builder for the event log (text.c): a buffer mapped from the OS for one report, since
 * the manager must not call an allocator (or a CRT that might) while it reports on itself, and
 * a report may run on a thread with a small stack. Text past the buffer's end is dropped. */
#ifndef FASTMM_REPORT_TEXT_H
#define FASTMM_REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct text {
  char *buf; /* TEXT_BYTES, mapped by text_open; NULL when closed */
  size_t n;
} text;

int text_open(text *t); /* 1 when the buffer could be mapped */
void text_close(text *t);
void text_put(text *t, const char *s);
void text_put_hex(text *t, uintptr_t v, int digits); /* upper case, at least `digits` digits */
void text_put_dec(text *t, uint64_t v);
/* "<title>:" and the trace's lines, or "<title>: (none captured)". */
void text_put_stack(text *t, const char *title, void *const *frames, size_t count);
/* The first min(size, 64) bytes at p, 16 a line, in hex and as characters. */
void text_put_hex_dump(text *t, const void *p, size_t size);

#endif
