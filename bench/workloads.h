/* SPDX-License-Identifier: MIT */
/* The workloads of fastmm_bench, each a function of one run's bench_ctx (workloads.c lists them
 * for the harness), and the two bodies that run both on one thread and on each of two. */
#ifndef FASTMM_BENCH_WORKLOADS_H
#define FASTMM_BENCH_WORKLOADS_H

#include "workload_slots.h"

/* ---- workloads_single.c ------------------------------------------------------------------- */
void wl_realloc_inplace(bench_ctx *c);
void wl_realloc_upsize(bench_ctx *c);
void wl_realloc_downsize(bench_ctx *c);
void wl_realloc_medium(bench_ctx *c);
void wl_realloc_large(bench_ctx *c);
void wl_large_alloc_free(bench_ctx *c);
void wl_small_churn_lifo(bench_ctx *c);
void wl_small_churn_random(bench_ctx *c);
void wl_object_churn(bench_ctx *c);
void wl_string_append(bench_ctx *c);
void wl_array_setlength(bench_ctx *c);
void wl_mixed(bench_ctx *c);
void wl_medium_churn(bench_ctx *c);
void wl_fc_realloc_small(bench_ctx *c);
void wl_fc_realloc_medium(bench_ctx *c);
void wl_fc_realloc_large(bench_ctx *c);
void wl_fc_downsize(bench_ctx *c);
void wl_fc_small_upsize(bench_ctx *c);
void wl_fc_addr_creep(bench_ctx *c);
void wl_fc_fragmentation(bench_ctx *c);
void wl_fc_size_spread(bench_ctx *c);
void wl_fc_access_speed(bench_ctx *c);

/* small_churn_random's body: 4096 live blocks, n random replacements; with own_region it times
 * the replacements itself (one thread), without it the caller times the threads. */
void churn_random(bench_ctx *c, uint64_t n, uint64_t seed, uint32_t *sizes, slot *pool,
                  int own_region);
/* string_append's body: n appends to strings of up to max_len characters. */
void string_builder(bench_ctx *c, uint64_t n, size_t max_len, const uint32_t *chunks);

/* ---- workloads_threads.c ------------------------------------------------------------------ */
void wl_mt_prodcons(bench_ctx *c);
void wl_mt_churn(bench_ctx *c);
void wl_fc_mt_alloc_realloc(bench_ctx *c);
void wl_fc_string_threads(bench_ctx *c);
void wl_fc_short_threads(bench_ctx *c);

#endif
