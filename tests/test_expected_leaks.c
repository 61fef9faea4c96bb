/* SPDX-License-Identifier: MIT */
/* The one expected-leak registry: by pointer (the C API's rule and FastMM5's counted one), by
 * class and by size, its listing, FastMM5's matching, and debug mode's leak report leaving out
 * the blocks it matches. */
#include "test_util.h"

#include "fastmm.h"

static size_t listed(fastmm_expected_leak *out, size_t room) {
  memset(out, 0, room * sizeof *out);
  return fastmm_get_expected_leaks(out, room);
}

static void by_pointer(void) {
  void *p = fastmm_getmem(40);
  static char foreign[64];
  /* The C rule: own blocks only, once. */
  CHECK_EQ(fastmm_register_expected_leak(foreign), 0);
  CHECK_EQ(fastmm_register_expected_leak(p), 1);
  CHECK_EQ(fastmm_register_expected_leak(p), 0);
  CHECK_EQ(fastmm_unregister_expected_leak(p), 1);
  CHECK_EQ(fastmm_unregister_expected_leak(p), 0);
  /* FastMM5's rule: any pointer, counted. */
  CHECK_EQ(fastmm_register_expected_leak_counted(foreign), 1);
  CHECK_EQ(fastmm_register_expected_leak_counted(foreign), 1);
  fastmm_expected_leak l[4];
  CHECK_EQ(listed(l, 4), 1);
  CHECK(l[0].pointer == foreign && l[0].vmt == NULL && l[0].count == 2);
  CHECK_EQ(fastmm_unregister_expected_leak_counted(foreign), 1);
  CHECK_EQ(fastmm_unregister_expected_leak_counted(foreign), 1);
  CHECK_EQ(fastmm_unregister_expected_leak_counted(foreign), 0);
  CHECK_EQ(listed(l, 4), 0);
  CHECK_EQ(fastmm_freemem(p), 0);
}

/* A VMT pointer the registry only compares; the leak report's class probe reads 22 pointers
 * before it (Delphi's layout) and 4 after it (Free Pascal's), so both stay inside the array (all
 * zero: no class is named). */
static void *fake_vmt[48];
#define FAKE_VMT (&fake_vmt[24])

static void by_class_and_size(void) {
  const void *vmt = FAKE_VMT;
  CHECK_EQ(fastmm_register_expected_class_leak(NULL, 16, 1), 0);
  CHECK_EQ(fastmm_register_expected_class_leak(vmt, 24, 0), 0);
  CHECK_EQ(fastmm_register_expected_class_leak(vmt, 24, 2), 1);
  CHECK_EQ(fastmm_register_expected_size_leak(-1, 1), 0);
  CHECK_EQ(fastmm_register_expected_size_leak(100, 1), 1);
  CHECK_EQ(fastmm_register_expected_size_leak(40, 1), 1);
  CHECK_EQ(fastmm_unregister_expected_class_leak(vmt, 0), 0);
  CHECK_EQ(fastmm_unregister_expected_class_leak(vmt, 3), 0); /* below zero */
  CHECK_EQ(fastmm_unregister_expected_size_leak(7, 1), 0);    /* never registered */
  fastmm_expected_leak l[4];
  CHECK_EQ(listed(l, 2), 3); /* the number there are, with room for two */
  CHECK_EQ(listed(l, 4), 3);
  CHECK(l[0].vmt == vmt && l[0].instance_size == 24 && l[0].size == 0 && l[0].count == 2);
  CHECK(l[1].vmt == NULL && l[1].size == 100 && l[1].count == 1);
  CHECK(l[2].vmt == NULL && l[2].size == 40 && l[2].count == 1);

  /* FastMM5's matching: the class when the instance fits, else the closest size held. */
  char block[128];
  fastmm_begin_expected_leak_match();
  CHECK_EQ(fastmm_match_expected_leak(block, 16, vmt), 0);   /* an instance is 24 bytes */
  CHECK_EQ(fastmm_match_expected_leak(block, 32, vmt), 1);   /* the class: 1 left */
  CHECK_EQ(fastmm_match_expected_leak(block, 120, NULL), 1); /* size 100, not 40 */
  CHECK_EQ(fastmm_match_expected_leak(block, 120, NULL), 1); /* size 40 now */
  CHECK_EQ(fastmm_match_expected_leak(block, 120, NULL), 0); /* no size left */
  CHECK_EQ(fastmm_match_expected_leak(block, 32, vmt), 1);
  CHECK_EQ(fastmm_match_expected_leak(block, 32, vmt), 0);
  /* A match takes from its copy, not from the registrations. */
  CHECK_EQ(listed(l, 4), 3);
  CHECK_EQ(l[0].count, 2);
  fastmm_begin_expected_leak_match();
  CHECK_EQ(fastmm_match_expected_leak(block, 32, vmt), 1);

  CHECK_EQ(fastmm_unregister_expected_class_leak(vmt, 2), 1);
  CHECK_EQ(fastmm_unregister_expected_size_leak(100, 1), 1);
  CHECK_EQ(fastmm_unregister_expected_size_leak(40, 1), 1);
  CHECK_EQ(listed(l, 4), 0);
}

/* Debug mode's leak report leaves out what the registrations match. */
static void debug_report_matches(void) {
  fastmm_set_leak_report_at_exit(0);
  fastmm_set_event_log_filename("test_expected_leaks_EventLog.txt");
  fastmm_enter_debug_mode();
  const void *vmt = FAKE_VMT;
  void **object = (void **)fastmm_getmem(32);
  object[0] = (void *)vmt;
  char *sized = (char *)fastmm_getmem(50);
  memset(sized, 0, 50);
  CHECK_EQ(fastmm_report_leaks(), 2);
  CHECK_EQ(fastmm_register_expected_class_leak(vmt, 32, 1), 1);
  CHECK_EQ(fastmm_report_leaks(), 1);
  CHECK_EQ(fastmm_register_expected_size_leak(48, 1), 1);
  CHECK_EQ(fastmm_report_leaks(), 0);
  CHECK_EQ(fastmm_unregister_expected_class_leak(vmt, 1), 1);
  CHECK_EQ(fastmm_unregister_expected_size_leak(48, 1), 1);
  CHECK_EQ(fastmm_freemem(object), 0);
  CHECK_EQ(fastmm_freemem(sized), 0);
  CHECK_EQ(fastmm_report_leaks(), 0);
  fastmm_exit_debug_mode();
  remove("test_expected_leaks_EventLog.txt");
}

int main(void) {
  by_pointer();
  by_class_and_size();
  debug_report_matches();
  return tu_finish("test_expected_leaks");
}
