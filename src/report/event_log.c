/* SPDX-License-Identifier: MIT */
/* The event log's path and its appends: see event_log.h. */
#include "event_log.h"

#include <string.h>

#include "core/lock.h"
#include "prim/prim.h"

static fmm_lock file_lock; /* the log's path, and appends to it */
static char log_path[1024];
static int output_debug_string;

static const char *path_locked(void) {
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

void event_log_set_path(const char *path) {
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

const char *event_log_path(void) {
  const char *p;
  lock_acquire(&file_lock);
  p = path_locked();
  lock_release(&file_lock);
  return p;
}

void event_log_set_output_debug_string(int on) {
  output_debug_string = on != 0;
}

void event_log_write(const char *text, size_t n) {
  lock_acquire(&file_lock);
  prim_append_file(path_locked(), text, n);
  lock_release(&file_lock);
  if (output_debug_string)
    prim_debug_output(text);
}
