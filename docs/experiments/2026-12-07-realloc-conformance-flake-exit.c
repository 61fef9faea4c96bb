/* SPDX-License-Identifier: MIT */
/* The program of docs/experiments/2026-12-07-realloc-conformance-flake.md: two 3 MB blocks freed
 * (into the large cache, which starts the idle thread), then MS ms of sleep and the end. Under
 * Wine on a loaded machine about one run in 240-400 exits with code 1 and no output. Built against
 * build/win64's DLL:
 *   x86_64-w64-mingw32-gcc -O1 -Iinclude this.c -o exit.exe -Lbuild/win64/bin -l:fastmmc64.dll
 * and run from a folder holding fastmmc64.dll: cmake/wine-run.sh ./exit.exe MS */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

#include "fastmm.h"

int main(int argc, char **argv) {
  printf("start\n");
  void *p = fastmm_getmem(3u << 20);
  void *q = fastmm_getmem(3u << 20);
  fastmm_freemem(p);
  fastmm_freemem(q);
  Sleep(argc > 1 ? (DWORD)atoi(argv[1]) : 0);
  printf("end\n");
  return 0;
}
