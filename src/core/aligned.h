/* SPDX-License-Identifier: MIT */
/* Aligned blocks (aligned.c): the minimum alignment every block gets while it is in effect
 * (FastMM5's FastMM_EnterMinimumAddressAlignment), and single blocks aligned coarser
 * (fastmm_getmem_aligned), whose alignment ReallocMem keeps. policy.h says how each kind is
 * aligned. */
#ifndef FASTMM_ALIGNED_H
#define FASTMM_ALIGNED_H

#include <stddef.h>
#include <stdint.h>

#include "size_class.h" /* the minimum alignment and its class table */

/* One block whose user pointer is a multiple of `alignment` (a power of two, 32 .. ALIGNED_MAX),
 * made the normal way (no mode: entry/dispatch.c chooses). */
void *heap_get_aligned(size_t size, size_t alignment);

#endif
