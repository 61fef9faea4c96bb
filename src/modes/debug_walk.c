/* SPDX-License-Identifier: MIT */
/* The debug block kind as the walk of the blocks (core/walk.c) sees it: how the walk learns
 * whether an outer block holds a debug block (the describe routine entry/startup.c lends the
 * core, core/walk.h). */
#include "debug_walk.h"

#include "debug_block.h"

int debug_walk_describe(const void *outer, heap_debug_view *view) {
  /* debug_block_describe tests the outer block's DEBUG_OUTER bit before anything else. */
  debug_block_info info;
  if (!debug_block_describe(outer, &info))
    return 0;
  view->user = info.user;
  view->header = info.header;
  view->user_size = info.user_size;
  view->allocation_group = info.allocation_group;
  view->freed = info.freed;
  return 1;
}
