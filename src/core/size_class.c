/* The small size-class table (the reasons for its shape are in policy.h). The lookup table
 * is derived from the slot table; tests/test_small.c checks that every request gets the
 * smallest class that holds it. */
#include "size_class.h"

// clang-format off
const uint16_t size_class_slot[SMALL_CLASS_COUNT] = {
    16, 32, 48, 64, 80, 96, 112, 128, 144, 160,
    176, 192, 208, 224, 240, 256, 288, 320, 352, 384,
    416, 448, 480, 512, 576, 640, 704, 768, 832, 896,
    960, 1024, 1152, 1280, 1408, 1536, 1664, 1792, 1920, 2048,
    2304, 2560,
};

/* Entry i serves requests whose (size + 3) / 16 == i: they need a slot of (i + 1) * 16 bytes. */
#define LOOKUP_ENTRIES \
  { \
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 17, 17, \
  18, 18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 24, 24, 25, 25, 25, 25, \
  26, 26, 26, 26, 27, 27, 27, 27, 28, 28, 28, 28, 29, 29, 29, 29, 30, 30, 30, 30, \
  31, 31, 31, 31, 32, 32, 32, 32, 32, 32, 32, 32, 33, 33, 33, 33, 33, 33, 33, 33, \
  34, 34, 34, 34, 34, 34, 34, 34, 35, 35, 35, 35, 35, 35, 35, 35, 36, 36, 36, 36, \
  36, 36, 36, 36, 37, 37, 37, 37, 37, 37, 37, 37, 38, 38, 38, 38, 38, 38, 38, 38, \
  39, 39, 39, 39, 39, 39, 39, 39, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, \
  40, 40, 40, 40, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41 \
  }
const uint8_t size_class_lookup[(SMALL_MAX_USER + BLOCK_HEADER_SIZE - 1) / 16 + 1] = LOOKUP_ENTRIES;
// clang-format on

/* GetMem's copy (heap_mode.h): the same entries while no mode is on, so it starts as one. */
uint8_t size_class_fast_lookup[sizeof size_class_lookup] = LOOKUP_ENTRIES;

void size_class_set_gate(int open) {
  for (size_t i = 0; i < sizeof size_class_lookup; i++)
    size_class_fast_lookup[i] = open ? size_class_lookup[i] : (uint8_t)SIZE_CLASS_GATE;
}
