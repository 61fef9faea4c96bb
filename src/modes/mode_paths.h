/* What a caller may learn of a block, in or out of a mode (mode_paths.c). */
#ifndef FASTMM_MODE_PATHS_H
#define FASTMM_MODE_PATHS_H

#include <stddef.h>

/* fastmm_usable_size and fastmm_owns_block: as the core's heap_usable_size, except that the
 * outer block of a debug block is the manager's, not the caller's (0), and a debug block of 0
 * usable bytes is still owned. */
size_t caller_usable_size(const void *p);
int caller_owns_block(const void *p);

#endif
