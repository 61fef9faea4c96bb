/* SPDX-License-Identifier: MIT */
/* The run-time switches of the modes (switches.c): nesting counters, as FastMM5 has them. */
#ifndef FASTMM_SWITCHES_H
#define FASTMM_SWITCHES_H

/* Each Enter/Begin adds one to its counter, each Exit/End takes one away; the mode is on while
 * its counter is above zero. Leaving debug mode frees the quarantined blocks. */
void mode_debug_enter(void);
void mode_debug_exit(void);
void mode_erase_freed_begin(void);
void mode_erase_freed_end(void);
void mode_erase_allocated_begin(void);
void mode_erase_allocated_end(void);
void mode_set_scan_every_operation(int on);

/* The modes' start-up, run once by the heap's (entry/startup.c lends it to the core):
 * FASTMMC_DEBUG_MODE, FASTMMC_STACK_DEPTH, the leak report at exit. */
void modes_init(void);

#endif
