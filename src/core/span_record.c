/* SPDX-License-Identifier: MIT */
/* Span records' tables (span_record.h): reserved with the page map's second-level tables,
 * committed per medium span. */
#include "span_record.h"

#include "prim/prim.h"

span_record *span_record_tables[(size_t)1 << PAGE_MAP_L1_BITS];

#define TABLE_BYTES ((size_t)sizeof(span_record) << SPAN_RECORD_TABLE_BITS)

int span_record_table_make(uintptr_t l1_index) {
  if (span_record_tables[l1_index] != NULL)
    return 1;
  /* Address space only (16 MB for a 64-bit build's 16 GB, 4 MB for a 32-bit one's whole address
   * space): the records of a medium span are committed when it is mapped. */
  span_record *t = (span_record *)prim_reserve(TABLE_BYTES, 0);
  if (t == NULL)
    return 0;
  span_record_tables[l1_index] = t;
  return 1;
}

int span_record_commit(const void *base, size_t size) {
  /* The pages that hold the range's records, rounded out to whole pages: committing a page twice
   * is harmless on every OS, and records once committed stay so (a later medium span at the same
   * addresses finds them there). One table at a time: a span may straddle two. */
  uintptr_t page = prim_page_size();
  uintptr_t a = (uintptr_t)base, last = (uintptr_t)base + size - 1u;
  while (a <= last) {
#if PAGE_MAP_L1_BITS > 0
    uintptr_t table_last = a | (((uintptr_t)1 << (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)) - 1u);
#else
    uintptr_t table_last = UINTPTR_MAX; /* one table covers the address space */
#endif
    uintptr_t until = last < table_last ? last : table_last;
    uintptr_t first = (uintptr_t)span_record_of(a) & ~(page - 1u);
    uintptr_t end =
        ((uintptr_t)span_record_of(until) + sizeof(span_record) + page - 1u) & ~(page - 1u);
    if (!prim_commit((void *)first, end - first))
      return 0;
    if (until == last)
      break;
    a = until + 1u;
  }
  return 1;
}

span_record *span_record_at(const void *granule) {
  return (span_record *)span_record_of((uintptr_t)granule);
}
