/* Debug mode's reports: every detected error and the leak report at shutdown, written to the
 * event log next to the program (<program>_MemoryManager_EventLog.txt, the name Delphi users
 * know from FastMM) and, when asked, to OutputDebugString. Text is built here by hand: the
 * manager must not call an allocator (or a CRT that might) while it reports on itself. */
#include "debug_report.h"

#include <string.h>

#include "core/expected_leaks.h"
#include "core/heap.h"
#include "core/lock.h"
#include "prim/prim.h"

volatile uint32_t debug_ever_active;

static fmm_lock report_lock;
static size_t event_counts[FASTMM_EVENT_KIND_COUNT];
static fastmm_debug_event last_event;
static char log_path[1024];
static int output_debug_string;

/* ---- a small text builder ---------------------------------------------------------------- */
typedef struct text {
  char buf[16384];
  size_t n;
} text;

static void put(text *t, const char *s) {
  while (*s && t->n + 1 < sizeof t->buf)
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
  while (n > 0 && t->n + 1 < sizeof t->buf)
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
  while (n > 0 && t->n + 1 < sizeof t->buf)
    t->buf[t->n++] = tmp[--n];
  t->buf[t->n] = 0;
}

static void put_address(text *t, const void *addr) {
  char where[512];
  prim_describe_address(addr, where, sizeof where);
  put(t, where);
}

static void put_stack(text *t, const char *title, void *const *frames, unsigned count) {
  put(t, title);
  put(t, count ? ":\r\n" : ": (none captured)\r\n");
  for (unsigned i = 0; i < count; i++) {
    put(t, "  ");
    put_address(t, frames[i]);
    put(t, "\r\n");
  }
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
    size_t n = prim_program_path(program, sizeof program - 1);
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
    program[dot] = 0;
    text t = {{0}, 0};
    put(&t, program);
    put(&t, "_MemoryManager_EventLog.txt");
    memcpy(log_path, t.buf, t.n + 1);
  }
  return log_path;
}

static void emit(text *t) {
  prim_append_file(event_log_path(), t->buf, t->n);
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
    "The guard after the block was overwritten (a write past the end of the block)",
    "A freed block was written to after it was freed",
    "A block was freed twice",
    "A freed block was passed to ReallocMem",
    "FreeMem or ReallocMem got a pointer that is not a block of this memory manager",
    "A block was leaked",
    "A virtual method was called on a freed object",
};

static void put_block(text *t, const void *user, const debug_header *h) {
  put(t, "Block: 0x");
  put_hex(t, (uintptr_t)user, 0);
  if (h != NULL) {
    put(t, ", ");
    put_dec(t, h->f.user_size);
    put(t, " bytes, allocation number ");
    put_dec(t, h->f.allocation_number);
    put(t, ", allocated by thread 0x");
    put_hex(t, h->f.allocated_by_thread, 0);
    if (h->flags & BLOCK_FLAG_FREE) {
      put(t, ", freed by thread 0x");
      put_hex(t, h->f.freed_by_thread, 0);
    }
    char name[72];
    const void *first = (h->flags & BLOCK_FLAG_FREE) ? h->f.freed_class : NULL;
    if (!(h->flags & BLOCK_FLAG_FREE) && h->f.user_size >= sizeof(void *))
      memcpy(&first, user, sizeof first);
    if (first && class_name_of(first, h->f.user_size, name, sizeof name)) {
      put(t, (h->flags & BLOCK_FLAG_FREE) ? ", last used by class " : ", class ");
      put(t, name);
    }
  }
  put(t, "\r\n");
}

static void record_last(fastmm_event_kind kind, const void *user, const debug_header *h) {
  fastmm_debug_event *e = &last_event;
  memset(e, 0, sizeof *e);
  e->kind = (int)kind;
  e->block = user;
  if (h != NULL) {
    e->user_size = h->f.user_size;
    e->allocation_number = h->f.allocation_number;
    debug_header *mh = (debug_header *)h;
    unsigned n = h->f.alloc_frames < FASTMM_DEBUG_EVENT_FRAMES ? h->f.alloc_frames
                                                               : FASTMM_DEBUG_EVENT_FRAMES;
    memcpy(e->alloc_frames, debug_alloc_stack(mh), n * sizeof(void *));
    e->alloc_frame_count = n;
    n = h->f.free_frames < FASTMM_DEBUG_EVENT_FRAMES ? h->f.free_frames : FASTMM_DEBUG_EVENT_FRAMES;
    memcpy(e->free_frames, debug_free_stack(mh), n * sizeof(void *));
    e->free_frame_count = n;
  }
}

void debug_report_event(fastmm_event_kind kind, const void *user, const debug_header *h,
                        const void *caller) {
  static text t; /* under report_lock: too big for some threads' stacks */
  if (kind <= FASTMM_EVENT_NONE || kind >= FASTMM_EVENT_KIND_COUNT)
    return;
  lock_acquire(&report_lock);
  event_counts[kind]++;
  record_last(kind, user, h);
  t.n = 0;
  t.buf[0] = 0;
  put_banner(&t);
  put(&t, "FastMM-C detected an error: ");
  put(&t, event_titles[kind]);
  put(&t, ".\r\n");
  if (user != NULL)
    put_block(&t, user, h);
  if (h != NULL) {
    put_stack(&t, "Stack trace of the allocation (module+offset)",
              (void *const *)debug_alloc_stack((debug_header *)h), h->f.alloc_frames);
    if (h->flags & BLOCK_FLAG_FREE)
      put_stack(&t, "Stack trace of the free", (void *const *)debug_free_stack((debug_header *)h),
                h->f.free_frames);
  }
  void *now[DEBUG_STACK_DEPTH_DEFAULT];
  unsigned n = debug_capture(now, DEBUG_STACK_DEPTH_DEFAULT, caller);
  put_stack(&t, "Stack trace where it was detected", now, n);
  if (user != NULL && page_map_get(user) != REGION_NOT_OURS) {
    put(&t, "The block starts with:\r\n");
    put_hex_dump(&t, user, h ? (h->f.user_size < 64 ? h->f.user_size + DEBUG_GUARD_SIZE : 64) : 64);
  }
  put(&t, "\r\n");
  emit(&t);
  lock_release(&report_lock);
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
  text *details;
  size_t detailed;
} leak_scan;

static void visit_leak(debug_header *h, void *context) {
  leak_scan *s = (leak_scan *)context;
  void *user = h + 1;
  if (!debug_checksum_ok(h)) { /* a damaged header: count it, trust none of its fields */
    s->leaks++;
    if (s->detailed < 32) {
      s->detailed++;
      put(s->details, "Block with a damaged header (its size and traces are unknown): ");
      put_block(s->details, user, NULL);
      put(s->details, "\r\n");
    }
    return;
  }
  if (expected_leaks_contains(user)) {
    s->expected++;
    return;
  }
  s->leaks++;
  char name[72] = {0};
  void *first = NULL;
  if (h->f.user_size >= sizeof(void *))
    memcpy(&first, user, sizeof first);
  if (!class_name_of(first, h->f.user_size, name, sizeof name))
    name[0] = 0;
  size_t i;
  for (i = 0; i < s->group_count; i++)
    if (strcmp(s->groups[i].name, name) == 0 && (name[0] || s->groups[i].size == h->f.user_size))
      break;
  if (i == s->group_count && s->group_count < 256) {
    memcpy(s->groups[i].name, name, sizeof name);
    s->groups[i].size = h->f.user_size;
    s->groups[i].count = 0;
    s->group_count++;
  }
  if (i < s->group_count)
    s->groups[i].count++;
  if (s->detailed < 32) {
    s->detailed++;
    put_block(s->details, user, h);
    put_stack(s->details, "Stack trace of the allocation (module+offset)",
              (void *const *)debug_alloc_stack(h), h->f.alloc_frames);
    put(s->details, "The block starts with:\r\n");
    put_hex_dump(s->details, user, h->f.user_size);
    put(s->details, "\r\n");
  }
}

size_t debug_report_leaks(void) {
  static leak_scan scan;
  static text details, head;
  heap_ensure_initialized();
  lock_acquire(&report_lock);
  memset(&scan, 0, sizeof scan);
  details.n = 0;
  details.buf[0] = 0;
  scan.details = &details;
  debug_for_each_live(visit_leak, &scan);
  if (scan.leaks > 0) {
    head.n = 0;
    head.buf[0] = 0;
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
    emit(&details);
    event_counts[FASTMM_EVENT_LEAK] += scan.leaks;
  }
  lock_release(&report_lock);
  return scan.leaks;
}

void debug_report_leaks_at_exit(void) {
  /* Other threads may have died holding a lock; report only if the locks are free. */
  if (debug_ever_active && lock_try(&report_lock)) {
    lock_release(&report_lock);
    debug_report_leaks();
  }
}

/* ---- settings and queries ---------------------------------------------------------------- */

void debug_set_event_log_path(const char *path) {
  lock_acquire(&report_lock);
  size_t n = 0;
  if (path)
    while (path[n] && n + 1 < sizeof log_path) {
      log_path[n] = path[n];
      n++;
    }
  log_path[n] = 0; /* empty: back to the default name */
  lock_release(&report_lock);
}

const char *debug_event_log_path(void) {
  const char *p;
  lock_acquire(&report_lock);
  p = event_log_path();
  lock_release(&report_lock);
  return p;
}

void debug_set_output_debug_string(int on) {
  output_debug_string = on != 0;
}

size_t debug_event_count(int kind) {
  return kind > FASTMM_EVENT_NONE && kind < FASTMM_EVENT_KIND_COUNT ? event_counts[kind] : 0;
}

void debug_last_event(fastmm_debug_event *event) {
  lock_acquire(&report_lock);
  *event = last_event;
  lock_release(&report_lock);
}
