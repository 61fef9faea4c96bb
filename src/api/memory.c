/* SPDX-License-Identifier: MIT */
/* The C exports of GetMem, FreeMem, ReallocMem and AllocMem, and what a caller may ask about a
 * block. The fast paths are inlined here (entry/alloc_fast.h), so a C call is one call. */
#include "core/aligned.h"
#include "core/copy.h"
#include "core/expected_leaks.h"
#include "core/region_handover.h"
#include "core/size_class.h"
#include "entry/alloc_fast.h"
#include "modes/delphi_class.h"
#include "modes/gate.h"
#include "modes/mode_paths.h"

FMM_FAST_ENTRY void *FASTMM_CDECL fastmm_getmem(size_t size) {
  return entry_get(size);
}

FMM_FAST_ENTRY int FASTMM_CDECL fastmm_freemem(void *p) {
  return entry_free(p);
}

#if !defined(FASTMM_ASM_REALLOC)
/* The Windows DLLs take this one from NASM (src/win32, src/win64). */
FMM_FAST_ENTRY void *FASTMM_CDECL fastmm_reallocmem(void *p, size_t size) {
  return entry_realloc(p, size);
}
#endif

void *FASTMM_CDECL fastmm_getmem_aligned(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > ALIGNED_MAX)
    return NULL;
  if (alignment <= ALIGNMENT_MIN)
    return entry_get(size);
  return entry_get_aligned(size, alignment, FMM_RETURN_ADDRESS());
}

void *FASTMM_CDECL fastmm_allocmem(size_t size) {
  void *p = entry_get(size);
  if (p == NULL)
    return NULL;
  /* Large blocks: memory fresh from the OS comes zeroed; only what a block reused from the
   * large cache held before is cleared (all of it if a mode has just filled the block). */
  size_t dirty = size;
  if ((block_header(p) & BLOCK_KIND_MASK) == BLOCK_FLAG_LARGE && mode_now() == 0) {
    dirty = large_dirty_bytes(p);
    if (dirty > size)
      dirty = size;
  }
  fmm_zero(p, dirty);
  return p;
}

FMM_FAST_ENTRY size_t FASTMM_CDECL fastmm_usable_size(const void *p) {
  size_t n;
  if (FMM_LIKELY(fast_usable_size(p, &n)))
    return n;
  return mode_usable_size(p);
}

int FASTMM_CDECL fastmm_owns_block(const void *p) {
  return mode_owns_block(p);
}

int FASTMM_CDECL fastmm_heap_contains(const void *p) {
  return region_ours(p, 0);
}

int FASTMM_CDECL fastmm_register_expected_leak(void *p) {
  return mode_owns_block(p) ? expected_leaks_add_once(p) : 0;
}

int FASTMM_CDECL fastmm_unregister_expected_leak(void *p) {
  return expected_leaks_remove(p);
}

int FASTMM_CDECL fastmm_register_expected_leak_counted(const void *p) {
  return expected_leaks_add(p);
}

int FASTMM_CDECL fastmm_unregister_expected_leak_counted(const void *p) {
  return expected_leaks_remove(p);
}

int FASTMM_CDECL fastmm_register_expected_class_leak(const void *vmt, size_t instance_size,
                                                     int count) {
  return vmt != NULL && expected_leaks_adjust(vmt, instance_size, 0, count);
}

int FASTMM_CDECL fastmm_unregister_expected_class_leak(const void *vmt, int count) {
  return vmt != NULL && count > 0 && expected_leaks_adjust(vmt, 0, 0, -count);
}

int FASTMM_CDECL fastmm_register_expected_size_leak(ptrdiff_t size, int count) {
  return size >= 0 && expected_leaks_adjust(NULL, 0, size, count);
}

int FASTMM_CDECL fastmm_unregister_expected_size_leak(ptrdiff_t size, int count) {
  return count > 0 && expected_leaks_adjust(NULL, 0, size, -count);
}

size_t FASTMM_CDECL fastmm_get_expected_leaks(fastmm_expected_leak *out, size_t capacity) {
  return expected_leaks_list(out, out != NULL ? capacity : 0);
}

void FASTMM_CDECL fastmm_begin_expected_leak_match(void) {
  expected_leaks_match_begin();
}

int FASTMM_CDECL fastmm_match_expected_leak(const void *block, size_t usable,
                                            const void *first_pointer) {
  return expected_leaks_match(block, usable, first_pointer);
}

const void *FASTMM_CDECL fastmm_get_block_class(const void *p, size_t size, char *name,
                                                size_t capacity) {
  return delphi_class_of_object(p, size, name, name != NULL ? capacity : 0);
}

size_t FASTMM_CDECL fastmm_small_class_slot_size(size_t class_index) {
  return class_index < SMALL_CLASS_COUNT ? size_class_slot[class_index] : 0;
}
