/* SPDX-License-Identifier: MIT */
/* Debug mode's settings (debug_settings.c): FastMM5's debug mode options, the stack trace depth,
 * and FastMM5's variables that debug mode reads and updates, the manager's own until a program
 * binds its (fastmm_bind_variables: FastMM_CurrentAllocationGroup, FastMM_LastAllocationNumber,
 * FastMM_DebugBreakAllocationNumber, FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation,
 * FastMM_GetStackTrace, FastMM_ConvertStackTraceToText). Each is read when it is used, as FastMM5
 * reads its variables. */
#ifndef FASTMM_DEBUG_SETTINGS_H
#define FASTMM_DEBUG_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "fastmm.h"

#define DEBUG_STACK_DEPTH_DEFAULT 20u
#define DEBUG_STACK_DEPTH_MAX 64u /* FastMM5's CFastMM_StackTrace_MaximumEntryCount */
#define DEBUG_OPTIONS_DEFAULT                                                                      \
  (FASTMM_DMO_NEVER_FREE_SMALL_BLOCK_SPANS | FASTMM_DMO_NEVER_MERGE_FREE_MEDIUM_BLOCKS)
#define DEBUG_OPTIONS_KNOWN                                                                        \
  (DEBUG_OPTIONS_DEFAULT | FASTMM_DMO_NO_BLOCK_FILL_PATTERNS | FASTMM_DMO_NO_BLOCK_CHECKSUMS)

/* FASTMM_DMO_* bits; unknown bits are dropped. */
void debug_set_options(uint32_t options);
uint32_t debug_options(void);

/* The trace depth of new blocks, at most DEBUG_STACK_DEPTH_MAX. */
void debug_set_stack_depth(size_t count);
unsigned debug_stack_depth(void);

/* The program's variables from now on (NULL: the manager's own). */
void debug_bind_variables(const fastmm_pascal_variables *vars);

uint32_t debug_allocation_group(void);
/* The next allocation number (the bound variable incremented atomically, wrapping at 2^32). */
uint32_t debug_next_allocation_number(void);
/* Should the block numbered `number` break into the debugger? */
int debug_break_wanted(uint32_t number);
/* Does the bound FastMM_DebugMode_ScanForCorruptionBeforeEveryOperation ask for a scan? (The
 * manager's own switch is a mode bit: gate.h.) */
int debug_scan_variable_set(void);

/* The program's stack trace routines, when bound and not FastMM5's no-op ones; NULL otherwise
 * (and always in a build that cannot call Delphi's convention: MSVC for Win32). Their types are
 * FastMM5's TFastMM_GetStackTrace and TFastMM_ConvertStackTraceToText, with Delphi's default
 * convention: register on Win32 (the fourth argument on the stack, popped by the callee). */
#if defined(_WIN32) && !defined(_WIN64)
#if defined(__GNUC__)
#define DEBUG_PASCAL_CALLS 1
#define DEBUG_PASCAL_CALL __attribute__((regparm(3)))
#define DEBUG_PASCAL_CALL_4 __attribute__((regparm(3), stdcall))
#endif
#else
#define DEBUG_PASCAL_CALLS 1
#define DEBUG_PASCAL_CALL
#define DEBUG_PASCAL_CALL_4
#endif
#if defined(DEBUG_PASCAL_CALLS)
typedef void(DEBUG_PASCAL_CALL *debug_get_stack_trace_fn)(void **frames, uint32_t max_depth,
                                                          uint32_t skip_frames);
typedef uint16_t *(DEBUG_PASCAL_CALL_4 *debug_convert_stack_trace_fn)(void **frames,
                                                                      uint32_t max_depth,
                                                                      uint16_t *buffer,
                                                                      uint16_t *buffer_end);
debug_get_stack_trace_fn debug_bound_get_stack_trace(void);
debug_convert_stack_trace_fn debug_bound_convert_stack_trace(void);
#endif

#endif
