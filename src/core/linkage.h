/* SPDX-License-Identifier: MIT */
/* FMM_HIDDEN marks a global the fast paths read: in the POSIX shared library it then binds
 * inside the library, so the code addresses it directly instead of loading its address from
 * the GOT first (one instruction and one load fewer per use). The library is built with hidden
 * visibility, but that covers definitions only: the fast paths see these globals through extern
 * declarations, which need the attribute. Windows DLLs address their own data directly anyway. */
#ifndef FASTMM_LINKAGE_H
#define FASTMM_LINKAGE_H

#if defined(__GNUC__) && !defined(_WIN32)
#define FMM_HIDDEN __attribute__((visibility("hidden")))
#else
#define FMM_HIDDEN
#endif

#endif
