/* SPDX-License-Identifier: MIT */
/* Copies and zeroes written out here rather than taken from the CRT: on Win64 the Delphi
 * entry points must leave XMM4 and XMM5 alone (the build fixes them for our code, which the
 * CRT's memcpy does not promise), and a call into the CRT is not needed for what are mostly
 * short, 16-byte aligned copies. Natively the C library's versions are used. Inline, so a
 * ReallocMem that moves a block copies in its own loop (a call to a shared copy measured 10%
 * slower on Win64's fc_realloc_medium). */
#ifndef FASTMM_COPY_H
#define FASTMM_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"

static inline void fmm_copy(void *dst, const void *src, size_t n) {
#if FMM_OWN_COPY
  uint64_t *d = (uint64_t *)dst;
  const uint64_t *s = (const uint64_t *)src;
  size_t words = n / 8u;
  for (size_t i = 0; i < words; i++)
    d[i] = s[i];
  for (size_t i = words * 8u; i < n; i++)
    ((char *)dst)[i] = ((const char *)src)[i];
#else
  memcpy(dst, src, n);
#endif
}

static inline void fmm_zero(void *dst, size_t n) {
#if FMM_OWN_COPY
  uint64_t *d = (uint64_t *)dst;
  size_t words = n / 8u;
  for (size_t i = 0; i < words; i++)
    d[i] = 0;
  for (size_t i = words * 8u; i < n; i++)
    ((char *)dst)[i] = 0;
#else
  memset(dst, 0, n);
#endif
}

#endif
