/* SPDX-License-Identifier: MIT */
/* Memory from the OS for spans and large blocks, counted as it is committed and held to
 * FastMM's memory usage limit (os_memory.c). The page map's own tables and the thread caches'
 * chunks are bookkeeping, mapped through prim_map directly or through os_map as each file says.
 *
 * What is counted is committed memory: bytes the program could write. Address space that a
 * large block reserves ahead to grow into (os_reserve) is not memory: it is counted apart,
 * and the usage limit does not apply to it. */
#ifndef FASTMM_OS_MEMORY_H
#define FASTMM_OS_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Reserved and committed at once (spans, bookkeeping); os_unmap releases it. */
void *os_map(size_t size);
/* While *flag is non-zero, os_map and os_reserve ask the OS for the highest free addresses
 * (FastMM5's FastMM_AllocateTopDown); NULL: the OS's default order. */
void os_bind_top_down(const volatile uint8_t *flag);
void os_unmap(void *p, size_t size);

/* Reservations that grow (large blocks). os_reserve reserves `reserve` bytes and commits the
 * first `commit`; os_commit / os_decommit change what is committed inside a reservation;
 * os_reserve_after extends a reservation in place (prim_reserve_after: the bytes reserved, 0
 * when fewer than `min` are free); os_remap moves the committed pages of a reservation onto
 * `to`, a reservation made by os_reserve with `new_committed` bytes committed, and gives the
 * old reservation back (prim_remap; 0 where the OS cannot, nothing changed then); os_release
 * gives a reservation back, `committed` of its `reserved` bytes committed. */
void *os_reserve(size_t reserve, size_t commit);
int os_commit(void *at, size_t size);
void os_decommit(void *at, size_t size);
size_t os_reserve_after(void *at, size_t min, size_t want);
int os_remap(void *base, size_t committed, size_t reserved, void *to, size_t new_committed);
void os_release(void *base, size_t reserved, size_t committed);

/* The limit in bytes, (size_t)-1 for none: commitments that would take the committed total past
 * it fail as if the OS had no memory left. */
void os_set_usage_limit(size_t max_bytes);
size_t os_usage_limit(void);

/* Called when memory cannot be had (the OS refused, or the limit): gives back what the manager
 * keeps for reuse and returns the bytes given back; the request is tried once more when that
 * is not 0. Set once at start-up (release.c). */
void os_set_pressure_handler(size_t (*handler)(void));

typedef struct os_memory_counts {
  size_t bytes_reserved; /* committed now */
  size_t bytes_peak;     /* the most ever committed at once */
  size_t map_calls;      /* calls that committed memory */
  size_t unmap_calls;    /* calls that gave committed memory back */
  size_t address_space;  /* reserved address space, committed or not */
} os_memory_counts;
void os_memory_get_counts(os_memory_counts *out);

#endif
