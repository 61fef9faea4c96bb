/* SPDX-License-Identifier: MIT */
/* The mode word, its bits, and the switch that keeps the fast copies in step with it (gate.c).
 *
 * The mode word is non-zero while any mode is on (debug mode, the erase modes, scan before every
 * operation). GetMem, FreeMem and ReallocMem must then leave their fast paths. A test of the word
 * on every call cost the normal paths up to 9% of small churn, and a comparison with a gate
 * variable still about 1% (one more load), so the fast paths (entry/alloc_fast.h) read two tables
 * of the core's instead, which the gate closes while a mode is on: GetMem's class table
 * (core/size_class.h, size_class_fast_lookup: every size to the always-empty bin) and the page
 * map's fast copy (core/page_map.h: no region, so every pointer takes a foreign one's path).
 *
 * The slow-path dispatch (entry/dispatch.c) reads the word (mode_now). Open, the tables are
 * copies of the real ones and cost nothing over them. The gate writes the word first and then the
 * tables, so on x86 a thread that finds a table closed finds the mode that closed it; one that
 * finds it closed and the mode already off takes the normal slow path, which is correct too. A
 * call racing with another thread's switch may take the path of the old mode. */
#ifndef FASTMM_GATE_H
#define FASTMM_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/atomics.h"
#include "core/linkage.h"

extern FMM_HIDDEN uint32_t mode_word;

/* The mode word, as the slow paths read it (a relaxed atomic load: it changes under them). */
static inline uint32_t mode_now(void) {
  return fmm_load_u32_relaxed(&mode_word);
}

/* The bits of the mode word: any of them closes the gate. */
#define MODE_DEBUG 1u
#define MODE_ERASE_FREED 2u
#define MODE_ERASE_ALLOCATED 4u
#define MODE_SCAN_EVERY_OPERATION 8u
/* Debug blocks outside debug mode need no bit: their header word sends them to the debug block
 * kind from every path, and an outer block's DEBUG_OUTER bit keeps a stale pointer to it off
 * every fast path (core/block_header.h). */

/* Sets or clears `bit` of the mode word; the gate closes when the word leaves zero and opens
 * when it comes back. Safe from any thread (one lock serialises the changes). */
void mode_set_bit(uint32_t bit, int on);

/* The minimum alignment of every block from now on: 16, 32 or 64 (anything else rounded up to
 * one of these, above 64 to 64); returns the one in effect. Same lock as the mode word. */
uint32_t mode_set_minimum_alignment(size_t alignment);

#endif
