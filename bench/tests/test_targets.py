# SPDX-License-Identifier: MIT
"""bench/targets.conf parsing (fastmm_bench.targets) and the workload list it checks against."""

import os
import re
import unittest

from fastmm_bench import paths, targets, workloads
from fastmm_bench.errors import BenchError

GOOD = """
# a comment line
win64   candidate  fastmm-c   record  build/win64/bin/fastmmc64.dll  fastmm_get_memory_manager  all
win64   baseline   heapalloc  heap    -                              -                          all
native  candidate  fastmm-c   record  build/native/bin/libfastmmc.so fastmm_get_memory_manager  all
native  baseline   mimalloc   malloc  libmimalloc.so.2               mi_                        seed  # seed only
native  baseline   glibc      malloc  -                              -                          mixed,mt_churn
pascal-win32 candidate fastmm-c pascal build/win32/bin/fastmmc32.dll fastmmc                  all
pascal-win32 baseline  fpc-heap pascal -                             fpcheap                  all
pascal-win32 baseline  c-export pascal build/win32/bin/fastmmc32.dll cexport                  pas_memsize,pas_realloc_inplace
""".splitlines()


class ParseTest(unittest.TestCase):
    def test_fields(self):
        ts = targets.parse_targets(GOOD, "test.conf")
        self.assertEqual([t.key for t in ts], ["win64:fastmm-c", "win64:heapalloc",
                                               "native:fastmm-c", "native:mimalloc",
                                               "native:glibc", "pascal-win32:fastmm-c",
                                               "pascal-win32:fpc-heap", "pascal-win32:c-export"])
        heap = ts[1]
        self.assertEqual((heap.role, heap.kind, heap.lib, heap.sym), ("baseline", "heap", None, None))
        mi = ts[3]
        self.assertEqual((mi.lib, mi.sym, mi.line), ("libmimalloc.so.2", "mi_", 6))
        self.assertIsNone(mi.lib_path())  # a bare name: the system loader finds it
        self.assertEqual(ts[0].lib_path(), os.path.join(paths.REPO, "build/win64/bin/fastmmc64.dll"))

    def test_which_workloads_a_target_runs(self):
        ts = targets.parse_targets(GOOD, "test.conf")
        self.assertTrue(ts[0].runs("fc_access_speed"))
        self.assertTrue(ts[3].runs("realloc_large"))
        self.assertFalse(ts[3].runs("mixed"))
        self.assertTrue(ts[4].runs("mt_churn"))
        self.assertFalse(ts[4].runs("mt_prodcons"))
        self.assertTrue(ts[7].runs("pas_memsize"))
        self.assertFalse(ts[7].runs("pas_string_grow"))

    def test_allocator_options(self):
        ts = targets.parse_targets(GOOD, "test.conf")
        win = ts[0].alloc_args()
        self.assertEqual(win[:3], ["--alloc", "record", "--lib"])
        self.assertTrue(win[3].startswith("Z:\\") and win[3].endswith("\\build\\win64\\bin\\fastmmc64.dll"))
        self.assertEqual(win[4:], ["--sym", "fastmm_get_memory_manager"])
        self.assertEqual(ts[1].alloc_args(), ["--alloc", "heap"])
        self.assertEqual(ts[3].alloc_args(), ["--alloc", "malloc", "--lib", "libmimalloc.so.2",
                                              "--sym", "mi_"])
        self.assertEqual(ts[4].alloc_args(), ["--alloc", "malloc"])
        # A Pascal target names its manager; its DLL sits beside the program, not on the line.
        self.assertEqual(ts[5].alloc_args(), ["--alloc", "fastmmc"])
        self.assertEqual(ts[6].alloc_args(), ["--alloc", "fpcheap"])
        ts[2].snapshot_lib = "/tmp/snap/libfastmmc.so"
        self.assertEqual(ts[2].alloc_args()[:4], ["--alloc", "record", "--lib", "/tmp/snap/libfastmmc.so"])

    def test_which_pascal_targets_bring_their_own_program(self):
        # A peer's program (.exe), and natively a program linked with the library or with cmem;
        # a DLL or a shared library sits beside the platform's program instead.
        lines = """
pascal-win64 candidate fastmm-c pascal build/win64/bin/fastmmc64.dll fastmmc all
pascal-win64 baseline  avx      pascal build/peers/fastmm4avx/win64/fastmm_pascal_bench.exe fastmm4avx all
pascal-native candidate fastmm-c pascal build/native/bin/libfastmmc.so fastmmc all
pascal-native baseline  linked  pascal build/native/pascal/fastmm_pascal_bench_static fastmmc all
pascal-native baseline  cmem    pascal build/native/pascal/fastmm_pascal_bench_cmem cmem all
pascal-native baseline  heap    pascal - fpcheap all
""".splitlines()
        ts = targets.parse_targets(lines, "test.conf")
        self.assertEqual([t.own_program() for t in ts], [False, True, False, True, True, False])

    def test_errors_name_the_line(self):
        bad = {
            "win64 candidate x record lib sym": "test.conf:1: expected 7 fields, found 6",
            "win16 candidate x record lib sym all": "test.conf:1: unknown platform win16",
            "win64 referee x record lib sym all": "test.conf:1: role must be",
            "win64 baseline x calloc lib sym all": "test.conf:1: unknown kind calloc",
            "win64 baseline x heap - - mixed,nothing": "test.conf:1: win64 has no workload nothing",
            "win64 baseline x heap - - pas_memsize": "test.conf:1: win64 has no workload pas_memsize",
            "pascal-win64 baseline x pascal - fpcheap mixed": "has no workload mixed",
            "pascal-win64 baseline x heap - - all": "only they, have targets of kind pascal",
            "win64 baseline x pascal - fpcheap all": "only they, have targets of kind pascal",
            "pascal-win64 baseline x pascal - - all": "names its manager in the symbol field",
        }
        for line, message in bad.items():
            with self.assertRaises(BenchError) as e:
                targets.parse_targets([line], "test.conf")
            self.assertIn(message, str(e.exception))
        with self.assertRaises(BenchError) as e:
            targets.parse_targets(GOOD + [GOOD[2].replace("fastmm-c ", "other    ")], "test.conf")
        self.assertIn("more than one candidate for win64", str(e.exception))
        # Results and the snapshot's folders are keyed by platform and name.
        with self.assertRaises(BenchError) as e:
            targets.parse_targets(GOOD + ["pascal-win32 baseline fpc-heap pascal - fpcheap all"],
                                  "test.conf")
        self.assertIn("test.conf:%d: pascal-win32 already has a target named fpc-heap"
                      % (len(GOOD) + 1), str(e.exception))
        targets.parse_targets(GOOD + ["pascal-win64 baseline fpc-heap pascal - fpcheap all"],
                              "test.conf")

    def test_the_repository_file_parses_with_one_candidate_per_platform(self):
        ts = targets.read_targets()
        for p in targets.PLATFORMS:
            self.assertEqual(len([t for t in ts if t.platform == p and t.role == "candidate"]), 1, p)


class WorkloadListTest(unittest.TestCase):
    def test_the_list_matches_the_program_table(self):
        # bench/workloads.c's table, in order, with each workload's thread count: what
        # `fastmm_bench --list` prints and programs.check_program compares with.
        with open(os.path.join(paths.BENCH, "workloads.c")) as f:
            table = re.findall(r'\{"([a-z_]+)", ([0-9]+), wl_', f.read())
        self.assertEqual([name for name, _ in table], workloads.C_WORKLOAD_NAMES)
        self.assertEqual(workloads.workloads_of("win64"), workloads.C_WORKLOAD_NAMES)
        for name, threads in table:
            self.assertEqual(workloads.threads_of(name), int(threads), name)
        self.assertTrue(set(workloads.SEED) <= set(workloads.WORKLOAD_NAMES))
        self.assertTrue(set(workloads.MEMORY_WORKLOADS) <= set(workloads.WORKLOAD_NAMES))

    def test_the_pascal_list_matches_the_pascal_program(self):
        # bench/pascal/fastmm_pascal_bench.pas's table, in order, with each workload's thread
        # count: what its --list prints.
        with open(os.path.join(paths.BENCH, "pascal", "fastmm_pascal_bench.pas")) as f:
            source = f.read()
        table = re.findall(r"\(Name: '([a-z0-9_]+)';.*?Threads: ([A-Za-z0-9]+);", source, re.S)
        threads_const = int(re.search(r"CMixThreads = ([0-9]+);", source).group(1))
        names = [name for name, _ in table]
        self.assertEqual(names, workloads.PASCAL_WORKLOAD_NAMES)
        self.assertEqual(workloads.workloads_of("pascal-win32"), names)
        for name, threads in table:
            n = threads_const if threads == "CMixThreads" else int(threads)
            self.assertEqual(workloads.threads_of(name), n, name)
        self.assertEqual(workloads.threads_of("pas_mixed_mt4"), 4)
        self.assertFalse(set(names) & set(workloads.C_WORKLOAD_NAMES))


if __name__ == "__main__":
    unittest.main()
