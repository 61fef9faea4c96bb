/* Memory from the OS for spans and large blocks, counted as it is mapped and held to FastMM's
 * memory usage limit (os_memory.c). The page map's own tables and the thread caches' chunks
 * are bookkeeping, mapped through prim_map directly or through os_map as each file says. */
#ifndef FASTMM_OS_MEMORY_H
#define FASTMM_OS_MEMORY_H

#include <stddef.h>
#include <stdint.h>

void *os_map(size_t size);
/* While *flag is non-zero, os_map asks the OS for the highest free addresses (FastMM5's
 * FastMM_AllocateTopDown); NULL: the OS's default order. */
void os_bind_top_down(const volatile uint8_t *flag);
int os_extend(void *at, size_t size);
void os_unmap(void *p, size_t size);

/* The limit in bytes, (size_t)-1 for none: mappings that would take the mapped total past it
 * fail as if the OS had no memory left. */
void os_set_usage_limit(size_t max_bytes);
size_t os_usage_limit(void);

typedef struct os_memory_counts {
  size_t bytes_reserved; /* mapped now */
  size_t bytes_peak;     /* the most ever mapped at once */
  size_t map_calls;
  size_t unmap_calls;
} os_memory_counts;
void os_memory_get_counts(os_memory_counts *out);

#endif
