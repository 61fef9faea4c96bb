/* SPDX-License-Identifier: MIT */
/* The walk of the blocks (walk.c): fastmm_walk_blocks, FastMM5's FastMM_WalkBlocks. */
#ifndef FASTMM_WALK_H
#define FASTMM_WALK_H

#include <stdint.h>

#include "fastmm.h"

/* fastmm_walk_blocks's contract (include/fastmm.h): every large block, medium span, medium block,
 * small span and small block of the kinds in `types` (0: all), the callback called with no lock
 * held. Returns 1 when every arena was walked, 0 when one was skipped because one of its locks
 * could not be had within `lock_timeout_ms`. */
int heap_walk(fastmm_walk_callback callback, void *user_data, unsigned types, int used_blocks_only,
              uint32_t lock_timeout_ms, uint32_t min_allocation_group,
              uint32_t max_allocation_group);

#endif
