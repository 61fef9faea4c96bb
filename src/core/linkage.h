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

/* FMM_REGCALL marks an internal slow path that one layer calls in another, so that no compiler
 * inlines it: on 32-bit x86 with GCC or Clang its arguments then pass in EAX, EDX and ECX
 * (regparm(3)) instead of on the stack, where a cdecl call stored them, the callee loaded them
 * again, and each tail call rewrote them. Every GetMem, FreeMem and ReallocMem slow path the
 * fast paths leave through has it, and so have the function pointers the inline templates take
 * them by (inline_paths.h): a medium block's GetMem and FreeMem cross three of them. Elsewhere the
 * platform's own convention (on 64-bit targets it passes them in registers already). Never on a
 * function the program calls. The Win32 assembly jumps to one, entry_realloc_slow, with both
 * conventions' arguments in place: the stack as the caller left it and EAX and EDX loaded from it.
 */
#if defined(__GNUC__) && defined(__i386__)
#define FMM_REGCALL __attribute__((regparm(3)))
#else
#define FMM_REGCALL
#endif

#endif
