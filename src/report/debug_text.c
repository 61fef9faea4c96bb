/* SPDX-License-Identifier: MIT */
/* Debug mode's events and leak report as text in the event log. The modes decide what is an
 * error and what is a leak (modes/debug_report.c) and hand each one here; this file only says
 * it: one event a call, and for the leak report each unexpected leak (grouped by class or size,
 * the first 32 in detail) and then its end, when the summary is written before the details. */
#include "debug_text.h"

#include <string.h>

#include "core/page_map.h"
#include "event_log.h"
#include "modes/debug_block.h"
#include "modes/delphi_class.h"
#include "prim/prim.h"
#include "text.h"

static void emit(const text *t) {
  event_log_write(t->buf, t->n);
}

static void put_banner(text *t) {
  char when[32];
  prim_local_time(when, sizeof when);
  text_put(t, "--------------------------------");
  text_put(t, when);
  text_put(t, "--------------------------------\r\n");
}

static const char *const event_titles[FASTMM_EVENT_KIND_COUNT] = {
    "",
    "The block header was overwritten (a write before the start of the block, or a wild write)",
    "The footer after the block was overwritten (a write past the end of the block)",
    "A freed block was written to after it was freed",
    "A block was freed twice",
    "A freed block was passed to ReallocMem",
    "FreeMem or ReallocMem got a pointer that is not a block of this memory manager",
    "A block was leaked",
    "A virtual method was called on a freed object",
};

static void put_block(text *t, const fastmm_debug_event *e) {
  const fastmm_debug_block_header *h = e->debug_header;
  text_put(t, "Block: 0x");
  text_put_hex(t, (uintptr_t)e->block, 0);
  if (h != NULL) {
    int freed = debug_event_freed(e);
    text_put(t, ", ");
    text_put_dec(t, e->user_size);
    text_put(t, " bytes, allocation number ");
    text_put_dec(t, h->allocation_number);
    if (h->allocation_group != 0) {
      text_put(t, ", group ");
      text_put_dec(t, h->allocation_group);
    }
    text_put(t, ", allocated by thread 0x");
    text_put_hex(t, h->allocated_by_thread, 0);
    if (freed) {
      text_put(t, ", freed by thread 0x");
      text_put_hex(t, h->freed_by_thread, 0);
    }
    char name[DELPHI_CLASS_NAME_MAX];
    if (delphi_class_of_event(e, name, sizeof name)) {
      text_put(t, freed ? ", last used by class " : ", class ");
      text_put(t, name);
    }
  }
  text_put(t, "\r\n");
}

static void write_event(const fastmm_debug_event *e) {
  text t;
  if (!text_open(&t))
    return;
  put_banner(&t);
  text_put(&t, "FastMM-C detected an error: ");
  text_put(&t, event_titles[e->kind]);
  text_put(&t, ".\r\n");
  if (e->kind == FASTMM_EVENT_FREED_OBJECT_CALL) {
    text_put(&t, "Virtual method slot ");
    if (e->virtual_method_index < 0) {
      text_put(&t, "-");
      text_put_dec(&t, (uint64_t)(-(int64_t)e->virtual_method_index));
    } else {
      text_put_dec(&t, (uint64_t)e->virtual_method_index);
    }
    text_put(&t, " of the freed object's VMT.\r\n");
  }
  if (e->block != NULL)
    put_block(&t, e);
  if (e->modified_range_count > 0) {
    text_put(&t, "Bytes changed after the free, at offsets (lengths): ");
    for (size_t i = 0; i < e->modified_range_count; i++) {
      if (i)
        text_put(&t, ", ");
      text_put_dec(&t, e->modified_ranges[i].offset);
      text_put(&t, "(");
      text_put_dec(&t, e->modified_ranges[i].length);
      text_put(&t, ")");
    }
    text_put(&t, "\r\n");
  }
  if (e->debug_header != NULL) {
    text_put_stack(&t, "Stack trace of the allocation", e->alloc_frames, e->alloc_frame_count);
    if (debug_event_freed(e))
      text_put_stack(&t, "Stack trace of the free", e->free_frames, e->free_frame_count);
  }
  text_put_stack(&t,
                 e->kind == FASTMM_EVENT_FREED_OBJECT_CALL ? "Stack trace of the call"
                                                           : "Stack trace where it was detected",
                 e->call_frames, e->call_frame_count);
  if (e->block != NULL && page_map_get(e->block) != REGION_NOT_OURS) {
    text_put(&t, "The block starts with:\r\n");
    size_t shown = 64;
    if (e->debug_header != NULL && e->user_size + DEBUG_FOOTER_CHECKSUM_SIZE < shown)
      shown = e->user_size + DEBUG_FOOTER_CHECKSUM_SIZE;
    text_put_hex_dump(&t, e->block, shown);
  }
  text_put(&t, "\r\n");
  emit(&t);
  text_close(&t);
}

/* ---- the leak report: one report at a time (the modes hold their leak lock around it) ---- */

#define LEAK_GROUPS 256
#define LEAKS_DETAILED 32

typedef struct leak_group {
  char name[DELPHI_CLASS_NAME_MAX]; /* class name, or empty for "by size" */
  size_t size;
  size_t count;
} leak_group;

static struct {
  leak_group groups[LEAK_GROUPS];
  size_t group_count;
  int started;  /* a leak came since the report began */
  text details; /* opened at the report's first leak */
  size_t detailed;
} scan;

static void group_leak(const fastmm_debug_event *e) {
  char name[DELPHI_CLASS_NAME_MAX] = {0};
  if (!delphi_class_of_event(e, name, sizeof name))
    name[0] = 0;
  size_t i;
  for (i = 0; i < scan.group_count; i++)
    if (strcmp(scan.groups[i].name, name) == 0 && (name[0] || scan.groups[i].size == e->user_size))
      break;
  if (i == scan.group_count && scan.group_count < LEAK_GROUPS) {
    memcpy(scan.groups[i].name, name, sizeof name);
    scan.groups[i].size = e->user_size;
    scan.groups[i].count = 0;
    scan.group_count++;
  }
  if (i < scan.group_count)
    scan.groups[i].count++;
}

static void detail_leak(const fastmm_debug_event *e) {
  text *t = &scan.details;
  if (scan.detailed >= LEAKS_DETAILED || t->buf == NULL)
    return;
  scan.detailed++;
  if (e->debug_header == NULL) {
    text_put(t, "Block with a damaged header (its size and traces are unknown): ");
    put_block(t, e);
    text_put(t, "\r\n");
    return;
  }
  put_block(t, e);
  text_put_stack(t, "Stack trace of the allocation", e->alloc_frames, e->alloc_frame_count);
  text_put(t, "The block starts with:\r\n");
  text_put_hex_dump(t, e->block, e->user_size);
  text_put(t, "\r\n");
}

static void write_leak(const fastmm_debug_event *e) {
  if (!scan.started) {
    scan.started = 1;
    text_open(&scan.details);
  }
  if (e->debug_header != NULL)
    group_leak(e);
  detail_leak(e);
}

static void write_leaks_end(size_t leaks, size_t expected) {
  if (leaks > 0) {
    text head;
    if (text_open(&head)) {
      put_banner(&head);
      text_put(&head, "FastMM-C memory leak report: ");
      text_put_dec(&head, leaks);
      text_put(&head, " unexpected leak(s) of debug blocks (");
      text_put_dec(&head, expected);
      text_put(&head, " registered as expected, left out).\r\nLeaked blocks by class or size:\r\n");
      for (size_t i = 0; i < scan.group_count; i++) {
        text_put(&head, "  ");
        text_put_dec(&head, scan.groups[i].count);
        text_put(&head, " x ");
        if (scan.groups[i].name[0]) {
          text_put(&head, scan.groups[i].name);
        } else {
          text_put_dec(&head, scan.groups[i].size);
          text_put(&head, " bytes");
        }
        text_put(&head, "\r\n");
      }
      text_put(&head, "The first of them in detail:\r\n");
      emit(&head);
      text_close(&head);
    }
    if (scan.details.buf != NULL)
      emit(&scan.details);
  }
  text_close(&scan.details);
  memset(&scan, 0, sizeof scan);
}

const debug_writer debug_text_writer = {
    .event = write_event,
    .leak = write_leak,
    .leaks_end = write_leaks_end,
};
