/* SPDX-License-Identifier: MIT */
/* Every workload of fastmm_bench, in the order `fastmm_bench --list` prints them (bench/run's
 * WORKLOADS list must match it): name, threads, the function (workloads_single.c,
 * workloads_threads.c), what it does. */
#include "workloads.h"

const workload bench_workloads[] = {
    {"realloc_inplace", 1, wl_realloc_inplace, "seed case: 64-byte block resized to 63 and back"},
    {"realloc_upsize", 1, wl_realloc_upsize, "seed case: forced upsize 40 -> 200 bytes (moves)"},
    {"realloc_downsize", 1, wl_realloc_downsize, "seed case: moving downsize 1000 -> 40 bytes"},
    {"realloc_medium", 1, wl_realloc_medium, "seed case: medium control, 20000 <-> 19968 bytes"},
    {"realloc_large", 1, wl_realloc_large, "seed case: large control, 1 MB <-> 1 MB - 64"},
    {"large_alloc_free", 1, wl_large_alloc_free, "1 MB GetMem + FreeMem, a tag at each end"},
    {"small_churn_lifo", 1, wl_small_churn_lifo, "8-256 B blocks in batches of 256, LIFO frees"},
    {"small_churn_random", 1, wl_small_churn_random, "4096 live 8-256 B blocks, random frees"},
    {"object_churn", 1, wl_object_churn, "Delphi objects 16-128 B, zeroed, mixed lifetimes"},
    {"string_append", 1, wl_string_append, "string grown by 1-32 char appends to 1 MB"},
    {"array_setlength", 1, wl_array_setlength, "4 arrays grown by SetLength(+1) to 1 MB"},
    {"mixed", 1, wl_mixed, "8 B-4 MB realistic mix, 8192 live blocks (~80 MB)"},
    {"medium_churn", 1, wl_medium_churn, "512 live 1-64 KB blocks, pages written, random frees"},
    {"mt_prodcons", 2, wl_mt_prodcons, "2 threads: one allocates 8-512 B, the other frees"},
    {"mt_churn", 2, wl_mt_churn, "small_churn_random on 2 threads at once"},
    {"fc_realloc_small", 1, wl_fc_realloc_small, "random ReallocMem of 1024 blocks, 1-2000 B"},
    {"fc_realloc_medium", 1, wl_fc_realloc_medium, "random ReallocMem of 256 blocks, 2.6-256 KB"},
    {"fc_realloc_large", 1, wl_fc_realloc_large, "random ReallocMem of 16 blocks, 256 KB-4 MB"},
    {"fc_downsize", 1, wl_fc_downsize, "256 KB block shrunk by 1/8 steps to 8 B"},
    {"fc_small_upsize", 1, wl_fc_small_upsize, "256 small blocks grown by 1-8 B to 2000 B"},
    {"fc_addr_creep", 1, wl_fc_addr_creep, "buffers growing 4 KB -> 2 MB, pinned gaps"},
    {"fc_fragmentation", 1, wl_fc_fragmentation, "fill 16 MB, free 80%, refill other sizes"},
    {"fc_size_spread", 1, wl_fc_size_spread, "2048 live blocks log-uniform 8 B-256 KB"},
    {"fc_mt_alloc_realloc", 2, wl_fc_mt_alloc_realloc, "2 threads: replace or ReallocMem 8 B-4 KB"},
    {"fc_string_threads", 2, wl_fc_string_threads, "2 threads building strings to 64 KB"},
    {"fc_short_threads", 2, wl_fc_short_threads, "threads of 100 allocations each, 2 at a time"},
    {"fc_access_speed", 1, wl_fc_access_speed, "walk 65536 list nodes allocated in a used heap"},
};
const size_t bench_workload_count = sizeof bench_workloads / sizeof bench_workloads[0];
