/* SPDX-License-Identifier: MIT */
/* Binding a record's slot to the module that installs it, for Delphi's record (delphi_api.c)
 * and Free Pascal's (fpc_api.c) alike: the one router of both (pascal_records.h). */
#include <string.h>

#include "pascal_records.h"

/* The bindings' pointers: every byte after the size field. */
static const char *binding_pointers(const pascal_slot_table *t, const void *b, size_t *n) {
  *n = t->size - sizeof(size_t);
  return (const char *)b + sizeof(size_t);
}

static void *slot_bindings(const pascal_slot_table *t, int i) {
  return (char *)t->slots + (size_t)i * t->stride;
}

/* Does b, a bindings struct of t's kind, cover t's size and set every pointer? */
static int bindings_complete(const pascal_slot_table *t, const void *b) {
  if (b == NULL || *(const size_t *)b < t->size)
    return 0;
  size_t n;
  const char *p = binding_pointers(t, b, &n);
  for (size_t i = 0; i < n; i += sizeof(void *)) {
    void *entry;
    memcpy(&entry, p + i, sizeof entry);
    if (entry == NULL)
      return 0;
  }
  return 1;
}

int pascal_bind(pascal_slot_table *t, const void *record, const void *b) {
  if (record == NULL || !bindings_complete(t, b))
    return -1;
  size_t n;
  const char *wanted = binding_pointers(t, b, &n);
  int slot = -1;
  lock_acquire(&t->lock);
  for (int i = 0; i < PASCAL_SLOT_COUNT && slot < 0; i++)
    if (t->bound[i] && memcmp(binding_pointers(t, slot_bindings(t, i), &n), wanted, n) == 0)
      slot = i;
  for (int i = 0; i < PASCAL_SLOT_COUNT && slot < 0; i++) {
    if (!t->bound[i]) {
      char *s = (char *)slot_bindings(t, i);
      memcpy(s + sizeof(size_t), wanted, n);
      memcpy(s, &t->size, sizeof(size_t));
      /* Release: a thread that calls the slot's entries, which it can only have through the
       * record filled after this, sees the bindings. */
      fmm_store_u32_release(&t->bound[i], 1u);
      slot = i;
    }
  }
  lock_release(&t->lock);
  return slot;
}
