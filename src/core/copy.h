/* SPDX-License-Identifier: MIT */
/* Copies and zeroes written out here rather than taken from the CRT: on Win64 the Delphi
 * entry points must leave XMM4 and XMM5 alone (the build fixes them for our code, which the
 * CRT's memcpy does not promise). Natively the C library's versions are used. Inline, so a
 * ReallocMem that moves a block copies in its own code (a call to a shared copy measured 10%
 * slower on Win64's fc_realloc_medium).
 *
 * Below COPY_STRING_MIN_BYTES a copy is a loop of 16-byte steps with an overlapping tail
 * (fmm_copy_short) and a zero a loop of 8-byte words; from there on each is one string
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

/* 4 bytes, and 8 bytes, moved at any address as the processor moves them (a copy of a constant
 * size is a move, never a call). 8 bytes are two 4-byte words on a 32-bit build: there a 64-bit
 * value goes through the stack. */
static inline void fmm_move4(char *d, const char *s) {
  uint32_t v;
  memcpy(&v, s, sizeof v);
  memcpy(d, &v, sizeof v);
}
static inline void fmm_move8(char *d, const char *s) {
#if UINTPTR_MAX > 0xFFFFFFFFu
  uint64_t v;
  memcpy(&v, s, sizeof v);
  memcpy(d, &v, sizeof v);
#else
  uint32_t a, b;
  memcpy(&a, s, sizeof a);
  memcpy(&b, s + 4, sizeof b);
  memcpy(d, &a, sizeof a);
  memcpy(d + 4, &b, sizeof b);
#endif
}

/* A copy below the string threshold: 16 bytes a step while more than 16 are left, then what is
 * left (1 to 16 bytes) as at most two 8-byte moves, the last one ending at n and overlapping
 * what came before it (source and destination are different blocks). No byte loop: a small
 * block's usable size is 4 or 8 bytes short of a multiple of 16, and a ReallocMem that moves one
 * copies all of it. Defined on every build (tests/test_copy_short.c checks it natively too); only
 * the Windows builds copy with it. */
static inline void fmm_copy_short(char *d, const char *s, size_t n) {
  if (n >= 8u) {
    size_t i = 0;
    for (; n - i > 16u; i += 16u) {
      fmm_move8(d + i, s + i);
      fmm_move8(d + i + 8u, s + i + 8u);
    }
    if (n - i > 8u)
      fmm_move8(d + i, s + i);
    fmm_move8(d + n - 8u, s + n - 8u);
    return;
  }
  if (n >= 4u) {
    fmm_move4(d, s);
    fmm_move4(d + n - 4u, s + n - 4u);
    return;
  }
  for (size_t i = 0; i < n; i++)
    d[i] = s[i];
}

static inline void fmm_copy(void *dst, const void *src, size_t n) {
#if FMM_OWN_COPY
  if (n >= COPY_STRING_MIN_BYTES) {
    fmm_copy_string(dst, src, n);
    return;
  }
  fmm_copy_short((char *)dst, (const char *)src, n);
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
