/* Win64: the Delphi record's entry points leave XMM4-XMM15 as they found them, on the fast
 * paths and on the slow ones (new spans, large mappings, moves, frees that give memory back).
 * tests/win64/xmm_harness.asm loads sentinels, calls, and reports what changed. */
#include "test_blocks.h"

uint32_t xmm_clobbered_by(void *fn, void *a, void *b, void **result);
void *xmm_clobbering_function(void *a);

static fastmm_memory_manager_ex mm;

static void *call(void *fn, void *a, void *b, const char *what) {
  void *result = NULL;
  uint32_t clobbered = xmm_clobbered_by(fn, a, b, &result);
  CHECK_MSG(clobbered == 0, "%s changed XMM registers (mask %#x)", what, (unsigned)clobbered);
  return result;
}

int main(void) {
  fastmm_get_memory_manager(&mm);
  /* The harness sees a clobber when there is one. */
  void *r = NULL;
  CHECK_EQ(xmm_clobbered_by((void *)xmm_clobbering_function, (void *)7, NULL, &r),
           (1u << 4) | (1u << 15));
  CHECK(r == (void *)7);
  size_t sizes[] = {8, 100, 2000, 3000, 100000, 600000, 5u << 20};
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      void *p = call((void *)mm.get_mem, (void *)(intptr_t)sizes[i], NULL, "GetMem");
      CHECK(p != NULL);
      p = call((void *)mm.realloc_mem, p, (void *)(intptr_t)(sizes[i] - 1), "ReallocMem (down)");
      p = call((void *)mm.realloc_mem, p, (void *)(intptr_t)(sizes[i] * 3), "ReallocMem (up)");
      CHECK(p != NULL);
      call((void *)mm.free_mem, p, NULL, "FreeMem");
      void *z = call((void *)mm.alloc_mem, (void *)(intptr_t)sizes[i], NULL, "AllocMem");
      CHECK(z != NULL);
      call((void *)mm.register_expected_memory_leak, z, NULL, "RegisterExpectedMemoryLeak");
      call((void *)mm.unregister_expected_memory_leak, z, NULL, "UnregisterExpectedMemoryLeak");
      call((void *)mm.free_mem, z, NULL, "FreeMem");
    }
    fastmm_release_free_memory(); /* so the next round maps spans again */
  }
  return tu_finish("test_win64_xmm");
}
