/* SPDX-License-Identifier: MIT */
/* Memory given back without an explicit call (issue 14): after a program frees everything it
 * allocated, what the manager kept for reuse goes back to the OS once it has sat unused for an
 * idle spell, and the thread caches do not hold spans back meanwhile.
 *
 * The idle clock is driven here, not waited for: the manager's idle thread is switched off
 * (fastmm_set_idle_release_interval(0)) and each idle period is one call of
 * fastmm_release_idle_memory, exactly what the thread does when it wakes. Only the last part
 * lets the thread run, and waits (up to a minute, a liveness bound, not a timing) for it to
 * give a cached block back by itself.
 *
 *  1. A program's life: mixed blocks (256 MB natively and on Win64, 128 MB on Win32, 64 MB
 *     under ThreadSanitizer; every page written) freed in a shuffled order, and nothing else:
 *     no flush of the thread cache, no release call. Right after the last free, the thread
 *     cache holds no span back (every block it could pin is back in its span); after two idle
 *     periods the manager's OS bytes and the process's committed memory are within 2 MB of
 *     where they started.
 *  2. One idle period is not an idle spell: what was kept during it stays.
 *  3. A thread that frees far more of a class than anyone allocates stops keeping blocks of
 *     it, and keeps them again once it allocates that class.
 *  4. A 1 MB large block cached alone (less than RELEASE_THREAD_MIN_KEPT) starts no idle thread;
 *     more kept beside it does.
 *  5. The idle thread gives a cached large block back by itself.
 *  6. A spare span alone (what issue 14 lets a program keep: RELEASE_THREAD_MIN_KEPT) starts no
 *     idle thread, whose memory would cost more than it gives back: the span stays over 50
 *     periods; a large block cached beside it starts the thread, which gives both back, and so
 *     does a larger spare span alone (the speed strategy's 4 MB).
 *  7. (Windows) Starting the idle thread does not wait for the loader lock. Another thread holds
 *     it (as a thread ending in DllMain does, maybe waiting for a heap lock the starting thread
 *     holds: a deadlock test_stress met once on Win32) while a FreeMem starts the thread; the
 *     FreeMem must return before the lock is let go, and the thread then gives the block back. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "test_blocks.h"

#define MB TB_MB
#if defined(TU_UNDER_TSAN)
#define TOTAL (64 * MB)
#elif defined(_WIN32) && !defined(_WIN64)
#define TOTAL (128 * MB)
#else
#define TOTAL (256 * MB)
#endif
#define TARGET_SLACK (2 * MB) /* issue 14: within 2 MB of where it started */
#define MAX_BLOCKS 200000

static unsigned char *blocks[MAX_BLOCKS];
static size_t sizes[MAX_BLOCKS];

static double mb(size_t n) {
  return (double)n / (double)MB;
}

static void program_life(void) {
  size_t have[TB_KINDS], n, i, bad = 0, c0, c1, c2, c3;
  fastmm_state s0, s1, s2, s3;
  rng_state rng;
  /* The start: the test's own tables written, the thread cache made, nothing kept. */
  memset(blocks, 0, sizeof blocks);
  memset(sizes, 0, sizeof sizes);
  fastmm_freemem(fastmm_getmem(1));
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  c0 = tu_committed_bytes();
  CHECK_MSG(c0 > 0, "the process's committed memory cannot be read");

  rng_seed(&rng, 1414);
  n = tb_fill_mixed(&rng, TOTAL, 4 * MB, blocks, sizes, MAX_BLOCKS, tu_touch_pages, have);
  fastmm_get_state(&s1);
  c1 = tu_committed_bytes();
  CHECK_MSG(c1 >= c0 + TOTAL / 10 * 9, "committed memory grew by %.1f MB for %.1f MB: not measured",
            mb(c1 - c0), mb(TOTAL));
  tb_shuffle(&rng, blocks, sizes, n);
  for (i = 0; i < n; i++)
    bad += fastmm_freemem(blocks[i]) != FASTMM_OK;
  CHECK_EQ(bad, 0);

  /* Right after the last free, before any idle period: nothing in use, and what is held is
   * what the manager keeps for reuse (the large cache, a spare span), not spans that cached
   * small blocks pin. */
  fastmm_get_state(&s2);
  c2 = tu_committed_bytes();
  printf("  %zu blocks, %.0f MB; OS bytes %.1f MB at the start, %.1f MB with everything "
         "allocated, %.1f MB after the last free (%zu blocks left in the thread cache); "
         "committed %.1f, %.1f, %.1f MB\n",
         n, mb(TOTAL), mb(s0.os_bytes_reserved), mb(s1.os_bytes_reserved), mb(s2.os_bytes_reserved),
         s2.thread_cached_blocks, mb(c0), mb(c1), mb(c2));
  CHECK_EQ(s2.small.blocks_in_use + s2.medium.blocks_in_use + s2.large.blocks_in_use, 0);
  CHECK_MSG(s2.small.bytes_reserved + s2.medium.bytes_reserved <=
                s0.small.bytes_reserved + s0.medium.bytes_reserved + MEDIUM_SPAN_SIZE +
                    MEDIUM_SPAN_HEAD_BYTES,
            "%.1f MB of small and medium spans held after everything was freed (thread caches "
            "pinning spans?)",
            mb(s2.small.bytes_reserved + s2.medium.bytes_reserved));
  CHECK(s2.large.bytes_reserved <= LARGE_CACHE_MIN_BYTES);

  /* Two idle periods: everything kept goes back. */
  fastmm_release_idle_memory();
  fastmm_release_idle_memory();
  fastmm_get_state(&s3);
  c3 = tu_committed_bytes();
  printf("  after two idle periods: OS bytes %.1f MB (start %+.2f MB); committed %.1f MB, "
         "%.1f MB at the start (%+.2f MB)\n",
         mb(s3.os_bytes_reserved), mb(s3.os_bytes_reserved) - mb(s0.os_bytes_reserved), mb(c3),
         mb(c0), mb(c3) - mb(c0));
  CHECK_MSG(s3.os_bytes_reserved <= s0.os_bytes_reserved + TARGET_SLACK,
            "%.1f MB still held by the manager, %.1f MB at the start", mb(s3.os_bytes_reserved),
            mb(s0.os_bytes_reserved));
  CHECK_MSG(c3 <= c0 + TARGET_SLACK, "%.1f MB committed after the idle spell, %.1f MB at the start",
            mb(c3), mb(c0));
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* What is kept during one idle period survives that period, and goes with the next. */
static void one_period_is_not_a_spell(void) {
  fastmm_state s0, s1;
  void *p;
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  p = fastmm_getmem(3 * MB);
  if (!CHECK(p != NULL))
    return;
  memset(p, 1, 3 * MB);
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  fastmm_release_idle_memory(); /* a period ends right after the block was kept */
  fastmm_get_state(&s1);
  CHECK_MSG(s1.large.bytes_reserved >= s0.large.bytes_reserved + 3 * MB,
            "the block kept for reuse went back after less than an idle period");
  CHECK(fastmm_getmem(3 * MB) == p); /* and it is reused */
  CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  fastmm_release_idle_memory();
  fastmm_release_idle_memory();
  fastmm_get_state(&s1);
  CHECK_EQ(s1.large.bytes_reserved, s0.large.bytes_reserved);
  CHECK_EQ(s1.os_bytes_reserved, s0.os_bytes_reserved);
}

/* A thread that frees much more of a class than anyone allocates stops keeping its blocks
 * (no flush needed for the spans to go back), and keeps them again once it allocates. */
static void thread_cache_shrinks(void) {
  enum { N = 20000 };
  static void *p[N];
  fastmm_state s0, s1;
  size_t i;
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  for (i = 0; i < N; i++) {
    p[i] = fastmm_getmem(64);
    if (!CHECK(p[i] != NULL))
      return;
  }
  for (i = 0; i < N; i++)
    CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
  fastmm_get_state(&s1);
  CHECK_MSG(s1.thread_cached_blocks == s0.thread_cached_blocks,
            "%zu blocks of a class nobody allocates any more left in the thread cache",
            s1.thread_cached_blocks - s0.thread_cached_blocks);
  CHECK_EQ(s1.small.bytes_reserved, s0.small.bytes_reserved);
  /* Allocating the class again: the cache keeps its blocks again. */
  for (i = 0; i < 1000; i++)
    p[i] = fastmm_getmem(64);
  for (i = 0; i < 100; i++)
    CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
  fastmm_get_state(&s1);
  CHECK_MSG(s1.thread_cached_blocks >= s0.thread_cached_blocks + 100,
            "after allocating again, the thread cache keeps %zu freed blocks",
            s1.thread_cached_blocks - s0.thread_cached_blocks);
  for (i = 100; i < 1000; i++)
    CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* Waits until the manager's OS bytes are back to s0's or `limit_ms` have passed (a liveness
 * bound, not a timing): s1 gets the last state; returns the ms waited. */
static uint64_t wait_given_back(const fastmm_state *s0, fastmm_state *s1, uint64_t limit_ms) {
  uint64_t t0 = tu_now_ms();
  do {
#if defined(_WIN32)
    Sleep(10);
#else
    tu_yield();
#endif
    fastmm_get_state(s1);
  } while (s1->os_bytes_reserved > s0->os_bytes_reserved && tu_now_ms() - t0 < limit_ms);
  return tu_now_ms() - t0;
}

/* A freed large block of `size` bytes, every page written (in the large cache afterwards). */
static int free_large(size_t size) {
  void *p = fastmm_getmem(size);
  if (!CHECK(p != NULL))
    return 0;
  memset(p, 1, size);
  return CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
}

/* Less than RELEASE_THREAD_MIN_KEPT kept starts no idle thread: a 1 MB block cached
 * alone is still kept after 15 idle periods' time (it goes back on the calls that give memory
 * back, and with the next thread); more kept starts the thread, which gives both back. */
static void a_small_block_starts_no_thread(void) {
  fastmm_state s0, s1;
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  fastmm_set_idle_release_interval(20);
  if (!free_large(MB))
    return;
  fastmm_get_state(&s1);
  CHECK(s1.os_bytes_reserved > s0.os_bytes_reserved);
  CHECK(s1.os_bytes_reserved - s0.os_bytes_reserved < RELEASE_THREAD_MIN_KEPT);
  wait_given_back(&s0, &s1, 300);
  CHECK_MSG(s1.os_bytes_reserved > s0.os_bytes_reserved,
            "1 MB kept alone went back by itself: an idle thread ran for it");
  if (!free_large(4 * MB))
    return;
  wait_given_back(&s0, &s1, 60000);
  CHECK_MSG(s1.os_bytes_reserved == s0.os_bytes_reserved,
            "with 5 MB kept the idle thread did not give both blocks back within a minute");
  fastmm_set_idle_release_interval(0);
}

/* The idle thread itself: a cached block goes back with nobody calling anything. */
static void the_thread_does_it(void) {
  fastmm_state s0, s1;
  uint64_t waited;
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  fastmm_set_idle_release_interval(20);
  CHECK_EQ(fastmm_get_idle_release_interval(), 20);
  if (!free_large(4 * MB))
    return;
  waited = wait_given_back(&s0, &s1, 60000);
  printf("  the idle thread gave the cached block back after %llu ms (period 20 ms)\n",
         (unsigned long long)waited);
  CHECK_MSG(s1.os_bytes_reserved == s0.os_bytes_reserved,
            "the idle thread did not give the cached block back within a minute");
  fastmm_set_idle_release_interval(0);
  CHECK_EQ(fastmm_get_idle_release_interval(), 0);
}

static void wait_ms(unsigned ms) {
#if defined(_WIN32)
  Sleep(ms);
#else
  uint64_t t0 = tu_now_ms();
  while (tu_now_ms() - t0 < ms)
    tu_yield();
#endif
}

/* Makes the manager keep one spare span: whole spans of the largest medium blocks, freed (the
 * spans they empty are unmapped but the last). Returns 0 if an allocation failed. */
static int make_a_spare_span(void) {
  enum { N = 8 };
  void *p[N];
  size_t i;
  for (i = 0; i < N; i++) {
    p[i] = fastmm_getmem(MEDIUM_MAX_USER);
    if (!CHECK(p[i] != NULL))
      return 0;
    memset(p[i], 1, MEDIUM_MAX_USER);
  }
  for (i = 0; i < N; i++)
    CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
  return 1;
}

/* Waits (up to a minute, a liveness bound) for the idle thread to bring the OS bytes back to
 * `start`; 1 when it did. */
static int given_back_to(size_t start, fastmm_state *now) {
  uint64_t t0 = tu_now_ms();
  do {
    wait_ms(10);
    fastmm_get_state(now);
  } while (now->os_bytes_reserved > start && tu_now_ms() - t0 < 60000);
  return now->os_bytes_reserved == start;
}

static void a_spare_alone_starts_no_thread(void) {
  fastmm_state s0, s1;
  if (!CHECK_MSG(MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES <= RELEASE_THREAD_MIN_KEPT,
                 "the default spare span alone would start the idle thread"))
    return;
  fastmm_set_idle_release_interval(0); /* waits for a running thread to end */
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  fastmm_set_idle_release_interval(20);
  if (!make_a_spare_span())
    return;
  fastmm_get_state(&s1);
  CHECK_MSG(s1.os_bytes_reserved ==
                s0.os_bytes_reserved + MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES,
            "after the medium blocks, %zu bytes more kept than before (a spare span: %zu)",
            s1.os_bytes_reserved - s0.os_bytes_reserved,
            (size_t)MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES);
  wait_ms(50 * 20);
  fastmm_get_state(&s1);
  CHECK_MSG(s1.os_bytes_reserved ==
                s0.os_bytes_reserved + MEDIUM_SPAN_SIZE + MEDIUM_SPAN_HEAD_BYTES,
            "a spare span alone went back by itself: an idle thread ran for it");
  /* Kept beside it, a cached large block starts the thread: both go back. */
  void *big = fastmm_getmem(4 * MB);
  if (!CHECK(big != NULL))
    return;
  memset(big, 1, 4 * MB);
  CHECK_EQ(fastmm_freemem(big), FASTMM_OK);
  CHECK_MSG(given_back_to(s0.os_bytes_reserved, &s1),
            "the idle thread did not give the spare span and the cached block back within a "
            "minute (%zu bytes more than before)",
            s1.os_bytes_reserved - s0.os_bytes_reserved);
  /* A spare span of the speed strategy (4 MB) is more than that: it starts the thread alone. */
  fastmm_set_idle_release_interval(0); /* the thread that ran ends first */
  fastmm_set_idle_release_interval(20);
  fastmm_set_optimization_strategy(FASTMM_OPTIMIZE_FOR_SPEED);
  if (make_a_spare_span()) {
    fastmm_get_state(&s1);
    CHECK_MSG(s1.os_bytes_reserved ==
                  s0.os_bytes_reserved + MEDIUM_SPAN_SIZE_SPEED + MEDIUM_SPAN_HEAD_BYTES,
              "after the medium blocks, %zu bytes more kept than before (a 4 MB spare span)",
              s1.os_bytes_reserved - s0.os_bytes_reserved);
    CHECK_MSG(given_back_to(s0.os_bytes_reserved, &s1),
              "the idle thread did not give a 4 MB spare span back within a minute");
  }
  fastmm_set_optimization_strategy(FASTMM_BALANCED);
  fastmm_set_idle_release_interval(0);
}

#if defined(_WIN32)
typedef LONG(NTAPI *ldr_lock_fn)(ULONG flags, ULONG *disposition, ULONG_PTR *cookie);
typedef LONG(NTAPI *ldr_unlock_fn)(ULONG flags, ULONG_PTR cookie);

static struct {
  ldr_lock_fn lock;
  ldr_unlock_fn unlock;
  HANDLE held, done;
  int done_in_time;
} loader;

/* Holds the loader lock until the main thread says it is done (up to 30 s, a liveness bound:
 * the FreeMem it waits for returns at once when it does not need the lock). */
static void hold_loader_lock(void *arg) {
  ULONG disposition = 0;
  ULONG_PTR cookie = 0;
  (void)arg;
  loader.lock(0, &disposition, &cookie);
  SetEvent(loader.held);
  loader.done_in_time = WaitForSingleObject(loader.done, 30000) == WAIT_OBJECT_0;
  loader.unlock(0, cookie);
}

static void start_while_loader_lock_held(void) {
  fastmm_state s0, s1;
  tu_thread t;
  HMODULE ntdll = GetModuleHandleA("ntdll.dll");
  loader.lock = (ldr_lock_fn)(void (*)(void))GetProcAddress(ntdll, "LdrLockLoaderLock");
  loader.unlock = (ldr_unlock_fn)(void (*)(void))GetProcAddress(ntdll, "LdrUnlockLoaderLock");
  if (!CHECK(loader.lock != NULL && loader.unlock != NULL))
    return;
  loader.held = CreateEventA(NULL, TRUE, FALSE, NULL);
  loader.done = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (!CHECK(loader.held != NULL && loader.done != NULL))
    return;
  fastmm_set_idle_release_interval(0); /* no idle thread runs now */
  fastmm_release_free_memory();
  fastmm_get_state(&s0);
  fastmm_set_idle_release_interval(20);
  if (!CHECK(tu_thread_start(&t, hold_loader_lock, NULL)))
    return;
  WaitForSingleObject(loader.held, INFINITE);
  int freed = free_large(4 * MB); /* 4 MB kept: starts the idle thread */
  SetEvent(loader.done);
  tu_thread_join(&t);
  CHECK_MSG(
      loader.done_in_time,
      "a FreeMem that started the idle thread waited for the loader lock another thread held");
  if (freed)
    CHECK_MSG(given_back_to(s0.os_bytes_reserved, &s1),
              "the idle thread started under the loader lock did not give the block back within "
              "a minute");
  fastmm_set_idle_release_interval(0);
  CloseHandle(loader.held);
  CloseHandle(loader.done);
}
#endif

int main(int argc, char **argv) {
  printf("test_idle_release (%s, %u-bit pointers)\n", tu_build_name(),
         (unsigned)(sizeof(void *) * 8));
  CHECK_EQ(fastmm_get_idle_release_interval(), RELEASE_IDLE_INTERVAL_MS);
  fastmm_set_idle_release_interval(0);
  program_life();
  /* "program-life": part 1 alone, for the mutant whose release does nothing (the later parts
   * would wait their liveness bound for a release that never comes). */
  if (argc > 1 && strcmp(argv[1], "program-life") == 0)
    return tu_finish("test_idle_release");
  one_period_is_not_a_spell();
  thread_cache_shrinks();
  a_small_block_starts_no_thread();
  the_thread_does_it();
  a_spare_alone_starts_no_thread();
#if defined(_WIN32)
  start_while_loader_lock_held();
#endif
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_idle_release");
}
