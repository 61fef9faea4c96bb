/* SPDX-License-Identifier: MIT */
/* The DWARF reader (src/report/dwarf_reader.h) on this program's own file and on broken copies
 * of it: its own routine and line are found; an empty, short, garbage or damaged image gives NULL
 * and a reason, or a table that never names another routine for the address. Natively (ELF): the
 * reader only parses bytes, check_dwarf.py covers PE images. */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "test_util.h"

#include <link.h>

#include "report/debug_sections.h"
#include "report/dwarf_reader.h"

static unsigned char *image, *copy;
static size_t image_size;
static uint64_t load_bias;

static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  load_bias = info->dlpi_addr; /* the first object is the program */
  return 1;
}

/* The routine the lookups look for; it returns its return address. */
__attribute__((noinline)) static void *dwarf_probe(void) {
  return __builtin_return_address(0);
}

/* Calls the probe and notes the line of the call. */
#define CALL_PROBE(line) (*(line) = __LINE__, dwarf_probe())

static void read_self(void) {
  FILE *f = fopen("/proc/self/exe", "rb");
  CHECK(f != NULL);
  if (f == NULL)
    exit(1);
  fseek(f, 0, SEEK_END);
  image_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  image = (unsigned char *)malloc(image_size);
  copy = (unsigned char *)malloc(image_size);
  CHECK(image != NULL && copy != NULL && fread(image, 1, image_size, f) == image_size);
  fclose(f);
  dl_iterate_phdr(first_object, NULL);
}

static void check_null(const unsigned char *p, size_t n, const char *want) {
  const char *why = NULL;
  dwarf_table *t = dwarf_table_build(p, n, &why);
  CHECK(t == NULL);
  CHECK_MSG(why != NULL && strcmp(why, want) == 0, "reason '%s', want '%s'", why ? why : "(null)",
            want);
  dwarf_table_free(t);
}

/* A table from `p` either is NULL with a reason, or names the probe or nothing at its address. */
static int check_honest(const unsigned char *p, size_t n, uint64_t probe, const char *what) {
  const char *why = NULL;
  dwarf_table *t = dwarf_table_build(p, n, &why);
  sym_frame f;
  if (t == NULL) {
    CHECK_MSG(why != NULL && why[0] != 0, "%s: NULL without a reason", what);
    return 0;
  }
  if (dwarf_table_lookup(t, probe, &f))
    CHECK_MSG(strcmp(f.routine, "dwarf_probe") == 0 || f.routine[0] == 0,
              "%s: the probe named '%s'", what, f.routine);
  dwarf_table_free(t);
  return 1;
}

int main(void) {
  read_self();
  unsigned probe_line;
  void *return_address = CALL_PROBE(&probe_line);
  uint64_t probe = (uint64_t)(uintptr_t)&dwarf_probe - load_bias;
  uint64_t call = (uint64_t)(uintptr_t)return_address - 1 - load_bias;
  const char *why = NULL;
  sym_frame f;

  /* The program's own file: its routines, unit, file and lines. */
  dwarf_table *t = dwarf_table_build(image, image_size, &why);
  CHECK_MSG(t != NULL, "own image: %s", why);
  if (t == NULL)
    return tu_finish("test_dwarf_bad_input");
  CHECK(dwarf_table_lookup(t, probe, &f));
  CHECK_MSG(strcmp(f.routine, "dwarf_probe") == 0, "probe: routine '%s'", f.routine);
  CHECK_MSG(strcmp(f.file, "test_dwarf_bad_input.c") == 0, "probe: file '%s'", f.file);
  CHECK_MSG(strcmp(f.unit, "test_dwarf_bad_input") == 0, "probe: unit '%s'", f.unit);
  CHECK(dwarf_table_lookup(t, call, &f));
  CHECK_MSG(strcmp(f.routine, "main") == 0, "call: routine '%s'", f.routine);
  CHECK_MSG(f.line == probe_line, "call: line %u, want %u", f.line, probe_line);
  CHECK(!dwarf_table_lookup(t, 0, &f)); /* no code at 0 */
  CHECK(strcmp(f.routine, "") == 0 && strcmp(f.file, "") == 0 && f.line == 0);
  dwarf_table_free(t);

  /* Empty, short, garbage. */
  check_null(NULL, 0, "empty file");
  check_null(image, 0, "empty file");
  check_null(image, 63, "file too small");
  rng_state r;
  rng_seed(&r, 51);
  for (size_t i = 0; i < 4096; i++)
    copy[i] = (unsigned char)rng_next(&r);
  check_null(copy, 4096, "not a PE or ELF file");
  copy[0] = 'M';
  copy[1] = 'Z';
  check_null(copy, 4096, "truncated PE headers");

  /* Cut short: the section headers (at an ELF file's end) go first. */
  size_t cuts[] = {64, 4096, image_size / 3, image_size / 2, image_size - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
    check_null(image, cuts[i], "truncated ELF section table");

  /* Each debug section's tail overwritten with 0xff from a quarter, a half, three quarters,
   * the last byte: NULL with a reason, or a table that never misnames the probe. */
  debug_sections d;
  CHECK(debug_sections_find(image, image_size, &d, &why));
  /* Everything a build maps, its free or its failure gives back: the address space after the
   * damaged copies below is what it was before them. */
  dwarf_table_free(dwarf_table_build(image, image_size, &why));
  size_t before = tu_proc_status_bytes("VmSize");
  const dw_span *spans[] = {&d.info,   &d.abbrev,   &d.line, &d.line_str,   &d.str,
                            &d.ranges, &d.rnglists, &d.addr, &d.str_offsets};
  unsigned damaged = 0, nulls = 0;
  for (size_t s = 0; s < sizeof spans / sizeof spans[0]; s++) {
    if (spans[s]->p == NULL || spans[s]->n == 0)
      continue;
    size_t at = (size_t)(spans[s]->p - image);
    for (int q = 0; q <= 4; q++) {
      size_t from = q < 4 ? spans[s]->n * (size_t)q / 4 : spans[s]->n - 1;
      memcpy(copy, image, image_size);
      memset(copy + at + from, 0xff, spans[s]->n - from);
      nulls += !check_honest(copy, image_size, probe, "0xff tail");
      damaged++;
    }
  }
  CHECK(damaged >= 20); /* .debug_info, _abbrev, _line, _str at least */
  CHECK(nulls > 0);

  /* Random bytes changed in the debug sections: never a crash, a NULL always has a reason. */
  for (int round = 0; round < 200; round++) {
    memcpy(copy, image, image_size);
    const dw_span *s = spans[rng_next(&r) % 4];
    size_t at = (size_t)(s->p - image);
    for (int k = 0; k < 8; k++)
      copy[at + rng_next(&r) % s->n] = (unsigned char)rng_next(&r);
    const char *w = NULL;
    dwarf_table *bad = dwarf_table_build(copy, image_size, &w);
    CHECK(bad != NULL || (w != NULL && w[0] != 0));
    if (bad != NULL)
      dwarf_table_lookup(bad, probe, &f);
    dwarf_table_free(bad);
  }
  CHECK_MSG(before != 0 && tu_proc_status_bytes("VmSize") == before, "VmSize %zu, then %zu", before,
            tu_proc_status_bytes("VmSize"));
  printf("test_dwarf_bad_input: %u damaged copies, %u gave NULL\n", damaged, nulls);
  free(image);
  free(copy);
  return tu_finish("test_dwarf_bad_input");
}
