# SPDX-License-Identifier: MIT
"""The workloads bench/run knows. bench/workloads.c has the code of WORKLOADS, whose names,
order and thread counts must match `fastmm_bench --list`; bench/pascal/fastmm_pascal_bench.pas
has PASCAL_WORKLOADS, run by the pascal-win32 / pascal-win64 platforms, which must match that
program's --list (programs.check_program compares them); the native-suite platform runs
mimalloc-bench's programs (suite_programs.py), each a workload here.

group: what the issue calls it, or the Fastcode MM Challenge group it stands for.
callgrind: whether an instruction count means anything (a spinning thread's count does not)."""

from .suite_programs import PROGRAM_BY_NAME, PROGRAMS, SUITE, SUITE_NAMES

# The seed's five ReallocMem cases (a target whose workloads are `seed` runs these).
SEED = ["realloc_inplace", "realloc_upsize", "realloc_downsize", "realloc_medium", "realloc_large"]

WORKLOADS = [
    ("realloc_inplace", "seed: 64 -> 63 -> 64 in place", True),
    ("realloc_upsize", "seed: forced upsize", True),
    ("realloc_downsize", "seed: moving downsize", True),
    ("realloc_medium", "seed: medium control", True),
    ("realloc_large", "seed: large control", True),
    ("large_alloc_free", "1 MB allocate + free", True),
    ("small_churn_lifo", "small churn, LIFO frees", True),
    ("small_churn_random", "small churn, random frees", True),
    ("object_churn", "Delphi object churn", True),
    ("string_append", "string building to 1 MB", True),
    ("array_setlength", "SetLength growth; Fastcode array upsize", True),
    ("mixed", "mixed 8 B-4 MB", True),
    ("medium_churn", "medium churn, 1-64 KB, random frees", True),
    ("mt_prodcons", "2-thread producer/consumer", False),
    ("mt_churn", "2-thread churn", True),
    ("fc_realloc_small", "Fastcode ReallocMem small", True),
    ("fc_realloc_medium", "Fastcode ReallocMem medium", True),
    ("fc_realloc_large", "Fastcode ReallocMem large", True),
    ("fc_downsize", "Fastcode block downsize", True),
    ("fc_small_upsize", "Fastcode small upsize", True),
    ("fc_addr_creep", "Fastcode address-space creep", True),
    ("fc_fragmentation", "Fastcode fragmentation", True),
    ("fc_size_spread", "Fastcode block-size spread", True),
    ("fc_mt_alloc_realloc", "Fastcode MT alloc/realloc", True),
    ("fc_string_threads", "Fastcode string threads", True),
    ("fc_short_threads", "Fastcode short-lived threads", True),
    ("fc_access_speed", "Fastcode speed of access", True),
]
# The Pascal workloads: the RTL's string and memory routines of a Free Pascal program, FastMMC
# against Free Pascal's own heap, the DLL's C exports and FastMM4-AVX; all on one thread but
# pas_mixed_mt4 (4 threads on the 2-thread workloads' CPUs).
PASCAL_WORKLOADS = [
    ("pas_string_grow", "Pascal: string grown a character at a time to 2,600, cut back", True),
    ("pas_realloc_grow", "Pascal: ReallocMem a byte at a time to 2,600 and back", True),
    ("pas_realloc_inplace", "Pascal: ReallocMem 64 -> 63 -> 64 in place", True),
    ("pas_memsize", "Pascal: MemSize of live small blocks", True),
    ("pas_getmem_freemem", "Pascal: GetMem + FreeMem, 8-256 B", True),
    ("pas_mixed", "Pascal: strings, TStringList, SetLength, objects, raw blocks to 70 KB", True),
    ("pas_mixed_mt4", "Pascal: pas_mixed on 4 threads, each on its own data", True),
]
PASCAL_WORKLOAD_NAMES = [w[0] for w in PASCAL_WORKLOADS]
C_WORKLOAD_NAMES = [w[0] for w in WORKLOADS]

# The native-suite platform's workloads: mimalloc-bench's programs (suite_programs.py), none
# counted by callgrind.
SUITE_WORKLOADS = [(p.name, "mimalloc-bench: " + p.what, False) for p in PROGRAMS]

ALL_WORKLOADS = WORKLOADS + PASCAL_WORKLOADS + SUITE_WORKLOADS
WORKLOAD_NAMES = [w[0] for w in ALL_WORKLOADS]
WORKLOAD_GROUP = {w[0]: w[1] for w in ALL_WORKLOADS}
WORKLOAD_CALLGRIND = {w[0]: w[2] for w in ALL_WORKLOADS}


def workloads_of(platform):
    """The workloads a platform's program has, in its --list order."""
    if platform == SUITE:
        return SUITE_NAMES
    return PASCAL_WORKLOAD_NAMES if platform.startswith("pascal-") else C_WORKLOAD_NAMES

# The workloads whose peak memory the terminal report shows.
MEMORY_WORKLOADS = ["mixed", "medium_churn", "fc_addr_creep", "fc_fragmentation", "fc_size_spread",
                    "fc_realloc_medium", "fc_realloc_large"]


def threads_of(workload):
    if workload in PROGRAM_BY_NAME:
        return PROGRAM_BY_NAME[workload].threads
    if workload == "pas_mixed_mt4":
        return 4
    return 2 if workload.startswith("mt_") or workload in (
        "fc_mt_alloc_realloc", "fc_string_threads", "fc_short_threads") else 1
