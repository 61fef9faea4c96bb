/* SPDX-License-Identifier: MIT */
/* A key drawn once per process, for the marks that let the manager tell its own headers from data
 * a program wrote (the small spans' tag key, small.c; the medium blocks' seals, medium.c). */
#ifndef FASTMM_PROCESS_KEY_H
#define FASTMM_PROCESS_KEY_H

#include <stdint.h>

#include "prim/prim.h"

/* A 64-bit value no earlier run had: the clock, where the OS put the stack and this library
 * (`salt`, the address of the variable the key goes to), the thread; mixed by splitmix64's
 * finalizer. Not a secret against a program that reads the manager's memory; enough that data a
 * program wrote never matches a mark by chance or by copy of a constant. */
static inline uint64_t process_key_draw(const void *salt) {
  volatile int here = 0;
  uint64_t x = prim_time_ns() ^ ((uint64_t)(uintptr_t)&here << 16) ^ (uint64_t)(uintptr_t)salt ^
               ((uint64_t)prim_thread_id() << 40);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBu;
  x ^= x >> 31;
  return x;
}

#endif
