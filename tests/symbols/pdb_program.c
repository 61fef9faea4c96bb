/* SPDX-License-Identifier: MIT */
/* A program built as Visual C++ builds one, with a PDB: clang for the *-pc-windows-msvc target
 * with CodeView debug information, linked by lld-link with /debug (tests/symbols/check_pdb.py).
 * Freestanding (no MSVC runtime here): its own entry point and kernel32 to print and exit. It
 * prints what fastmm_describe_address says of an address inside marker_function, which the
 * check compares with the line below that defines it. */
#include <fastmm.h>

#define STD_OUTPUT_HANDLE ((unsigned long)-11)
__declspec(dllimport) void *__stdcall GetStdHandle(unsigned long which);
__declspec(dllimport) int __stdcall WriteFile(void *file, const void *data, unsigned long size,
                                              unsigned long *written, void *overlapped);
__declspec(dllimport) void __stdcall ExitProcess(unsigned int code);

static void out(const char *s) {
  unsigned long n = 0, written;
  while (s[n])
    n++;
  WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), s, n, &written, 0);
}

/* clang-format off */
__declspec(noinline) int marker_function(int x) { return x * 3 + 1; } /* MARK:marker */
/* clang-format on */

void mainCRTStartup(void) {
  char text[512];
  size_t n = fastmm_describe_address((const char *)&marker_function + 2, text, sizeof text);
  text[n < sizeof text ? n : sizeof text - 1] = 0;
  out("described: ");
  out(text);
  out("\n");
  ExitProcess(marker_function(0) == 1 ? 0 : 1);
}
