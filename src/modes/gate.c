/* The mode word and the switch of the fast paths' tables (heap_mode.h says why). */
#include "gate.h"

#include "core/internal.h"
#include "core/size_class.h"

uint32_t heap_mode_word;

void heap_mode_store(uint32_t mode) {
  int was_open = heap_mode_now() == 0, open = mode == 0;
  fmm_store_u32_relaxed(&heap_mode_word, mode);
  if (open != was_open) {
    size_class_set_gate(open);
    page_map_set_gate(open);
  }
}
