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
  return page_map_get(p) != REGION_NOT_OURS || !prim_readable(p, 1);
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
/* Does b, a bindings struct of t's kind, cover t's size and set every pointer? */
int pascal_bindings_complete(const pascal_slot_table *t, const void *b);
/* The slot bound to the same bindings, else a free one bound to them now; -1 when none is left.
 * b must be complete. */
int pascal_bind(pascal_slot_table *t, const void *b);
/* A bindings struct the router may compare and copy by its bytes: pointers after the size. */
#define PASCAL_BINDINGS_ARE_POINTERS(type, pointers)                                               \
  FMM_STATIC_ASSERT(sizeof(type) == sizeof(size_t) + (pointers) * sizeof(void *),                  \
                    #type " is a size and " #pointers " pointers, no padding")

/* A slot's entry points are static, except in the MSVC Win32 build, whose register thunks
 * (src/win32/delphi_register_thunks.asm) call them by name. */
#if defined(FASTMM_DELPHI_THUNKS)
#define PASCAL_ENTRY
#else
#define PASCAL_ENTRY static
#endif

#endif
