/* SPDX-License-Identifier: MIT */
/* The idle clock's tick (idle_clock.h): written only by release.c's passes, under their lock. */
#include "idle_clock.h"

uint32_t idle_clock_tick;
