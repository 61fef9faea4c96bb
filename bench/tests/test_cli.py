# SPDX-License-Identifier: MIT
"""bench/run's modes and options (fastmm_bench.cli)."""

import unittest

from fastmm_bench import cli
from fastmm_bench.errors import BenchError


class ModesTest(unittest.TestCase):
    def test_default(self):
        a = cli.parse_args([])
        self.assertEqual((a.pairs, a.warmups, a.scale, a.no_callgrind, a.targets),
                         (5, 3, 1.0, False, None))
        self.assertEqual(cli.mode_of(a), "default")
        self.assertEqual(cli.mode_of(cli.parse_args(["--pairs", "100"])), "pairs100")

    def test_quick(self):
        a = cli.parse_args(["--quick"])
        self.assertEqual((a.pairs, a.warmups, a.scale, a.no_callgrind),
                         (3, 0, 0.2, True))
        self.assertEqual(a.targets, "native:glibc,native-suite:glibc,*:mimalloc,win*:heapalloc,"
                                    "pascal-*:fpc-heap")
        self.assertEqual(cli.mode_of(a), "quick")

    def test_options_override_the_quick_values(self):
        a = cli.parse_args(["--quick", "--pairs", "4", "--scale", "0.5", "--targets", "native:*"])
        self.assertEqual((a.pairs, a.warmups, a.scale, a.targets), (4, 0, 0.5, "native:*"))

    def test_select(self):
        names = ["native:fastmm-c", "native:glibc", "win64:heapalloc", "win32:heapalloc"]
        self.assertEqual(cli.select(names, "win*:heapalloc,native:glibc", "target"),
                         ["native:glibc", "win64:heapalloc", "win32:heapalloc"])
        self.assertEqual(cli.select(names, None, "target"), names)
        with self.assertRaises(BenchError):
            cli.select(names, "native:tcmalloc", "target")


if __name__ == "__main__":
    unittest.main()
