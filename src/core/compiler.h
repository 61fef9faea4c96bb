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

#endif
