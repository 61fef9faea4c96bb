/* SPDX-License-Identifier: MIT */
/* The thread cache is found through one thread-local slot (src/prim/prim.h). On Windows the
 * manager reads it straight from the TEB; a process that used up the 64 slots the TEB holds
 * before the manager's first call gets an expansion slot, which takes another path. This test
 * takes 70 slots before its first fastmm call, then checks that each thread's cache works
 * (freed small blocks stay cached), that ending threads return their caches, and that the
 * manager leaves the thread's last-error value alone (Delphi code reads it after calls that
 * allocate). Natively it runs the same checks with compiler TLS. */
#include "test_blocks.h"

#define NTHREADS 3
#define BLOCKS 200

typedef struct job {
  unsigned long long failed;
  size_t cached_seen;
} job;

/* Allocates and frees small blocks; some stay in this thread's cache. */
static void churn(job *j, uint32_t seed) {
  void *p[BLOCKS];
  size_t i;
  for (i = 0; i < BLOCKS; i++) {
    p[i] = fastmm_getmem(16 + (i % 50) * 8);
    if (!p[i]) {
      j->failed++;
      return;
    }
    tu_fill_pattern(p[i], 16, seed + (uint32_t)i);
  }
  for (i = 0; i < BLOCKS; i++) {
    if (tu_check_pattern(p[i], 16, seed + (uint32_t)i) != (size_t)-1)
      j->failed++;
    if (fastmm_freemem(p[i]) != FASTMM_OK)
      j->failed++;
  }
}

static void thread_main(void *arg) {
  job *j = (job *)arg;
  fastmm_state s;
  churn(j, 99);
  fastmm_get_state(&s);
  j->cached_seen = s.thread_cached_blocks;
  /* Ends without a flush: the thread's end returns the cache. */
}

#if defined(_WIN32)
static void last_error_kept(void) {
  static const size_t sizes[] = {1, 100, SMALL_MAX_USER, 5000, 100000};
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    void *p, *q;
    SetLastError(12345u);
    p = fastmm_getmem(sizes[i]);
    CHECK_MSG(GetLastError() == 12345u, "getmem(%zu) changed the last error to %lu", sizes[i],
              (unsigned long)GetLastError());
    SetLastError(23456u);
    q = fastmm_reallocmem(p, sizes[i] / 2 + 1);
    CHECK_MSG(GetLastError() == 23456u, "reallocmem(%zu) changed the last error to %lu", sizes[i],
              (unsigned long)GetLastError());
    SetLastError(34567u);
    CHECK(fastmm_freemem(q) == FASTMM_OK);
    CHECK_MSG(GetLastError() == 34567u, "freemem(%zu) changed the last error to %lu", sizes[i],
              (unsigned long)GetLastError());
  }
}
#endif

int main(void) {
  job jobs[NTHREADS];
  tu_thread t[NTHREADS];
  job mine = {0, 0};
  fastmm_state s;
  int i;
#if defined(_WIN32)
  DWORD taken[70], probe;
  /* Before the manager's first call (it sets itself up on first use): use up the TEB's slots. */
  for (i = 0; i < 70; i++)
    taken[i] = TlsAlloc();
  CHECK(taken[69] != TLS_OUT_OF_INDEXES);
#endif
  printf("test_tls (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));

  churn(&mine, 1);
  fastmm_get_state(&s);
  CHECK_EQ(mine.failed, 0);
  CHECK_MSG(s.thread_cached_blocks > 0, "the main thread's freed small blocks were not cached");
#if defined(_WIN32)
  probe = TlsAlloc();
  printf("  slots 0..69 taken first; the next free slot after the manager's start is %lu\n",
         (unsigned long)probe);
  CHECK(probe >= 64);
  last_error_kept();
#endif

  for (i = 0; i < NTHREADS; i++) {
    jobs[i].failed = 0;
    jobs[i].cached_seen = 0;
    if (!CHECK(tu_thread_start(&t[i], thread_main, &jobs[i])))
      return tu_finish("test_tls");
    tu_thread_join(&t[i]); /* one at a time: each sees only its own cache and the main one */
  }
  fastmm_flush_thread_cache();
  fastmm_get_state(&s);
  for (i = 0; i < NTHREADS; i++) {
    CHECK_EQ(jobs[i].failed, 0);
    CHECK_MSG(jobs[i].cached_seen > 0, "thread %d: freed small blocks were not cached", i);
  }
  CHECK_MSG(s.thread_cached_blocks == 0, "%zu blocks still cached after the threads ended",
            s.thread_cached_blocks);
  CHECK_EQ(tb_blocks_in_use(&s), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
#if defined(_WIN32)
  TlsFree(probe);
  for (i = 0; i < 70; i++)
    TlsFree(taken[i]);
#endif
  return tu_finish("test_tls");
}
