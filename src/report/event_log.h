/* SPDX-License-Identifier: MIT */
/* Where debug mode's text goes (event_log.c): the event log next to the program
 * (<program>_MemoryManager_EventLog.txt, the name Delphi users know from FastMM) and, when
 * asked, OutputDebugString. */
#ifndef FASTMM_REPORT_EVENT_LOG_H
#define FASTMM_REPORT_EVENT_LOG_H

#include <stddef.h>

void event_log_set_path(const char *path); /* NULL or empty: the default */
const char *event_log_path(void);
void event_log_set_output_debug_string(int on);
/* Appends n bytes (and a 0 after them, for OutputDebugString) to the log. */
void event_log_write(const char *text, size_t n);

#endif
