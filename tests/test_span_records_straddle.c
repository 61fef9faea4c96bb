/* SPDX-License-Identifier: MIT */
/* A small span across a record-table boundary. The span records of one 16 GB stretch of address
 * space (a second-level table of the page map) are a table of their own, so the records of a span
 * that straddles a multiple of 16 GB lie in two tables, not side by side. The test makes the
 * manager map its spans across such a boundary, then checks every small block: its record names
 * a span, some block above the boundary is in a span that starts below it (else the test says it
 * did not test), MemSize answers, the data is intact and FreeMem takes every block. Written side by
 * side, the records above the boundary were never written (their blocks refused) and the writes ran
 * past the lower table's end.
 *
 * How the spans land there (Linux): a new mapping goes to the highest free gap that fits, below
 * the mappings the process has. The test finds that top, picks the multiple of 16 GB below it,
 * and takes the address space from 48 MB above the multiple to the top with an inaccessible
 * mapping of its own: the manager's next mappings come down from 48 MB above the boundary and
 * cross it. Whether a small span then straddles the boundary depends on where the manager's
 * mappings land, which other mappings can shift (about 1 run in 100 on a loaded machine had no
 * straddling span, and every later try of the same process none either): each try runs in a child
 * of its own, from the same start, and a try that did not test is made again with the manager's
 * mappings starting a little higher (ABOVE_STEP), up to TRIES times. Native 64-bit builds only;
 * under the sanitizers, whose shadow memory has a layout of its own, it is not built. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastmm_test.h"
#include "test_blocks.h"

#define MB ((uintptr_t)1 << 20)
#define TABLE_SPAN ((uintptr_t)1 << 34) /* the address space one record table covers */
#define ABOVE (48 * MB)
/* How much further above the boundary each later try starts the manager's mappings: a step that
 * is no multiple of a medium span's mapping, so the boundary falls elsewhere in the span that
 * crosses it. */
#define ABOVE_STEP (MB + 80 * 1024)
#define MAX_BLOCKS 200000

static unsigned char *blocks[MAX_BLOCKS];
static size_t sizes[MAX_BLOCKS];
/* Small blocks of one class, and after every 45 of them a 15,000-byte medium block, which
 * moves the next small span off the 64 KB steps of the spans before it (spans of one class
 * alone follow one another in steps that a multiple of 16 GB never falls inside). */
#define SMALL_SIZE 1204u
#define MEDIUM_SIZE 15000u
#define SMALL_PER_MEDIUM 45u

/* The top of the free address space new mappings come from. */
static uintptr_t free_top(void) {
  void *p = mmap(NULL, MB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  munmap(p, MB);
  return (uintptr_t)p + MB;
}

/* A try's exit code when no small span straddled the boundary (the try did not test). */
#define NOT_TESTED 77
#define TRIES 5

static int one_try(int try_index) {
  uintptr_t start = ABOVE + (uintptr_t)try_index * ABOVE_STEP;
  uintptr_t top = free_top();
  CHECK_MSG(top > 2 * TABLE_SPAN, "no free address space found (top %#llx)",
            (unsigned long long)top);
  uintptr_t boundary = (top - start - 64 * MB) & ~(TABLE_SPAN - 1u);
  uintptr_t spacer = boundary + start;
  void *held = mmap((void *)spacer, top - spacer, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  CHECK_MSG(held == (void *)spacer, "the address space above the boundary could not be taken");
  printf("  boundary %#llx; the address space from %#llx to %#llx taken by the test\n",
         (unsigned long long)boundary, (unsigned long long)spacer, (unsigned long long)top);

  /* Small blocks of several classes (their spans of several sizes interleave) until they reach
   * well below the boundary. */
  size_t n = 0, below = 0;
  while (n < MAX_BLOCKS && below < 2000) {
    size_t size = n % (SMALL_PER_MEDIUM + 1u) == SMALL_PER_MEDIUM ? MEDIUM_SIZE : SMALL_SIZE;
    unsigned char *p = (unsigned char *)fastmm_getmem(size);
    CHECK(p != NULL);
    if (p == NULL)
      break;
    tu_fill_pattern(p, size, (uint32_t)n);
    blocks[n] = p;
    sizes[n++] = size;
    below += (uintptr_t)p < boundary - 4 * MB;
  }
  size_t above = 0, under = 0;
  for (size_t i = 0; i < n; i++) {
    above += (uintptr_t)blocks[i] >= boundary;
    under += (uintptr_t)blocks[i] < boundary;
  }
  printf("  %zu small blocks: %zu above the boundary, %zu below it\n", n, above, under);

  /* Every small block's record names its span. A block a little above the boundary whose
   * span's first block is below it is in a straddling span: the boundary's low 32 bits are 0, so
   * there the first block's low 32 bits (the record's) exceed the block's own. */
  size_t unnamed = 0, straddling = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t rec[4];
    if (sizes[i] != SMALL_SIZE)
      continue;
    if (!fastmm_test_span_record(blocks[i], rec) || rec[0] == 0) {
      unnamed++;
      continue;
    }
    uintptr_t a = (uintptr_t)blocks[i];
    straddling += a >= boundary && a < boundary + MB && rec[1] > (uint32_t)a;
  }
  CHECK_MSG(unnamed == 0, "%zu small blocks have no span record", unnamed);
  if (straddling == 0) {
    printf("  no small span straddled the boundary: this try did not test\n");
    return NOT_TESTED;
  }
  printf("  %zu small blocks above the boundary in a span that starts below it\n", straddling);

  size_t bad_size = 0, bad_data = 0, refused = 0;
  for (size_t i = 0; i < n; i++) {
    bad_size += fastmm_usable_size(blocks[i]) < sizes[i];
    bad_data += tu_check_pattern(blocks[i], sizes[i], (uint32_t)i) != (size_t)-1;
    refused += fastmm_freemem(blocks[i]) != FASTMM_OK;
  }
  CHECK_MSG(bad_size == 0, "%zu blocks' MemSize below their size", bad_size);
  CHECK_MSG(bad_data == 0, "%zu blocks' data changed", bad_data);
  CHECK_MSG(refused == 0, "%zu blocks refused by FreeMem", refused);
  CHECK_EQ(fastmm_check_heap(), 0);
  fastmm_release_free_memory();
  fastmm_state end;
  tb_state(&end);
  tb_check_nothing_in_use(&end);
  if (held == (void *)spacer)
    munmap(held, top - spacer);
  return tu_finish("test_span_records_straddle");
}

int main(void) {
  tb_start_quiet("test_span_records_straddle");
  if (sizeof(void *) != 8) {
    printf("  a 32-bit build has one record table: nothing to straddle\n");
    return tu_finish("test_span_records_straddle");
  }
  fastmm_freemem(fastmm_getmem(16)); /* the manager's own tables first */
  fflush(stdout);
  for (int i = 1; i <= TRIES; i++) {
    pid_t child = fork();
    CHECK(child >= 0);
    if (child < 0)
      break;
    if (child == 0)
      _exit(one_try(i - 1));
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK_MSG(WIFEXITED(status), "try %d ended by signal %d", i,
              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != NOT_TESTED) {
      CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "try %d failed (exit code %d)", i,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      return tu_finish("test_span_records_straddle");
    }
  }
  CHECK_MSG(0, "no small span straddled the boundary in %d tries: the test did not test", TRIES);
  return tu_finish("test_span_records_straddle");
}
