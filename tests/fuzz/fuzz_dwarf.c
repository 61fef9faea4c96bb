/* SPDX-License-Identifier: MIT */
/* A coverage-guided fuzzer of the DWARF reader (src/report/dwarf_reader.h): the input is a
 * module's file, PE or ELF (the seeds, dwarf_corpus/, are made by make_dwarf_seeds.py). The table
 * built from it is looked up at addresses spread over the image's code and around it.
 *
 * Checks: no crash, hang or sanitizer report; NULL comes with a reason; every answer's strings are
 * readable and NUL-terminated (in the input or the table's own memory), and a lookup that finds
 * nothing leaves "" and 0. For the campaign (scripts/fuzz-campaign.sh --target dwarf) an input
 * counts as one operation: FASTMM_FUZZ_COUNT_FILE gets the count at exit, every 2^14 inputs and
 * before a failed check aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_counts.h"
#include "report/debug_sections.h"
#include "report/dwarf_reader.h"

static unsigned long long inputs;

static void report_counts(void) {
  fprintf(stderr, "fuzz_dwarf: %llu inputs\n", inputs);
  fuzz_write_counts(inputs, inputs);
}

static void require(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_dwarf: input %llu: %s\n", inputs, what);
    fuzz_write_counts(inputs, inputs);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *why = NULL;
  if (inputs++ == 0)
    atexit(report_counts);
  if ((inputs & 0x3fff) == 0)
    fuzz_write_counts(inputs, inputs);
  dwarf_table *t = dwarf_table_build(data, size, &why);
  if (t == NULL) {
    require(why != NULL && why[0] != 0, "NULL without a reason");
    return 0;
  }
  debug_sections d;
  uint64_t lo = 0x1000, hi = 0x2000;
  if (debug_sections_find(data, size, &d, &why) && d.code_hi > d.code_lo) {
    lo = d.code_lo;
    hi = d.code_hi;
  }
  uint64_t step = (hi - lo) / 61 + 1, start = lo >= 16 ? lo - 16 : 0;
  uint64_t end = hi <= UINT64_MAX - 16 ? hi + 16 : UINT64_MAX;
  for (uint64_t a = start; a < end; a = a <= UINT64_MAX - step ? a + step : end) {
    sym_frame f;
    memset(&f, 0xa5, sizeof f);
    int found = dwarf_table_lookup(t, a, &f);
    require(f.file != NULL && f.unit != NULL && f.routine != NULL, "a NULL string");
    size_t n = strlen(f.file) + strlen(f.unit) + strlen(f.routine);
    if (!found)
      require(n == 0 && f.line == 0, "nothing found, yet names");
  }
  dwarf_table_free(t);
  return 0;
}
