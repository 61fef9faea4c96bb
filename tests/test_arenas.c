/* SPDX-License-Identifier: MIT */
/* Arenas: how many the manager hands threads (one per CPU the process may run on, one to four,
 * policy.h), and that threads made after fastmm_test_set_arenas take arenas below its count.
 * A medium block's header word names the arena it came from (block_header.h), which is what the
 * test reads: each new thread allocates one medium block and reports its arena. */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "test_blocks.h"

#include "core/block_header.h"
#include "fastmm_test.h"

#if !defined(_WIN32)
#include <unistd.h>
#endif

#define THREADS 4
#define MEDIUM_BYTES 10000u

/* The CPUs the process may run on, as the test's own OS calls count them (its affinity). */
static unsigned cpus_of_process(void) {
#if defined(_WIN32)
  DWORD_PTR mine = 0, all = 0;
  unsigned bits = 0;
  GetProcessAffinityMask(GetCurrentProcess(), &mine, &all);
  for (unsigned i = 0; i < 8u * sizeof mine; i++)
    bits += (unsigned)((mine >> i) & 1u);
  return bits;
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
  return (unsigned)CPU_COUNT(&set);
#endif
}

typedef struct job {
  void *block;
  unsigned arena;
} job;

static void allocate_one(void *arg) {
  job *j = (job *)arg;
  /* A small block first: the thread then has its cache, which holds the arena it was handed. */
  fastmm_freemem(fastmm_getmem(32));
  j->block = fastmm_getmem(MEDIUM_BYTES);
  if (j->block != NULL) {
    tu_fill_pattern(j->block, MEDIUM_BYTES, 0x5A);
    j->arena = (block_header(j->block) >> MEDIUM_ARENA_SHIFT) & MEDIUM_ARENA_MASK;
  }
}

/* THREADS threads made one after another with `count` arenas in use: each one's block is a live
 * medium block of an arena below the count; returns how many distinct arenas they got. */
static unsigned threads_with_arenas(uint32_t count) {
  fastmm_test_set_arenas(count);
  job jobs[THREADS];
  unsigned seen = 0, distinct = 0;
  for (int i = 0; i < THREADS; i++) {
    tu_thread t;
    jobs[i].block = NULL;
    jobs[i].arena = 0xFFu;
    CHECK(tu_thread_start(&t, allocate_one, &jobs[i]));
    tu_thread_join(&t);
  }
  for (int i = 0; i < THREADS; i++) {
    CHECK(jobs[i].block != NULL);
    if (jobs[i].block == NULL)
      continue;
    CHECK_MSG((block_header(jobs[i].block) & BLOCK_KIND_MASK) == BLOCK_FLAG_MEDIUM,
              "thread %d's block is not a live medium block", i);
    CHECK_MSG(jobs[i].arena < count, "thread %d got arena %u with %u in use", i, jobs[i].arena,
              (unsigned)count);
    if (jobs[i].arena < 32u && !(seen & (1u << jobs[i].arena))) {
      seen |= 1u << jobs[i].arena;
      distinct++;
    }
    CHECK_EQ(tu_check_pattern(jobs[i].block, MEDIUM_BYTES, 0x5A), (size_t)-1);
    CHECK_EQ(fastmm_freemem(jobs[i].block), FASTMM_OK);
  }
  return distinct;
}

int main(void) {
  unsigned cpus = cpus_of_process();
  unsigned expected = cpus < 1u ? 1u : cpus > 4u ? 4u : cpus;
  uint32_t initial = fastmm_test_set_arenas(4);
  CHECK_MSG(initial == expected, "%u arenas in use on %u CPUs, expected %u", (unsigned)initial,
            cpus, expected);

  CHECK_EQ(threads_with_arenas(1), 1u);
  /* Four threads made in a row take four arenas in turn (none shares one while others are
   * idle); at least two, should something else make a thread between them. */
  CHECK(threads_with_arenas(4) >= 2u);
  CHECK(threads_with_arenas(2) >= 1u);
  /* Counts out of range are clamped. */
  CHECK_EQ(fastmm_test_set_arenas(0), 2u);
  CHECK_EQ(fastmm_test_set_arenas(99), 1u);
  CHECK_EQ(fastmm_test_set_arenas(initial), 4u);

  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_arenas");
}
