/* SPDX-License-Identifier: MIT */
/* The few atomic operations the manager needs, over GCC/Clang builtins or MSVC intrinsics.
 * (C11 <stdatomic.h> is missing from older MSVC, and its _Atomic types cannot be overlaid on
 * fields that are also read plainly under a lock.) */
#ifndef FASTMM_ATOMICS_H
#define FASTMM_ATOMICS_H

#include <stddef.h>
#include <stdint.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#pragma intrinsic(_InterlockedExchange, _InterlockedCompareExchange, _InterlockedExchangeAdd,      \
                  _InterlockedIncrement)
#if defined(_WIN64)
#define fmm_xchg_ptr(p, v) _InterlockedExchangePointer((void *volatile *)(p), (v))
#define fmm_cas_ptr(p, expected, desired)                                                          \
  (_InterlockedCompareExchangePointer((void *volatile *)(p), (desired), (expected)) == (expected))
#define fmm_add_size(p, v)                                                                         \
  ((size_t)_InterlockedExchangeAdd64((volatile __int64 *)(p), (__int64)(v)))
#define fmm_cas_size(p, expected, desired)                                                         \
  (_InterlockedCompareExchange64((volatile __int64 *)(p), (__int64)(desired),                      \
                                 (__int64)(expected)) == (__int64)(expected))
#else
#define fmm_xchg_ptr(p, v) ((void *)_InterlockedExchange((volatile long *)(p), (long)(v)))
#define fmm_cas_ptr(p, expected, desired)                                                          \
  (_InterlockedCompareExchange((volatile long *)(p), (long)(desired), (long)(expected)) ==         \
   (long)(expected))
#define fmm_add_size(p, v) ((size_t)_InterlockedExchangeAdd((volatile long *)(p), (long)(v)))
#define fmm_cas_size(p, expected, desired)                                                         \
  (_InterlockedCompareExchange((volatile long *)(p), (long)(desired), (long)(expected)) ==         \
   (long)(expected))
#endif
#define fmm_xchg_u32(p, v) ((uint32_t)_InterlockedExchange((volatile long *)(p), (long)(v)))
#define fmm_inc_u32(p) ((uint32_t)_InterlockedIncrement((volatile long *)(p)))
#define fmm_store_ptr_release(p, v) (_ReadWriteBarrier(), *(void *volatile *)(p) = (void *)(v))
#define fmm_load_ptr_acquire(p) (*(void *volatile *)(p))
#define fmm_load_u32_relaxed(p) (*(volatile uint32_t *)(p))
#define fmm_add_u32_seq_cst(p, v)                                                                  \
  ((uint32_t)_InterlockedExchangeAdd((volatile long *)(p), (long)(v)))
#define fmm_load_u32_seq_cst(p) (_ReadWriteBarrier(), *(volatile uint32_t *)(p))
#define fmm_load_u32_acquire(p) (*(volatile uint32_t *)(p)) /* MSVC: volatile reads acquire */
#define fmm_store_u32_release(p, v) (_ReadWriteBarrier(), *(volatile uint32_t *)(p) = (v))
#define fmm_store_u32_relaxed(p, v) (*(volatile uint32_t *)(p) = (v))
#define fmm_load_size_relaxed(p) (*(volatile size_t *)(p))
#define fmm_store_size_relaxed(p, v) (*(volatile size_t *)(p) = (v))
#define fmm_cpu_relax() _mm_pause()
/* Orders the compiler only: what comes before it in the code is not moved after it. */
#define fmm_compiler_fence() _ReadWriteBarrier()
#else
#define fmm_xchg_ptr(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define fmm_cas_ptr(p, expected, desired)                                                          \
  __extension__({                                                                                  \
    __typeof__(*(p)) fmm_cas_e_ = (expected);                                                      \
    __atomic_compare_exchange_n((p), &fmm_cas_e_, (desired), 0, __ATOMIC_ACQ_REL,                  \
                                __ATOMIC_RELAXED);                                                 \
  })
#define fmm_add_size(p, v) __atomic_fetch_add((p), (size_t)(v), __ATOMIC_RELAXED)
#define fmm_cas_size(p, expected, desired) fmm_cas_ptr((p), (size_t)(expected), (size_t)(desired))
#define fmm_xchg_u32(p, v) __atomic_exchange_n((p), (uint32_t)(v), __ATOMIC_ACQUIRE)
/* Adds one and returns the new value (FastMM5's AtomicIncrement). */
#define fmm_inc_u32(p) __atomic_add_fetch((p), (uint32_t)1, __ATOMIC_RELAXED)
#define fmm_store_ptr_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define fmm_load_ptr_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define fmm_load_u32_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define fmm_add_u32_seq_cst(p, v) __atomic_fetch_add((p), (uint32_t)(v), __ATOMIC_SEQ_CST)
#define fmm_load_u32_seq_cst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define fmm_load_u32_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define fmm_store_u32_release(p, v) __atomic_store_n((p), (uint32_t)(v), __ATOMIC_RELEASE)
#define fmm_store_u32_relaxed(p, v) __atomic_store_n((p), (uint32_t)(v), __ATOMIC_RELAXED)
#define fmm_load_size_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define fmm_store_size_relaxed(p, v) __atomic_store_n((p), (size_t)(v), __ATOMIC_RELAXED)
/* Orders the compiler only: what comes before it in the code is not moved after it. */
#define fmm_compiler_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#if defined(__i386__) || defined(__x86_64__)
#define fmm_cpu_relax() __builtin_ia32_pause()
#else
#define fmm_cpu_relax() ((void)0)
#endif
#endif

#endif
