/* SPDX-License-Identifier: MIT */
/* The walk of the blocks (walk.c): fastmm_walk_blocks, FastMM5's FastMM_WalkBlocks. */
#ifndef FASTMM_WALK_H
#define FASTMM_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "fastmm.h"

/* What the walk learns of a debug block inside an outer block (small, medium or large, in use),
 * from the describe routine the layers above lend the core (heap_above's describe_debug_block:
 * modes/debug_walk.c), which asks the debug block kind only while debug blocks exist. It takes no
 * lock and reads only the block's own bytes: the walk calls it with arena locks held. */
typedef struct heap_debug_view {
  void *user;         /* the pointer the program holds */
  const void *header; /* FastMM5's debug block header (TFastMM_DebugBlockHeader), or NULL */
  size_t user_size;   /* the size the program asked for */
  uint32_t allocation_group;
  int freed; /* freed and waiting in the quarantine: free in every statistic */
} heap_debug_view;

/* fastmm_walk_blocks's contract (include/fastmm.h): every large block, medium span, medium block,
 * small span and small block of the kinds in `types` (0: all), the callback called with no lock
 * held. Returns 1 when every arena was walked, 0 when one was skipped because one of its locks
 * could not be had within `lock_timeout_ms`. */
int heap_walk(fastmm_walk_callback callback, void *user_data, unsigned types, int used_blocks_only,
              uint32_t lock_timeout_ms, uint32_t min_allocation_group,
              uint32_t max_allocation_group);

#endif
