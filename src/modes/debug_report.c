/* SPDX-License-Identifier: MIT */
/* Debug mode's reports, decided here and written above: every detected error, and the leak
 * report (which live debug blocks are leaks, which of them were registered as expected). Each
 * is counted, kept as the last event and handed to the program's event handler (FastMMC.pas
 * writes them with FastMM5's templates) or, when there is none, to the writer the start-up
 * registered (report/debug_text.c: the event log). No lock is held while a report calls the
 * program (its handler, its stack trace routines). */
#include "debug_report.h"

#include <string.h>

#include "core/atomics.h"
#include "core/expected_leaks.h"
#include "core/heap.h"
#include "core/lock.h"
#include "debug_registry.h"
#include "stack_trace.h"

volatile uint32_t debug_ever_active;

static fmm_lock count_lock; /* the counts, the last event and the handler */
static size_t event_counts[FASTMM_EVENT_KIND_COUNT];
static fastmm_debug_event last_event;
static fastmm_event_handler event_handler;
static const debug_writer *writer; /* set when the library loads */
static uint32_t leak_report_at_exit = 1;

/* ---- events ------------------------------------------------------------------------------ */

static unsigned trace_entries(void *const *frames, size_t n) {
  return stack_trace_count(frames, (unsigned)n);
}

void debug_event_init(fastmm_debug_event *e, fastmm_event_kind kind, const void *user,
                      const debug_header *h) {
  memset(e, 0, sizeof *e);
  e->kind = (int)kind;
  e->block = user;
  if (h == NULL)
    return;
  e->header = *h;
  e->debug_header = &e->header;
  e->user_size = h->user_size > 0 ? (size_t)h->user_size : 0;
  e->allocation_number = h->allocation_number;
  unsigned n = h->stack_trace_entry_count;
  if (n > FASTMM_DEBUG_EVENT_FRAMES)
    n = FASTMM_DEBUG_EVENT_FRAMES;
  const unsigned char *traces = debug_footer_of(h) + DEBUG_FOOTER_CHECKSUM_SIZE;
  memcpy(e->alloc_frames, traces, n * sizeof(void *));
  memcpy(e->free_frames, traces + (size_t)h->stack_trace_entry_count * sizeof(void *),
         n * sizeof(void *));
  e->alloc_frame_count = trace_entries(e->alloc_frames, n);
  e->free_frame_count = trace_entries(e->free_frames, n);
}

void debug_report(fastmm_debug_event *e, const void *caller) {
  if (e->kind <= FASTMM_EVENT_NONE || e->kind >= FASTMM_EVENT_KIND_COUNT)
    return;
  if (e->call_frame_count == 0)
    e->call_frame_count = stack_trace_capture(e->call_frames, FASTMM_DEBUG_EVENT_FRAMES, caller);
  lock_acquire(&count_lock);
  event_counts[e->kind]++;
  last_event = *e;
  fastmm_event_handler handler = event_handler;
  lock_release(&count_lock);
  if (handler != NULL)
    handler(e);
  else if (writer != NULL)
    writer->event(e);
}

void debug_report_event(fastmm_event_kind kind, const void *user, const debug_header *h,
                        const void *caller) {
  fastmm_debug_event e;
  debug_event_init(&e, kind, user, h);
  debug_report(&e, caller);
}

/* ---- the leak report --------------------------------------------------------------------- */

/* The live debug block at `header` as a leak event, if it still is one (registry lock taken
 * here): 1 and *e filled, or 0. A block whose header is damaged is a leak without details. */
static int leak_event(const void *header, fastmm_debug_event *e) {
  const debug_header *h = (const debug_header *)header;
  const void *user = h + 1;
  int live = 0;
  debug_registry_lock();
  if (debug_registry_state(h) == DEBUG_ENTRY_LIVE) {
    live = 1;
    debug_event_init(e, FASTMM_EVENT_LEAK, user, debug_header_intact(h) ? h : NULL);
  }
  debug_registry_unlock();
  return live;
}

/* A live leaked block's first pointer (its class, if it is an object), or NULL. */
static const void *first_pointer(const fastmm_debug_event *e) {
  const void *first = NULL;
  if (e->user_size >= sizeof(void *))
    memcpy(&first, e->block, sizeof first);
  return first;
}

size_t debug_report_leaks(void) {
  static fmm_lock leak_lock; /* one leak report at a time */
  heap_ensure_initialized();
  lock_acquire(&leak_lock);
  lock_acquire(&count_lock);
  fastmm_event_handler handler = event_handler;
  lock_release(&count_lock);
  const debug_writer *w = handler == NULL ? writer : NULL;
  size_t leaks = 0, expected = 0;
  expected_leaks_match_begin();
  debug_snapshot snap;
  debug_registry_lock();
  debug_registry_snapshot(&snap);
  debug_registry_unlock();
  for (size_t i = 0; i < snap.count; i++) {
    fastmm_debug_event e;
    if (debug_entry_state_of(snap.entries[i]) != DEBUG_ENTRY_LIVE ||
        !leak_event(debug_entry_header(snap.entries[i]), &e))
      continue;
    if (e.debug_header != NULL && expected_leaks_match(e.block, e.user_size, first_pointer(&e))) {
      expected++;
      continue;
    }
    leaks++;
    if (handler != NULL) {
      debug_report(&e, NULL); /* one event per leaked block: the program writes it */
      continue;
    }
    lock_acquire(&count_lock);
    event_counts[FASTMM_EVENT_LEAK]++;
    lock_release(&count_lock);
    if (w != NULL)
      w->leak(&e);
  }
  debug_registry_snapshot_free(&snap);
  if (w != NULL)
    w->leaks_end(leaks, expected);
  lock_release(&leak_lock);
  return leaks;
}

void debug_report_leaks_at_exit(void) {
  /* Other threads may have died holding a lock; report only if the locks are free. */
  if (debug_ever_active && fmm_load_u32_relaxed(&leak_report_at_exit) && lock_try(&count_lock)) {
    lock_release(&count_lock);
    debug_report_leaks();
  }
}

/* ---- settings and queries ---------------------------------------------------------------- */

void debug_report_set_writer(const debug_writer *w) {
  writer = w;
}

void debug_set_event_handler(fastmm_event_handler handler) {
  lock_acquire(&count_lock);
  event_handler = handler;
  lock_release(&count_lock);
}

void debug_set_leak_report_at_exit(int on) {
  fmm_store_u32_relaxed(&leak_report_at_exit, on != 0);
}

size_t debug_event_count(int kind) {
  return kind > FASTMM_EVENT_NONE && kind < FASTMM_EVENT_KIND_COUNT ? event_counts[kind] : 0;
}

void debug_last_event(fastmm_debug_event *event) {
  lock_acquire(&count_lock);
  *event = last_event;
  lock_release(&count_lock);
  if (event->debug_header != NULL)
    event->debug_header = &event->header;
}
