/* SPDX-License-Identifier: MIT */
/* Bit scans for the medium-block bitmaps. */
#ifndef FASTMM_BITS_H
#define FASTMM_BITS_H

#include <stdint.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static inline unsigned bits_lowest_set(uint32_t x) { /* x != 0 */
  unsigned long i;
  _BitScanForward(&i, x);
  return (unsigned)i;
}
static inline unsigned bits_highest_set(uint32_t x) { /* x != 0 */
  unsigned long i;
  _BitScanReverse(&i, x);
  return (unsigned)i;
}
#else
static inline unsigned bits_lowest_set(uint32_t x) {
  return (unsigned)__builtin_ctz(x);
}
static inline unsigned bits_highest_set(uint32_t x) {
  return 31u - (unsigned)__builtin_clz(x);
}
#endif

#endif
