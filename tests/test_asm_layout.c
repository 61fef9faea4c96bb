/* SPDX-License-Identifier: MIT */
/* The numbers the assembly fast paths assemble against: the build's layout.inc (made from
 * src/asm_shared/layout.c) must hold every value of src/asm_shared/layout_values.h once, with the
 * value this program's C compiler gives it for the same target, and nothing else. A missing or
 * empty file, a stale value, a name twice or a name the list does not have fails.
 *
 *   test_asm_layout <layout.inc> */
#include "test_util.h"

#include "asm_shared/layout_values.h"

#define MAX_LINES 256

typedef struct define_line {
  char name[64];
  long long value;
  unsigned seen;
} define_line;

static define_line lines[MAX_LINES];
static size_t line_count;

static define_line *find(const char *name) {
  size_t i;
  for (i = 0; i < line_count; i++)
    if (strcmp(lines[i].name, name) == 0)
      return &lines[i];
  return NULL;
}

static void expect(const char *name, long long value) {
  define_line *d = find(name);
  if (!CHECK_MSG(d != NULL, "layout.inc has no %%define %s", name))
    return;
  d->seen++;
  CHECK_MSG(d->value == value, "layout.inc says %s is %lld, the C headers %lld", name, d->value,
            value);
}

int main(int argc, char **argv) {
  FILE *f;
  char text[256];
  size_t i;
  if (!CHECK_MSG(argc == 2, "usage: test_asm_layout <layout.inc>"))
    return tu_finish("test_asm_layout");
  f = fopen(argv[1], "r");
  if (!CHECK_MSG(f != NULL, "cannot open %s", argv[1]))
    return tu_finish("test_asm_layout");
  while (fgets(text, sizeof text, f)) {
    define_line d;
    if (text[0] == ';' || text[0] == '\n')
      continue;
    memset(&d, 0, sizeof d);
    if (!CHECK_MSG(sscanf(text, "%%define %63s %lld", d.name, &d.value) == 2,
                   "a line that is neither a comment nor a %%define: %s", text))
      continue;
    CHECK_MSG(find(d.name) == NULL, "%s is defined twice", d.name);
    if (CHECK(line_count < MAX_LINES))
      lines[line_count++] = d;
  }
  fclose(f);
  printf("test_asm_layout (%s): %zu values in %s, %d in src/asm_shared/layout_values.h\n",
         tu_build_name(), line_count, argv[1], (int)ASM_LAYOUT_COUNT);
  CHECK(ASM_LAYOUT_COUNT > 0);
  CHECK_EQ(line_count, ASM_LAYOUT_COUNT);
#define EXPECT(name) expect(#name, (long long)(name));
  ASM_LAYOUT_VALUES(EXPECT)
  for (i = 0; i < line_count; i++)
    CHECK_MSG(lines[i].seen == 1,
              "layout.inc defines %s, which src/asm_shared/layout_values.h does not list",
              lines[i].name);
  return tu_finish("test_asm_layout");
}
