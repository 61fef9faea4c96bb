/* SPDX-License-Identifier: MIT */
/* Debug mode's reports: every detected error and the leak report at shutdown, written to the
 * event log next to the program (<program>_MemoryManager_EventLog.txt, the name Delphi users
 * know from FastMM) and, when asked, to OutputDebugString; or handed to the program's event
 * handler, which FastMMC.pas uses to write them with FastMM5's templates. Text is built here by
 * hand in a buffer mapped for the report: the manager must not call an allocator (or a CRT that
 * might) while it reports on itself, and a report may run on a thread with a small stack. No
 * lock is held while a report calls the program (its handler, its stack trace routines). */
#include "debug_report.h"

#include <string.h>

#include "core/atomics.h"
#include "core/expected_leaks.h"
#include "core/heap.h"
#include "core/lock.h"
#include "debug_registry.h"
#include "prim/prim.h"
#include "stack_trace.h"

volatile uint32_t debug_ever_active;

static fmm_lock count_lock; /* the counts and the last event */
static fmm_lock file_lock;  /* the log's path, and appends to it */
static size_t event_counts[FASTMM_EVENT_KIND_COUNT];
static fastmm_debug_event last_event;
static char log_path[1024];
static int output_debug_string;
static fastmm_event_handler event_handler;
static uint32_t leak_report_at_exit = 1;

/* ---- a small text builder ---------------------------------------------------------------- */
#define TEXT_BYTES ((size_t)64 * 1024)
typedef struct text {
  char *buf; /* TEXT_BYTES, mapped by text_open */
  size_t n;
} text;

static int text_open(text *t) {
  t->buf = (char *)prim_map(TEXT_BYTES, 0);
  t->n = 0;
  if (t->buf != NULL)
    t->buf[0] = 0;
  return t->buf != NULL;
}

static void text_close(text *t) {
  if (t->buf != NULL)
    prim_unmap(t->buf, TEXT_BYTES);
  t->buf = NULL;
}

static void put(text *t, const char *s) {
  while (*s && t->n + 1 < TEXT_BYTES)
    t->buf[t->n++] = *s++;
  t->buf[t->n] = 0;
}

static void put_hex(text *t, uintptr_t v, int digits) {
  char tmp[2 * sizeof(uintptr_t) + 1];
  int n = 0;
  do {
    tmp[n++] = "0123456789ABCDEF"[v & 15u];
    v >>= 4;
  } while ((v || n < digits) && n < (int)sizeof tmp - 1);
  while (n > 0 && t->n + 1 < TEXT_BYTES)
    t->buf[t->n++] = tmp[--n];
  t->buf[t->n] = 0;
}

static void put_dec(text *t, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  while (n > 0 && t->n + 1 < TEXT_BYTES)
    t->buf[t->n++] = tmp[--n];
  t->buf[t->n] = 0;
}

static void put_stack(text *t, const char *title, void *const *frames, size_t count) {
  put(t, title);
  put(t, count ? ":\r\n" : ": (none captured)\r\n");
  if (count > FASTMM_DEBUG_EVENT_FRAMES)
    count = FASTMM_DEBUG_EVENT_FRAMES;
  t->n += stack_trace_text(frames, (unsigned)count, t->buf + t->n, TEXT_BYTES - t->n);
  if (t->n > 0 && t->buf[t->n - 1] != '\n')
    put(t, "\r\n");
}

static void put_hex_dump(text *t, const void *p, size_t size) {
  const unsigned char *b = (const unsigned char *)p;
  if (size > 64)
    size = 64;
  for (size_t row = 0; row < size; row += 16) {
    put(t, "  ");
    put_hex(t, row, 4);
    put(t, ": ");
    for (size_t i = row; i < row + 16; i++) {
      if (i < size)
        put_hex(t, b[i], 2);
      else
        put(t, "  ");
      put(t, " ");
    }
    put(t, " ");
    for (size_t i = row; i < row + 16 && i < size; i++) {
      char c[2] = {(char)(b[i] >= 32 && b[i] < 127 ? b[i] : '.'), 0};
      put(t, c);
    }
    put(t, "\r\n");
  }
}

/* ---- where the log goes ------------------------------------------------------------------- */

static const char *event_log_path(void) {
  if (log_path[0] == 0) {
    char program[900];
    size_t n = prim_program_path(program, sizeof program - 32);
    if (n == 0)
      memcpy(program, "fastmm-c", (n = 8));
    program[n] = 0;
    /* Drop the extension of the file name (not of a folder). */
    size_t dot = n;
    for (size_t i = n; i-- > 0 && program[i] != '/' && program[i] != '\\';)
      if (program[i] == '.') {
        dot = i;
        break;
      }
    static const char suffix[] = "_MemoryManager_EventLog.txt";
    memcpy(program + dot, suffix, sizeof suffix); /* dot < 900 - sizeof suffix: it fits */
    memcpy(log_path, program, dot + sizeof suffix);
  }
  return log_path;
}

static void emit(text *t) {
  lock_acquire(&file_lock);
  prim_append_file(event_log_path(), t->buf, t->n);
  lock_release(&file_lock);
  if (output_debug_string)
    prim_debug_output(t->buf);
}

static void put_banner(text *t) {
  char when[32];
  prim_local_time(when, sizeof when);
  put(t, "--------------------------------");
  put(t, when);
  put(t, "--------------------------------\r\n");
}

/* ---- Delphi and Free Pascal class names --------------------------------------------------- */

static int short_string_name(const unsigned char *s, char *out, size_t size) {
  if (!prim_readable(s, 1) || s[0] == 0 || s[0] > 63 || !prim_readable(s, (size_t)s[0] + 1))
    return 0;
  for (unsigned i = 1; i <= s[0]; i++) {
    unsigned char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '<' || c == '>' || c == ','))
      return 0;
  }
  size_t n = s[0] < size - 1 ? s[0] : size - 1;
  memcpy(out, s + 1, n);
  out[n] = 0;
  return 1;
}

/* If the block's first pointer is a class's VMT, its name. Everything is read only after the
 * OS says it can be: the block may hold anything. */
static int class_name_of(const void *vmt, size_t user_size, char *out, size_t size) {
  const size_t ptr = sizeof(void *);
  if (vmt == NULL || ((uintptr_t)vmt & (ptr - 1)) != 0)
    return 0;
  const char *v = (const char *)vmt;
  /* Delphi 2009 and later: vmtSelfPtr = -22, vmtClassName = -14, vmtInstanceSize = -13
   * pointers before the VMT, on Win32 and Win64 alike. */
  if ((uintptr_t)v > 22 * ptr && prim_readable(v - 22 * ptr, 22 * ptr)) {
    const void *self, *name;
    intptr_t instance_size;
    memcpy(&self, v - 22 * ptr, ptr);
    memcpy(&name, v - 14 * ptr, ptr);
    memcpy(&instance_size, v - 13 * ptr, ptr);
    if (self == vmt && instance_size > 0 && (size_t)instance_size <= user_size &&
        short_string_name((const unsigned char *)name, out, size))
      return 1;
  }
  /* Free Pascal: InstanceSize, -InstanceSize, parent, class name at the VMT's start. */
  if (prim_readable(v, 4 * ptr)) {
    intptr_t instance_size, negative;
    const void *name;
    memcpy(&instance_size, v, ptr);
    memcpy(&negative, v + ptr, ptr);
    memcpy(&name, v + 3 * ptr, ptr);
    if (instance_size > 0 && instance_size + negative == 0 && (size_t)instance_size <= user_size &&
        short_string_name((const unsigned char *)name, out, size))
      return 1;
  }
  return 0;
}

/* ---- events ------------------------------------------------------------------------------ */

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

static int event_freed(const fastmm_debug_event *e) {
  return e->debug_header != NULL && e->header.debug_block_flags == FASTMM_DEBUG_BLOCK_FREED;
}

static void put_block(text *t, const fastmm_debug_event *e) {
  const fastmm_debug_block_header *h = e->debug_header;
  put(t, "Block: 0x");
  put_hex(t, (uintptr_t)e->block, 0);
  if (h != NULL) {
    int freed = event_freed(e);
    put(t, ", ");
    put_dec(t, e->user_size);
    put(t, " bytes, allocation number ");
    put_dec(t, h->allocation_number);
    if (h->allocation_group != 0) {
      put(t, ", group ");
      put_dec(t, h->allocation_group);
    }
    put(t, ", allocated by thread 0x");
    put_hex(t, h->allocated_by_thread, 0);
    if (freed) {
      put(t, ", freed by thread 0x");
      put_hex(t, h->freed_by_thread, 0);
    }
    char name[72];
    const void *first = freed ? h->previously_used_by_class : NULL;
    if (!freed && e->user_size >= sizeof(void *) && page_map_get(e->block) != REGION_NOT_OURS)
      memcpy(&first, e->block, sizeof first);
    if (first && class_name_of(first, e->user_size, name, sizeof name)) {
      put(t, freed ? ", last used by class " : ", class ");
      put(t, name);
    }
  }
  put(t, "\r\n");
}

static void write_event(const fastmm_debug_event *e) {
  text t;
  if (!text_open(&t))
    return;
  put_banner(&t);
  put(&t, "FastMM-C detected an error: ");
  put(&t, event_titles[e->kind]);
  put(&t, ".\r\n");
  if (e->kind == FASTMM_EVENT_FREED_OBJECT_CALL) {
    put(&t, "Virtual method slot ");
    if (e->virtual_method_index < 0) {
      put(&t, "-");
      put_dec(&t, (uint64_t)(-(int64_t)e->virtual_method_index));
    } else {
      put_dec(&t, (uint64_t)e->virtual_method_index);
    }
    put(&t, " of the freed object's VMT.\r\n");
  }
  if (e->block != NULL)
    put_block(&t, e);
  if (e->modified_range_count > 0) {
    put(&t, "Bytes changed after the free, at offsets (lengths): ");
    for (size_t i = 0; i < e->modified_range_count; i++) {
      if (i)
        put(&t, ", ");
      put_dec(&t, e->modified_ranges[i].offset);
      put(&t, "(");
      put_dec(&t, e->modified_ranges[i].length);
      put(&t, ")");
    }
    put(&t, "\r\n");
  }
  if (e->debug_header != NULL) {
    put_stack(&t, "Stack trace of the allocation (module+offset)", e->alloc_frames,
              e->alloc_frame_count);
    if (event_freed(e))
      put_stack(&t, "Stack trace of the free", e->free_frames, e->free_frame_count);
  }
  put_stack(&t,
            e->kind == FASTMM_EVENT_FREED_OBJECT_CALL ? "Stack trace of the call"
                                                      : "Stack trace where it was detected",
            e->call_frames, e->call_frame_count);
  if (e->block != NULL && page_map_get(e->block) != REGION_NOT_OURS) {
    put(&t, "The block starts with:\r\n");
    size_t shown = 64;
    if (e->debug_header != NULL && e->user_size + DEBUG_FOOTER_CHECKSUM_SIZE < shown)
      shown = e->user_size + DEBUG_FOOTER_CHECKSUM_SIZE;
    put_hex_dump(&t, e->block, shown);
  }
  put(&t, "\r\n");
  emit(&t);
  text_close(&t);
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
  else
    write_event(e);
}

void debug_report_event(fastmm_event_kind kind, const void *user, const debug_header *h,
                        const void *caller) {
  fastmm_debug_event e;
  debug_event_init(&e, kind, user, h);
  debug_report(&e, caller);
}

/* ---- the leak report --------------------------------------------------------------------- */

typedef struct leak_group {
  char name[72]; /* class name, or empty for "by size" */
  size_t size;
  size_t count;
} leak_group;

typedef struct leak_scan {
  leak_group groups[256];
  size_t group_count;
  size_t leaks;
  size_t expected;
  text details;
  size_t detailed;
} leak_scan;

static void group_leak(leak_scan *s, const fastmm_debug_event *e) {
  char name[72] = {0};
  const void *first = NULL;
  if (e->user_size >= sizeof(void *))
    memcpy(&first, e->block, sizeof first);
  if (!class_name_of(first, e->user_size, name, sizeof name))
    name[0] = 0;
  size_t i;
  for (i = 0; i < s->group_count; i++)
    if (strcmp(s->groups[i].name, name) == 0 && (name[0] || s->groups[i].size == e->user_size))
      break;
  if (i == s->group_count && s->group_count < 256) {
    memcpy(s->groups[i].name, name, sizeof name);
    s->groups[i].size = e->user_size;
    s->groups[i].count = 0;
    s->group_count++;
  }
  if (i < s->group_count)
    s->groups[i].count++;
}

static void detail_leak(leak_scan *s, const fastmm_debug_event *e) {
  if (s->detailed >= 32 || s->details.buf == NULL)
    return;
  s->detailed++;
  if (e->debug_header == NULL) {
    put(&s->details, "Block with a damaged header (its size and traces are unknown): ");
    put_block(&s->details, e);
    put(&s->details, "\r\n");
    return;
  }
  put_block(&s->details, e);
  put_stack(&s->details, "Stack trace of the allocation (module+offset)", e->alloc_frames,
            e->alloc_frame_count);
  put(&s->details, "The block starts with:\r\n");
  put_hex_dump(&s->details, e->block, e->user_size);
  put(&s->details, "\r\n");
}

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

size_t debug_report_leaks(void) {
  static fmm_lock leak_lock; /* one leak report at a time */
  static leak_scan scan;
  heap_ensure_initialized();
  lock_acquire(&leak_lock);
  memset(&scan, 0, sizeof scan);
  lock_acquire(&count_lock);
  fastmm_event_handler handler = event_handler;
  lock_release(&count_lock);
  if (handler == NULL)
    text_open(&scan.details);
  debug_snapshot snap;
  debug_registry_lock();
  debug_registry_snapshot(&snap);
  debug_registry_unlock();
  for (size_t i = 0; i < snap.count; i++) {
    fastmm_debug_event e;
    if (debug_entry_state_of(snap.entries[i]) != DEBUG_ENTRY_LIVE ||
        !leak_event(debug_entry_header(snap.entries[i]), &e))
      continue;
    if (e.debug_header != NULL && expected_leaks_contains(e.block)) {
      scan.expected++;
      continue;
    }
    scan.leaks++;
    if (handler != NULL) {
      debug_report(&e, NULL); /* one event per leaked block: the program writes it */
      continue;
    }
    lock_acquire(&count_lock);
    event_counts[FASTMM_EVENT_LEAK]++;
    lock_release(&count_lock);
    if (e.debug_header != NULL)
      group_leak(&scan, &e);
    detail_leak(&scan, &e);
  }
  debug_registry_snapshot_free(&snap);
  if (scan.leaks > 0 && handler == NULL) {
    text head;
    if (text_open(&head)) {
      put_banner(&head);
      put(&head, "FastMM-C memory leak report: ");
      put_dec(&head, scan.leaks);
      put(&head, " unexpected leak(s) of debug blocks (");
      put_dec(&head, scan.expected);
      put(&head, " registered as expected, left out).\r\nLeaked blocks by class or size:\r\n");
      for (size_t i = 0; i < scan.group_count; i++) {
        put(&head, "  ");
        put_dec(&head, scan.groups[i].count);
        put(&head, " x ");
        if (scan.groups[i].name[0]) {
          put(&head, scan.groups[i].name);
        } else {
          put_dec(&head, scan.groups[i].size);
          put(&head, " bytes");
        }
        put(&head, "\r\n");
      }
      put(&head, "The first of them in detail:\r\n");
      emit(&head);
      text_close(&head);
    }
    if (scan.details.buf != NULL)
      emit(&scan.details);
  }
  text_close(&scan.details);
  size_t leaks = scan.leaks;
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

void debug_set_event_log_path(const char *path) {
  lock_acquire(&file_lock);
  size_t n = 0;
  if (path)
    while (path[n] && n + 1 < sizeof log_path) {
      log_path[n] = path[n];
      n++;
    }
  log_path[n] = 0; /* empty: back to the default name */
  lock_release(&file_lock);
}

const char *debug_event_log_path(void) {
  const char *p;
  lock_acquire(&file_lock);
  p = event_log_path();
  lock_release(&file_lock);
  return p;
}

void debug_set_output_debug_string(int on) {
  output_debug_string = on != 0;
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
