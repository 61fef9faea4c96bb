/* SPDX-License-Identifier: MIT */
/* The usage report (fastmm_write_usage_report): the page is read back and checked.
 *   - one HTML document, self-contained: no script, no style sheet, image or font from elsewhere
 *     (the one URL is the SVG namespace);
 *   - its state table holds fastmm_get_state's numbers, taken just before;
 *   - the map holds a cell for each 64 KB region the manager holds: as many large regions as the
 *     large blocks' mappings make, as many others as the medium spans make;
 *   - the size classes: each class's blocks in use as fastmm_get_small_class_usage counts them,
 *     and their spans adding up to the small spans' memory; medium and large blocks as the state;
 *   - the largest blocks in use, largest first: the test's 3 MB block heads the list;
 *   - the subtitle names the program by its file name, no folder, unless
 *     FASTMMC_USAGE_REPORT_FULL_PATH=1 asks for its full path;
 *   - a bad path gives 0 and no file. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200112L /* setenv */
#endif
#include "test_blocks.h"

#define REPORT "test_usage_report.html"

static char *page;
static size_t page_length;

static void read_page(void) {
  FILE *f = fopen(REPORT, "rb");
  CHECK(f != NULL);
  if (!f)
    return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  free(page);
  page = (char *)malloc((size_t)n + 1);
  page_length = fread(page, 1, (size_t)n, f);
  page[page_length] = 0;
  fclose(f);
}

/* Sets (value non-NULL) or clears an environment variable the DLL reads. */
static void set_env(const char *name, const char *value) {
#ifdef _WIN32
  SetEnvironmentVariableA(name, value);
#else
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
#endif
}

/* The subtitle: the text of <p class="meta"> up to the first separator, the program. */
static void program_in_subtitle(char *out, size_t size) {
  out[0] = 0;
  const char *at = strstr(page, "<p class=\"meta\">");
  if (!at)
    return;
  at += strlen("<p class=\"meta\">");
  const char *end = strstr(at, " &middot; ");
  size_t n = end ? (size_t)(end - at) : 0;
  if (n >= size)
    n = size - 1;
  memcpy(out, at, n);
  out[n] = 0;
}

static size_t count_of(const char *text) {
  size_t n = 0;
  for (const char *p = page; (p = strstr(p, text)) != NULL; p += strlen(text))
    n++;
  return n;
}

/* The number in attribute `attr` of the element whose text starts at the first `marker`, or
 * (unsigned long long)-1 when it is not there. */
static unsigned long long attr_after(const char *marker, const char *attr) {
  const char *at = strstr(page, marker);
  if (!at)
    return (unsigned long long)-1;
  const char *end = strchr(at, '>');
  char key[64];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *v = strstr(at, key);
  if (!v || (end && v > end))
    return (unsigned long long)-1;
  return strtoull(v + strlen(key), NULL, 10);
}

static void check_state(const fastmm_state *st) {
  static const char *const kinds[] = {"small", "medium", "large"};
  const fastmm_kind_usage *k[] = {&st->small, &st->medium, &st->large};
  char marker[64];
  for (int i = 0; i < 3; i++) {
    snprintf(marker, sizeof marker, "<tr data-key=\"%s\"", kinds[i]);
    CHECK_EQ(attr_after(marker, "data-blocks"), k[i]->blocks_in_use);
    CHECK_EQ(attr_after(marker, "data-bytes"), k[i]->bytes_in_use);
    CHECK_EQ(attr_after(marker, "data-reserved"), k[i]->bytes_reserved);
  }
  CHECK_EQ(attr_after("<tr data-key=\"os_bytes_reserved\"", "data-value"), st->os_bytes_reserved);
  CHECK_EQ(attr_after("<tr data-key=\"os_bytes_peak\"", "data-value"), st->os_bytes_peak);
  CHECK_EQ(attr_after("<tr data-key=\"os_map_calls\"", "data-value"), st->os_map_calls);
  CHECK_EQ(attr_after("<tr data-key=\"thread_cached_blocks\"", "data-value"),
           st->thread_cached_blocks);
}

int main(void) {
  tb_start_quiet("test_usage_report");
  enum { N = 3000 };
  static void *blocks[N];
  rng_state r;
  rng_seed(&r, 7);
  for (unsigned i = 0; i < N; i++)
    blocks[i] = fastmm_getmem(i % 40 == 0 ? rng_range(&r, SMALL_MAX_USER + 1, 100000)
                                          : tb_size_of_kind(&r, TB_SMALL, 0));
  void *large1 = fastmm_getmem(3000000), *large2 = fastmm_getmem(700000);
  void *medium = fastmm_getmem(400000);
  for (unsigned i = 0; i < N; i += 3) { /* some free blocks in the spans */
    fastmm_freemem(blocks[i]);
    blocks[i] = NULL;
  }
  fastmm_flush_thread_cache();
  fastmm_release_free_memory(); /* no spare span: every medium region holds blocks */

  fastmm_state st;
  fastmm_get_state(&st);
  fastmm_kind_usage classes[64];
  size_t class_count = fastmm_get_small_class_usage(classes, 64);
  remove(REPORT);
  CHECK_EQ(fastmm_write_usage_report(REPORT), 1);
  read_page();
  if (!page)
    return tu_finish("test_usage_report");
  printf("  %zu bytes of HTML\n", page_length);

  /* One document, self-contained. */
  CHECK(strncmp(page, "<!DOCTYPE html>", 15) == 0);
  CHECK(page_length > 20 && strcmp(page + page_length - 8, "</html>\n") == 0);
  CHECK_EQ(count_of("<html"), 1);
  CHECK_EQ(count_of("<body>"), 1);
  CHECK_EQ(count_of("</body>"), 1);
  CHECK_EQ(count_of("<script"), 0);
  CHECK_EQ(count_of("<link"), 0);
  CHECK_EQ(count_of("<img"), 0);
  CHECK_EQ(count_of(" src="), 0);
  CHECK_EQ(count_of(" href="), 0);
  CHECK_EQ(count_of("url("), 0);
  CHECK_EQ(count_of("@import"), 0);
  CHECK_EQ(count_of("https:"), 0);
  CHECK_EQ(count_of("http:"), 1);
  CHECK_EQ(count_of("xmlns=\"http://www.w3.org/2000/svg\""), 1);
  CHECK_EQ(count_of("<svg"), 1);
  CHECK_EQ(count_of("</svg>"), 1);

  check_state(&st);

  /* The map: one cell (a faint rect, then its filled part) per region. */
  size_t large_regions = st.large.bytes_reserved / 65536u;
  size_t span_regions = (st.small.bytes_reserved + st.medium.bytes_reserved) / 65536u;
  CHECK(large_regions >= (3000000 + 700000) / 65536);
  CHECK_EQ(attr_after("<b data-kind=\"large\"", "data-regions"), large_regions);
  CHECK_EQ(attr_after("<b data-kind=\"small\"", "data-regions") +
               attr_after("<b data-kind=\"medium\"", "data-regions"),
           span_regions);
  CHECK_EQ(attr_after("<b data-kind=\"spare\"", "data-regions"), 0);
  CHECK(attr_after("<b data-kind=\"small\"", "data-regions") > 0);
  CHECK_EQ(attr_after("<svg", "data-regions"), large_regions + span_regions);
  CHECK_EQ(count_of("fill-opacity=\"0.25\""), large_regions + span_regions);

  /* The size classes. */
  unsigned long long reserved = 0;
  size_t rows = 0;
  for (size_t c = 0; c < class_count; c++) {
    char marker[64];
    snprintf(marker, sizeof marker, "<tr data-slot=\"%zu\"", fastmm_small_class_slot_size(c));
    unsigned long long blocks_shown = attr_after(marker, "data-blocks");
    if (blocks_shown == (unsigned long long)-1) {
      CHECK_EQ(classes[c].blocks_in_use, 0);
      continue;
    }
    rows++;
    CHECK_MSG(blocks_shown == classes[c].blocks_in_use, "class %zu: %llu blocks shown, %zu in use",
              c, blocks_shown, classes[c].blocks_in_use);
    CHECK_EQ(attr_after(marker, "data-bytes"), classes[c].bytes_in_use);
    reserved += attr_after(marker, "data-reserved");
  }
  CHECK(rows > 10);
  CHECK_EQ(reserved, st.small.bytes_reserved);
  CHECK_EQ(attr_after("<tr data-kind=\"medium\"", "data-blocks"), st.medium.blocks_in_use);
  CHECK_EQ(attr_after("<tr data-kind=\"medium\"", "data-bytes"), st.medium.bytes_in_use);
  CHECK_EQ(attr_after("<tr data-kind=\"large\"", "data-blocks"), st.large.blocks_in_use);
  CHECK_EQ(attr_after("<tr data-kind=\"large\"", "data-bytes"), st.large.bytes_in_use);

  /* The largest blocks: the 3 MB one first, then the 700,000-byte one, then the medium one. */
  char address[64];
  snprintf(address, sizeof address, "<tr data-address=\"0x%0*llx\" data-usable=\"%zu\"",
           (int)(2 * sizeof(void *)), (unsigned long long)(uintptr_t)large1,
           fastmm_usable_size(large1));
  const char *first = strstr(page, "<tr data-address=");
  CHECK(first != NULL && strncmp(first, address, strlen(address)) == 0);
  snprintf(address, sizeof address, "<tr data-address=\"0x%0*llx\"", (int)(2 * sizeof(void *)),
           (unsigned long long)(uintptr_t)large2);
  const char *second = first ? strstr(first + 1, "<tr data-address=") : NULL;
  CHECK(second != NULL && strncmp(second, address, strlen(address)) == 0);
  snprintf(address, sizeof address, "<tr data-address=\"0x%0*llx\"", (int)(2 * sizeof(void *)),
           (unsigned long long)(uintptr_t)medium);
  const char *third = second ? strstr(second + 1, "<tr data-address=") : NULL;
  CHECK(third != NULL && strncmp(third, address, strlen(address)) == 0);
  CHECK_EQ(count_of("<tr data-address="), 20);

  /* The program: its file name (this test's), no folder; the full path when asked. */
  char program[512];
  program_in_subtitle(program, sizeof program);
  CHECK(strstr(program, "test_usage_report") == program);
  CHECK(strchr(program, '/') == NULL && strchr(program, '\\') == NULL);
  set_env("FASTMMC_USAGE_REPORT_FULL_PATH", "1");
  CHECK_EQ(fastmm_write_usage_report(REPORT), 1);
  set_env("FASTMMC_USAGE_REPORT_FULL_PATH", NULL);
  read_page();
  char full[512];
  program_in_subtitle(full, sizeof full);
  size_t nf = strlen(full), np = strlen(program);
  CHECK(nf > np && strcmp(full + nf - np, program) == 0);
  CHECK(full[nf - np - 1] == '/' || full[nf - np - 1] == '\\');

  /* Bad paths. */
  CHECK_EQ(fastmm_write_usage_report(NULL), 0);
  CHECK_EQ(fastmm_write_usage_report(""), 0);
  CHECK_EQ(fastmm_write_usage_report("no-such-folder/x/report.html"), 0);

  for (unsigned i = 0; i < N; i++)
    fastmm_freemem(blocks[i]);
  fastmm_freemem(large1);
  fastmm_freemem(large2);
  fastmm_freemem(medium);
  free(page);
  remove(REPORT);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_usage_report");
}
