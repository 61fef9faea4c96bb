/* SPDX-License-Identifier: MIT */
/* Debug blocks' stack traces (stack_trace.c): taken through the program's FastMM_GetStackTrace
 * when it bound one (fastmm_bind_variables), else by the manager's own walk, which needs no
 * support library (FastMM5 records nothing without one). report/stack_text.h writes them as
 * text. */
#ifndef FASTMM_STACK_TRACE_H
#define FASTMM_STACK_TRACE_H

#include <stddef.h>

/* Fills frames[0 .. depth) with return addresses, `caller` first when known, leaving out the
 * manager's own frames; unused entries are 0 (FastMM5's convention). Returns how many are
 * non-zero. */
unsigned stack_trace_capture(void **frames, unsigned depth, const void *caller);
/* How many of the first `depth` entries come before the first 0. */
unsigned stack_trace_count(void *const *frames, unsigned depth);
/* Looks up this module's extent once, so traces can leave out the manager's own frames. */
void stack_trace_init(void);
/* Makes the OS walk load what it needs now, once per process, so that no later trace loads
 * anything: glibc's backtrace() loads libgcc_s.so.1 with dlopen at its first call, which
 * allocates with the process's malloc. Called by the thread that switches debug mode on, before
 * any thread can take a trace, and before a fork once debug mode was ever on (switches.c), so a
 * forked child never makes that first call: a malloc that is not safe after fork (as
 * AddressSanitizer's) may have a lock there that a thread of the parent held, in the same first
 * call, when it forked. Takes no lock of the manager's. */
void stack_trace_prepare(void);

#endif
