/* SPDX-License-Identifier: MIT */
/* What the records a Pascal unit installs share (delphi_api.c, fpc_api.c): their slots, and
 * how their slow paths tell a block of the previous manager from a bad pointer of ours.
 *
 * Each module of a process that installs fastmm-c (the exe, each library with its own
 * runtime) has a previous manager of its own, and the record's entry points take no argument
 * that says which module calls. So the entry points come in slots: slot n's functions are the
 * same inlined fast paths as every other slot's and differ only in the bindings their slow
 * paths read, those of the module that bound slot n. PASCAL_SLOT_COUNT of them are compiled
 * (core/policy.h says why that many). */
#ifndef FASTMM_PASCAL_RECORDS_H
#define FASTMM_PASCAL_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/atomics.h"
#include "core/compiler.h"
#include "core/lock.h"
#include "core/page_map.h"
#include "core/policy.h"
#include "core/region_handover.h"
#include "modes/gate.h"
#include "modes/mode_paths.h"
#include "prim/prim.h"

/* Applies f(n) to every slot number: the entry points of each slot are made with it. */
#define PASCAL_SLOTS(f) f(0) f(1) f(2) f(3) f(4) f(5) f(6) f(7)
FMM_STATIC_ASSERT(PASCAL_SLOT_COUNT == 8, "PASCAL_SLOTS lists 8 slots");

/* Is p in memory this library maps for blocks, or in memory no manager can have a block in?
 * Then a pointer that is not a live block is an error (freed twice, resized after it was freed,
 * inside a block); otherwise it is the previous manager's. The second test is for our own
 * memory given back to the OS (a large block freed and then released, spans unmapped): the
 * page map no longer knows it, but its stale pointers must still be reported as ours, never
 * handed to a manager that did not make them. A live block of any manager's starts in memory
 * that can be read, so where p's first byte cannot be there is no block of anyone's (its
 * header is not looked for: some allocators keep none before a block, ThreadSanitizer's
 * malloc among them). It runs only for pointers not in our memory: the previous manager's own
 * blocks, the rare case. (Address space we gave back and the OS then mapped for someone else is
 * that someone's: a stale pointer into it does reach the previous manager. fastmm.h says so.) */
static inline int pascal_in_our_memory(const void *p) {
  return region_ours(p, 1);
}

/* ---- the router of both records: where a pointer off the fast path goes ---------------------
 * Both records' slow paths sort a pointer the same way, here; each then answers in its own
 * record's terms (Delphi's a result, Free Pascal's heap_error, ReturnNilIfGrowHeapFails and the
 * var pointer). */

/* A block of the previous manager's: not nil and not in our memory. */
static inline int pascal_previous_block(const void *p) {
  return p != NULL && !pascal_in_our_memory(p);
}

/* Does a ReallocMem off the fast path take the record's rare path: nil, a size the core does not
 * resize to (`no_size`: 0, for Delphi 0 and below), and while a mode is on (`mode`: the mode
 * word, read once by the caller, which routes the call by it too) the previous
 * manager's block (debug mode would report it as a bad pointer)? The core's slow path resizes
 * everything else of ours or refuses it untouched, the previous manager's blocks included,
 * which are sorted out only then (pascal_refused): the common case (a block that moves, a
 * medium block) pays no lookup of its own. A macro: as an inline function it let GCC test the
 * size before the pointer and lay the slow paths out anew. */
#define PASCAL_REALLOC_IS_RARE(p, no_size, mode)                                                   \
  ((p) == NULL || (no_size) || ((mode) != 0 && !pascal_in_our_memory(p)))

/* What a pointer the core's ReallocMem refused or could not serve is: the previous manager's
 * block (it goes to that manager), a block of ours that found no memory (it stays as it was),
 * or no block of ours at all (204). */
enum { PASCAL_REFUSED_PREVIOUS, PASCAL_REFUSED_NO_MEMORY, PASCAL_REFUSED_INVALID };
static inline int pascal_refused(const void *p) {
  if (!pascal_in_our_memory(p))
    return PASCAL_REFUSED_PREVIOUS;
  return mode_owns_block(p) ? PASCAL_REFUSED_NO_MEMORY : PASCAL_REFUSED_INVALID;
}

/* FastMM's and the RTL's error codes (Delphi's reOutOfMemory and reInvalidPtr as run-time
 * errors). */
#define PASCAL_ERROR_OUT_OF_MEMORY 203
#define PASCAL_ERROR_INVALID_POINTER 204

/* ---- the router of both records (pascal_router.c): binding a slot -----------------------------
 * A record's slots: PASCAL_SLOT_COUNT bindings structs (fastmm_delphi_bindings,
 * fastmm_fpc_bindings: a size_t size, then pointers only), `stride` bytes apart from `slots` on,
 * and which are bound. Bound slots are never unbound: a module that uninstalled may still free. */
typedef struct pascal_slot_table {
  void *slots;
  size_t stride;
  size_t size; /* sizeof the bindings struct */
  uint32_t bound[PASCAL_SLOT_COUNT];
  fmm_lock lock;
} pascal_slot_table;
/* The slot bound to the same bindings, else a free one bound to them now; -1 when none is left,
 * when `record` (the record to fill) is NULL or when b is not complete (it must cover t's size
 * and set every pointer). */
int pascal_bind(pascal_slot_table *t, const void *record, const void *b);
/* A bindings struct the router may compare and copy by its bytes: pointers after the size. */
#define PASCAL_BINDINGS_ARE_POINTERS(type, pointers)                                               \
  FMM_STATIC_ASSERT(sizeof(type) == sizeof(size_t) + (pointers) * sizeof(void *),                  \
                    #type " is a size and " #pointers " pointers, no padding")
/* A record's slots: the struct `slot` (its bindings, `b`), the array `slots` of them and their
 * table `table`, for `bindings` of `pointers` pointers. */
#define PASCAL_SLOT_TABLE(slot, bindings, pointers, slots, table)                                  \
  typedef struct slot {                                                                            \
    bindings b;                                                                                    \
  } slot;                                                                                          \
  PASCAL_BINDINGS_ARE_POINTERS(bindings, pointers);                                                \
  static slot slots[PASCAL_SLOT_COUNT];                                                            \
  static pascal_slot_table table = {slots, sizeof(slot), sizeof(bindings), {0}, {0}}
/* The end of a record's getter: the record given slot `slot`'s entry points by fill(n), a
 * `case n:` of them for each slot n, and 1 returned; 0 for no slot (-1). */
#define PASCAL_FILL_SLOT(slot, fill)                                                               \
  switch (slot) {                                                                                  \
    PASCAL_SLOTS(fill)                                                                             \
  default:                                                                                         \
    return 0;                                                                                      \
  }                                                                                                \
  return 1

/* Win32's NASM file (src/win32/realloc_fast.asm) holds the slots' ReallocMem entry points,
 * fastmm_delphi_realloc_mem_n and fastmm_fpc_realloc_mem_n, with the in-place test of the
 * record without slots: GCC's C entry for Free Pascal pushed four registers and kept the
 * variable's address in a stack slot of its own across the test. Their slow paths stay here, in
 * C, and are lent to the assembly below this layer through pascal_realloc_slow_paths: entry
 * 2n is slot n's Delphi slow path, 2n + 1 its Free Pascal one, each stored when the slot's
 * record is filled, before the program can call it (PASCAL_LEND_REALLOC_SLOW). Not in the MSVC
 * build, whose thunks call C entry points. */
#if defined(FMM_ASM_REALLOC_REGISTER) && !defined(FASTMM_DELPHI_THUNKS)
#define PASCAL_ASM_REALLOC 1
extern void *pascal_realloc_slow_paths[2 * PASCAL_SLOT_COUNT];
#define PASCAL_LEND_REALLOC_SLOW(which, n, slow)                                                   \
  pascal_realloc_slow_paths[2 * (n) + (which)] = (void *)(slow)
#else
#define PASCAL_LEND_REALLOC_SLOW(which, n, slow) (void)0
#endif
#define PASCAL_DELPHI_SLOW 0
#define PASCAL_FPC_SLOW 1

/* A slot's entry points are static, except in the MSVC Win32 build, whose register thunks
 * (src/win32/delphi_register_thunks.asm) call them by name: PASCAL_THUNK(name, n) declares slot
 * n's thunk of entry point name_n, and PASCAL_FILL(record, field, name, n) puts slot n's entry
 * point (its thunk there) into a record's field. The record's C types cannot say that a thunk
 * follows the register convention. */
#if defined(FASTMM_DELPHI_THUNKS)
#define PASCAL_ENTRY
#define PASCAL_THUNK(name, n) void name##_##n##_register(void);
#define PASCAL_FILL(record, field, name, n)                                                        \
  *(void **)&(record)->field = (void *)name##_##n##_register
#else
#define PASCAL_ENTRY static
#define PASCAL_THUNK(name, n)
#define PASCAL_FILL(record, field, name, n) (record)->field = name##_##n
#endif

#endif
