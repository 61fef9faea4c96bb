# SPDX-License-Identifier: MIT
"""One comparison record from paired runs (fastmm_bench.comparisons)."""

import unittest

from fastmm_bench import stats
from fastmm_bench.comparisons import compare
from fastmm_bench.targets import parse_targets

CONF = """
native candidate fastmm-c record build/native/bin/libfastmmc.so fastmm_get_memory_manager all
native baseline  glibc    malloc - - all
""".splitlines()


def record(pair, seconds, peak, base=10_000_000, ops=1000, live=5_000_000):
    return {"pair": pair, "seconds": seconds, "ns_per_op": seconds * 1e9 / ops, "ops": ops,
            "mem_kind": "peak-rss", "peak_mem": peak, "base_mem": base, "peak_live": live}


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.cand, self.base = parse_targets(CONF, "test.conf")

    def test_pairs_are_matched_by_index(self):
        # The baseline's pair 2 is missing: pairs 0, 1 and 3 are compared, each with its own.
        samples = {
            ("native", "mixed", "fastmm-c"): [record(i, 0.010, 20_000_000) for i in range(4)],
            ("native", "mixed", "glibc"): [record(0, 0.020, 30_000_000),
                                           record(1, 0.030, 32_000_000),
                                           record(3, 0.040, 34_000_000)],
        }
        c = compare("native", "mixed", self.cand, self.base, samples, {}, {}, {})
        self.assertEqual(c["pairs"], 3)
        self.assertEqual(c["gains_pct"], [100.0, 200.0, 300.0])
        self.assertAlmostEqual(c["median_gain_pct"], 200.0)
        self.assertEqual((c["ci_low_pct"], c["ci_high_pct"]), stats.bootstrap_median_ci(
            stats.paired_gains([0.020, 0.030, 0.040], [0.010] * 3)))
        self.assertEqual(c["baseline_peak_mem"], 22_000_000)  # median of 20, 22, 24 MB above base
        self.assertEqual(c["candidate_peak_mem"], 10_000_000)
        self.assertEqual(c["baseline_peak_mem_abs"], 32_000_000)
        self.assertEqual(c["mem_kind"], "peak-rss")
        self.assertAlmostEqual(c["baseline_ns_per_op"], 30_000.0)

    def test_a_failure_makes_the_comparison_an_error(self):
        samples = {("native", "mixed", "fastmm-c"): [record(0, 0.01, 1)]}
        failures = {("native", "mixed", "glibc"): "exit status 3: a block lost its contents"}
        c = compare("native", "mixed", self.cand, self.base, samples, failures, {}, {})
        self.assertEqual(c["pairs"], 0)
        self.assertEqual(c["error"], "glibc failed: exit status 3: a block lost its contents")

    def test_instruction_gain(self):
        samples = {("native", "mixed", t): [record(0, 0.01, 1)] for t in ("fastmm-c", "glibc")}
        cg = {("native:glibc", "mixed"): {"instructions": 3000, "ops": 10},
              ("native:fastmm-c", "mixed"): {"instructions": 2000, "ops": 10}}
        c = compare("native", "mixed", self.cand, self.base, samples, {}, cg, {})
        self.assertAlmostEqual(c["instr_gain_pct"], 50.0)


if __name__ == "__main__":
    unittest.main()
