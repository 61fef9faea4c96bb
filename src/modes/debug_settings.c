/* SPDX-License-Identifier: MIT */
/* Debug mode's settings and the variables a program binds (debug_settings.h). A binding is
 * copied into one of two slots and published with one pointer store, so a thread reading the
 * variables meanwhile sees the old binding or the new one, whole. */
#include "debug_settings.h"

#include <string.h>

#include "core/atomics.h"
#include "core/lock.h"

static uint32_t options = DEBUG_OPTIONS_DEFAULT;
static uint32_t stack_depth = DEBUG_STACK_DEPTH_DEFAULT;

/* The manager's own variables, used where nothing is bound. */
static uint32_t own_last_allocation_number;

static fmm_lock bind_lock;
static fastmm_pascal_variables slots[2];
static unsigned next_slot;
static const fastmm_pascal_variables *bound; /* NULL: nothing bound */

void debug_set_options(uint32_t o) {
  fmm_store_u32_relaxed(&options, o & DEBUG_OPTIONS_KNOWN);
}

uint32_t debug_options(void) {
  return fmm_load_u32_relaxed(&options);
}

void debug_set_stack_depth(size_t count) {
  fmm_store_u32_relaxed(&stack_depth,
                        count > DEBUG_STACK_DEPTH_MAX ? DEBUG_STACK_DEPTH_MAX : (uint32_t)count);
}

unsigned debug_stack_depth(void) {
  return fmm_load_u32_relaxed(&stack_depth);
}

static const fastmm_pascal_variables *current_binding(void) {
  return (const fastmm_pascal_variables *)fmm_load_ptr_acquire((void **)&bound);
}

void debug_bind_variables(const fastmm_pascal_variables *vars) {
  lock_acquire(&bind_lock);
  /* Numbers go on from the variable that counted last. */
  const fastmm_pascal_variables *was = current_binding();
  if (was != NULL && was->last_allocation_number != NULL)
    fmm_store_u32_relaxed(&own_last_allocation_number, *was->last_allocation_number);
  const fastmm_pascal_variables *now = NULL;
  if (vars != NULL) {
    fastmm_pascal_variables *slot = &slots[next_slot];
    next_slot ^= 1u;
    memset(slot, 0, sizeof *slot);
    size_t n = vars->size < sizeof *slot ? vars->size : sizeof *slot;
    memcpy(slot, vars, n);
    slot->size = (uint32_t)n;
    now = slot;
  }
  fmm_store_ptr_release((void **)&bound, (void *)(uintptr_t)now);
  lock_release(&bind_lock);
}

uint32_t debug_allocation_group(void) {
  const fastmm_pascal_variables *b = current_binding();
  return b != NULL && b->current_allocation_group != NULL ? *b->current_allocation_group : 0;
}

uint32_t debug_next_allocation_number(void) {
  const fastmm_pascal_variables *b = current_binding();
  if (b != NULL && b->last_allocation_number != NULL)
    return fmm_inc_u32(b->last_allocation_number);
  return fmm_inc_u32(&own_last_allocation_number);
}

int debug_break_wanted(uint32_t number) {
  const fastmm_pascal_variables *b = current_binding();
  uint32_t wanted =
      b != NULL && b->debug_break_allocation_number != NULL ? *b->debug_break_allocation_number : 0;
  return wanted != 0 && wanted == number;
}

int debug_scan_variable_set(void) {
  const fastmm_pascal_variables *b = current_binding();
  return b != NULL && b->scan_before_every_operation != NULL &&
         *b->scan_before_every_operation != 0;
}

#if defined(DEBUG_PASCAL_CALLS)
/* The routine a bound variable holds, unless it is the no-op one. */
static void *bound_routine(void *const volatile *variable, void *noop) {
  if (variable == NULL)
    return NULL;
  void *routine = *variable;
  return routine != NULL && routine != noop ? routine : NULL;
}

debug_get_stack_trace_fn debug_bound_get_stack_trace(void) {
  const fastmm_pascal_variables *b = current_binding();
  return b != NULL ? (debug_get_stack_trace_fn)(uintptr_t)bound_routine(b->get_stack_trace,
                                                                        b->noop_get_stack_trace)
                   : NULL;
}

debug_convert_stack_trace_fn debug_bound_convert_stack_trace(void) {
  const fastmm_pascal_variables *b = current_binding();
  return b != NULL ? (debug_convert_stack_trace_fn)(uintptr_t)bound_routine(
                         b->convert_stack_trace_to_text, b->noop_convert_stack_trace_to_text)
                   : NULL;
}
#endif
