/* SPDX-License-Identifier: MIT */
/* The C library's allocation functions served by the manager: libfastmmc-malloc.so, a library
 * of its own (libfastmmc.so leaves the process's malloc alone), linked into a program or loaded
 * with LD_PRELOAD. Only native (non-Windows) builds compile this file.
 *
 * What glibc does, these do: malloc(0) is a unique block, free(NULL) nothing, realloc(NULL, n)
 * malloc(n), realloc(p, 0) frees p and returns NULL; a failure is NULL with errno ENOMEM (a
 * size beyond PTRDIFF_MAX, calloc's or reallocarray's product overflowing); memalign rounds an
 * alignment that is not a power of two up to one and refuses one above SIZE_MAX / 2 + 1 with
 * EINVAL, aligned_alloc refuses any that is not a power of two (EINVAL, as glibc 2.38 and C17
 * say), posix_memalign one that is not a power-of-two multiple of sizeof(void *) (returns EINVAL,
 * errno untouched). Every block is 16-byte aligned (glibc's max_align_t). An alignment above 64
 * KB, which glibc serves and the manager does not (core/policy.h, ALIGNED_MAX), is refused as
 * memory it cannot give: ENOMEM.
 *
 * The validation contract (docs/linux.md): free and realloc of a pointer that is not where a
 * live block of the manager begins (freed already, interior, another allocator's) write
 * "fastmm-c: free(): invalid pointer 0x..." to standard error, with no allocation, and abort as
 * glibc does when it finds a bad free. With FASTMMC_MALLOC_BAD_POINTER=continue in the
 * environment they carry on: free ignores the pointer and realloc returns NULL with errno EINVAL
 * (not ENOMEM: the pointer, not memory, was wrong), leaving the pointer's memory alone. */
#if !defined(_WIN32)
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "entry/alloc_fast.h"
#include "entry/startup.h"
#include "fastmm.h"
#include "prim/prim.h"

#define MALLOC_EXPORT __attribute__((visibility("default")))

void *malloc(size_t size) MALLOC_EXPORT;
void free(void *p) MALLOC_EXPORT;
void *calloc(size_t count, size_t size) MALLOC_EXPORT;
void *realloc(void *p, size_t size) MALLOC_EXPORT;
void *reallocarray(void *p, size_t count, size_t size) MALLOC_EXPORT;
int posix_memalign(void **out, size_t alignment, size_t size) MALLOC_EXPORT;
void *aligned_alloc(size_t alignment, size_t size) MALLOC_EXPORT;
void *memalign(size_t alignment, size_t size) MALLOC_EXPORT;
void *valloc(size_t size) MALLOC_EXPORT;
void *pvalloc(size_t size) MALLOC_EXPORT;
size_t malloc_usable_size(void *p) MALLOC_EXPORT;

/* Set once the library's start-up has run (entry_startup). The dynamic loader and the C
 * library call malloc before the library's constructor runs, and free of a pointer needs the
 * page map's fast copy that the start-up fills: every entry tests this first. */
static int started;

static FMM_NOINLINE void start(void) {
  entry_startup();
  /* No idle thread inside another program's process: it would be created from inside a call
   * that may hold one of the manager's locks (pthread_create allocates), and a process with a
   * thread it did not make cannot unshare(2) or fork as simply as it expects. Memory kept for
   * reuse stays bounded by the caches' limits; a program may turn the thread on itself. */
  fastmm_set_idle_release_interval(0);
  started = 1;
}

#define READY()                                                                                    \
  do {                                                                                             \
    if (FMM_UNLIKELY(!started))                                                                    \
      start();                                                                                     \
  } while (0)

/* "0x" and the address in hex into buf (at least 19 bytes); returns the characters written. */
static size_t hex_address(char *buf, uintptr_t v) {
  char digits[2 * sizeof(uintptr_t)];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15u];
    v >>= 4;
  } while (v != 0);
  buf[0] = '0';
  buf[1] = 'x';
  for (size_t i = 0; i < n; i++)
    buf[2 + i] = digits[n - 1 - i];
  return n + 2;
}

static size_t append(char *buf, size_t at, const char *text) {
  while (*text != '\0')
    buf[at++] = *text++;
  return at;
}

/* Whether the environment says to carry on after a bad pointer (read at each one: it is rare). */
static int carry_on(void) {
  char value[16];
  return prim_getenv("FASTMMC_MALLOC_BAD_POINTER", value, sizeof value) > 0 && value[0] == 'c' &&
         value[1] == 'o' && value[2] == 'n' && value[3] == 't' && value[4] == 'i' &&
         value[5] == 'n' && value[6] == 'u' && value[7] == 'e' && value[8] == '\0';
}

/* The contract's answer to `function` given `p`: reported, then abort unless carrying on. */
static FMM_NOINLINE void bad_pointer(const char *function, const void *p) {
  char line[128];
  size_t n = append(line, 0, "fastmm-c: ");
  n = append(line, n, function);
  n = append(line, n, "(): invalid pointer ");
  n += hex_address(line + n, (uintptr_t)p);
  n = append(line, n, " (not a live block of this heap)\n");
  line[n] = '\0';
  prim_debug_output(line);
  if (!carry_on())
    prim_raise_fatal();
}

static inline void *get(size_t size) {
  void *p = entry_get(size);
  if (FMM_UNLIKELY(p == NULL))
    errno = ENOMEM;
  return p;
}

FMM_FAST_ENTRY void *malloc(size_t size) {
  READY();
  return get(size);
}

FMM_FAST_ENTRY void free(void *p) {
  if (p == NULL)
    return;
  READY();
  if (FMM_UNLIKELY(entry_free(p) != FASTMM_OK))
    bad_pointer("free", p);
}

/* count * size in *total, or 0 when it overflows. */
static inline int product(size_t count, size_t size, size_t *total) {
  if (size != 0 && count > SIZE_MAX / size)
    return 0;
  *total = count * size;
  return 1;
}

FMM_FAST_ENTRY void *calloc(size_t count, size_t size) {
  size_t total;
  READY();
  if (!product(count, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = fastmm_allocmem(total);
  if (p == NULL)
    errno = ENOMEM;
  return p;
}

/* realloc's fast path gave NULL for p, size > 0: p is ours and memory ran out, or p is bad. */
static FMM_NOINLINE void *realloc_refused(void *p) {
  if (fastmm_owns_block(p)) {
    errno = ENOMEM;
    return NULL;
  }
  bad_pointer("realloc", p);
  errno = EINVAL;
  return NULL;
}

FMM_FAST_ENTRY void *realloc(void *p, size_t size) {
  READY();
  if (p == NULL)
    return get(size);
  if (size == 0) {
    free(p);
    return NULL;
  }
  void *q = entry_realloc(p, size);
  if (FMM_LIKELY(q != NULL))
    return q;
  return realloc_refused(p);
}

void *reallocarray(void *p, size_t count, size_t size) {
  size_t total;
  if (!product(count, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(p, total);
}

/* A block aligned to `alignment`, a power of two; NULL with errno ENOMEM when it cannot be had. */
static void *get_aligned(size_t alignment, size_t size) {
  READY();
  if (alignment <= ALIGNMENT_MIN)
    return get(size);
  void *p = alignment <= ALIGNED_MAX ? fastmm_getmem_aligned(size, alignment) : NULL;
  if (p == NULL)
    errno = ENOMEM;
  return p;
}

static inline int power_of_two(size_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  if (!power_of_two(alignment) || alignment % sizeof(void *) != 0)
    return EINVAL;
  int saved = errno;
  void *p = get_aligned(alignment, size);
  errno = saved;
  if (p == NULL)
    return ENOMEM;
  *out = p;
  return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
  if (!power_of_two(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  return get_aligned(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
  if (alignment > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return NULL;
  }
  size_t rounded = ALIGNMENT_MIN;
  while (rounded < alignment)
    rounded <<= 1;
  return get_aligned(rounded, size);
}

void *valloc(size_t size) {
  return get_aligned(prim_page_size(), size);
}

void *pvalloc(size_t size) {
  size_t page = prim_page_size();
  if (size > SIZE_MAX - (page - 1)) {
    errno = ENOMEM;
    return NULL;
  }
  return get_aligned(page, (size + page - 1) & ~(page - 1));
}

FMM_FAST_ENTRY size_t malloc_usable_size(void *p) {
  if (p == NULL)
    return 0;
  READY();
  return fastmm_usable_size(p);
}
#endif
