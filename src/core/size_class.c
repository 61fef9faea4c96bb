/* The small size-class tables (the reasons for their shape are in policy.h). */
#include "size_class.h"

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
