/* SPDX-License-Identifier: MIT */
/* Runs a fuzzer's LLVMFuzzerTestOneInput (fuzz_heap.c's, or fuzz_dwarf.c's when REPLAY_NAME says
 * so) on files named on the command line, without libFuzzer: the seed corpus as a regression test
 * on every preset (natively with gcc, under ThreadSanitizer, and under Wine for Win32 and Win64),
 * and a way to replay a crash artifact in a debugger:  fuzz_heap_replay crash-1234abcd Prints how
 * many inputs ran; exits non-zero if a file could not be read (a failed check in the harness
 * aborts). */
#include "test_util.h"

#ifndef REPLAY_NAME
#define REPLAY_NAME "fuzz_heap_replay"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_symbols_replay runs fuzz_symbols.c's harness the same way. */
#ifndef REPLAY_NAME
#define REPLAY_NAME "fuzz_heap_replay"
#endif

#define MAX_INPUT (1u << 20)
static uint8_t buffer[MAX_INPUT];

int main(int argc, char **argv) {
  int i, unreadable = 0;
  unsigned long long bytes = 0;
  printf(REPLAY_NAME " (%s, %u-bit pointers): %d inputs\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8), argc - 1);
  for (i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    size_t n;
    if (f == NULL) {
      fprintf(stderr, REPLAY_NAME ": cannot open %s\n", argv[i]);
      unreadable++;
      continue;
    }
    n = fread(buffer, 1, MAX_INPUT, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buffer, n);
    bytes += n;
  }
  printf(REPLAY_NAME ": %d inputs (%llu bytes) ran clean, %d unreadable\n", argc - 1 - unreadable,
         bytes, unreadable);
  return unreadable != 0 || argc < 2;
}
