/* SPDX-License-Identifier: MIT */
/* libfastmmc-malloc.so as the process's malloc: every function it serves, with glibc's results
 * (errno, alignment, usable size, realloc's data, overflows), and the validation contract on free
 * and realloc (a bad pointer reported on stderr with its address, then SIGABRT; carrying on with
 * FASTMMC_MALLOC_BAD_POINTER=continue). The same program runs linked to the library
 * (test_malloc_linked) and, built without it, under LD_PRELOAD (test_malloc_preload): it finds
 * fastmm_owns_block with dlsym in both, and fails if the library does not serve its malloc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastmm.h"
#include "test_util.h"

static int (*owns)(const void *p);

static int aligned_to(const void *p, size_t a) {
  return ((uintptr_t)p & (a - 1)) == 0;
}

/* Calls through a volatile pointer, so the compiler cannot fold a call it thinks it knows
 * (malloc(SIZE_MAX) to NULL, a free right after a malloc away). */
static void *(*volatile do_malloc)(size_t) = malloc;
static void *(*volatile do_calloc)(size_t, size_t) = calloc;
static void *(*volatile do_realloc)(void *, size_t) = realloc;
static void (*volatile do_free)(void *) = free;
static void *(*volatile do_reallocarray)(void *, size_t, size_t) = reallocarray;

static void plain_blocks(void) {
  void *a = do_malloc(0), *b = do_malloc(0);
  CHECK(a != NULL && b != NULL && a != b);
  CHECK(owns(a) && owns(b));
  do_free(a);
  do_free(b);
  static const size_t sizes[] = {1,    8,    15,    16,     17,     100,    2556,
                                 2557, 4000, 70000, 524272, 524273, 3 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = do_malloc(sizes[i]);
    CHECK_MSG(p != NULL && owns(p) && aligned_to(p, 16), "malloc(%zu) = %p", sizes[i], (void *)p);
    size_t usable = malloc_usable_size(p);
    CHECK_MSG(usable >= sizes[i], "usable %zu for %zu", usable, sizes[i]);
    tu_fill_pattern(p, usable, (uint32_t)i); /* all of it is the caller's */
    CHECK_EQ(tu_check_pattern(p, usable, (uint32_t)i), SIZE_MAX);
    do_free(p);
    CHECK(!owns(p));
  }
  CHECK_EQ(malloc_usable_size(NULL), 0);
  do_free(NULL);
  errno = 0;
  CHECK(do_malloc(SIZE_MAX) == NULL);
  CHECK_EQ(errno, ENOMEM);
  errno = 0;
  CHECK(do_malloc((size_t)PTRDIFF_MAX + 1) == NULL);
  CHECK_EQ(errno, ENOMEM);
}

static void zeroed_blocks(void) {
  static const size_t sizes[] = {1, 24, 300, 2000, 9000, 200000, 1 << 20, 5 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    /* Dirty a block of the size first, so calloc may be handed it back. */
    void *d = do_malloc(sizes[i]);
    CHECK(d != NULL);
    memset(d, 0xA5, sizes[i]);
    do_free(d);
    unsigned char *p = do_calloc(sizes[i], 1);
    CHECK_MSG(p != NULL && owns(p) && tu_all_zero(p, sizes[i]), "calloc(%zu)", sizes[i]);
    do_free(p);
    p = do_calloc(1, sizes[i]);
    CHECK(p != NULL && tu_all_zero(p, sizes[i]));
    do_free(p);
  }
  void *z = do_calloc(0, 16);
  CHECK(z != NULL && owns(z));
  do_free(z);
  errno = 0;
  CHECK(do_calloc(SIZE_MAX / 2, 3) == NULL);
  CHECK_EQ(errno, ENOMEM);
  errno = 0;
  CHECK(do_calloc((size_t)1 << 33, (size_t)1 << 33) == NULL);
  CHECK_EQ(errno, ENOMEM);
}

static void resized_blocks(void) {
  /* Through every kind, growing then shrinking, the data kept. */
  static const size_t steps[] = {10, 200, 3000, 60000, 700000, 4 << 20, 90000, 500, 7};
  unsigned char *p = do_realloc(NULL, 5);
  CHECK(p != NULL && owns(p));
  tu_fill_pattern(p, 5, 77);
  size_t kept = 5;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    unsigned char *q = do_realloc(p, steps[i]);
    CHECK_MSG(q != NULL && owns(q) && aligned_to(q, 16), "realloc to %zu", steps[i]);
    if (q == NULL)
      return;
    size_t same = kept < steps[i] ? kept : steps[i];
    CHECK_EQ(tu_check_pattern(q, same, 77), SIZE_MAX);
    tu_fill_pattern(q, steps[i], 77);
    kept = steps[i];
    p = q;
  }
  /* A failure leaves the block as it was. */
  errno = 0;
  CHECK(do_realloc(p, SIZE_MAX - 4096) == NULL);
  CHECK_EQ(errno, ENOMEM);
  CHECK(owns(p));
  CHECK_EQ(tu_check_pattern(p, kept, 77), SIZE_MAX);
  /* realloc(p, 0) frees p and returns NULL, as glibc does. */
  CHECK(do_realloc(p, 0) == NULL);
  CHECK(!owns(p));

  p = do_reallocarray(NULL, 10, 10);
  CHECK(p != NULL && owns(p) && malloc_usable_size(p) >= 100);
  errno = 0;
  CHECK(do_reallocarray(p, SIZE_MAX / 4, 8) == NULL);
  CHECK_EQ(errno, ENOMEM);
  CHECK(owns(p));
  unsigned char *q = do_reallocarray(p, 1000, 10);
  CHECK(q != NULL && malloc_usable_size(q) >= 10000);
  do_free(q);
}

static void aligned_blocks(void) {
  void *p = (void *)&p, *keep = p;
  CHECK_EQ(posix_memalign(&p, 3, 10), EINVAL);
  CHECK_EQ(posix_memalign(&p, 4, 10), EINVAL); /* not a multiple of sizeof(void *) */
  CHECK_EQ(posix_memalign(&p, 0, 10), EINVAL);
  CHECK(p == keep);
  static const size_t aligns[] = {8, 16, 32, 64, 256, 4096, 65536};
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    errno = 1234;
    int r = posix_memalign(&p, aligns[i], 1000 + i);
    CHECK_MSG(r == 0 && p != NULL && aligned_to(p, aligns[i]) && owns(p), "posix_memalign(%zu)",
              aligns[i]);
    CHECK_EQ(errno, 1234);
    CHECK(malloc_usable_size(p) >= 1000 + i);
    do_free(p);
    void *a = aligned_alloc(aligns[i], 3 * aligns[i]);
    CHECK(a != NULL && aligned_to(a, aligns[i]) && owns(a));
    do_free(a);
    void *m = memalign(aligns[i], 77);
    CHECK(m != NULL && aligned_to(m, aligns[i] < 16 ? 16 : aligns[i]) && owns(m));
    /* An aligned block resizes like any other. */
    memset(m, 0x3C, 77);
    m = do_realloc(m, 100000);
    CHECK(m != NULL && ((unsigned char *)m)[76] == 0x3C);
    do_free(m);
  }
  /* Above what the manager aligns (64 KB): refused as memory it cannot give. */
  keep = p;
  CHECK_EQ(posix_memalign(&p, (size_t)1 << 20, 10), ENOMEM);
  CHECK(p == keep);
  errno = 0;
  CHECK(aligned_alloc(48, 96) == NULL);
  CHECK_EQ(errno, EINVAL);
  errno = 0;
  CHECK(aligned_alloc(0, 96) == NULL);
  CHECK_EQ(errno, EINVAL);
  /* memalign rounds 48 up to 64, and refuses an alignment above SIZE_MAX / 2 + 1. */
  void *m = memalign(48, 100);
  CHECK(m != NULL && aligned_to(m, 64));
  do_free(m);
  errno = 0;
  CHECK(memalign(SIZE_MAX / 2 + 2, 10) == NULL);
  CHECK_EQ(errno, EINVAL);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  void *v = valloc(10);
  CHECK(v != NULL && aligned_to(v, page) && owns(v));
  do_free(v);
  v = pvalloc(1);
  CHECK(v != NULL && aligned_to(v, page) && malloc_usable_size(v) >= page);
  do_free(v);
  errno = 0;
  CHECK(pvalloc(SIZE_MAX - 10) == NULL);
  CHECK_EQ(errno, ENOMEM);
}

/* Runs `what` in a child with stderr sent to a pipe; returns the child's wait status and its
 * stderr in text. */
static int in_child(void (*what)(void), char *text, size_t size) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    what();
    _exit(0);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t n;
  while (got + 1 < size && (n = read(fds[0], text + got, size - 1 - got)) > 0)
    got += (size_t)n;
  text[got] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

static char *bad; /* the pointer each child frees */
static char foreign[64] __attribute__((aligned(16)));

static void free_bad(void) {
  do_free(bad);
}

static void realloc_bad(void) {
  errno = 0;
  void *r = do_realloc(bad, 100);
  /* Reached only when carrying on. */
  _exit(r == NULL && errno == EINVAL ? 0 : 3);
}

static void bad_pointers(void) {
  char *live = do_malloc(100), *freed = do_malloc(200);
  CHECK(live != NULL && freed != NULL);
  do_free(freed);
  char *cases[] = {live + 16, freed, foreign + 16};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[64], text[512];
    bad = cases[i];
    for (int carry = 0; carry < 2; carry++) {
      if (carry)
        setenv("FASTMMC_MALLOC_BAD_POINTER", "continue", 1);
      else
        unsetenv("FASTMMC_MALLOC_BAD_POINTER");
      snprintf(want, sizeof want, "fastmm-c: free(): invalid pointer %p", (void *)bad);
      int st = in_child(free_bad, text, sizeof text);
      if (carry)
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %zu: status %d", i, st);
      else
        CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "case %zu: status %d", i, st);
      CHECK_MSG(strstr(text, want) != NULL, "case %zu: stderr \"%s\", wanted \"%s\"", i, text,
                want);
      snprintf(want, sizeof want, "fastmm-c: realloc(): invalid pointer %p", (void *)bad);
      st = in_child(realloc_bad, text, sizeof text);
      if (carry)
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %zu: status %d", i, st);
      else
        CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "case %zu: status %d", i, st);
      CHECK_MSG(strstr(text, want) != NULL, "case %zu: stderr \"%s\"", i, text);
    }
  }
  unsetenv("FASTMMC_MALLOC_BAD_POINTER");
  /* The parent's heap is untouched by all that. */
  CHECK(owns(live));
  do_free(live);
  CHECK(foreign[16] == 0);
}

#define THREADS 4
#define ROUNDS 20000

/* Each thread frees what the one before it allocated (blocks cross threads). */
static void *volatile handoff[THREADS][64];

static void *churn(void *arg) {
  size_t me = (size_t)(uintptr_t)arg;
  uint64_t failed = 0;
  for (unsigned r = 0; r < ROUNDS; r++) {
    size_t slot = r % 64;
    void *p = do_malloc(8 + (r * 37 + me * 11) % 3000);
    if (p == NULL || !owns(p))
      failed++;
    void *old = __atomic_exchange_n(&handoff[(me + 1) % THREADS][slot], p, __ATOMIC_ACQ_REL);
    do_free(old);
  }
  return (void *)(uintptr_t)failed;
}

static void threads(void) {
  pthread_t t[THREADS];
  for (size_t i = 0; i < THREADS; i++)
    CHECK(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i) == 0);
  for (size_t i = 0; i < THREADS; i++) {
    void *failed;
    pthread_join(t[i], &failed);
    CHECK_EQ((uintptr_t)failed, 0);
  }
  for (size_t i = 0; i < THREADS; i++)
    for (size_t j = 0; j < 64; j++)
      do_free(handoff[i][j]);
}

/* Threads that allocate, free and end one after another: each one's thread cache goes back with
 * its blocks when it ends (a pthread key's destructor), so the blocks cached in all threads stay
 * where they were after the first few, give or take what one thread caches (ENDING_BLOCKS);
 * without it every thread would leave its ENDING_BLOCKS behind. */
#define ENDING_BLOCKS 50
#define ENDING_THREADS 300

static void *ending(void *arg) {
  void *p[ENDING_BLOCKS];
  for (size_t i = 0; i < ENDING_BLOCKS; i++)
    p[i] = do_malloc(16 + i * 8);
  for (size_t i = 0; i < ENDING_BLOCKS; i++)
    do_free(p[i]);
  return arg;
}

static size_t run_ending_threads(size_t count, void (*get_state)(fastmm_state *)) {
  for (size_t i = 0; i < count; i++) {
    pthread_t t;
    if (!CHECK(pthread_create(&t, NULL, ending, NULL) == 0))
      break;
    pthread_join(t, NULL);
  }
  fastmm_state s;
  get_state(&s);
  return s.thread_cached_blocks;
}

static void ending_threads(void) {
  void (*get_state)(fastmm_state *);
  *(void **)&get_state = dlsym(RTLD_DEFAULT, "fastmm_get_state");
  if (!CHECK(get_state != NULL))
    return;
  size_t first = run_ending_threads(20, get_state);
  size_t later = run_ending_threads(ENDING_THREADS, get_state);
  CHECK_MSG(later <= first + ENDING_BLOCKS,
            "%zu blocks cached after %d more threads ended, %zu before", later, ENDING_THREADS,
            first);
}

int main(void) {
  *(void **)&owns = dlsym(RTLD_DEFAULT, "fastmm_owns_block");
  if (!CHECK_MSG(owns != NULL, "fastmm_owns_block not found: the library is not loaded"))
    return tu_finish("test_malloc_api");
  /* The library serves this program's malloc (and served the C library's before main). */
  void *p = do_malloc(40);
  CHECK(owns(p));
  do_free(p);
  char *s = strdup("made by the C library");
  CHECK(s != NULL && owns(s));
  do_free(s);
  plain_blocks();
  zeroed_blocks();
  resized_blocks();
  aligned_blocks();
  bad_pointers();
  threads();
  ending_threads();
  return tu_finish("test_malloc_api");
}
