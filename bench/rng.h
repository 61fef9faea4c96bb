/* The workloads' random generator: deterministic, one seed per workload (and per thread), the
 * same for every allocator, so every allocator sees the same sequence of requests.
 *
 * The generator itself is rng, rng_seed and rng_next (xorshift64* with its seed spread by a
 * multiply-add); everything else here draws from rng_next only. Replacing those three (for
 * instance with the generator the tests use) changes every workload's requests, so results
 * measured before and after such a change are not comparable; ratios within one run still are. */
#ifndef FASTMM_BENCH_RNG_H
#define FASTMM_BENCH_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
  uint64_t s;
} rng;

static inline void rng_seed(rng *r, uint64_t seed) {
  r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (r->s == 0)
    r->s = 1;
}

static inline uint64_t rng_next(rng *r) {
  uint64_t x = r->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* ---- Draws (from rng_next only) ------------------------------------------------------------ */

/* Uniform in [lo, hi]. */
static inline size_t rng_range(rng *r, size_t lo, size_t hi) {
  return lo + (size_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [0, n). */
static inline size_t rng_below(rng *r, size_t n) {
  return (size_t)(rng_next(r) % (uint64_t)n);
}

/* Log-uniform in [lo, hi] (each power of two range equally likely): a power-of-two band picked
 * uniformly, then a size uniformly inside it. */
static inline size_t rng_log_range(rng *r, size_t lo, size_t hi) {
  unsigned bands = 0;
  while (((size_t)lo << (bands + 1)) <= hi && bands < 62)
    bands++;
  unsigned b = (unsigned)rng_below(r, (size_t)bands + 1u);
  size_t blo = lo << b;
  size_t bhi = b == bands ? hi : (lo << (b + 1)) - 1u;
  return rng_range(r, blo, bhi);
}

#endif
