/* SPDX-License-Identifier: MIT */
/* OS memory counted as it is committed (never on the hot paths: every call here calls the OS). */
#include "os_memory.h"

#include "atomics.h"
#include "prim/prim.h"

static size_t os_committed, os_peak, os_maps, os_unmaps, os_address_space;
static size_t usage_limit = (size_t)-1;
static size_t (*pressure_handler)(void);
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
         (size <= limit && fmm_load_size_relaxed(&os_committed) <= limit - size);
}

/* Memory could not be had: 1 when the manager gave some of what it keeps back (try again). */
static int relieve_pressure(void) {
  return pressure_handler != NULL && pressure_handler() != 0;
}

static void count_commit(size_t size) {
  size_t now = fmm_add_size(&os_committed, size) + size;
  fmm_add_size(&os_maps, 1);
  size_t peak;
  while ((peak = fmm_load_size_relaxed(&os_peak)) < now && !fmm_cas_size(&os_peak, peak, now)) {
  }
}

static void count_decommit(size_t size) {
  fmm_add_size(&os_committed, (size_t)0 - size);
  fmm_add_size(&os_unmaps, 1);
}

static void *map_once(size_t size) {
  if (!within_limit(size))
    return NULL;
  return prim_map(size, top_down());
}

void *os_map(size_t size) {
  void *p = map_once(size);
  if (p == NULL && relieve_pressure())
    p = map_once(size);
  if (p != NULL) {
    count_commit(size);
    fmm_add_size(&os_address_space, size);
  }
  return p;
}

void os_unmap(void *p, size_t size) {
  prim_unmap(p, size);
  count_decommit(size);
  fmm_add_size(&os_address_space, (size_t)0 - size);
}

static void *reserve_once(size_t reserve, size_t commit) {
  if (!within_limit(commit))
    return NULL;
  if (reserve == commit)
    return prim_map(commit,
                    top_down()); /* one call, which fails at once for a size beyond the OS */
  void *p = prim_reserve(reserve, top_down());
  if (p != NULL && commit != 0 && !prim_commit(p, commit)) {
    prim_unmap(p, reserve);
    p = NULL;
  }
  return p;
}

void *os_reserve(size_t reserve, size_t commit) {
  void *p = reserve_once(reserve, commit);
  if (p == NULL && relieve_pressure())
    p = reserve_once(reserve, commit);
  if (p != NULL) {
    count_commit(commit);
    fmm_add_size(&os_address_space, reserve);
  }
  return p;
}

static int commit_once(void *at, size_t size) {
  return within_limit(size) && prim_commit(at, size);
}

int os_commit(void *at, size_t size) {
  int ok = commit_once(at, size) || (relieve_pressure() && commit_once(at, size));
  if (ok)
    count_commit(size);
  return ok;
}

void os_decommit(void *at, size_t size) {
  prim_decommit(at, size);
  count_decommit(size);
}

size_t os_reserve_after(void *at, size_t min, size_t want) {
  size_t got = prim_reserve_after(at, min, want);
  fmm_add_size(&os_address_space, got);
  return got;
}

int os_remap(void *base, size_t committed, size_t reserved, void *to, size_t new_committed) {
  if (!prim_remap(base, committed, reserved, to, new_committed))
    return 0;
  /* `to`'s own pages (counted by os_reserve) were replaced by the ones that moved. */
  count_decommit(committed);
  fmm_add_size(&os_address_space, (size_t)0 - reserved);
  return 1;
}

void os_release(void *base, size_t reserved, size_t committed) {
  prim_unmap(base, reserved);
  if (committed != 0)
    count_decommit(committed);
  fmm_add_size(&os_address_space, (size_t)0 - reserved);
}

void os_set_usage_limit(size_t max_bytes) {
  usage_limit = max_bytes;
}

size_t os_usage_limit(void) {
  return fmm_load_size_relaxed(&usage_limit);
}

void os_set_pressure_handler(size_t (*handler)(void)) {
  pressure_handler = handler;
}

void os_memory_get_counts(os_memory_counts *out) {
  out->bytes_reserved = fmm_load_size_relaxed(&os_committed);
  out->bytes_peak = fmm_load_size_relaxed(&os_peak);
  out->map_calls = fmm_load_size_relaxed(&os_maps);
  out->unmap_calls = fmm_load_size_relaxed(&os_unmaps);
  out->address_space = fmm_load_size_relaxed(&os_address_space);
}
