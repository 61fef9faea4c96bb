/* SPDX-License-Identifier: MIT */
/* wine_exit_probe MODE COUNT_FILE: a program that ends as told, for the test of cmake/wine-run.sh's
 * second run (tests/scripts/test_wine_run_rerun.sh). Each run adds a line to COUNT_FILE first.
 *   silent-once: its first run (COUNT_FILE was empty or missing) exits 1 writing nothing, later
 *                runs print a line and exit 0;
 *   silent:      exits 1 writing nothing, every time;
 *   loud:        writes a line on standard error and exits 1. */
#include <stdio.h>
#include <string.h>

static int runs_before(const char *path) {
  FILE *f = fopen(path, "r");
  int lines = 0, c;
  if (f == NULL)
    return 0;
  while ((c = fgetc(f)) != EOF)
    lines += c == '\n';
  fclose(f);
  return lines;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int before = runs_before(argv[2]);
  FILE *f = fopen(argv[2], "a");
  if (f == NULL)
    return 3;
  fputs("run\n", f);
  fclose(f);
  if (strcmp(argv[1], "loud") == 0) {
    fputs("wine_exit_probe: a failure, said on standard error\n", stderr);
    return 1;
  }
  if (strcmp(argv[1], "silent") == 0 || (strcmp(argv[1], "silent-once") == 0 && before == 0))
    return 1;
  printf("wine_exit_probe: run %d\n", before + 1);
  return 0;
}
