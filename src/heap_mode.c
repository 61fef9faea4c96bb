/* The mode word and the switch of the fast paths' tables (heap_mode.h says why). */
#include "heap_mode.h"

#include "internal.h"
#include "size_class.h"

volatile uint32_t heap_mode;

void heap_mode_store(uint32_t mode) {
  int was_open = heap_mode == 0, open = mode == 0;
  heap_mode = mode;
  if (open != was_open) {
    size_class_set_gate(open);
    page_map_set_gate(open);
  }
}
