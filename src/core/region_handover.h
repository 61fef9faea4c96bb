/* SPDX-License-Identifier: MIT */
/* Memory changing hands between the OS and the heap, and the question "is this address ours?"
 * asked around it.
 *
 * The page map and the OS's mappings cannot change together. Memory is mapped before the page
 * map says it is ours (nothing may read a header where nothing is mapped yet), and an address
 * range leaves the page map before its memory leaves the process (no path may read a page that
 * is being unmapped). For those moments a range is in neither state the bound Pascal records
 * tell a stale pointer of ours by: not in the map, and readable, so a pointer there would be
 * handed to the previous manager as if it were that manager's block. Every such change runs
 * between region_handover_begin and region_handover_end, and region_ours waits them out. */
#ifndef FASTMM_REGION_HANDOVER_H
#define FASTMM_REGION_HANDOVER_H

/* Around mapping or committing memory and marking it, and around unmarking memory and giving it
 * back (unmap, decommit, the old place of a move). Pairs may overlap across threads. */
void region_handover_begin(void);
void region_handover_end(void);

/* 1 when p lies in the page map's ranges or, when unreadable_counts, in memory that cannot be
 * read (a block of ours given back to the OS: docs/bad-input.md), as it was while no range
 * changed hands; 0 otherwise. When a change does not finish within REGION_HANDOVER_WAIT_MS (a
 * thread killed inside it by ExitProcess), the answer is the one read then, and later questions
 * in that state no longer wait. */
int region_ours(const void *p, int unreadable_counts);

#endif
