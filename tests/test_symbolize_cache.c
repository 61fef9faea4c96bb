/* SPDX-License-Identifier: MIT */
/* The report's frames named once per distinct address (report/symbolize.c): a thousand frames
 * of three addresses, as a leak report of a thousand blocks allocated from three places has, are
 * looked up three times; every later one comes from the cache with the same text, and a frame
 * asked into a buffer too small for it is cut, not overrun. Natively, through the core's objects
 * (the symbolizer is not exported). The three places are functions laid out one after another, so
 * that no two share an entry of the cache, which is indexed by the address within its page:
 * places in functions far apart could share one in some builds, and the test would then count
 * every other lookup as a miss. */
#include <string.h>

#include "report/symbolize.h"
#include "test_util.h"

static __attribute__((noinline)) int place_one(int x) {
  return x * 7 + 1;
}
static __attribute__((noinline)) int place_two(int x) {
  return x * 5 + 3;
}
static __attribute__((noinline)) int place_three(int x) {
  return x * 3 + 5;
}

int main(void) {
  const void *places[3] = {(const void *)((const char *)&place_one + 1),
                           (const void *)((const char *)&place_two + 1),
                           (const void *)((const char *)&place_three + 1)};
  char first[3][512], again[512], small[8];
  size_t before = symbolize_uncached_count();
  for (int i = 0; i < 3; i++)
    CHECK(symbolize_frame(places[i], first[i], sizeof first[i]) > 0);
  CHECK_EQ(symbolize_uncached_count(), before + 3);
  printf("  %s\n  %s\n  %s\n", first[0], first[1], first[2]);
  CHECK_MSG(strstr(first[0], "place_one") != NULL, "not named: %s", first[0]);
  CHECK_MSG(strstr(first[1], "place_two") != NULL, "not named: %s", first[1]);
  size_t differ = 0;
  for (int k = 0; k < 1000; k++) {
    int i = k % 3;
    size_t n = symbolize_frame(places[i], again, sizeof again);
    differ += n != strlen(first[i]) || strcmp(again, first[i]) != 0;
  }
  CHECK_EQ(differ, 0);
  CHECK_EQ(symbolize_uncached_count(), before + 3);
  memset(small, 'x', sizeof small);
  CHECK_EQ(symbolize_frame(places[0], small, 5), 4);
  CHECK(memcmp(small, first[0], 4) == 0 && small[4] == 0 && small[5] == 'x');
  CHECK_EQ(symbolize_uncached_count(), before + 3);
  return tu_finish("test_symbolize_cache");
}
