/* SPDX-License-Identifier: MIT */
/* The DWARF reader (src/report/dwarf_reader.h) from the command line, for the tests that check it
 * against binaries built here (check_dwarf.py):
 *
 *   dwarf_lookup IMAGE [ADDRESS...]   addresses in hex, link-time (PE: ImageBase + RVA)
 *   dwarf_lookup IMAGE -              the addresses read from stdin, one a line
 *   dwarf_lookup --time IMAGE         the build's time, CPU and wall: the first of 5 builds and
 *                                     the fastest
 *
 * Prints "table: ok" or "table: NULL: <reason>", then for each address one line
 * "<address> <routine>|<file>|<unit>|<line>", or "<address> -" when nothing holds it. Exits 0
 * when the table was built, 1 when it was NULL, 2 when the file could not be read. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/dwarf_reader.h"

static void lookup(const dwarf_table *t, const char *text) {
  uint64_t address = strtoull(text, NULL, 16);
  sym_frame f;
  if (dwarf_table_lookup(t, address, &f))
    printf("%" PRIx64 " %s|%s|%s|%u\n", address, f.routine, f.file, f.unit, f.line);
  else
    printf("%" PRIx64 " -\n", address);
}

static double seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Five builds of the table from the image in memory (the file's reading apart): the first's time
 * and the fastest's. */
static void time_builds(const unsigned char *image, size_t size) {
  double best_cpu = 1e9, best_wall = 1e9, first_cpu = 0, first_wall = 0;
  for (int i = 0; i < 5; i++) {
    const char *why = "";
    double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID), wall = seconds(CLOCK_MONOTONIC);
    dwarf_table *t = dwarf_table_build(image, size, &why);
    cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    wall = seconds(CLOCK_MONOTONIC) - wall;
    if (t == NULL)
      printf("table: NULL: %s\n", why);
    dwarf_table_free(t);
    if (i == 0) {
      first_cpu = cpu;
      first_wall = wall;
    }
    best_cpu = cpu < best_cpu ? cpu : best_cpu;
    best_wall = wall < best_wall ? wall : best_wall;
  }
  printf("build: first %.3f s CPU, %.3f s wall; fastest of 5 %.3f s CPU, %.3f s wall; %zu bytes\n",
         first_cpu, first_wall, best_cpu, best_wall, size);
}

int main(int argc, char **argv) {
  int timing = argc > 1 && strcmp(argv[1], "--time") == 0;
  argv += timing;
  argc -= timing;
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
  if (timing) {
    time_builds(image, (size_t)size);
    free(image);
    return 0;
  }
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
