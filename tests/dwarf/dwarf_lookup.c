/* SPDX-License-Identifier: MIT */
/* The DWARF reader (src/report/dwarf_reader.h) from the command line, for the tests that check it
 * against binaries built here (check_dwarf.py):
 *
 *   dwarf_lookup IMAGE [ADDRESS...]   addresses in hex, link-time (PE: ImageBase + RVA)
 *   dwarf_lookup IMAGE -              the addresses read from stdin, one a line
 *
 * Prints "table: ok" or "table: NULL: <reason>", then for each address one line
 * "<address> <routine>|<file>|<unit>|<line>", or "<address> -" when nothing holds it. Exits 0
 * when the table was built, 1 when it was NULL, 2 when the file could not be read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/dwarf_reader.h"

static void lookup(const dwarf_table *t, const char *text) {
  uint64_t address = strtoull(text, NULL, 16);
  sym_frame f;
  if (dwarf_table_lookup(t, address, &f))
    printf("%" PRIx64 " %s|%s|%s|%u\n", address, f.routine, f.file, f.unit, f.line);
  else
    printf("%" PRIx64 " -\n", address);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dwarf_lookup IMAGE [ADDRESS... | -]\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "rb");
  if (in == NULL) {
    fprintf(stderr, "dwarf_lookup: cannot open %s\n", argv[1]);
    return 2;
  }
  fseek(in, 0, SEEK_END);
  long size = ftell(in);
  fseek(in, 0, SEEK_SET);
  unsigned char *image = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
  if (image == NULL || size < 0 || fread(image, 1, (size_t)size, in) != (size_t)size) {
    fprintf(stderr, "dwarf_lookup: cannot read %s\n", argv[1]);
    return 2;
  }
  fclose(in);
  const char *why = "(not set)";
  dwarf_table *t = dwarf_table_build(image, (size_t)size, &why);
  if (t == NULL) {
    printf("table: NULL: %s\n", why);
    free(image);
    return 1;
  }
  printf("table: ok\n");
  if (argc == 3 && strcmp(argv[2], "-") == 0) {
    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL)
      lookup(t, line);
  } else {
    for (int i = 2; i < argc; i++)
      lookup(t, argv[i]);
  }
  dwarf_table_free(t);
  free(image);
  return 0;
}
