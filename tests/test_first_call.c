/* SPDX-License-Identifier: MIT */
/* The first calls a program makes may be FreeMem, ReallocMem or a usable-size query of a pointer
 * that is not ours: they must be refused before the manager has started, which needs the page
 * map's fast copy to be filled when the library loads (entry/startup.c, entry_on_load). Run in a
 * process of its own so nothing has started the manager before main. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fastmm.h"
#include "test_util.h"

static uint64_t foreign_words[64];

int main(void) {
  /* Foreign memory of every kind a program holds: static data, the stack, the C runtime's heap. */
  uint64_t on_stack[8] = {0};
  void *from_crt = malloc(256);
  char *pointers[] = {(char *)&foreign_words[16], (char *)&on_stack[4], (char *)from_crt};
  CHECK(from_crt != NULL);
  for (size_t i = 0; i < sizeof pointers / sizeof pointers[0]; i++) {
    char *p = (char *)((uintptr_t)pointers[i] & ~(uintptr_t)15);
    CHECK(fastmm_usable_size(p) == 0);
    CHECK(fastmm_reallocmem(p, 100) == NULL);
    CHECK(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER);
  }
  for (size_t i = 0; i < 64; i++)
    CHECK(foreign_words[i] == 0);
  free(from_crt);
  /* And the manager still works after them. */
  void *q = fastmm_getmem(100);
  CHECK(q != NULL);
  CHECK(fastmm_usable_size(q) >= 100);
  CHECK(fastmm_freemem(q) == FASTMM_OK);
  return tu_finish("test_first_call");
}
