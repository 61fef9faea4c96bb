# SPDX-License-Identifier: MIT
"""The native-suite platform (fastmm_bench.suite, .suite_programs): the commands of
mimalloc-bench's programs, their time figures, the build, the runs it plans, the allocators it
leaves out with a note, and an output that differs from the C library's malloc's."""

import os
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from fastmm_bench import cli, comparisons, programs, report, runner, suite, targets
from fastmm_bench.errors import RunFailed
from fastmm_bench.suite_programs import PROGRAM_BY_NAME, SUITE, SUITE_NAMES, barnes_output

CONF = """
native-suite candidate fastmm-c preload {cand} - all
native-suite baseline  glibc    preload -      - all
native-suite baseline  mimalloc preload libmimalloc.so.2 - all
native-suite baseline  tcmalloc preload libtcmalloc_minimal.so.4 - all
native       candidate fastmm-c record  build/native/bin/libfastmmc.so fastmm_get_memory_manager all
native       baseline  glibc    malloc  - - all
"""
CFRAC_OUT = "17545186520507317056371138836327 = 326084773 * 53805598952353770460699\n"
BARNES_OUT = ("\n\t\tHack code: Plummer model\n\n     nbody\n     16384\n\n"
              "COMPUTESTART  =   %d\nCOMPUTETIME   =            %d\nRESTTIME      =   0\t 0.00\n")
LARSON_OUT = "Throughput =  3587344 operations per second, relative time: 278.758s.\n"


class FakeRuns:
    """Stands in for suite.execute: the output each program prints under each preloaded library
    (by its file name; '' for none), and the commands it was given."""

    def __init__(self, outputs=None, stderr=None, peak=2 << 20):
        self.outputs, self.stderr, self.peak, self.calls = outputs or {}, stderr or {}, peak, []

    def __call__(self, cmd, stdin, preexec, timeout, env):
        pre = [a[len("LD_PRELOAD="):] for a in cmd if a.startswith("LD_PRELOAD=")]
        lib = os.path.basename(pre[0]) if pre else ""
        exe = os.path.basename(cmd[cmd.index("env") + 1 + len(pre)])
        self.calls.append((exe, lib, cmd, stdin))
        out = self.outputs.get((exe, lib), self.outputs.get(exe, ""))
        if callable(out):
            out = out(len(self.calls))
        return 0, out, self.stderr.get(lib, ""), 0.5, self.peak


class SuiteTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fastmm-suite-test-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.addCleanup(suite.reset)
        suite.reset()
        self.cand = os.path.join(self.tmp, "build", "libfastmmc-malloc.so")

    def targets(self, with_candidate=True):
        if with_candidate:
            os.makedirs(os.path.dirname(self.cand), exist_ok=True)
            open(self.cand, "w").close()
        return targets.parse_targets(CONF.format(cand=self.cand).splitlines(), "test.conf")

    def built(self, names=None):
        """The suite as if built: fake programs for the exes of `names` (all by default)."""
        obj = os.path.join(self.tmp, "obj")
        os.makedirs(obj, exist_ok=True)
        for n in names or SUITE_NAMES:
            exe = PROGRAM_BY_NAME[n].exe
            open(os.path.join(obj, exe), "w").close()
            suite.BUILT[exe] = os.path.join(obj, exe)
        suite.STATE.update({"bench": "/src/bench", "data": "/out/data"})

    # The commands: bench.sh's arguments with procs = 2, and the quick ones below scale 1.
    def test_commands_are_bench_sh_ones_with_two_procs_and_smaller_ones_below_scale_1(self):
        larson = PROGRAM_BY_NAME["larsonN"]
        self.assertEqual(larson.command_args(1.0),
                         (["5", "8", "1000", "5000", "100", "4141", "{procs}"], None))
        self.assertEqual(larson.command_args(0.2)[0][0], "1")
        self.assertEqual(larson.threads, 2)
        self.built(["barnes", "xmalloc-testN", "rptestN", "espresso"])
        self.assertEqual([suite.fill(a) for a in PROGRAM_BY_NAME["xmalloc-testN"].args],
                         ["-w", "2", "-t", "5", "-s", "64"])
        self.assertEqual([suite.fill(a) for a in PROGRAM_BY_NAME["rptestN"].args],
                         ["2", "0", "1", "2", "500", "1000", "100", "8", "16000"])
        self.assertEqual(suite.fill(PROGRAM_BY_NAME["espresso"].args[0]),
                         "/src/bench/espresso/largest.espresso")
        barnes = PROGRAM_BY_NAME["barnes"]
        self.assertEqual(barnes.command_args(1), ([], "{bench}/barnes/input"))
        self.assertEqual(barnes.command_args(0.5), ([], "{data}/barnes-quick.input"))
        self.assertEqual(PROGRAM_BY_NAME["alloc-test1"].command_args(0.2), (None, None))
        self.assertEqual(PROGRAM_BY_NAME["cfrac"].threads, 1)
        self.assertNotIn("sh6bench", SUITE_NAMES)

    def test_time_figures_are_bench_sh_relative_times(self):
        fig = {n: PROGRAM_BY_NAME[n].figure for n in SUITE_NAMES}
        self.assertIsNone(fig["cfrac"])  # the wall time
        self.assertEqual(fig["larsonN"](LARSON_OUT), 278.758)
        self.assertEqual(fig["xmalloc-testN"]("rtime: 19.541, free/sec: 5.117 M\n"), 19.541)
        self.assertEqual(fig["rptestN"]("crt 2 threads ...: ........400000 memory ops/CPU "
                                        "second (30MiB peak)\n"), 5.0)
        self.assertEqual(fig["glibc-thread"]("20000000 iterations\n"), 50.0)
        self.assertIsNone(fig["larsonN"]("Done sleeping...\n"))

    def test_barnes_output_is_compared_without_its_times(self):
        self.assertEqual(barnes_output(BARNES_OUT % (17, 5)), barnes_output(BARNES_OUT % (99, 6)))
        self.assertEqual(barnes_output(BARNES_OUT % (17, 5)),
                         "\n\t\tHack code: Plummer model\n\n     nbody\n     16384\n\n")

    # The runs it plans.
    def test_the_suite_plans_every_built_program_with_every_target(self):
        self.built([n for n in SUITE_NAMES if n != "mstressN"])
        ts = [t for t in self.targets() if t.platform == SUITE]
        notes = []
        workloads = suite.select(cli.select(cli.WORKLOAD_NAMES, None, "workload"), 1.0, notes)
        plan = runner.make_plan([SUITE], workloads, {SUITE: ts})
        self.assertEqual([w for _, w, _ in plan], [n for n in SUITE_NAMES if n != "mstressN"])
        for p, w, pts in plan:
            self.assertEqual(p, SUITE)
            self.assertEqual([t.name for t in pts], ["fastmm-c", "glibc", "mimalloc", "tcmalloc"])
        self.assertEqual(notes, [])
        # Below scale 1 the programs with no smaller form drop out, with one note.
        notes = []
        quick = suite.select(SUITE_NAMES + ["mixed"], 0.2, notes)
        self.assertEqual(quick, [n for n in SUITE_NAMES if n not in
                                 ("mstressN", "alloc-test1", "alloc-testN", "malloc-large")]
                         + ["mixed"])
        self.assertEqual(notes, ["native-suite: alloc-test1, alloc-testN, malloc-large left out "
                                 "at scale below 1: no argument makes them smaller"])

    def test_the_quick_mode_keeps_glibc_and_mimalloc_on_the_suite(self):
        keys = [t.key for t in targets.read_targets()]
        kept = cli.select(keys, cli.parse_args(["--quick"]).targets, "target")
        self.assertEqual([k for k in kept if k.startswith(SUITE)],
                         ["native-suite:glibc", "native-suite:mimalloc"])

    # The allocators it leaves out.
    def choose(self, ts, fake):
        notes = []
        with mock.patch.object(suite, "execute", fake):
            active = cli.choose_targets([SUITE], ts, os.path.join(self.tmp, "snap"), {0}, notes)
        return active, notes

    def test_an_allocator_the_loader_cannot_preload_is_skipped_with_a_note(self):
        self.built()
        fake = FakeRuns(stderr={"libtcmalloc_minimal.so.4": (
            "ERROR: ld.so: object 'libtcmalloc_minimal.so.4' from LD_PRELOAD cannot be "
            "preloaded (cannot open shared object file): ignored.")})
        active, notes = self.choose([t for t in self.targets() if t.platform == SUITE], fake)
        self.assertEqual([t.name for t in active[SUITE]], ["fastmm-c", "glibc", "mimalloc"])
        self.assertEqual(len(notes), 1)
        self.assertTrue(notes[0].startswith("native-suite:tcmalloc skipped: cannot run: the "
                                            "loader did not preload libtcmalloc_minimal.so.4"))
        # The runs started the snapshot's copies, the candidate's library among them.
        snap = os.path.join(self.tmp, "snap", SUITE)
        self.assertIn(("mstress", "libfastmmc-malloc.so"), [c[:2] for c in fake.calls])
        self.assertTrue(all(c[2][c[2].index("env") + 2].startswith(snap) or
                            c[2][c[2].index("env") + 1].startswith(snap) for c in fake.calls))

    def test_a_missing_drop_in_skips_the_suite_with_one_note(self):
        self.built()
        fake = FakeRuns({"cfrac": CFRAC_OUT})
        active, notes = self.choose([t for t in self.targets(with_candidate=False)
                                     if t.platform == SUITE], fake)
        self.assertEqual(active, {})
        self.assertEqual(notes, ["native-suite:fastmm-c skipped: %s is not built (fastmm-c's "
                                 "malloc drop-in, which the native preset builds): the suite is "
                                 "not run" % self.cand])
        self.assertEqual(fake.calls, [])

    def test_no_source_skips_the_platform_with_one_note(self):
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp, "none")}):
            suite.prepare([SUITE, "native"], {}, [])
        notes = []
        active = cli.choose_targets([SUITE], self.targets(), self.tmp, {0}, notes)
        self.assertEqual(active, {})
        self.assertEqual(notes, ["native-suite skipped: no mimalloc-bench source (bench/run "
                                 "--peer-source mimalloc-bench=DIR, DIR a mimalloc-bench source "
                                 "folder)"])

    # An output that differs.
    def run_suite(self, workload, fake, name="fastmm-c"):
        t = next(t for t in self.targets() if t.platform == SUITE and t.name == name)
        return suite.run_one(t, workload, 1.0, None, 60, fake)

    def test_an_output_that_differs_from_the_c_librarys_fails_the_run(self):
        self.built()
        fake = FakeRuns({("cfrac", ""): CFRAC_OUT,
                         ("cfrac", "libfastmmc-malloc.so"): CFRAC_OUT.replace("326", "327")})
        with self.assertRaises(RunFailed) as e:
            self.run_suite("cfrac", fake)
        self.assertIn("OUTPUT DIFFERS from the C library's malloc's (line 1: ", str(e.exception))
        # The reference is a run of the same command without LD_PRELOAD.
        self.assertEqual([c[:2] for c in fake.calls],
                         [("cfrac", "libfastmmc-malloc.so"), ("cfrac", "")])
        self.assertEqual(fake.calls[0][2][-1], fake.calls[1][2][-1])
        # The same output is a figure, and the reference is not run again.
        fake.outputs[("cfrac", "libmimalloc.so.2")] = CFRAC_OUT
        rec = self.run_suite("cfrac", fake, "mimalloc")
        self.assertEqual((rec["seconds"], rec["peak_mem"], rec["mem_kind"]), (0.5, 2 << 20, "maxrss"))
        self.assertEqual(len(fake.calls), 3)

    def test_an_output_that_differs_is_a_failed_comparison_not_a_skipped_allocator(self):
        self.built()
        fake = FakeRuns({"cfrac": CFRAC_OUT, "larson": LARSON_OUT,
                         ("cfrac", "libmimalloc.so.2"): CFRAC_OUT + "extra\n"})
        ts = [t for t in self.targets() if t.platform == SUITE and t.name != "tcmalloc"]
        active, notes = self.choose(ts, fake)
        self.assertEqual(([t.name for t in active[SUITE]], notes),
                         (["fastmm-c", "glibc", "mimalloc"], []))
        plan = runner.make_plan([SUITE], ["cfrac"], active)
        with mock.patch.object(suite, "execute", fake), open(os.devnull, "w") as raw:
            samples, failures, _ = runner.run_rounds(plan, 0, 2, 1.0, {0}, {0, 1}, raw,
                                                     mock.Mock(), notes)
        self.assertEqual(list(failures), [(SUITE, "cfrac", "mimalloc")])
        self.assertIn("OUTPUT DIFFERS", failures[(SUITE, "cfrac", "mimalloc")])
        comps = [comparisons.compare(SUITE, "cfrac", active[SUITE][0], b, samples, failures, {},
                                     {}) for b in active[SUITE][1:]]
        self.assertEqual([c.get("error", "")[:31] for c in comps],
                         ["", "mimalloc failed: OUTPUT DIFFERS"])

    def test_times_in_the_output_are_no_difference(self):
        self.built()
        fake = FakeRuns({"barnes": lambda n: BARNES_OUT % (n, n)})
        self.assertEqual(self.run_suite("barnes", fake)["time_figure"], "wall")
        # A program whose output is not compared gets no reference run.
        fake = FakeRuns({"larson": LARSON_OUT})
        rec = self.run_suite("larsonN", fake)
        self.assertEqual((rec["seconds"], rec["time_figure"], len(fake.calls)),
                         (278.758, "relative", 1))

    def test_a_failed_or_silent_run_fails(self):
        self.built()
        with self.assertRaises(RunFailed) as e:
            self.run_suite("larsonN", FakeRuns({"larson": "Done sleeping...\n"}))
        self.assertIn("no time figure in its output", str(e.exception))

        def crash(cmd, stdin, preexec, timeout, env):
            return 134, "", "free(): invalid pointer", 0.1, 1 << 20
        with self.assertRaises(RunFailed) as e:
            self.run_suite("cfrac", crash)
        self.assertEqual(str(e.exception), "exit status 134: free(): invalid pointer")

    @unittest.skipUnless(os.path.exists(suite.TIME), "needs /usr/bin/time (the time package)")
    def test_the_peak_resident_set_comes_from_usr_bin_time(self):
        d = tempfile.mkdtemp(dir=self.tmp)
        cmd = [suite.TIME, "-f", "%M", "-o", os.path.join(d, "r"), "env", "sh", "-c", "exit 3"]
        rc, out, err, wall, peak = suite.execute(cmd, None, None, 60, suite.environment())
        self.assertEqual(rc, 3)  # GNU time's line before the figure is skipped
        self.assertGreater(peak, 0)
        self.assertEqual(peak % 1024, 0)

    # The build.
    def test_the_build_uses_mimalloc_benchs_cmake_without_writing_the_source(self):
        src = os.path.join(self.tmp, "src")
        for f in ("CMakeLists.txt", "shbench/sh6bench.patch", "espresso/largest.espresso",
                  "barnes/input"):
            os.makedirs(os.path.dirname(os.path.join(src, "bench", f)), exist_ok=True)
            with open(os.path.join(src, "bench", f), "w") as g:
                g.write("\n163840\n123\n" if f == "barnes/input" else ".i 16\n" * 400)
        out = os.path.join(self.tmp, "out")
        calls = []

        def run(cmd, **_):
            calls.append(cmd)
            if cmd[:2] == ["cmake", "-S"]:
                os.makedirs(cmd[4])
            if cmd[:2] == ["cmake", "--build"]:
                if cmd[4] == "rptest":
                    return subprocess.CompletedProcess(cmd, 2, "", "rptest.c: error")
                open(os.path.join(cmd[2], cmd[4]), "w").close()
            return subprocess.CompletedProcess(cmd, 0, "tool 1.0\n", "")
        notes = []
        built = suite.build(src, out, notes, run)
        self.assertNotIn("rptest", built)
        self.assertIn("cfrac", built)
        self.assertIn(["cmake", "-S", os.path.join(out, "src"), "-B", os.path.join(out, "obj"),
                       "-DCMAKE_BUILD_TYPE=Release"], calls)
        self.assertTrue(os.path.islink(os.path.join(out, "src", "CMakeLists.txt")))
        self.assertEqual(os.path.getsize(os.path.join(out, "src", "shbench", "sh6bench-new.c")), 0)
        self.assertEqual(sorted(os.listdir(os.path.join(src, "bench", "shbench"))),
                         ["sh6bench.patch"])
        self.assertEqual(notes[0], "native-suite: rptestN left out: rptest did not build here: "
                                   "rptest.c: error")
        with open(os.path.join(out, "data", "barnes-quick.input")) as f:
            self.assertEqual(f.read(), "\n16384\n123\n")
        with open(os.path.join(out, "data", "espresso-quick.espresso")) as f:
            self.assertEqual(len(f.readlines()), 300)
        # The same source and tools again: nothing is built.
        calls.clear()
        self.assertEqual(suite.build(src, out, [], run), built)
        self.assertEqual([c for c in calls if c[0] == "cmake" and c[1] != "--version"], [])

    # The geometric mean and the targets.
    def test_the_geometric_mean_over_the_suite(self):
        def comp(w, base, gains, bpeak, cpeak):
            return {"workload": w, "target": SUITE, "baseline": base, "candidate": "fastmm-c",
                    "pairs": len(gains), "gains_pct": gains, "median_gain_pct": gains[0],
                    "ci_low_pct": gains[0] - 1, "ci_high_pct": gains[0] + 1,
                    "baseline_ns_per_op": 1e9, "candidate_ns_per_op": 1e9, "mem_kind": "maxrss",
                    "baseline_peak_mem": bpeak, "candidate_peak_mem": cpeak,
                    "baseline_peak_mem_abs": bpeak, "candidate_peak_mem_abs": cpeak,
                    "peak_live": 0}
        comps = [comp("cfrac", "mimalloc", [100.0, 100.0, 100.0], 4e6, 2e6),
                 comp("barnes", "mimalloc", [-50.0, -50.0, -50.0], 4e6, 32e6),
                 comp("cfrac", "glibc", [10.0, 20.0, 30.0], 1e6, 1e6),
                 {"workload": "barnes", "target": SUITE, "baseline": "glibc",
                  "candidate": "fastmm-c", "pairs": 0, "error": "fastmm-c failed: OUTPUT DIFFERS"}]
        geo = {g["baseline"]: g for g in comparisons.geomean_records(comps, SUITE)}
        self.assertAlmostEqual(geo["mimalloc"]["median_gain_pct"], 0.0)
        self.assertEqual((geo["mimalloc"]["ci_low_pct"], geo["mimalloc"]["ci_high_pct"]),
                         (geo["mimalloc"]["median_gain_pct"],) * 2)
        self.assertEqual((geo["mimalloc"]["baseline_peak_mem"], geo["mimalloc"]["candidate_peak_mem"]),
                         (4000000, 8000000))
        self.assertEqual((geo["glibc"]["programs"], geo["glibc"]["failed_programs"]),
                         (["cfrac"], ["barnes"]))
        self.assertAlmostEqual(geo["glibc"]["median_gain_pct"], 20.0)
        checks = {w: (met, fig) for w, met, fig in report.target_checks(comps + list(geo.values()))}
        self.assertEqual(checks["native-suite geomean: >= glibc"][0], True)
        self.assertEqual(checks["native-suite geomean: <= 1.1x mimalloc's time"][0], True)
        self.assertEqual(checks["native-suite geomean: peak memory <= 1.1x mimalloc's"],
                         (False, "2.000x (8.0 MB vs 4.0 MB)"))
        self.assertEqual(checks["native-suite: every program runs, with the C library's output, "
                                "under fastmm-c"], (False, "FAILED: barnes"))
        table = report.platform_tables({"comparisons": comps + list(geo.values())}, False)
        self.assertRegex(table, r"\ngeomean +\+0\.0% \[\+0,\+0\] +\+20\.0% ")


if __name__ == "__main__":
    unittest.main()
