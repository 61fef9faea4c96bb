/* SPDX-License-Identifier: MIT */
/* Exports that only the project's own tests call: reads of settings a program sets but has no
 * need to read back, which the tests use to check that the setters took. The library exports
 * them like the others (FASTMM_API, include/fastmm.h) so that the tests reach them through the
 * DLL; the fastmm_test_ prefix says they are not part of the interface a program uses, and this
 * header is not installed with fastmm.h. */
#ifndef FASTMM_TEST_H
#define FASTMM_TEST_H

#include "fastmm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What fastmm_set_event_log_filename set: the event log's path (the default when it was given
 * an empty path or NULL). */
FASTMM_API const char *FASTMM_CDECL fastmm_test_get_event_log_filename(void);
/* What fastmm_set_debug_mode_options set (FASTMM_DMO_*). */
FASTMM_API uint32_t FASTMM_CDECL fastmm_test_get_debug_mode_options(void);
/* Sets the window within which a heap that maps a span again after unmapping one counts as
 * churning and keeps spare spans for it (500 ms by default); returns the window before. A test
 * sets a long one, so that its rounds count as churn however slowly the machine runs them (under
 * an emulator, one round of a test took more than the default). */
FASTMM_API uint32_t FASTMM_CDECL fastmm_test_set_churn_window(uint32_t ms);
/* Sets how many arenas threads are handed (1 to 4; the manager uses one per CPU the process may
 * run on); returns the count before. Threads made afterwards take arenas below it. A test
 * sets it, so that what spreads across arenas is tested on a machine of any size. */
FASTMM_API uint32_t FASTMM_CDECL fastmm_test_set_arenas(uint32_t count);
/* The span record of the 16 KB granule that holds p's header word (p 16-aligned): its header
 * bits, the low 32 bits of its span's first block, its slot divisor and its carved limit, in
 * out[0..3], when the page map says a medium span is there; returns 0, out untouched, elsewhere.
 * A test compares it with the span's own header. */
FASTMM_API int FASTMM_CDECL fastmm_test_span_record(const void *p, uint32_t out[4]);

#ifdef __cplusplus
}
#endif

#endif
