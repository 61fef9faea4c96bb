/* Debug mode's reports (debug_report.c): every detected error, and the leak report. */
#ifndef FASTMM_DEBUG_REPORT_H
#define FASTMM_DEBUG_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "debug_block.h"
#include "fastmm.h"

/* Writes an event to the log and counts it. `h` is the block's header when it can be trusted
 * (else NULL), `caller` the program's return address when known. */
void debug_report_event(fastmm_event_kind kind, const void *user, const debug_header *h,
                        const void *caller);
size_t debug_report_leaks(void); /* the leak report; returns the unexpected leaks */
void debug_report_leaks_at_exit(void);
/* Non-zero once debug mode was ever on: the process's end then reports leaks. */
extern volatile uint32_t debug_ever_active;

/* Settings and queries behind the API. */
void debug_set_event_log_path(const char *path); /* NULL or empty: the default */
const char *debug_event_log_path(void);
void debug_set_output_debug_string(int on);
size_t debug_event_count(int kind);
void debug_last_event(fastmm_debug_event *event);

#endif
