/* SPDX-License-Identifier: MIT */
/* AllocMem returns zeroed memory whatever mode the manager is in: normally, with the erase
 * modes on (fastmm_begin_erase_allocated_block_content fills new blocks with 0x90,
 * fastmm_begin_erase_freed_block_content fills freed ones with 0x80), and in debug mode; for
 * every kind of block, through the C export and the Delphi record; including a block that reuses
 * memory just freed and erased. (Found by the fuzzer, tests/fuzz: a large block from AllocMem
 * came back full of 0x90 while erase-allocated mode was on: fastmm_allocmem does not zero large
 * blocks, as fresh OS mappings are zero, but that mode fills them.) */
#include "test_blocks.h"

static void allocmem_zeroed(const char *mode) {
  static const size_t sizes[] = {0,
                                 1,
                                 100,
                                 SMALL_MAX_USER,
                                 SMALL_MAX_USER + 1,
                                 100000,
                                 MEDIUM_MAX_USER,
                                 MEDIUM_MAX_USER + 1,
                                 2u * 1024u * 1024u};
  fastmm_memory_manager_ex mm;
  size_t i;
  int via;
  fastmm_get_memory_manager(&mm);
  for (via = 0; via < 2; via++) {
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      size_t n = sizes[i];
      unsigned char *p;
      /* A dirty block of the same size first, freed, so the next one may reuse its memory. */
      p = (unsigned char *)fastmm_getmem(n ? n : 1);
      if (CHECK(p != NULL)) {
        memset(p, 0xA5, n ? n : 1);
        CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
      }
      p = (unsigned char *)(via ? mm.alloc_mem((intptr_t)n) : fastmm_allocmem(n));
      if (!CHECK_MSG(p != NULL, "%s: %s(%zu) = NULL", mode, via ? "Delphi AllocMem" : "allocmem",
                     n))
        continue;
      CHECK_MSG(tu_all_zero(p, n), "%s: %s(%zu) is not zeroed: a %s block starting 0x%02x", mode,
                via ? "Delphi AllocMem" : "allocmem", n, tb_kind_name(tb_kind(p)), n ? p[0] : 0u);
      CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
    }
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

int main(void) {
  tb_start_quiet("test_allocmem_modes");
  allocmem_zeroed("no mode");
  fastmm_begin_erase_allocated_block_content();
  allocmem_zeroed("erase-allocated mode");
  fastmm_end_erase_allocated_block_content();
  fastmm_begin_erase_freed_block_content();
  allocmem_zeroed("erase-freed mode");
  fastmm_end_erase_freed_block_content();
  fastmm_enter_debug_mode();
  allocmem_zeroed("debug mode");
  fastmm_exit_debug_mode();
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_allocmem_modes");
}
