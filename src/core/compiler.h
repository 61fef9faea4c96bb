/* SPDX-License-Identifier: MIT */
/* What the code asks of the compiler beyond C11, spelled once for GCC/Clang and for MSVC. */
#ifndef FASTMM_COMPILER_H
#define FASTMM_COMPILER_H

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define FMM_ALIGNED(n) __declspec(align(n))
#define FMM_LIKELY(x) (x)
#define FMM_UNLIKELY(x) (x)
#define FMM_NOINLINE __declspec(noinline)
#define FMM_INLINE static __forceinline
#define FMM_RETURN_ADDRESS() _ReturnAddress()
#else
#define FMM_ALIGNED(n) __attribute__((aligned(n)))
#define FMM_LIKELY(x) __builtin_expect(!!(x), 1)
#define FMM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FMM_NOINLINE __attribute__((noinline))
#define FMM_INLINE static inline __attribute__((always_inline))
/* Inlined into an exported entry point, this is the return address into the program. */
#define FMM_RETURN_ADDRESS() __builtin_return_address(0)
#endif

#define FMM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)

/* FMM_FAST_ENTRY: an entry point a program calls on every operation (GetMem, FreeMem, ReallocMem,
 * MemSize of each record and export, and natively the C library's malloc family). They go to one
 * input section of their own, which the linker keeps together and in one order (ELF: first in
 * .text; MinGW's PE: after it), so that a change elsewhere in the library does not move them
 * (measured on an Intel Xeon: two changes that left GetMem and FreeMem as they were moved them, and
 * a workload of theirs ran 7% slower for it). MSVC keeps its default placement. */
#if defined(__ELF__) && defined(__GNUC__)
#define FMM_FAST_ENTRY __attribute__((section(".text.hot.fastmm_entries")))
#elif defined(_WIN32) && defined(__GNUC__)
#define FMM_FAST_ENTRY __attribute__((section(".text$fastmm_entries")))
#else
#define FMM_FAST_ENTRY
#endif

/* ---- what the target asks for (the only tests of _WIN32 and _WIN64 above src/prim/) ---------- */
/* The Windows DLLs take ReallocMem's entry points from NASM (src/win32, src/win64) unless built
 * pure C (FASTMM_PURE_C, the win32-purec and win64-purec presets); Win32's register entry then
 * has its own slow path (FMM_ASM_REALLOC_REGISTER). */
#if defined(_WIN32) && !defined(FASTMM_PURE_C)
#define FASTMM_ASM_REALLOC 1
#if !defined(_WIN64)
#define FMM_ASM_REALLOC_REGISTER 1
#endif
#endif
/* 1 where copies and zeroes must not reach the C library (copy.h): Windows, whose Delphi entry
 * points must leave XMM4 and XMM5 alone. */
#if defined(_WIN32)
#define FMM_OWN_COPY 1
#else
#define FMM_OWN_COPY 0
#endif

/* FMM_ON_LOAD(fn) defines `static void fn(void)` to run when the library (or program) loads,
 * before any of its exports can be called from outside: a constructor for GCC/Clang (ELF, and
 * MinGW DLLs, whose start-up code runs them before DllMain), the C initializer section for MSVC.
 * The pointer in .CRT$XCU is an object the linker must keep: /include names it. */
#if defined(_MSC_VER) && !defined(__clang__)
#pragma section(".CRT$XCU", read)
#if defined(_M_IX86)
#define FMM_ON_LOAD_INCLUDE(name) __pragma(comment(linker, "/include:_" #name))
#else
#define FMM_ON_LOAD_INCLUDE(name) __pragma(comment(linker, "/include:" #name))
#endif
#define FMM_ON_LOAD(fn)                                                                            \
  static void fn(void);                                                                            \
  __declspec(allocate(".CRT$XCU")) void (*const fn##_at_load)(void) = fn;                          \
  FMM_ON_LOAD_INCLUDE(fn##_at_load)                                                                \
  static void fn(void)
#else
#define FMM_ON_LOAD(fn) __attribute__((constructor)) static void fn(void)
#endif

#endif
