/* SPDX-License-Identifier: MIT */
/* A program for the symbol tests (check_symbols.py): in debug mode it leaks one block and frees
 * another twice, writing the event log to argv[1], and prints one frame as
 * fastmm_describe_address names it. The lines marked "MARK:" are the ones the checks expect
 * its frames to name. Built a second time with OTHER_BUILD, whose code differs (a map of that
 * build must not be used for this one), and a third time optimised without frame pointers. */
#include <stdio.h>
#if defined(_WIN32)
#include <windows.h>
#endif

#include "fastmm.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __declspec(noinline)
#endif

#if defined(OTHER_BUILD)
volatile unsigned other_sink;
NOINLINE void other_build_only(unsigned n) {
  for (unsigned i = 0; i < n; i++)
    other_sink = other_sink * 31u + i * 7u + (other_sink >> 3) + (i ^ n);
}
#endif

/* Stored after the calls, so that no call below is a tail call (a jump leaves no frame). */
void *volatile last_block;
volatile unsigned calls_done;

NOINLINE void *leak_here(void) {
  void *p = fastmm_getmem(40); /* MARK:leak */
  last_block = p;
  return p;
}

NOINLINE void free_twice(void) {
  void *p = fastmm_getmem(24); /* MARK:alloc */
  fastmm_freemem(p);           /* MARK:free */
  fastmm_freemem(p);           /* MARK:double */
  calls_done++;
}

NOINLINE void describe_caller(void) {
  char text[512];
  fastmm_describe_address(__builtin_return_address(0), text, sizeof text);
  printf("describe: %s\n", text);
  calls_done++;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  fastmm_set_event_log_filename(argv[1]);
#if defined(_WIN32)
  printf("base: %p\n", (void *)GetModuleHandleA(NULL));
#endif
  fastmm_enter_debug_mode();
#if defined(OTHER_BUILD)
  other_build_only((unsigned)argc);
#endif
  void *leaked = leak_here(); /* MARK:main_leak */
  free_twice();               /* MARK:main_double */
  describe_caller();          /* MARK:main_describe */
  printf("leaks: %u\n", (unsigned)fastmm_report_leaks());
  return leaked != NULL ? 0 : 1;
}
