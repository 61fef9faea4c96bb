/* The exports of debug mode and the erase modes: switches, settings, the scan, the event log
 * and the leak report (the work is in src/modes/). */
#include "modes/debug_block.h"
#include "modes/debug_report.h"
#include "modes/gate.h"
#include "modes/switches.h"

int FASTMM_CDECL fastmm_enter_debug_mode(void) {
  mode_debug_enter();
  return 1;
}

int FASTMM_CDECL fastmm_exit_debug_mode(void) {
  mode_debug_exit();
  return 1;
}

int FASTMM_CDECL fastmm_debug_mode_active(void) {
  return (heap_mode_now() & HEAP_MODE_DEBUG) != 0;
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
  return (heap_mode_now() & HEAP_MODE_ERASE_FREED) != 0;
}

void FASTMM_CDECL fastmm_begin_erase_allocated_block_content(void) {
  mode_erase_allocated_begin();
}

void FASTMM_CDECL fastmm_end_erase_allocated_block_content(void) {
  mode_erase_allocated_end();
}

int FASTMM_CDECL fastmm_erase_allocated_block_content_active(void) {
  return (heap_mode_now() & HEAP_MODE_ERASE_ALLOCATED) != 0;
}

void FASTMM_CDECL fastmm_set_event_log_filename(const char *path) {
  debug_set_event_log_path(path);
}

const char *FASTMM_CDECL fastmm_get_event_log_filename(void) {
  return debug_event_log_path();
}

void FASTMM_CDECL fastmm_set_output_debug_string_events(int on) {
  debug_set_output_debug_string(on);
}

size_t FASTMM_CDECL fastmm_report_leaks(void) {
  return debug_report_leaks();
}

void FASTMM_CDECL fastmm_set_freed_object_call_handler(void (*handler)(void)) {
  debug_set_freed_object_handler(handler);
}

size_t FASTMM_CDECL fastmm_get_debug_event_count(int kind) {
  return debug_event_count(kind);
}

void FASTMM_CDECL fastmm_get_last_debug_event(fastmm_debug_event *event) {
  debug_last_event(event);
}
