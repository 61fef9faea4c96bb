/* SPDX-License-Identifier: MIT */
/* Stack traces of debug blocks: the program's routine when bound (debug_settings.h), else the
 * manager's own walk. Their text is the reports' (report/stack_text.c). */
#include "stack_trace.h"

#include <stdint.h>
#include <string.h>

#include "core/atomics.h"
#include "debug_settings.h"
#include "prim/prim.h"

/* This module's extent, looked up once at start-up (asking the OS for every frame made debug
 * mode several times slower); every thread reads it after heap_ensure_initialized. */
static uintptr_t own_begin, own_end;

void stack_trace_init(void) {
  if (own_end == 0)
    prim_module_range((const void *)(uintptr_t)stack_trace_capture, &own_begin, &own_end);
}

static uint32_t walk_prepared;

void stack_trace_prepare(void) {
  if (fmm_load_u32_acquire(&walk_prepared) != 0)
    return;
  void *frame[1];
  prim_capture_stack(frame, 1, 0);
  fmm_store_u32_release(&walk_prepared, 1u);
}

static int is_own(const void *a) {
  return (uintptr_t)a >= own_begin && (uintptr_t)a < own_end;
}

/* The walk asks for a few frames more than the depth: the ones inside this module are
 * dropped. */
#if PRIM_RAW_STACK_TRACE
/* A raw trace finds the manager's frames and stale values before the caller's: room for them. */
#define OWN_FRAMES_MAX 256u
#else
#define OWN_FRAMES_MAX 8u
#endif
#define RAW_MAX (DEBUG_STACK_DEPTH_MAX + OWN_FRAMES_MAX)
/* How far into the routine it called a return address of a raw trace may be taken to lie. */
#define RAW_CALLEE_SPAN 65536

unsigned stack_trace_capture(void **frames, unsigned depth, const void *caller) {
  void *raw[RAW_MAX];
  unsigned n = 0, want = depth + OWN_FRAMES_MAX;
  if (depth == 0)
    return 0;
  if (want > RAW_MAX)
    want = RAW_MAX;
#if defined(DEBUG_PASCAL_CALLS)
  debug_get_stack_trace_fn get = debug_bound_get_stack_trace();
  if (get != NULL) {
    /* The program's routine (FastMM5's FastMM_GetStackTrace, skip 0): its first frames are this
     * module's, left out here as FastMM5's skip count leaves out its own. */
    memset(raw, 0, sizeof raw);
    get(raw, want, 0);
    size_t i = 0;
    while (i < want && raw[i] != NULL && is_own(raw[i]))
      i++;
    for (; i < want && n < depth && raw[i] != NULL; i++)
      frames[n++] = raw[i];
    memset(frames + n, 0, (depth - n) * sizeof(void *));
    return n;
  }
#endif
  /* The caller's own return address first (exact even where frames are not chained), then what
   * the OS walk finds beyond this module. */
  if (caller != NULL)
    frames[n++] = (void *)caller;
  size_t got = prim_capture_stack(raw, want, 0);
  size_t first = 0;
#if PRIM_RAW_STACK_TRACE
  /* A raw trace holds stale values too: what lies before the caller's own return address (the
   * manager's frames and leftovers of its earlier calls) is left out, and the manager's
   * addresses anywhere. The caller's address may lie in stale slots as well (every GetMem
   * through the same RTL routine returns there), mostly in the manager's own deep frames below
   * the real one: the copy taken is the one whose next return address calls the routine the
   * caller is in, nearest before the caller (the last of equals), else the first copy. */
  if (caller != NULL) {
    size_t fallback = 0;
    uintptr_t best = RAW_CALLEE_SPAN;
    for (size_t i = 0; i < got; i++) {
      if (raw[i] != caller)
        continue;
      if (fallback == 0)
        fallback = i + 1;
      size_t next = i + 1;
      while (next < got && (is_own(raw[next]) || raw[next] == caller))
        next++;
      const char *target = next < got ? (const char *)prim_direct_call_target(raw[next]) : NULL;
      if (target != NULL && target <= (const char *)caller &&
          (uintptr_t)((const char *)caller - target) <= best) {
        best = (uintptr_t)((const char *)caller - target);
        first = i + 1;
      }
    }
    if (first == 0)
      first = fallback;
  }
#endif
  int skipping = 1;
  for (size_t i = first; i < got && n < depth; i++) {
    if ((skipping || PRIM_RAW_STACK_TRACE) &&
        (is_own(raw[i]) || raw[i] == caller || raw[i] == NULL))
      continue;
    skipping = 0;
    if (raw[i] == NULL)
      break;
    frames[n++] = raw[i];
  }
  memset(frames + n, 0, (depth - n) * sizeof(void *));
  return n;
}

unsigned stack_trace_count(void *const *frames, unsigned depth) {
  unsigned n = 0;
  while (n < depth && frames[n] != NULL)
    n++;
  return n;
}
