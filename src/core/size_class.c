/* SPDX-License-Identifier: MIT */
/* The small size-class tables (the reasons for their shape are in policy.h). */
#include "size_class.h"

#include "compiler.h"

// clang-format off
const uint16_t size_class_slot[SMALL_CLASS_COUNT] = {
    16, 32, 48, 64, 80, 96, 112, 128, 144, 160,
    176, 192, 208, 224, 240, 256, 288, 320, 352, 384,
    416, 448, 480, 512, 576, 640, 704, 768, 832, 896,
    960, 1024, 1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048,
    2304, 2560,
};
// clang-format on

const uint8_t size_class_lookup[SIZE_CLASS_LOOKUP_SIZE] = SIZE_CLASS_LOOKUP_INIT;

FMM_STATIC_ASSERT(SMALL_MAX_SLOT % ALIGNMENT_SMALL_MAX == 0,
                  "every small request has a class of each alignment");
/* The lookups while a minimum alignment of 32 ([0]) or 64 ([1]) is in effect: each request gets
 * the smallest class whose slot holds it and is a multiple of the alignment (every small span
 * starts 64-aligned, so such a class's blocks are all aligned). size_class_init makes them from
 * size_class_slot; tests/test_aligned.c checks them through size_class_lookup_for. */
static uint8_t size_class_lookup_aligned[2][SIZE_CLASS_LOOKUP_SIZE];

void size_class_init(void) {
  for (unsigned k = 0; k < 2; k++) {
    unsigned alignment = 32u << k;
    unsigned c = 0;
    for (unsigned i = 0; i < SIZE_CLASS_LOOKUP_SIZE; i++) {
      /* Entry i needs a slot of (i + 1) * 16 bytes; the largest slot (2560) is a multiple of 64. */
      while (size_class_slot[c] < (i + 1u) * 16u || size_class_slot[c] % alignment != 0)
        c++;
      size_class_lookup_aligned[k][i] = (uint8_t)c;
    }
  }
}

uint32_t heap_minimum_alignment = ALIGNMENT_MIN;
const uint8_t *heap_class_lookup = size_class_lookup;

void heap_set_minimum_alignment(uint32_t alignment) {
  /* The table first: a thread that reads the new alignment finds its classes. */
  (void)fmm_xchg_ptr(&heap_class_lookup, (void *)(uintptr_t)size_class_lookup_for(alignment));
  fmm_store_u32_relaxed(&heap_minimum_alignment, alignment);
}

/* The same entries as size_class_lookup while open with no minimum alignment, so it starts as
 * one. */
uint8_t size_class_fast_lookup[SIZE_CLASS_LOOKUP_SIZE] = SIZE_CLASS_LOOKUP_INIT;

void size_class_fast_open(int open) {
  const uint8_t *lookup = (const uint8_t *)fmm_load_ptr_acquire(&heap_class_lookup);
  for (size_t i = 0; i < sizeof size_class_lookup; i++)
    size_class_fast_lookup[i] = open ? lookup[i] : (uint8_t)SIZE_CLASS_GATE;
}

const uint8_t *size_class_lookup_for(unsigned alignment) {
  if (alignment >= 64u)
    return size_class_lookup_aligned[1];
  return alignment >= 32u ? size_class_lookup_aligned[0] : size_class_lookup;
}
