/* SPDX-License-Identifier: MIT */
/* Expected memory leaks registered by pointer (Delphi's RegisterExpectedMemoryLeak): a set the
 * leak report of debug mode leaves out. Registrations are rare, so a plain array scanned under
 * a lock is enough; it grows by mapping a twice larger one. */
#include "expected_leaks.h"

#include "copy.h"
#include "lock.h"
#include "os_memory.h"

static fmm_lock leaks_lock;
static void **leak_slots;
static size_t leak_count, leak_capacity;

int expected_leaks_add(void *p) {
  int ok = 0;
  lock_acquire(&leaks_lock);
  size_t i;
  for (i = 0; i < leak_count && leak_slots[i] != p; i++) {
  }
  if (i == leak_count) {
    if (leak_count == leak_capacity) {
      size_t cap = leak_capacity ? leak_capacity * 2 : 4096;
      void **slots = (void **)os_map(cap * sizeof(void *));
      if (slots != NULL) {
        if (leak_slots) {
          fmm_copy(slots, leak_slots, leak_count * sizeof(void *));
          os_unmap(leak_slots, leak_capacity * sizeof(void *));
        }
        leak_slots = slots;
        leak_capacity = cap;
      }
    }
    if (leak_count < leak_capacity) {
      leak_slots[leak_count++] = p;
      ok = 1;
    }
  }
  lock_release(&leaks_lock);
  return ok;
}

int expected_leaks_remove(void *p) {
  int ok = 0;
  lock_acquire(&leaks_lock);
  for (size_t i = 0; i < leak_count; i++) {
    if (leak_slots[i] == p) {
      leak_slots[i] = leak_slots[--leak_count];
      ok = 1;
      break;
    }
  }
  lock_release(&leaks_lock);
  return ok;
}

int expected_leaks_contains(const void *p) {
  int found = 0;
  lock_acquire(&leaks_lock);
  for (size_t i = 0; i < leak_count && !found; i++)
    found = leak_slots[i] == p;
  lock_release(&leaks_lock);
  return found;
}
