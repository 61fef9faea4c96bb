/* SPDX-License-Identifier: MIT */
/* The one deterministic random generator of fastmm-c's programs: the tests, the demo and the
 * benchmark draw every size and choice from it, so a run is the same every time and on every
 * platform. An xorshift64* stream seeded through splitmix64 (so seeds 1, 2, 3 give unrelated
 * streams). Plain C11, header only, no allocation. */
#ifndef FASTMM_RNG_H
#define FASTMM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng_state {
  uint64_t s;
} rng_state;

static inline void rng_seed(rng_state *r, uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  r->s = z ? z : 0x2545F4914F6CDD1Dull;
}

static inline uint64_t rng_next(rng_state *r) {
  uint64_t x = r->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n); n > 0. The modulo bias is far below anything a run could notice. */
static inline size_t rng_below(rng_state *r, size_t n) {
  return (size_t)(rng_next(r) % (uint64_t)n);
}

/* Uniform in [lo, hi]. */
static inline size_t rng_range(rng_state *r, size_t lo, size_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

/* Log-uniform in [lo, hi] (0 < lo <= hi): a power-of-two band [lo << b, (lo << (b + 1)) - 1]
 * picked uniformly, then a size uniformly inside it, so each doubling of the size is about as
 * likely as the next. The top band is cut short by hi: a size drawn in it above hi is drawn
 * again from the start, so that band is as likely as the part of a doubling it covers. (Giving
 * it a whole band's share made hi itself one draw in ten for [8, 4096].) */
static inline size_t rng_log_range(rng_state *r, size_t lo, size_t hi) {
  unsigned bands = 0;
  while (((size_t)lo << (bands + 1)) <= hi && bands < 62)
    bands++;
  for (;;) {
    unsigned b = (unsigned)rng_below(r, (size_t)bands + 1u);
    size_t band_lo = lo << b;
    size_t size = rng_range(r, band_lo, (band_lo << 1) - 1u);
    if (size <= hi)
      return size;
  }
}

#endif
