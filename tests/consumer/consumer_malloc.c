/* SPDX-License-Identifier: MIT */
/* Uses the installed libfastmmc-malloc.so as a user's program does, linked with its CMake target
 * (fastmmc::malloc) or pkg-config (fastmmc-malloc): the program's malloc, calloc, realloc and
 * free, and the C library's own allocations (strdup), are the manager's blocks, with the data
 * kept and the heap consistent. Exits non-zero on a failure. Built natively only, by
 * tests/consumer/CMakeLists.txt and package_test.cmake. */
#define _GNU_SOURCE
#include <fastmm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failed;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failed++;
    printf("consumer_malloc: FAILED: %s\n", what);
  }
}

int main(void) {
  char *p = malloc(100);
  check(p != NULL && fastmm_owns_block(p), "malloc's block is the manager's");
  memset(p, 'x', 100);
  p = realloc(p, 100000);
  check(p != NULL && fastmm_owns_block(p) && p[0] == 'x' && p[99] == 'x', "realloc kept the data");
  free(p);
  unsigned char *z = calloc(1000, 4);
  int zero = z != NULL;
  for (size_t i = 0; zero && i < 4000; i++)
    zero = z[i] == 0;
  check(zero && fastmm_owns_block(z), "calloc's block is zeroed and the manager's");
  free(z);
  char *s = strdup("the C library allocates through it too");
  check(s != NULL && fastmm_owns_block(s), "strdup's block is the manager's");
  free(s);
  check(fastmm_check_heap() == 0, "the heap is consistent");
  printf("consumer_malloc (fastmm-c %s): %d checks, %d failed\n", FASTMM_VERSION_STRING, checks,
         failed);
  return failed != 0;
}
