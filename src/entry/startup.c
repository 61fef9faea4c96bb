/* SPDX-License-Identifier: MIT */
/* The library's start-up, above the layers it starts. When the library loads it fills the page
 * map's fast copy and lends the core what the core needs from above (core/heap.h, heap_above):
 * the modes' start-up, which the heap's own start-up (heap_init_slow, on the first slow path)
 * runs once after the core's, and the routines a ReallocMem's move and the walk go through; and
 * it gives the modes the writer of debug mode's reports (report/debug_text.c), which they may
 * not call by name from below. */
#include "startup.h"
#include "alloc_fast.h"
#include "dispatch.h"
#include "modes/debug_walk.h"
#include "modes/switches.h"
#include "report/debug_text.h"

static const heap_above above = {
    .start = modes_init,
    .get_slow_resizing = entry_get_slow_resizing,
    .get_aligned_for = entry_get_aligned,
    .free_slow = entry_free_slow,
    .realloc_debug_block = entry_realloc_debug_block,
    .describe_debug_block = debug_walk_describe,
};

/* The fast paths of FreeMem, ReallocMem and the usable size read the page map's fast copy, which
 * must be filled before the first of them runs: a foreign pointer would otherwise be looked up
 * in a table that does not exist yet (tests/test_first_call.c). The loader runs this before the
 * start-up code of every module that imports the library (the one exception: modules that import
 * each other in a cycle). Nothing else is started here: the manager starts itself on its first
 * slow path (heap_init_slow). */
void entry_startup(void) {
  static int started;
  /* Before any thread of the library's can run: the loader, or a program's start before its
   * first allocation. */
  if (started)
    return;
  started = 1;
  heap_set_above(&above);
  debug_report_set_writer(&debug_text_writer);
  page_map_lock_writers();
  page_map_fast_start();
  page_map_unlock_writers();
}

FMM_ON_LOAD(entry_on_load) {
  entry_startup();
}
