/* SPDX-License-Identifier: MIT */
/* A child forked in debug mode takes its stack traces without a malloc call (glibc, not under a
 * sanitizer). Debug mode's traces use glibc's backtrace(), whose first call in a process loads
 * libgcc_s.so.1 with dlopen, and the loader allocates with malloc. A child that made that first
 * call would call malloc after a fork of a threaded process, where a malloc that keeps no lock
 * across the fork (AddressSanitizer's) may wait for ever on a lock that a thread of the parent
 * held: test_fork's child hung so under ASan. The manager makes the first call before: when
 * debug mode is switched on, and in its fork hook once debug mode was ever on
 * (modes/stack_trace.h).
 *
 * This program defines malloc, calloc, realloc and free (the process's, the loader's too: they
 * pass the calls on to glibc's) and counts their calls while debug blocks are made and freed.
 * Run twice: `switch` enters debug mode with fastmm_enter_debug_mode, then allocates in it and
 * counts (the switch made the first call); `env` is run with FASTMMC_DEBUG_MODE=1, so the heap
 * starts in debug mode (here by a call that allocates nothing) and the first trace is still to
 * come at the fork: only the fork hook makes the first call there. Each then forks; the child
 * allocates and frees debug blocks and exits with 4 when malloc was called. */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastmm.h"
#include "test_util.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

static volatile int counting;
static volatile unsigned calls;

static void note_call(void) {
  if (counting)
    calls++;
}

void *malloc(size_t size) {
  note_call();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note_call();
  return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
  note_call();
  return __libc_realloc(p, size);
}

void free(void *p) {
  note_call();
  __libc_free(p);
}

/* The child's work: debug blocks made, written, checked and freed; 0 when all went well and
 * nothing called malloc. */
static int child_work(void) {
  calls = 0; /* the parent's count is not the child's */
  counting = 1;
  unsigned char *p[16];
  for (unsigned i = 0; i < 16; i++) {
    size_t n = 16 + (size_t)i * 500;
    p[i] = fastmm_getmem(n);
    if (p[i] == NULL)
      return 1;
    tu_fill_pattern(p[i], n, i);
    if (tu_check_pattern(p[i], n, i) != SIZE_MAX)
      return 2;
  }
  for (unsigned i = 0; i < 16; i++)
    fastmm_freemem(p[i]);
  if (fastmm_check_heap() != 0)
    return 3;
  counting = 0;
  return calls == 0 ? 0 : 4;
}

int main(int argc, char **argv) {
  int by_env = argc > 1 && strcmp(argv[1], "env") == 0;
  if (!CHECK_MSG(argc > 1 && (by_env || strcmp(argv[1], "switch") == 0),
                 "usage: test_fork_unwinder switch|env"))
    return tu_finish("test_fork_unwinder");
  /* The heap started without an allocation (with FASTMMC_DEBUG_MODE=1 it starts in debug mode). */
  fastmm_release_free_memory();
  if (!by_env) {
    fastmm_enter_debug_mode();
    /* The first traces, in this thread: the switch made the first call, so none calls malloc. */
    counting = 1;
    void *first = fastmm_getmem(100);
    fastmm_freemem(first);
    counting = 0;
    CHECK(first != NULL);
    CHECK_EQ(calls, 0);
  }
  CHECK_EQ(fastmm_debug_mode_active(), 1);
  pid_t pid = fork();
  if (pid == 0)
    _exit(child_work());
  if (CHECK(pid > 0)) {
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child: %s %d (1: no memory, 2: data changed, 3: the heap check failed, 4: malloc "
              "called)",
              WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  }
  /* The parent's own debug blocks take traces as before. */
  void *q = fastmm_getmem(100);
  CHECK(q != NULL);
  fastmm_freemem(q);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_fork_unwinder");
}
