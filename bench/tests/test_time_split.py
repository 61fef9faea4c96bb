# SPDX-License-Identifier: MIT
"""bench/analysis/pascal_time_split.py's attribution of a sample to the memory manager or the rest: by
the DLL it lies in, by the Pascal unit of the symbol before it, or in the unlabelled range after
a named symbol (FastMM4-AVX's assembly routines)."""

import argparse
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.join(os.path.dirname(HERE), "analysis")
sys.path.insert(0, ANALYSIS)  # the tools import pe_symbols from beside them
spec = importlib.util.spec_from_file_location(
    "pascal_time_split", os.path.join(ANALYSIS, "pascal_time_split.py"))
split = importlib.util.module_from_spec(spec)
spec.loader.exec_module(split)

SYMS = [
    (0x100001000, "P$BENCH_$$_RUN"),
    (0x100002000, "SYSTEM_$$_MOVE$formal$formal$INT64"),
    (0x100003000, "OBJPAS_$$_finalize$"),
    (0x100004000, "FASTMM4_$$_FASTGETMEM$QWORD$$POINTER"),
    (0x100005000, "SYSUTILS_$$_INTTOSTR$LONGINT$$ANSISTRING"),
]
EXE = "(/tmp/perf-123.map)"


def args(**kw):
    a = dict(program="dir/fastmm_pascal_bench.exe", mm_dll=None, mm_unit=None, mm_after=None)
    a.update(kw)
    return argparse.Namespace(**a)


class TimeSplitTest(unittest.TestCase):
    def test_units(self):
        self.assertEqual(split.unit_of("FASTMM4_$$_FASTGETMEM$QWORD$$POINTER"), "FASTMM4")
        self.assertEqual(split.unit_of("P$BENCH_$$_RUN"), "P")
        self.assertEqual(split.unit_of("fpc_ansistr_concat"), "fpc_ansistr_concat")

    def test_a_dll_manager(self):
        group = split.classify(args(mm_dll="fastmmc64.dll"), SYMS)
        self.assertEqual(group(0x7f0000001000, "/w/build/win64/pascal/fastmmc64.dll"), "manager")
        self.assertEqual(group(0x100004010, EXE), "program and RTL")
        self.assertEqual(group(0xffffffff82242f09, "[kernel.kallsyms]"), "kernel")
        self.assertEqual(group(0x7f0000002000, "/usr/lib/x86_64-linux-gnu/libc.so.6"), "other")

    def test_a_unit_manager_and_its_unlabelled_routines(self):
        group = split.classify(args(mm_unit="FASTMM4", mm_after="OBJPAS_$$_finalize$"), SYMS)
        self.assertEqual(group(0x100004010, EXE), "manager")
        self.assertEqual(group(0x100003500, EXE), "manager")  # after OBJPAS's finalization
        self.assertEqual(group(0x100002500, EXE), "program and RTL")
        self.assertEqual(group(0x100005010, EXE), "program and RTL")
        # Without --mm-after the unlabelled range is the symbol's before it.
        group = split.classify(args(mm_unit="FASTMM4"), SYMS)
        self.assertEqual(group(0x100003500, EXE), "program and RTL")

    def test_an_unknown_symbol_is_refused(self):
        with self.assertRaises(SystemExit):
            split.classify(args(mm_unit="FASTMM4", mm_after="NOPE"), SYMS)


if __name__ == "__main__":
    unittest.main()
