/* SPDX-License-Identifier: MIT */
/* A file's own name from a path, as the readers and the frames show it: the part after the last
 * '/' or '\' (DWARF's line tables and a PDB's source files give full paths, of either OS). */
#ifndef FASTMM_PATH_NAME_H
#define FASTMM_PATH_NAME_H

static inline const char *path_base_name(const char *path) {
  const char *name = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\')
      name = p + 1;
  return name;
}

#endif
