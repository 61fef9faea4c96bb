/* SPDX-License-Identifier: MIT */
/* A NULL output pointer: every export of include/fastmm.h that writes its answer through a
 * pointer does nothing when that pointer is NULL (writes nothing, changes no state) and returns
 * 0 if it returns anything (fastmm.h, "Output pointers"). The exports with an output pointer:
 * fastmm_get_state, fastmm_get_small_class_usage, fastmm_get_last_debug_event,
 * fastmm_get_memory_manager, fastmm_get_memory_manager_debug,
 * fastmm_get_memory_manager_with_previous, fastmm_get_fpc_memory_manager. (fastmm_walk_blocks
 * takes a callback, not an output: NULL gives 1, checked here too.)
 *
 * Natively a crash in one case is caught (SIGSEGV, SIGBUS) and counted as a failed check, so
 * the code before the rule fails each case that crashes rather than stopping at the first. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* sigaction, sigsetjmp */
#endif
#include "test_util.h"

#include "fastmm.h"

#if !defined(_WIN32)
#include <setjmp.h>
#include <signal.h>

static sigjmp_buf crash_jump;

static void on_crash(int sig) {
  siglongjmp(crash_jump, sig);
}

static void catch_crashes(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}

/* Runs `call`; a crash inside it is a failed check named `what`. */
#define GUARDED(what, call)                                                                        \
  do {                                                                                             \
    int sig_ = sigsetjmp(crash_jump, 1);                                                           \
    if (sig_ == 0) {                                                                               \
      call;                                                                                        \
    } else {                                                                                       \
      CHECK_MSG(0, "%s crashed (signal %d)", what, sig_);                                          \
    }                                                                                              \
  } while (0)
#else
static void catch_crashes(void) {
}
#define GUARDED(what, call)                                                                        \
  do {                                                                                             \
    call;                                                                                          \
  } while (0)
#endif

static int32_t FASTMM_DELPHI_CALL prev_free(void *p) {
  (void)p;
  return 0;
}
static void *FASTMM_DELPHI_CALL prev_realloc(void *p, intptr_t size) {
  (void)p;
  (void)size;
  return NULL;
}
static size_t FASTMM_DELPHI_CALL fpc_prev_free(void *p) {
  (void)p;
  return 0;
}
static void *FASTMM_DELPHI_CALL fpc_prev_realloc(void **p, size_t size) {
  (void)p;
  (void)size;
  return NULL;
}
static size_t FASTMM_DELPHI_CALL fpc_prev_size(void *p) {
  (void)p;
  return 0;
}
static void *FASTMM_DELPHI_CALL fpc_prev_get(size_t size) {
  (void)size;
  return NULL;
}
static void FASTMM_CDECL on_heap_error(int32_t code, const void *address) {
  (void)code;
  (void)address;
}

static const volatile uint8_t fpc_flag_off = 0;

int main(void) {
  catch_crashes();
  void *keep = fastmm_getmem(100); /* a heap with something in it */
  CHECK(keep != NULL);

  GUARDED("fastmm_get_state(NULL)", fastmm_get_state(NULL));
  volatile size_t classes = (size_t)-1;
  GUARDED("fastmm_get_small_class_usage(NULL, 100)",
          classes = fastmm_get_small_class_usage(NULL, 100));
  CHECK_EQ(classes, 0);
  GUARDED("fastmm_get_small_class_usage(NULL, 0)", classes = fastmm_get_small_class_usage(NULL, 0));
  CHECK_EQ(classes, 0);
  GUARDED("fastmm_get_last_debug_event(NULL)", fastmm_get_last_debug_event(NULL));
  GUARDED("fastmm_get_memory_manager(NULL)", fastmm_get_memory_manager(NULL));
  GUARDED("fastmm_get_memory_manager_debug(NULL)", fastmm_get_memory_manager_debug(NULL));
  CHECK_MSG(fastmm_debug_mode_active() == 0, "fastmm_get_memory_manager_debug(NULL) entered "
                                             "debug mode");
  while (fastmm_debug_mode_active())
    fastmm_exit_debug_mode();

  fastmm_delphi_bindings db = {sizeof db, prev_free, prev_realloc, on_heap_error};
  volatile int r = -1;
  GUARDED("fastmm_get_memory_manager_with_previous(NULL, b)",
          r = fastmm_get_memory_manager_with_previous(NULL, &db));
  CHECK_EQ(r, 0);
  fastmm_fpc_bindings fb = {sizeof fb,    fpc_prev_free, fpc_prev_realloc, fpc_prev_size,
                            fpc_prev_get, on_heap_error, &fpc_flag_off,    &fpc_flag_off};
  r = -1;
  GUARDED("fastmm_get_fpc_memory_manager(NULL, b)", r = fastmm_get_fpc_memory_manager(NULL, &fb));
  CHECK_EQ(r, 0);
  r = -1;
  GUARDED("fastmm_walk_blocks(NULL, ...)", r = fastmm_walk_blocks(NULL, NULL, 0, 0, 100, 0, ~0u));
  CHECK_EQ(r, 1);

  /* Nothing changed: the outputs work when given, the heap is as it was. */
  fastmm_state st;
  memset(&st, 0xAB, sizeof st);
  fastmm_get_state(&st);
  CHECK(st.small.blocks_in_use >= 1);
  fastmm_kind_usage usage[64];
  CHECK(fastmm_get_small_class_usage(usage, 64) == st.small_class_count);
  fastmm_memory_manager_ex mm;
  memset(&mm, 0, sizeof mm);
  fastmm_get_memory_manager(&mm);
  CHECK(mm.get_mem != NULL && mm.free_mem != NULL);
  CHECK(fastmm_freemem(keep) == FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_null_outputs");
}
