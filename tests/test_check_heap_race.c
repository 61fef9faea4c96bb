/* SPDX-License-Identifier: MIT */
/* fastmm_check_heap() while other threads grow and shrink large blocks in place: the heap is
 * correct all along, so every check must return 0. A large block grows in place by committing
 * the reservation ahead of it and marking the new pages in the page map; the check reads the
 * block's committed size and the page map under the large-block lock, and must never see the
 * one changed without the other.
 *
 * RESIZERS threads each own one large block (600 KB to start) and resize it ROUNDS times by
 * random amounts (64 KB .. 8 MB, growing more often than shrinking, back to 600 KB when it gets
 * large), checking its first and last bytes after each resize; the main thread calls
 * fastmm_check_heap until they are done. Bounded by the round count; nothing about time. */
#include "common/rng.h"
#include "test_blocks.h"

enum { RESIZERS = 3, ROUNDS = 3000 };
#define START_SIZE ((size_t)600 * 1024)
#define MAX_SIZE ((size_t)8 * 1024 * 1024)

typedef struct resizer {
  tu_thread thread;
  tu_thread_checks checks;
  uint64_t seed;
} resizer;

static tu_counter resizers_done;

static void resizer_main(void *arg) {
  resizer *r = (resizer *)arg;
  rng_state rng;
  rng_seed(&rng, r->seed);
  size_t size = START_SIZE;
  unsigned char *p = (unsigned char *)fastmm_getmem(size);
  THREAD_CHECK(&r->checks, p != NULL, "getmem(%zu)", size);
  if (p != NULL) {
    unsigned char tag = (unsigned char)r->checks.thread;
    p[0] = tag;
    p[size - 1] = (unsigned char)(tag + 1);
    for (unsigned i = 0; i < ROUNDS; i++) {
      size_t step = rng_range(&rng, 64 * 1024, 1024 * 1024);
      size_t next = rng_below(&rng, 4) == 0 && size > START_SIZE + step ? size - step : size + step;
      if (next > MAX_SIZE)
        next = START_SIZE;
      unsigned char *q = (unsigned char *)fastmm_reallocmem(p, next);
      if (!THREAD_CHECK(&r->checks, q != NULL, "reallocmem(%zu)", next))
        break;
      THREAD_CHECK(&r->checks, q[0] == tag, "first byte lost resizing to %zu", next);
      if (next > size)
        THREAD_CHECK(&r->checks, q[size - 1] == (unsigned char)(tag + 1),
                     "last byte lost growing to %zu", next);
      q[next - 1] = (unsigned char)(tag + 1);
      p = q;
      size = next;
    }
    THREAD_CHECK(&r->checks, fastmm_freemem(p) == FASTMM_OK, "freemem");
  }
  tu_counter_add(&resizers_done, 1);
}

int main(void) {
  resizer r[RESIZERS];
  for (int i = 0; i < RESIZERS; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].checks.thread = i + 1;
    r[i].seed = 0x5EED0000u + (uint64_t)i;
    CHECK(tu_thread_start(&r[i].thread, resizer_main, &r[i]));
  }
  unsigned long long checks = 0, faults = 0;
  int first_fault = 0;
  while (tu_counter_get(&resizers_done) < RESIZERS) {
    int code = fastmm_check_heap();
    checks++;
    if (code != 0) {
      if (faults++ == 0)
        first_fault = code;
    }
  }
  for (int i = 0; i < RESIZERS; i++) {
    tu_thread_join(&r[i].thread);
    tu_add_counts(r[i].checks.checks, r[i].checks.failed);
  }
  printf("test_check_heap_race: %llu heap checks while %d threads resized large blocks\n", checks,
         RESIZERS);
  CHECK_MSG(faults == 0, "%llu of %llu checks reported a fault in a correct heap (first: %d)",
            faults, checks, first_fault);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_check_heap_race");
}
