/* SPDX-License-Identifier: MIT */
/* A C program built as Visual C++ builds one: clang for the *-pc-windows-msvc target, linked by
 * lld-link with the package's MSVC import library (lib/fastmmcNN.lib) and nothing from MinGW.
 * There is no MSVC C runtime here, so it is freestanding: its own entry point, and kernel32
 * (through an import library the test makes) to print and to exit. On Win32 its calls refer
 * to the cdecl names MSVC gives (_fastmm_getmem): linking proves the .lib has them, running it
 * under Wine proves they reach the DLL's exports. Exits with the number of failed checks. */
#include <fastmm.h>
#include <stdint.h>

#define STD_OUTPUT_HANDLE ((unsigned long)-11)
__declspec(dllimport) void *__stdcall GetStdHandle(unsigned long which);
__declspec(dllimport) int __stdcall WriteFile(void *file, const void *data, unsigned long size,
                                              unsigned long *written, void *overlapped);
__declspec(dllimport) void __stdcall ExitProcess(unsigned int code);

static unsigned checks, failed;

static void out(const char *s) {
  unsigned long n = 0, written;
  while (s[n])
    n++;
  WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), s, n, &written, 0);
}

static void out_number(unsigned v) {
  char digits[12];
  int i = (int)sizeof digits - 1;
  digits[i] = 0;
  do {
    digits[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out(digits + i);
}

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failed++;
    out("msvc_consumer: FAILED: ");
    out(what);
    out("\r\n");
  }
}

int __cdecl mainCRTStartup(void) {
  unsigned char *p = fastmm_getmem(100);
  check(p != 0 && (uintptr_t)p % 16 == 0, "getmem(100) gives an aligned block");
  if (p == 0)
    ExitProcess(1);
  check(fastmm_owns_block(p) == 1, "the manager owns the block");
  for (unsigned i = 0; i < 100; i++)
    p[i] = (unsigned char)(i + 1);
  p = fastmm_reallocmem(p, 100000);
  check(p != 0, "reallocmem(100000) gives a block");
  if (p == 0)
    ExitProcess(1);
  int same = 1;
  for (unsigned i = 0; i < 100; i++)
    same &= p[i] == (unsigned char)(i + 1);
  check(same, "reallocmem keeps the data");
  check(fastmm_usable_size(p) >= 100000, "usable size >= 100000");
  check(fastmm_freemem(p) == FASTMM_OK, "freemem of the block");
  check(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER, "a second freemem is refused");
  check(fastmm_check_heap() == 0, "the heap is consistent");
  out("msvc_consumer: ");
  out_number(checks);
  out(" checks, ");
  out_number(failed);
  out(" failed\r\n");
  ExitProcess(failed);
  return 0;
}
