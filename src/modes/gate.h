/* SPDX-License-Identifier: MIT */
/* The mode word's bits, and the switch that keeps the gate tables in step with the word
 * (gate.c). core/mode_hooks.h says how the fast paths obey the word without reading it. */
#ifndef FASTMM_GATE_H
#define FASTMM_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/mode_hooks.h"

/* The bits of the mode word: any of them closes the gate. */
#define HEAP_MODE_DEBUG 1u
#define HEAP_MODE_ERASE_FREED 2u
#define HEAP_MODE_ERASE_ALLOCATED 4u
#define HEAP_MODE_SCAN_EVERY_OPERATION 8u
/* Debug blocks outside debug mode need no bit: their header word sends them to the debug block
 * kind from every path, and an outer block's DEBUG_OUTER bit keeps a stale pointer to it off
 * every fast path (core/block_header.h). */

/* Sets or clears `bit` of the mode word; the gate closes when the word leaves zero and opens
 * when it comes back. Safe from any thread (one lock serialises the changes). */
void heap_mode_set_bit(uint32_t bit, int on);

/* The minimum alignment of every block from now on: 16, 32 or 64 (anything else rounded up to
 * one of these, above 64 to 64); returns the one in effect. Same lock as the mode word. */
uint32_t mode_set_minimum_alignment(size_t alignment);

#endif
