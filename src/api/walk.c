/* SPDX-License-Identifier: MIT */
/* The exports that go through every block: the walk (FastMM5's FastMM_WalkBlocks) and the usage
 * report built on it. */
#include "core/walk.h"
#include "report/usage_report.h"

int FASTMM_CDECL fastmm_walk_blocks(fastmm_walk_callback callback, void *user_data, unsigned types,
                                    int used_blocks_only, uint32_t lock_timeout_ms,
                                    uint32_t min_allocation_group, uint32_t max_allocation_group) {
  return heap_walk(callback, user_data, types, used_blocks_only, lock_timeout_ms,
                   min_allocation_group, max_allocation_group);
}

int FASTMM_CDECL fastmm_write_usage_report(const char *path) {
  return usage_report_write(path);
}
