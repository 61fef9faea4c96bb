/* SPDX-License-Identifier: MIT */
/* Delphi and Free Pascal class names from a VMT. A block may hold anything, so every byte is
 * read only after the OS says it can be, and a name counts only when the VMT agrees with itself
 * (Delphi's self pointer, Free Pascal's instance size and its negation) and the instance fits in
 * the block. */
#include "delphi_class.h"

#include <string.h>

#include "core/page_map.h"
#include "prim/prim.h"

/* A class name as the compilers write them: identifiers (UTF-8 in Delphi, whose bytes from 0x80
 * on are taken as letters), with '.' between nested and unit names, '<', '>' and ',' around a
 * generic's parameters and '$' in the names of the classes the compilers make themselves (a
 * closure's frame, TForm1.Button1Click$ActRec). A ShortString holds up to 255 of them; a
 * specialized generic's name often passes 63. */
static int short_string_name(const unsigned char *s, char *out, size_t size) {
  if (!prim_readable(s, 1) || s[0] == 0 || !prim_readable(s, (size_t)s[0] + 1))
    return 0;
  for (unsigned i = 1; i <= s[0]; i++) {
    unsigned char c = s[i];
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '<' || c == '>' || c == ',' || c == '$' || c >= 0x80))
      return 0;
  }
  size_t n = s[0] < size - 1 ? s[0] : size - 1;
  memcpy(out, s + 1, n);
  out[n] = 0;
  return 1;
}

static int named(intptr_t instance_size, size_t user_size, const void *name, char *out, size_t size,
                 size_t *instance_size_out) {
  if (instance_size <= 0 || (size_t)instance_size > user_size ||
      !short_string_name((const unsigned char *)name, out, size))
    return 0;
  if (instance_size_out != NULL)
    *instance_size_out = (size_t)instance_size;
  return 1;
}

int delphi_class_of_vmt(const void *vmt, size_t user_size, char *out, size_t size,
                        size_t *instance_size_out) {
  const size_t ptr = sizeof(void *);
  if (vmt == NULL || ((uintptr_t)vmt & (ptr - 1)) != 0 || size == 0)
    return 0;
  const char *v = (const char *)vmt;
  /* Delphi 2009 and later: vmtSelfPtr = -22, vmtClassName = -14, vmtInstanceSize = -13
   * pointers before the VMT, on Win32 and Win64 alike. */
  if ((uintptr_t)v > 22 * ptr && prim_readable(v - 22 * ptr, 22 * ptr)) {
    const void *self, *name;
    intptr_t instance_size;
    memcpy(&self, v - 22 * ptr, ptr);
    memcpy(&name, v - 14 * ptr, ptr);
    memcpy(&instance_size, v - 13 * ptr, ptr);
    if (self == vmt && named(instance_size, user_size, name, out, size, instance_size_out))
      return 1;
  }
  /* Free Pascal: InstanceSize, -InstanceSize, parent, class name at the VMT's start. */
  if (prim_readable(v, 4 * ptr)) {
    intptr_t instance_size, negative;
    const void *name;
    memcpy(&instance_size, v, ptr);
    memcpy(&negative, v + ptr, ptr);
    memcpy(&name, v + 3 * ptr, ptr);
    if (instance_size + negative == 0 &&
        named(instance_size, user_size, name, out, size, instance_size_out))
      return 1;
  }
  return 0;
}

const void *delphi_class_of_object(const void *p, size_t size, char *out, size_t out_size) {
  char name[DELPHI_CLASS_NAME_MAX];
  const void *vmt;
  if (out == NULL || out_size == 0) {
    out = name;
    out_size = sizeof name;
  }
  out[0] = 0;
  if (size < sizeof(void *) || !prim_readable(p, sizeof(void *)))
    return NULL;
  memcpy(&vmt, p, sizeof vmt);
  return delphi_class_of_vmt(vmt, size, out, out_size, NULL) ? vmt : NULL;
}

int debug_event_freed(const fastmm_debug_event *e) {
  return e->debug_header != NULL && e->header.debug_block_flags == FASTMM_DEBUG_BLOCK_FREED;
}

int delphi_class_of_event(const fastmm_debug_event *e, char *out, size_t size) {
  if (e->debug_header == NULL)
    return 0;
  int freed = debug_event_freed(e);
  const void *first = freed ? e->header.previously_used_by_class : NULL;
  if (!freed && e->user_size >= sizeof(void *) && page_map_get(e->block) != REGION_NOT_OURS)
    memcpy(&first, e->block, sizeof first);
  return first != NULL && delphi_class_of_vmt(first, e->user_size, out, size, NULL);
}
