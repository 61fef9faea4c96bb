/* SPDX-License-Identifier: MIT */
/* The idle clock's tick (idle_clock.h): written only by release.c's passes, under their lock; and
 * the routine that starts the idle thread, lent by release.c. */
#include "idle_clock.h"

uint32_t idle_clock_tick;
uint32_t idle_clock_running;
static void (*starter)(void);

void idle_clock_lend_starter(void (*start)(void)) {
  starter = start;
}

void idle_clock_start(void) {
  if (starter != NULL)
    starter();
}
