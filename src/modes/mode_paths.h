/* SPDX-License-Identifier: MIT */
/* What a caller may learn of a block, in or out of a mode, and FastMM5's debug entry points
 * (mode_paths.c). */
#ifndef FASTMM_MODE_PATHS_H
#define FASTMM_MODE_PATHS_H

#include <stddef.h>

#include "core/linkage.h"

/* ---- the slow paths while a mode is on: entry/dispatch.c sends every call here then ---------- */
void *mode_get(size_t size, const void *caller);
int mode_free(void *p, const void *caller);
void *FMM_REGCALL mode_realloc(void *p, size_t size, const void *caller);
/* An aligned block (fastmm_getmem_aligned) while a mode is on. */
void *mode_get_aligned(size_t size, size_t alignment, const void *caller);

/* fastmm_usable_size and fastmm_owns_block: as the core's heap_usable_size, and a debug block's
 * data too (debug_usable); a debug block of 0 usable bytes is still owned. The outer block of a
 * debug block is the manager's, not the caller's (0). */
size_t mode_usable_size(const void *p);
int mode_owns_block(const void *p);

/* fastmm_debug_getmem / allocmem (zero: the data zeroed instead of filled), freemem and
 * reallocmem: debug blocks whatever the mode (include/fastmm.h). */
void *debug_entry_get(size_t size, const void *caller, int zero);
int debug_entry_free(void *p, const void *caller);
void *debug_entry_realloc(void *p, size_t size, const void *caller);

#endif
