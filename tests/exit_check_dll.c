/* SPDX-License-Identifier: MIT */
/* A DLL whose DLL_PROCESS_DETACH calls fastmm_check_heap (test_exit_check.c): after
 * ExitProcess the other threads are gone, perhaps holding an arena's lock, and the check must
 * end anyway with a documented result (0, or FASTMM_CHECK_HEAP_LOCKED). It writes the result to
 * standard output with WriteFile (the C runtime may be shutting down) and ends the process with
 * EXIT_CHECK_OK when the result is one of those, EXIT_CHECK_BAD otherwise, for the parent
 * process to see. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include "exit_check.h"
#include "fastmm.h"

static volatile LONG armed;

__declspec(dllexport) void exit_check_arm(void) {
  InterlockedExchange(&armed, 1);
}

static void write_text(const char *s) {
  DWORD n = 0, written;
  while (s[n] != 0)
    n++;
  WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), s, n, &written, NULL);
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance;
  (void)reserved;
  if (reason == DLL_PROCESS_DETACH && armed) {
    write_text("exit_check: DLL_PROCESS_DETACH calls fastmm_check_heap\n");
    int r = fastmm_check_heap();
    char text[64] = "exit_check: fastmm_check_heap result ";
    char *at = text;
    while (*at)
      at++;
    unsigned v = r < 0 ? (unsigned)-r : (unsigned)r;
    if (r < 0)
      *at++ = '-';
    char digits[12];
    int d = 0;
    do {
      digits[d++] = (char)('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (d > 0)
      *at++ = digits[--d];
    *at++ = '\n';
    *at = 0;
    write_text(text);
    TerminateProcess(GetCurrentProcess(),
                     (r == 0 || r == FASTMM_CHECK_HEAP_LOCKED) ? EXIT_CHECK_OK : EXIT_CHECK_BAD);
  }
  return TRUE;
}
