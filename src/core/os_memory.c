/* OS mappings counted as they are made (never on the hot paths: every call here maps or unmaps). */
#include "os_memory.h"

#include "atomics.h"
#include "prim/prim.h"

static size_t os_reserved, os_peak, os_maps, os_unmaps;
static size_t usage_limit = (size_t)-1;
static const volatile uint8_t *top_down_flag;

void os_bind_top_down(const volatile uint8_t *flag) {
  fmm_store_ptr_release((void **)&top_down_flag, (void *)(uintptr_t)flag);
}

static int top_down(void) {
  const volatile uint8_t *flag =
      (const volatile uint8_t *)fmm_load_ptr_acquire((void **)&top_down_flag);
  return flag != NULL && *flag != 0;
}

static int within_limit(size_t size) {
  size_t limit = fmm_load_size_relaxed(&usage_limit);
  return limit == (size_t)-1 ||
         (size <= limit && fmm_load_size_relaxed(&os_reserved) <= limit - size);
}

static void count_map(size_t size) {
  size_t now = fmm_add_size(&os_reserved, size) + size;
  fmm_add_size(&os_maps, 1);
  size_t peak;
  while ((peak = fmm_load_size_relaxed(&os_peak)) < now && !fmm_cas_size(&os_peak, peak, now)) {
  }
}

void *os_map(size_t size) {
  if (!within_limit(size))
    return NULL;
  void *p = prim_map(size, top_down());
  if (p != NULL)
    count_map(size);
  return p;
}

int os_extend(void *at, size_t size) {
  if (!within_limit(size) || !prim_extend(at, size))
    return 0;
  count_map(size);
  return 1;
}

void os_unmap(void *p, size_t size) {
  prim_unmap(p, size);
  fmm_add_size(&os_reserved, (size_t)0 - size);
  fmm_add_size(&os_unmaps, 1);
}

void os_set_usage_limit(size_t max_bytes) {
  usage_limit = max_bytes;
}

size_t os_usage_limit(void) {
  return fmm_load_size_relaxed(&usage_limit);
}

void os_memory_get_counts(os_memory_counts *out) {
  out->bytes_reserved = fmm_load_size_relaxed(&os_reserved);
  out->bytes_peak = fmm_load_size_relaxed(&os_peak);
  out->map_calls = fmm_load_size_relaxed(&os_maps);
  out->unmap_calls = fmm_load_size_relaxed(&os_unmaps);
}
