/* SPDX-License-Identifier: MIT */
/* The idle clock: one tick per idle pass (release.c advances it). What the manager keeps for
 * reuse is stamped with the tick it was set aside at (medium.c's spare spans, large.c's cache),
 * and something set aside at tick t is given back by the pass that makes the clock t + 2, so it
 * sat unused for at least one whole period between passes. The clock sits below the keepers and
 * release.c both, so that the keepers read it without calling release.c, which calls them. */
#ifndef FASTMM_IDLE_CLOCK_H
#define FASTMM_IDLE_CLOCK_H

#include <stdint.h>

#include "atomics.h"
#include "linkage.h"

extern FMM_HIDDEN uint32_t idle_clock_tick;

static inline uint32_t idle_clock_now(void) {
  return fmm_load_u32_relaxed(&idle_clock_tick);
}

#endif
