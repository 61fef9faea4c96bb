/* SPDX-License-Identifier: MIT */
/* Thread contention counts (contention.c): how often a thread that wanted a block found every
 * arena of its kind locked and had to wait (FastMM5's FastMM_SmallBlockThreadContentionCount and
 * its medium and large twins). Only GetMem's and ReallocMem's waits count, as in FastMM5; the
 * count is taken on the waiting path, never on a fast one. */
#ifndef FASTMM_CONTENTION_H
#define FASTMM_CONTENTION_H

#include <stdint.h>

typedef enum contention_kind {
  CONTENTION_SMALL,
  CONTENTION_MEDIUM,
  CONTENTION_LARGE,
  CONTENTION_KIND_COUNT
} contention_kind;

/* One more wait of this kind: into the manager's own counter, or the program's once bound. */
void contention_count(contention_kind kind);
/* The counters to count into from now on (fastmm_bind_variables); a NULL entry, or NULL for
 * all three: the manager's own. */
void contention_bind(volatile uint32_t *const counters[CONTENTION_KIND_COUNT]);
/* The value of the counter now in use. */
uint32_t contention_value(contention_kind kind);

#endif
