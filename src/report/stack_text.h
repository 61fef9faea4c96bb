/* SPDX-License-Identifier: MIT */
/* A debug block's stack trace (modes/stack_trace.h) as text (stack_text.c). */
#ifndef FASTMM_STACK_TEXT_H
#define FASTMM_STACK_TEXT_H

#include <stddef.h>

/* Writes the trace of `count` frames as UTF-8 lines (each "  " text "\r\n") to out, at most
 * `size` bytes with the terminating 0; returns the bytes written. */
size_t stack_trace_text(void *const *frames, unsigned count, char *out, size_t size);

#endif
