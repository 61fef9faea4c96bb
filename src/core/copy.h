/* SPDX-License-Identifier: MIT */
/* Copies and zeroes written out here rather than taken from the CRT: on Win64 the Delphi
 * entry points must leave XMM4 and XMM5 alone (the build fixes them for our code, which the
 * CRT's memcpy does not promise). Natively the C library's versions are used. Inline, so a
 * ReallocMem that moves a block copies in its own code (a call to a shared copy measured 10%
 * slower on Win64's fc_realloc_medium).
 *
 * Below COPY_STRING_MIN_BYTES a copy is a loop of 8-byte words; from there on it is one string
 * instruction (`rep movsb`, `rep stosb`), which current x86 processors run a cache line or more
 * per step (policy.h says what that threshold weighs). The string instructions touch no XMM
 * register and need no feature test: every x86 has them, and on a processor without the fast
 * form they are still correct. */
#ifndef FASTMM_COPY_H
#define FASTMM_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"
#include "policy.h"

#if FMM_OWN_COPY && defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

#if FMM_OWN_COPY
static inline void fmm_copy_string(void *dst, const void *src, size_t n) {
#if defined(_MSC_VER) && !defined(__clang__)
  __movsb((unsigned char *)dst, (const unsigned char *)src, n);
#else
  __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#endif
}

static inline void fmm_zero_string(void *dst, size_t n) {
#if defined(_MSC_VER) && !defined(__clang__)
  __stosb((unsigned char *)dst, 0, n);
#else
  __asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
#endif
}
#endif

static inline void fmm_copy(void *dst, const void *src, size_t n) {
#if FMM_OWN_COPY
  if (n >= COPY_STRING_MIN_BYTES) {
    fmm_copy_string(dst, src, n);
    return;
  }
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
  if (n >= COPY_STRING_MIN_BYTES) {
    fmm_zero_string(dst, n);
    return;
  }
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
