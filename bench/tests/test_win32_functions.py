# SPDX-License-Identifier: MIT
"""bench/analysis/win32_functions.py: a hotblocks report read into blocks, and two runs' blocks
differenced into instructions and calls per operation, function by function."""

import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.join(os.path.dirname(HERE), "analysis")
sys.path.insert(0, ANALYSIS)  # the tools import pe_symbols from beside them
spec = importlib.util.spec_from_file_location(
    "win32_functions", os.path.join(ANALYSIS, "win32_functions.py"))
fn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fn)


def image(tag, base, size, syms):
    im = fn.Image.__new__(fn.Image)
    im.tag, im.base, im.size = tag, base, size
    im.syms = sorted(syms)
    im.addrs = [a for a, _ in im.syms]
    return im


EXE = image("exe", 0x400000, 0x10000, [(0x401000, "P$BENCH_$$_RUN"), (0x402000, "SYSTEM_$$_MOVE")])
DLL = image("dll", 0x65f80000, 0x10000, [(0x65f81000, "_get_mem"), (0x65f81100, "_free_mem")])


class Win32FunctionsTest(unittest.TestCase):
    def test_a_report_is_read(self):
        text = ("collected 3 entries in the hash table\npc, tcount, icount, ecount\n"
                "0x0000000000401000, 1, 5, 100\n0x0000000065f81000, 2, 7, 30\n"
                "0x0000000065f81000, 1, 7, 10\n")
        self.assertEqual(fn.parse_blocks(text), {0x401000: [500, 100], 0x65f81000: [280, 40]})

    def test_two_runs_differenced(self):
        # Each run: the function's first block (a call each time it runs), a later block of it,
        # and Wine's own code outside both images.
        low = {0x65f81000: [7 * 100, 100], 0x65f81010: [3 * 50, 50], 0x402000: [4 * 10, 10],
               0x7b000000: [900, 1]}
        high = {0x65f81000: [7 * 300, 300], 0x65f81010: [3 * 150, 150], 0x402010: [6 * 20, 20],
                0x402000: [4 * 30, 30], 0x7b000000: [500, 1]}
        f = fn.per_function(low, high, 100.0, [EXE, DLL])
        self.assertEqual(f[("dll", "_get_mem")], [(1400 + 300) / 100.0, 2.0])
        # A block after the function's first counts for it, but not as a call.
        self.assertEqual(f[("exe", "SYSTEM_$$_MOVE")], [(80 + 120) / 100.0, 0.2])
        self.assertEqual(f[("other", "")], [-4.0, 0.0])
        self.assertNotIn(("dll", "_free_mem"), f)

    def test_units(self):
        self.assertEqual(fn.unit_of("FASTMM4_$$_FASTGETMEM$LONGWORD$$POINTER"), "FASTMM4")
        self.assertEqual(fn.unit_of("_OBJPAS_$$_finalize$"), "_OBJPAS")


if __name__ == "__main__":
    unittest.main()
