/* SPDX-License-Identifier: MIT */
/* What a fuzzer tells the campaign (scripts/fuzz-campaign.sh) it has done: the file
 * FASTMM_FUZZ_COUNT_FILE names, if set, rewritten with "operations inputs". */
#ifndef FASTMM_TESTS_FUZZ_COUNTS_H
#define FASTMM_TESTS_FUZZ_COUNTS_H

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_write_counts(unsigned long long operations, unsigned long long inputs) {
  const char *path = getenv("FASTMM_FUZZ_COUNT_FILE");
  if (path != NULL && *path != '\0') {
    FILE *f = fopen(path, "w");
    if (f != NULL) {
      fprintf(f, "%llu %llu\n", operations, inputs);
      fclose(f);
    }
  }
}

#endif
