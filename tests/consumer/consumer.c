/* SPDX-License-Identifier: MIT */
/* Uses the installed fastmm-c through its public header only, as a user's program does, and
 * checks what the manager does: blocks aligned and owned, ReallocMem keeping the data as the
 * block moves from small to medium to large and back, AllocMem zeroed, a double free refused,
 * the block counts back where they were and the heap consistent. Exits non-zero on a failure.
 * Built by tests/consumer/CMakeLists.txt (find_package) and, natively, with pkg-config. */
#include <fastmm.h>
#include <stdint.h>
#include <stdio.h>

static int checks, failed;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) {
    failed++;
    printf("consumer: FAILED: %s\n", what);
  }
}

static size_t blocks_in_use(void) {
  fastmm_state st;
  fastmm_get_state(&st);
  return st.small.blocks_in_use + st.medium.blocks_in_use + st.large.blocks_in_use;
}

static void fill(unsigned char *p, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    p[i] = (unsigned char)(i * 7 + 3);
}

static int intact(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(i * 7 + 3))
      return 0;
  return 1;
}

int main(void) {
  size_t before = blocks_in_use();

  unsigned char *p = fastmm_getmem(100);
  check(p != NULL, "getmem(100) gives a block");
  if (p == NULL)
    return 1;
  check((uintptr_t)p % 16 == 0, "the block is 16-byte aligned");
  check(fastmm_owns_block(p) == 1, "the manager owns the block");
  check(fastmm_usable_size(p) >= 100, "usable size >= 100");
  check(blocks_in_use() == before + 1, "one more block in use");
  fill(p, 0, 100);

  static const size_t sizes[] = {5000, 300000, 2u * 1024 * 1024, 64};
  size_t kept = 100;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *q = fastmm_reallocmem(p, sizes[i]);
    check(q != NULL, "reallocmem gives a block");
    if (q == NULL)
      return 1;
    p = q;
    kept = kept < sizes[i] ? kept : sizes[i];
    check(intact(p, kept), "reallocmem keeps the data");
    check(fastmm_usable_size(p) >= sizes[i], "usable size >= the new size");
    fill(p, 0, sizes[i]);
    kept = sizes[i];
  }
  check(blocks_in_use() == before + 1, "still one block in use after the moves");

  unsigned char *z = fastmm_allocmem(4096);
  check(z != NULL, "allocmem gives a block");
  int zero = z != NULL;
  for (size_t i = 0; zero && i < 4096; i++)
    zero = z[i] == 0;
  check(zero, "allocmem's block is zeroed");
  check(fastmm_freemem(z) == FASTMM_OK, "freemem of the allocmem block");

  check(fastmm_freemem(p) == FASTMM_OK, "freemem of the block");
  check(fastmm_freemem(p) == FASTMM_ERROR_INVALID_POINTER, "a second freemem is refused");
  check(fastmm_freemem(NULL) == FASTMM_OK, "freemem(NULL) is accepted");
  check(blocks_in_use() == before, "block count back where it was");
  check(fastmm_check_heap() == 0, "the heap is consistent");

  printf("consumer (fastmm-c %s): %d checks, %d failed\n", FASTMM_VERSION_STRING, checks, failed);
  return failed != 0;
}
