/* The heap's mode word and the gates that keep the fast paths from testing it.
 *
 * heap_mode is non-zero while debug mode, an erase mode or scan-before-every-operation is on,
 * or while debug blocks exist (the bits are in debug.h). GetMem, FreeMem and ReallocMem must
 * then leave their fast paths, but a test of the word on every call costs the normal paths
 * instructions (measured: up to 9% of small churn). So the mode closes three gates instead,
 * each one a bound the fast paths compare against anyway:
 *
 *   get_bound    GetMem serves sizes below it from the thread cache: SMALL_MAX_USER + 1, or 0
 *                (every size then takes the slow path, which reads heap_mode).
 *   l1_bound     64-bit FreeMem and ReallocMem look a pointer up in the page map only when its
 *                first-level index is below it: the map's size, or 0 (no pointer then passes,
 *                and the pointer goes where a foreign one goes: the slow path).
 *   region       32-bit builds (one-level map): the region byte a pointer must have to stay on
 *                the fast path: REGION_MEDIUM_SPAN, or REGION_GATE_CLOSED (no region has it).
 *
 * Only heap_mode_store writes them, always together with the word, so a thread sees a closed
 * gate once it sees the mode (another thread's switch reaches it as soon as the stores do: a
 * call racing with a switch may still take the path of the old mode). The assembly reads the
 * struct at the offsets below (src/asm/layout.inc is generated from this file). */
#ifndef FASTMM_HEAP_MODE_H
#define FASTMM_HEAP_MODE_H

#include <stddef.h>
#include <stdint.h>

#include "linkage.h"

#define REGION_GATE_CLOSED 0xFFu /* a region byte no region of the map ever has */
#define FAST_GATES_REGION_OFFSET 0u
#define FAST_GATES_L1_BOUND_OFFSET 8u

typedef struct fast_gates {
  uint32_t region;
  uint32_t reserved;
  uint64_t l1_bound; /* 64 bits on every target, so the offsets above hold for both */
  size_t get_bound;
} fast_gates;

extern FMM_HIDDEN volatile uint32_t heap_mode;
extern FMM_HIDDEN fast_gates heap_gates;

/* Sets heap_mode and the gates to match it (callers serialise: debug.c's lock). */
void heap_mode_store(uint32_t mode);

#endif
