/* SPDX-License-Identifier: MIT */
/* The exports of debug mode and the erase modes: switches, settings, FastMM5's debug entry
 * points and variables, the scan, the event log and the leak report (the work is in
 * src/modes/). */
#include "core/compiler.h"
#include "core/contention.h"
#include "core/os_memory.h"
#include "fastmm_test.h"
#include "modes/debug_block.h"
#include "modes/debug_report.h"
#include "modes/debug_settings.h"
#include "modes/gate.h"
#include "modes/mode_paths.h"
#include "modes/switches.h"
#include "report/event_log.h"
#include "report/symbolize.h"

#include <string.h>

int FASTMM_CDECL fastmm_enter_debug_mode(void) {
  mode_debug_enter();
  return 1;
}

int FASTMM_CDECL fastmm_exit_debug_mode(void) {
  mode_debug_exit();
  return 1;
}

int FASTMM_CDECL fastmm_debug_mode_active(void) {
  return (mode_now() & MODE_DEBUG) != 0;
}

int FASTMM_CDECL fastmm_scan_debug_blocks_for_corruption(void) {
  return debug_scan_blocks();
}

void FASTMM_CDECL fastmm_set_scan_before_every_operation(int on) {
  mode_set_scan_every_operation(on);
}

void FASTMM_CDECL fastmm_set_debug_mode_stack_trace_entry_count(size_t count) {
  debug_set_stack_depth(count);
}

size_t FASTMM_CDECL fastmm_get_debug_mode_stack_trace_entry_count(void) {
  return debug_stack_depth();
}

void FASTMM_CDECL fastmm_begin_erase_freed_block_content(void) {
  mode_erase_freed_begin();
}

void FASTMM_CDECL fastmm_end_erase_freed_block_content(void) {
  mode_erase_freed_end();
}

int FASTMM_CDECL fastmm_erase_freed_block_content_active(void) {
  return (mode_now() & MODE_ERASE_FREED) != 0;
}

void FASTMM_CDECL fastmm_begin_erase_allocated_block_content(void) {
  mode_erase_allocated_begin();
}

void FASTMM_CDECL fastmm_end_erase_allocated_block_content(void) {
  mode_erase_allocated_end();
}

int FASTMM_CDECL fastmm_erase_allocated_block_content_active(void) {
  return (mode_now() & MODE_ERASE_ALLOCATED) != 0;
}

void FASTMM_CDECL fastmm_set_event_log_filename(const char *path) {
  event_log_set_path(path);
}

const char *FASTMM_CDECL fastmm_test_get_event_log_filename(void) {
  return event_log_path();
}

void FASTMM_CDECL fastmm_set_output_debug_string_events(int on) {
  event_log_set_output_debug_string(on);
}

size_t FASTMM_CDECL fastmm_report_leaks(void) {
  return debug_report_leaks();
}

size_t FASTMM_CDECL fastmm_describe_address(const void *addr, char *buffer, size_t size) {
  return buffer != NULL ? symbolize_frame(addr, buffer, size) : 0;
}

void FASTMM_CDECL fastmm_set_freed_object_call_handler(void (*handler)(void)) {
  debug_set_freed_object_handler(handler);
}

size_t FASTMM_CDECL fastmm_get_debug_event_count(int kind) {
  return debug_event_count(kind);
}

void FASTMM_CDECL fastmm_get_last_debug_event(fastmm_debug_event *event) {
  if (event == NULL)
    return; /* fastmm.h, "Output pointers" */
  debug_last_event(event);
}

void FASTMM_CDECL fastmm_set_event_handler(fastmm_event_handler handler) {
  debug_set_event_handler(handler);
}

void FASTMM_CDECL fastmm_set_leak_report_at_exit(int on) {
  debug_set_leak_report_at_exit(on);
}

void *FASTMM_CDECL fastmm_debug_getmem(intptr_t size) {
  return size >= 0 ? debug_entry_get((size_t)size, FMM_RETURN_ADDRESS(), 0) : NULL;
}

void *FASTMM_CDECL fastmm_debug_allocmem(intptr_t size) {
  return size >= 0 ? debug_entry_get((size_t)size, FMM_RETURN_ADDRESS(), 1) : NULL;
}

int32_t FASTMM_CDECL fastmm_debug_freemem(void *p) {
  return debug_entry_free(p, FMM_RETURN_ADDRESS());
}

void *FASTMM_CDECL fastmm_debug_reallocmem(void *p, intptr_t size) {
  return size >= 0 ? debug_entry_realloc(p, (size_t)size, FMM_RETURN_ADDRESS()) : NULL;
}

void FASTMM_CDECL fastmm_set_debug_mode_options(uint32_t options) {
  debug_set_options(options);
}

uint32_t FASTMM_CDECL fastmm_test_get_debug_mode_options(void) {
  return debug_options();
}

/* Each layer takes the variables it uses: the core its contention counters and the top-down
 * switch, the modes the rest. */
void FASTMM_CDECL fastmm_bind_variables(const fastmm_pascal_variables *vars) {
  fastmm_pascal_variables v;
  memset(&v, 0, sizeof v);
  if (vars != NULL)
    memcpy(&v, vars, vars->size < sizeof v ? vars->size : sizeof v);
  volatile uint32_t *const counters[CONTENTION_KIND_COUNT] = {
      v.small_block_thread_contention_count, v.medium_block_thread_contention_count,
      v.large_block_thread_contention_count};
  contention_bind(counters);
  os_bind_top_down(v.allocate_top_down);
  debug_bind_variables(vars != NULL ? &v : NULL);
}
