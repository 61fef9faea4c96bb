/* SPDX-License-Identifier: MIT */
/* The usage report (usage_report.c): fastmm_write_usage_report. */
#ifndef FASTMM_USAGE_REPORT_H
#define FASTMM_USAGE_REPORT_H

/* Writes the HTML page to `path`; 1 when written. */
int usage_report_write(const char *path);

#endif
