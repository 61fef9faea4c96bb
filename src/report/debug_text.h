/* SPDX-License-Identifier: MIT */
/* Debug mode's text (debug_text.c): the default writer of the events and the leak report that
 * the modes decide on (modes/debug_report.h), written to the event log. The start-up
 * registers it; a program's event handler (FastMMC.pas's, with FastMM5's templates) replaces
 * it. */
#ifndef FASTMM_REPORT_DEBUG_TEXT_H
#define FASTMM_REPORT_DEBUG_TEXT_H

#include "modes/debug_report.h"

extern const debug_writer debug_text_writer;

#endif
