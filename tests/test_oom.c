/* SPDX-License-Identifier: MIT */
/* Out of memory. Two ways for the OS to say no:
 *
 *  1. fastmm_set_memory_usage_limit: mappings beyond the limit fail exactly as a failed
 *     VirtualAlloc/mmap would (the OS-failure hook; stats.c). Every build.
 *  2. A real address space exhausted:
 *       - Win32 (under Wine): a 32-bit process has 2 GB; large blocks are taken until GetMem
 *         says NULL, then medium and small ones, until the manager cannot map anything more;
 *       - natively without a sanitizer: RLIMIT_AS is set a few hundred MB above what the
 *         process uses, and the same is done (ASan and TSan reserve terabytes of shadow, so
 *         they are left out); Win64 has 128 TB: only the limit applies there.
 *
 * In both: GetMem and AllocMem return NULL (nil through the Delphi record), ReallocMem returns
 * NULL and leaves the old block intact for every kind, nothing leaks (the blocks in use and the
 * OS bytes are what they were before the failed call), the heap stays consistent, and when the
 * memory comes back (the limit lifted, blocks freed) the manager works again. */
#if !defined(_WIN32) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE
#endif
#include "test_blocks.h"

#if !defined(_WIN32)
#include <sys/resource.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#define MB ((size_t)1024 * 1024)

/* ---- blocks the test holds: a table outside the manager --------------------------------- */

#define MAX_HELD 200000
static unsigned char *held[MAX_HELD];
static size_t held_size[MAX_HELD];
static size_t held_count;

static void hold(unsigned char *p, size_t size) {
  held[held_count] = p;
  held_size[held_count] = size;
  /* Marks at both ends (and every 64 KB of big blocks) so a block that moved or was
   * overwritten shows, without touching every page of a 2 GB heap. */
  p[0] = (unsigned char)(held_count * 7 + 1);
  p[size - 1] = (unsigned char)(held_count * 13 + 5);
  held_count++;
}

static int held_intact(size_t i) {
  return held[i][0] == (unsigned char)(i * 7 + 1) &&
         held[i][held_size[i] - 1] == (unsigned char)(i * 13 + 5) &&
         fastmm_usable_size(held[i]) >= held_size[i];
}

static void free_held(void) {
  size_t i, bad = 0, refused = 0;
  for (i = 0; i < held_count; i++) {
    bad += !held_intact(i);
    refused += fastmm_freemem(held[i]) != FASTMM_OK;
  }
  CHECK_MSG(bad == 0, "%zu of %zu held blocks were damaged", bad, held_count);
  CHECK_EQ(refused, 0);
  held_count = 0;
}

/* Takes blocks of `size` until GetMem says NULL (or `max` of them). Returns how many. */
static size_t take_until_null(size_t size, size_t max) {
  size_t n = 0;
  while (n < max && held_count < MAX_HELD) {
    unsigned char *p = (unsigned char *)fastmm_getmem(size);
    if (p == NULL)
      break;
    hold(p, size);
    n++;
  }
  return n;
}

/* ---- what must hold when the OS says no ---------------------------------------------------- */

/* Blocks of every kind with patterns, to resize while memory is short. */
#define VICTIMS 4
static unsigned char *victim[VICTIMS];
static const size_t victim_size[VICTIMS] = {100, 2000, 100000, 3 * MB};

static void make_victims(void) {
  size_t i;
  for (i = 0; i < VICTIMS; i++) {
    victim[i] = (unsigned char *)fastmm_getmem(victim_size[i]);
    if (CHECK(victim[i] != NULL))
      tu_fill_pattern(victim[i], victim_size[i], (uint32_t)i + 500u);
  }
}

static void free_victims(void) {
  size_t i;
  for (i = 0; i < VICTIMS; i++) {
    if (!victim[i])
      continue;
    CHECK_MSG(tu_check_pattern(victim[i], victim_size[i], (uint32_t)i + 500u) == (size_t)-1,
              "victim %zu damaged", i);
    CHECK_EQ(fastmm_freemem(victim[i]), FASTMM_OK);
    victim[i] = NULL;
  }
}

/* Memory is exhausted now (no new mapping can be had): requests that need one fail cleanly,
 * resizes that need one leave the block as it was, and nothing changes in the manager. */
static void everything_fails_cleanly(const char *when) {
  /* Requests that need a new mapping whatever the heap holds: a large block, growing each
   * victim far beyond what any span could give. */
  static const size_t big[] = {MEDIUM_MAX_USER + 1, 8 * MB, 64 * MB};
  fastmm_memory_manager_ex mm;
  fastmm_state s0, s1;
  size_t i, k;
  fastmm_get_memory_manager(&mm);
  tb_state(&s0);
  for (i = 0; i < sizeof big / sizeof big[0]; i++) {
    void *p = fastmm_getmem(big[i]);
    CHECK_MSG(p == NULL, "%s: getmem(%zu) = %p", when, big[i], p);
    if (p)
      fastmm_freemem(p);
    p = fastmm_allocmem(big[i]);
    CHECK_MSG(p == NULL, "%s: allocmem(%zu) = %p", when, big[i], p);
    if (p)
      fastmm_freemem(p);
    p = mm.get_mem((intptr_t)big[i]);
    CHECK_MSG(p == NULL, "%s: Delphi GetMem(%zu) = %p", when, big[i], p);
    if (p)
      mm.free_mem(p);
    p = fastmm_reallocmem(NULL, big[i]);
    CHECK_MSG(p == NULL, "%s: reallocmem(NULL, %zu) = %p", when, big[i], p);
    if (p)
      fastmm_freemem(p);
    for (k = 0; k < VICTIMS; k++) {
      /* Past the victim's own reservation too: a large block reserves up to three times its
       * size ahead (policy.h), and grows into that without a new mapping. */
      size_t to = 4 * victim_size[k] + big[i] + 8 * MB;
      if (!victim[k])
        continue;
      p = fastmm_reallocmem(victim[k], to);
      CHECK_MSG(p == NULL, "%s: reallocmem(%zu-byte block, %zu) = %p", when, victim_size[k], to, p);
      if (p) { /* it worked after all: keep the block and its pattern */
        victim[k] = (unsigned char *)p;
        continue;
      }
      p = mm.realloc_mem(victim[k], (intptr_t)to);
      CHECK_MSG(p == NULL, "%s: Delphi ReallocMem(%zu-byte block, %zu) = %p", when, victim_size[k],
                to, p);
      if (p) {
        victim[k] = (unsigned char *)p;
        continue;
      }
      CHECK_MSG(fastmm_usable_size(victim[k]) >= victim_size[k] &&
                    tu_check_pattern(victim[k], victim_size[k], (uint32_t)k + 500u) == (size_t)-1,
                "%s: the %zu-byte block was damaged by a failed ReallocMem", when, victim_size[k]);
    }
  }
  tb_state(&s1);
  CHECK_MSG(tb_blocks_in_use(&s1) == tb_blocks_in_use(&s0),
            "%s: failed calls changed the blocks in use: %zu -> %zu", when, tb_blocks_in_use(&s0),
            tb_blocks_in_use(&s1));
  CHECK_MSG(s1.os_bytes_reserved == s0.os_bytes_reserved,
            "%s: failed calls changed the OS bytes: %zu -> %zu", when, s0.os_bytes_reserved,
            s1.os_bytes_reserved);
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* The manager works: blocks of every kind, patterns kept. */
static void works_again(const char *when) {
  static const size_t sizes[] = {16, 1000, SMALL_MAX_USER + 1, 200000, 2 * MB, 40 * MB};
  void *p[sizeof sizes / sizeof sizes[0]];
  size_t i;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    p[i] = fastmm_getmem(sizes[i]);
    CHECK_MSG(p[i] != NULL, "%s: getmem(%zu) = NULL", when, sizes[i]);
    if (p[i])
      tu_fill_pattern(p[i], sizes[i] < 65536 ? sizes[i] : 65536, (uint32_t)i);
  }
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    if (!p[i])
      continue;
    CHECK(tu_check_pattern(p[i], sizes[i] < 65536 ? sizes[i] : 65536, (uint32_t)i) == (size_t)-1);
    p[i] = fastmm_reallocmem(p[i], sizes[i] * 2);
    CHECK_MSG(p[i] != NULL, "%s: reallocmem to %zu = NULL", when, sizes[i] * 2);
    if (p[i])
      CHECK_EQ(fastmm_freemem(p[i]), FASTMM_OK);
  }
  CHECK_EQ(fastmm_check_heap(), 0);
}

/* ---- 1. the memory usage limit ------------------------------------------------------------- */

static void with_usage_limit(void) {
  fastmm_state s0, s1, s;
  size_t n_large, n_medium, n_small, limit, again;
  printf("  memory usage limit:\n");
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s0);
  make_victims();

  /* No mapping at all beyond what is mapped now. */
  tb_state(&s);
  fastmm_set_memory_usage_limit(s.os_bytes_reserved);
  CHECK_EQ(fastmm_get_memory_usage_limit(), s.os_bytes_reserved);
  everything_fails_cleanly("limit at the bytes mapped");
  fastmm_set_memory_usage_limit(0);
  CHECK_EQ(fastmm_get_memory_usage_limit(), 0);

  /* 48 MB more than is mapped: fill it with every kind until each says NULL. */
  tb_state(&s);
  limit = s.os_bytes_reserved + 48 * MB;
  fastmm_set_memory_usage_limit(limit);
  n_large = take_until_null(3 * MB, MAX_HELD);
  n_medium = take_until_null(100000, MAX_HELD);
  n_small = take_until_null(700, MAX_HELD);
  tb_state(&s1);
  printf("    under a limit of %zu MB: %zu large, %zu medium, %zu small blocks until NULL; %zu "
         "bytes mapped\n",
         limit / MB, n_large, n_medium, n_small, s1.os_bytes_reserved);
  CHECK(n_large > 0 && n_medium > 0 && n_small > 0);
  CHECK_MSG(s1.os_bytes_reserved <= limit, "%zu bytes mapped under a limit of %zu",
            s1.os_bytes_reserved, limit);
  everything_fails_cleanly("limit reached");
  /* Every held block is intact; freeing them gives the memory back for reuse under the same
   * limit: as many large blocks fit again. */
  free_held();
  fastmm_flush_thread_cache();
  again = take_until_null(3 * MB, MAX_HELD);
  CHECK_MSG(again >= n_large, "after freeing, %zu large blocks fit under the limit, %zu before",
            again, n_large);
  free_held();
  /* The limit lifted: the memory is back. */
  fastmm_set_memory_usage_limit(0);
  works_again("limit lifted");
  free_victims();
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_MSG(s1.os_bytes_reserved <= s0.os_bytes_reserved,
            "%zu bytes mapped at the end, %zu at the start: something leaked", s1.os_bytes_reserved,
            s0.os_bytes_reserved);

  /* A limit below what is mapped only stops further mapping: live blocks keep working. */
  make_victims();
  fastmm_set_memory_usage_limit(MB);
  everything_fails_cleanly("limit below the bytes mapped");
  free_victims();
  fastmm_set_memory_usage_limit(0);
  works_again("limit lifted again");
}

/* ---- 2. a real address space exhausted ----------------------------------------------------- */
#if (defined(_WIN32) && !defined(_WIN64)) || (!defined(_WIN32) && !defined(UNDER_SANITIZER))
#define REAL_EXHAUSTION 1

/* Takes everything the address space has, in decreasing sizes. Returns the bytes held. */
static size_t exhaust(void) {
  static const size_t sizes[] = {256 * MB, 64 * MB, 16 * MB, 4 * MB, MB, MEDIUM_MAX_USER + 1,
                                 200000,   20000,   2000,    100};
  size_t i, total = 0, k;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = take_until_null(sizes[i], MAX_HELD);
    total += n * sizes[i];
  }
  for (k = 0; k < held_count; k++)
    if (!held_intact(k))
      break;
  CHECK_MSG(k == held_count, "held block %zu damaged while the address space ran out", k);
  return total;
}

static void address_space_exhausted(const char *how) {
  fastmm_state s0, s1;
  size_t total;
  printf("  real exhaustion (%s):\n", how);
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s0);
  make_victims();
  total = exhaust();
  tb_state(&s1);
  printf("    %zu blocks, %zu MB held when GetMem said NULL for every size; %zu MB mapped\n",
         held_count, total / MB, s1.os_bytes_reserved / MB);
  CHECK(total > 0);
  everything_fails_cleanly("address space exhausted");
  /* Memory comes back: half of what is held is freed, then all of it. */
  {
    size_t i, n = held_count, kept = 0;
    for (i = 0; i < n; i++) {
      CHECK(held_intact(i));
      if (i % 2 == 0) {
        CHECK_EQ(fastmm_freemem(held[i]), FASTMM_OK);
      } else {
        held[kept] = held[i];
        held_size[kept] = held_size[i];
        kept++;
      }
    }
    /* The marks were written for the old index: rewrite them for the new one. */
    held_count = 0;
    for (i = 0; i < kept; i++)
      hold(held[i], held_size[i]);
  }
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  {
    void *p = fastmm_getmem(MB);
    CHECK_MSG(p != NULL, "no 1 MB block after half the heap was freed");
    if (p)
      CHECK_EQ(fastmm_freemem(p), FASTMM_OK);
  }
  free_held();
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  works_again("address space given back");
  free_victims();
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  tb_state(&s1);
  CHECK_EQ(tb_blocks_in_use(&s1), tb_blocks_in_use(&s0));
  CHECK_MSG(s1.os_bytes_reserved <= s0.os_bytes_reserved, "%zu bytes mapped after, %zu before",
            s1.os_bytes_reserved, s0.os_bytes_reserved);
}

#endif

#if !defined(_WIN32) && !defined(UNDER_SANITIZER)
/* The process's virtual size now, from /proc/self/status (VmSize, kB). */
static size_t virtual_size(void) {
  return tu_proc_status_bytes("VmSize");
}
#endif

int main(void) {
  printf("test_oom (%s, %u-bit pointers)\n", tu_build_name(), (unsigned)(sizeof(void *) * 8));
  /* The thread cache is carved (and kept) on first use: before any baseline. */
  fastmm_freemem(fastmm_getmem(1));
  with_usage_limit();
#if defined(_WIN32) && !defined(_WIN64)
  address_space_exhausted("the 2 GB of a 32-bit process");
#elif !defined(_WIN32) && !defined(UNDER_SANITIZER)
  {
    struct rlimit old, lim;
    size_t vs = virtual_size();
    if (CHECK(vs > 0) && CHECK(getrlimit(RLIMIT_AS, &old) == 0)) {
      lim = old;
      lim.rlim_cur = (rlim_t)(vs + 384 * MB);
      if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
        lim.rlim_cur = old.rlim_cur;
      if (CHECK(setrlimit(RLIMIT_AS, &lim) == 0)) {
        address_space_exhausted("RLIMIT_AS 384 MB above the process's size");
        CHECK(setrlimit(RLIMIT_AS, &old) == 0);
        works_again("RLIMIT_AS restored");
      }
    }
  }
#else
  printf("  real exhaustion: not on this build (64-bit Windows has 128 TB; sanitizers reserve "
         "terabytes of shadow)\n");
#endif
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_oom");
}
