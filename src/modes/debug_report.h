/* SPDX-License-Identifier: MIT */
/* Debug mode's reports (debug_report.c): every detected error, and the leak report, decided
 * here and handed to the program's event handler or, without one, to the writer registered at
 * start-up (report/debug_text.c, the event log's text). */
#ifndef FASTMM_DEBUG_REPORT_H
#define FASTMM_DEBUG_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "debug_block.h"
#include "fastmm.h"

/* Fills an event of `kind` for the block at `user`. `h` is its header when it can be trusted,
 * else NULL; it is copied now (with both stack traces), so the caller must know the block stays
 * as it is meanwhile (the registry's lock held, or the block its own). */
void debug_event_init(fastmm_debug_event *e, fastmm_event_kind kind, const void *user,
                      const debug_header *h);
/* Counts the event, keeps it as the last one, and hands it to the event handler or writes it to
 * the event log. `caller` is the program's return address when known: the trace where the
 * error was found starts there (unless the event has one already). The caller holds no lock of
 * the manager: the handler is the program's code. */
void debug_report(fastmm_debug_event *e, const void *caller);
/* debug_event_init and debug_report in one. */
void debug_report_event(fastmm_event_kind kind, const void *user, const debug_header *h,
                        const void *caller);
size_t debug_report_leaks(void); /* the leak report; returns the unexpected leaks */
void debug_report_leaks_at_exit(void);
/* Non-zero once debug mode was ever on: the process's end then reports leaks (unless switched
 * off: debug_set_leak_report_at_exit). */
extern volatile uint32_t debug_ever_active;

/* Who writes the reports when the program set no event handler. The leak report calls `leak`
 * for each unexpected leak (its event counted already) and then `leaks_end` once, with the
 * unexpected leaks and those registered as expected, whether there were any or not; one leak
 * report runs at a time. */
typedef struct debug_writer {
  void (*event)(const fastmm_debug_event *e);
  void (*leak)(const fastmm_debug_event *e);
  void (*leaks_end)(size_t leaks, size_t expected);
} debug_writer;
/* Set once, when the library loads (entry/startup.c); NULL: reports are counted, not written. */
void debug_report_set_writer(const debug_writer *w);

/* Settings and queries behind the API. */
void debug_set_event_handler(fastmm_event_handler handler);
void debug_set_leak_report_at_exit(int on);
size_t debug_event_count(int kind);
void debug_last_event(fastmm_debug_event *event);

#endif
