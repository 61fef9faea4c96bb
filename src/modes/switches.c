/* SPDX-License-Identifier: MIT */
/* The switches that turn debug mode and the erase modes on and off at run time, and the
 * modes' start-up (FASTMMC_DEBUG_MODE, FASTMMC_STACK_DEPTH, the leak report at exit). */
#include "switches.h"

#include "debug_registry.h"

#include <stdint.h>

#include "core/heap.h"
#include "core/lock.h"
#include "debug_block.h"
#include "debug_report.h"
#include "debug_settings.h"
#include "gate.h"
#include "prim/prim.h"
#include "stack_trace.h"

static fmm_lock switch_lock; /* the counters */
static int32_t debug_depth, erase_freed_depth, erase_allocated_depth;

/* Nesting counters follow the calls (FastMM5's contract): each Enter adds one, each Exit takes
 * one away, and the mode is on while the counter is above zero. An Exit with the counter at zero
 * changes nothing: a counter below zero would let one library's extra Exit swallow the program's
 * later Enter. (No debug event kind describes an unbalanced exit, so none is reported.) */
static int32_t adjust(int32_t *counter, int delta, uint32_t bit) {
  heap_ensure_initialized();
  lock_acquire(&switch_lock);
  if (delta > 0 || *counter > 0)
    *counter += delta;
  int32_t now = *counter;
  if (bit == MODE_DEBUG && now > 0)
    debug_ever_active = 1;
  mode_set_bit(bit, now > 0);
  lock_release(&switch_lock);
  return now;
}

void mode_debug_enter(void) {
  stack_trace_prepare(); /* before the mode is on, with no lock held (stack_trace.h) */
  adjust(&debug_depth, +1, MODE_DEBUG);
}

void mode_debug_exit(void) {
  if (adjust(&debug_depth, -1, MODE_DEBUG) <= 0)
    debug_flush_quarantine();
}

void mode_erase_freed_begin(void) {
  adjust(&erase_freed_depth, +1, MODE_ERASE_FREED);
}

void mode_erase_freed_end(void) {
  adjust(&erase_freed_depth, -1, MODE_ERASE_FREED);
}

void mode_erase_allocated_begin(void) {
  adjust(&erase_allocated_depth, +1, MODE_ERASE_ALLOCATED);
}

void mode_erase_allocated_end(void) {
  adjust(&erase_allocated_depth, -1, MODE_ERASE_ALLOCATED);
}

void mode_set_scan_every_operation(int on) {
  mode_set_bit(MODE_SCAN_EVERY_OPERATION, on != 0);
}

/* Before a fork: the trace's walk prepared first (stack_trace.h), while no lock of the manager's
 * is held (its first call may allocate, through the manager when it is the process's malloc),
 * then the registry's lock. */
static void before_fork(void) {
  if (debug_ever_active)
    stack_trace_prepare();
  debug_registry_lock();
}

/* FASTMMC_DEBUG_MODE=1 in the environment starts the program in debug mode, so a shipped
 * program can be debugged without a rebuild; FASTMMC_STACK_DEPTH sets the trace depth. */
void modes_init(void) {
  stack_trace_init();
  char value[32];
  if (prim_getenv("FASTMMC_STACK_DEPTH", value, sizeof value)) {
    size_t n = 0;
    for (const char *c = value; *c >= '0' && *c <= '9'; c++)
      n = n * 10 + (size_t)(*c - '0');
    debug_set_stack_depth(n);
  }
  if (prim_getenv("FASTMMC_DEBUG_MODE", value, sizeof value) && value[0] != '0') {
    debug_depth = 1;
    mode_set_bit(MODE_DEBUG, 1);
    debug_ever_active = 1;
  }
  prim_on_process_exit(debug_report_leaks_at_exit);
  /* Debug blocks' registry held across fork(), as the core's locks are (core/fork_locks.c). This
   * runs after the core registered its own, so its `before` runs first: the registry's lock is
   * taken before the core's (a thread holding it may wait for a core lock, when mapping memory
   * for the registry makes the manager give memory back; none waits for it holding one). */
  prim_on_fork(before_fork, debug_registry_unlock, debug_registry_unlock);
}
