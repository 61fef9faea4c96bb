/* SPDX-License-Identifier: MIT */
/* fmm_copy_short, the copy of a ReallocMem that moves a block below the string threshold on the
 * Windows builds (core/copy.h): every length from 0 to past the threshold, from and to every
 * offset in a 16-byte line, copies exactly the n bytes asked for, byte for byte, and writes
 * nothing before or after them. */
#include "test_util.h"

#include <stdint.h>
#include <string.h>

#include "core/copy.h"

#define MAX_LENGTH 300u
#define GUARD 32u
#define AREA (GUARD + 16u + MAX_LENGTH + GUARD)

static unsigned char src_area[AREA];
static unsigned char dst_area[AREA];

int main(void) {
  for (size_t i = 0; i < AREA; i++)
    src_area[i] = (unsigned char)(i * 7u + 1u);
  size_t wrong = 0, cases = 0;
  for (size_t n = 0; n <= MAX_LENGTH; n++) {
    for (size_t src_off = 0; src_off < 16u; src_off += 4u) {
      for (size_t dst_off = 0; dst_off < 16u; dst_off++) {
        memset(dst_area, 0xA5, sizeof dst_area);
        unsigned char *d = dst_area + GUARD + dst_off;
        const unsigned char *s = src_area + GUARD + src_off;
        fmm_copy_short((char *)d, (const char *)s, n);
        cases++;
        int ok = memcmp(d, s, n) == 0;
        for (size_t i = 0; ok && i < AREA; i++) {
          const unsigned char *at = dst_area + i;
          if ((at < d || at >= d + n) && *at != 0xA5)
            ok = 0;
        }
        if (!ok && wrong++ == 0)
          CHECK_MSG(ok, "n %u, source offset %u, destination offset %u", (unsigned)n,
                    (unsigned)src_off, (unsigned)dst_off);
      }
    }
  }
  CHECK_EQ(wrong, 0);
  CHECK_EQ(cases, (MAX_LENGTH + 1u) * 4u * 16u);
  return tu_finish("test_copy_short");
}
