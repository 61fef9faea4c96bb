/* SPDX-License-Identifier: MIT */
/* The debug block kind as the walk of the blocks sees it (debug_walk.c). */
#ifndef FASTMM_DEBUG_WALK_H
#define FASTMM_DEBUG_WALK_H

#include "core/walk.h"

/* 1 and *view filled when the live block `outer` holds a debug block (live or quarantined); 0
 * at once while no debug block exists. Takes no lock and reads only the block's own bytes. */
int debug_walk_describe(const void *outer, heap_debug_view *view);

#endif
