# SPDX-License-Identifier: MIT
"""The peers bench/run builds from a source folder (fastmm_bench.peers): which targets they are,
where a build goes and for which platforms, the one note when the source is absent,
--peer-source's checks, for the mimalloc DLL of the win* platforms, the FastMM4-AVX program of
the pascal-* platforms and the rpmalloc and snmalloc libraries of win32, win64 and native."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from fastmm_bench import peers, targets
from fastmm_bench.errors import BenchError

CONF = """
win64   candidate  fastmm-c  record  build/win64/bin/fastmmc64.dll          fastmm_get_memory_manager  all
win64   baseline   mimalloc  malloc  build/peers/mimalloc/win64/mimalloc.dll mi_                       all
win32   candidate  fastmm-c  record  build/win32/bin/fastmmc32.dll          fastmm_get_memory_manager  all
win32   baseline   mimalloc  malloc  build/peers/mimalloc/win32/mimalloc.dll mi_                       all
native  baseline   mimalloc  malloc  libmimalloc.so.2                       mi_                        all
pascal-win32 candidate fastmm-c   pascal build/win32/bin/fastmmc32.dll fastmmc all
pascal-win32 baseline  fastmm4avx pascal build/peers/fastmm4avx/win32/fastmm_pascal_bench.exe fastmm4avx all
pascal-win64 candidate fastmm-c   pascal build/win64/bin/fastmmc64.dll fastmmc all
pascal-win64 baseline  fastmm4avx pascal build/peers/fastmm4avx/win64/fastmm_pascal_bench.exe fastmm4avx all
""".splitlines()
ALL = ["win64", "win32", "native", "pascal-win64", "pascal-win32"]
MORE = """
native  baseline   rpmalloc  malloc  build/peers/rpmalloc/native/librpmalloc.so rpw_         all
win64   baseline   rpmalloc  malloc  build/peers/rpmalloc/win64/rpmalloc.dll  rp                 all
win64   baseline   snmalloc  malloc  build/peers/snmalloc/win64/snmalloc.dll  sn_                all
""".splitlines()
RP_MARKER = os.path.join("rpmalloc", "rpmalloc.c")
SN_MARKER = os.path.join("src", "snmalloc", "override", "malloc.cc")


def source_folder(root, name, marker):
    """A folder that looks like the peer's source: it holds the recipe's marker file."""
    folder = os.path.join(root, name)
    os.makedirs(os.path.dirname(os.path.join(folder, marker)), exist_ok=True)
    open(os.path.join(folder, marker), "w").close()
    return folder


def ok_build(calls):
    def run(cmd, **_):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")
    return run


class PeersTest(unittest.TestCase):
    def setUp(self):
        self.ts = targets.parse_targets(CONF, "test.conf")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_which_targets_are_built_peers(self):
        self.assertEqual([peers.peer_of(t) for t in self.ts],
                         [None, "mimalloc", None, "mimalloc", None,
                          None, "fastmm4avx", None, "fastmm4avx"])

    def test_absent_source_drops_the_targets_with_one_note(self):
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp.name, "none")}):
            kept = peers.prepare(self.ts, ALL, {}, notes, ok_build(calls))
        self.assertEqual([t.key for t in kept], ["win64:fastmm-c", "win32:fastmm-c",
                                                  "native:mimalloc", "pascal-win32:fastmm-c",
                                                  "pascal-win64:fastmm-c"])
        # One note per peer, naming its targets and how to get its source.
        self.assertEqual(len(notes), 2)
        self.assertIn("pascal-win32:fastmm4avx, pascal-win64:fastmm4avx skipped: no fastmm4avx "
                      "source (bench/run --peer-source fastmm4avx=DIR, DIR an unchanged "
                      "FastMM4-AVX source folder)", notes[0])
        self.assertIn("win64:mimalloc, win32:mimalloc skipped: no mimalloc source "
                      "(bash scripts/fetch-peer-mimalloc.sh, or bench/run --peer-source", notes[1])
        self.assertEqual(calls, [])

    def test_default_source_builds_once_into_build_peers(self):
        os.mkdir(os.path.join(self.tmp.name, "mimalloc"))
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": self.tmp.name}):
            kept = peers.prepare(self.ts, ["win64", "win32"], {}, notes, ok_build(calls))
        self.assertEqual(len(calls), 1)  # one build.sh run makes both platforms
        self.assertEqual(calls[0][2:4], ["mimalloc", os.path.join(self.tmp.name, "mimalloc")])
        libs = {t.key: t.lib for t in kept}
        self.assertEqual(libs["win64:mimalloc"], "build/peers/mimalloc/win64/mimalloc.dll")
        self.assertEqual(libs["win32:mimalloc"], "build/peers/mimalloc/win32/mimalloc.dll")

    def test_peer_source_builds_into_a_folder_of_its_own(self):
        src = source_folder(self.tmp.name, "mi", os.path.join("src", "static.c"))
        sources = peers.parse_peer_sources(["mimalloc=" + src])
        notes, calls = [], []
        kept = peers.prepare(self.ts, ["win64"], sources, notes, ok_build(calls))
        lib = {t.key: t.lib for t in kept}["win64:mimalloc"]
        self.assertTrue(lib.startswith("build/peers/mimalloc-src-"), lib)
        self.assertTrue(lib.endswith("/win64/mimalloc.dll"), lib)
        # a platform not chosen is left as it is (the run does not look at it)
        self.assertEqual({t.key: t.lib for t in kept}["win32:mimalloc"],
                         "build/peers/mimalloc/win32/mimalloc.dll")
        self.assertEqual(calls[0][3], os.path.abspath(src))

    def test_fastmm4avx_source_builds_the_pascal_program_of_both_pascal_platforms(self):
        src = source_folder(self.tmp.name, "FastMM4-AVX-1.0.14", "FastMM4.pas")
        sources = peers.parse_peer_sources(["fastmm4avx=" + src])
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp.name, "none")}):
            kept = peers.prepare(self.ts, ["pascal-win32", "pascal-win64"], sources, notes,
                                 ok_build(calls))
        # One build.sh run, by the fastmm4avx recipe, into a folder named after the source.
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0][:4], ["bash", peers.BUILD_SH, "fastmm4avx", src])
        self.assertTrue(calls[0][4].endswith(os.path.join("build", "peers", "fastmm4avx-src-")
                                             + calls[0][4][-10:]), calls[0][4])
        by_key = {t.key: t for t in kept}
        for platform, folder in (("pascal-win32", "win32"), ("pascal-win64", "win64")):
            t = by_key[platform + ":fastmm4avx"]
            self.assertTrue(t.lib.startswith("build/peers/fastmm4avx-src-"), t.lib)
            self.assertTrue(t.lib.endswith("/%s/fastmm_pascal_bench.exe" % folder), t.lib)
            # The target runs that program in place of the platform's, with --alloc fastmm4avx.
            self.assertTrue(t.own_program())
            self.assertEqual(t.alloc_args(), ["--alloc", "fastmm4avx"])
        self.assertFalse(by_key["pascal-win32:fastmm-c"].own_program())
        # The platforms not chosen keep their peers' targets as they are, and build nothing.
        self.assertEqual(by_key["win64:mimalloc"].lib, "build/peers/mimalloc/win64/mimalloc.dll")
        self.assertEqual(notes, [])

    def test_failed_build_drops_the_peer_with_its_message(self):
        os.mkdir(os.path.join(self.tmp.name, "mimalloc"))
        notes = []

        def failing(cmd, **_):
            return subprocess.CompletedProcess(cmd, 1, "", "mimalloc did not compile for win32")
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": self.tmp.name}):
            kept = peers.prepare(self.ts, ["win64", "win32"], {}, notes, failing)
        self.assertEqual([t.key for t in kept if not t.platform.startswith("pascal-")],
                         ["win64:fastmm-c", "win32:fastmm-c", "native:mimalloc"])
        self.assertEqual(len(notes), 1)
        self.assertIn("did not compile for win32", notes[0])

    def test_rpmalloc_and_snmalloc_drop_out_without_a_source_with_one_note_each(self):
        ts = targets.parse_targets(CONF + MORE, "test.conf")
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp.name, "none")}):
            kept = peers.prepare(ts, ["win64", "native"], {}, notes, ok_build(calls))
        self.assertEqual(calls, [])
        # (win32 was not chosen: its mimalloc target is left as it is)
        self.assertEqual([t.key for t in kept if t.name.endswith("malloc")],
                         ["win32:mimalloc", "native:mimalloc"])
        self.assertEqual(len(notes), 3, notes)
        self.assertIn("win64:mimalloc skipped: no mimalloc source", notes[0])
        self.assertIn("native:rpmalloc, win64:rpmalloc skipped: no rpmalloc source (bench/run "
                      "--peer-source rpmalloc=DIR, DIR an rpmalloc 1.4.5 source tree)", notes[1])
        self.assertIn("win64:snmalloc skipped: no snmalloc source (bench/run --peer-source "
                      "snmalloc=DIR, DIR an snmalloc 0.7.5 source tree)", notes[2])

    def test_a_build_makes_the_chosen_platforms_that_have_a_target_of_the_peer(self):
        ts = targets.parse_targets(CONF + MORE, "test.conf")
        # One folder that is both sources: each peer is still built from it, by its recipe.
        both = source_folder(self.tmp.name, "both", RP_MARKER)
        source_folder(self.tmp.name, "both", SN_MARKER)
        sources = peers.parse_peer_sources(["rpmalloc=" + both, "snmalloc=" + both])
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp.name, "none")}):
            kept = peers.prepare(ts, ["native", "win64"], sources, notes, ok_build(calls))
        self.assertEqual([c[2:4] + c[5:] for c in calls],
                         [["rpmalloc", both, "native", "win64"], ["snmalloc", both, "win64"]])
        libs = {t.key: t.lib for t in kept}
        self.assertRegex(libs["native:rpmalloc"],
                         r"^build/peers/rpmalloc-src-[0-9a-f]{10}/native/librpmalloc\.so$")
        self.assertRegex(libs["win64:rpmalloc"],
                         r"^build/peers/rpmalloc-src-[0-9a-f]{10}/win64/rpmalloc\.dll$")
        self.assertRegex(libs["win64:snmalloc"],
                         r"^build/peers/snmalloc-src-[0-9a-f]{10}/win64/snmalloc\.dll$")
        self.assertEqual({t.key: t.alloc_args()[-1] for t in kept if t.name == "rpmalloc"},
                         {"native:rpmalloc": "rpw_", "win64:rpmalloc": "rp"})
        self.assertEqual(len(notes), 1, notes)  # mimalloc's: no source here
        # The default folder serves rpmalloc and snmalloc too.
        source_folder(self.tmp.name, "rpmalloc", RP_MARKER)
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": self.tmp.name}):
            peers.prepare(targets.parse_targets(CONF + MORE, "test.conf"), ["win64"], {}, notes,
                          ok_build(calls))
        self.assertEqual([c[2:4] + c[5:] for c in calls],
                         [["rpmalloc", os.path.join(self.tmp.name, "rpmalloc"), "win64"]])

    def test_targets_conf_declares_the_library_peers_with_a_recipe_each(self):
        ts = targets.read_targets()
        built = sorted(t.key for t in ts if peers.peer_of(t) in ("rpmalloc", "snmalloc"))
        self.assertEqual(built, ["native:rpmalloc", "native:snmalloc", "win32:rpmalloc",
                                 "win32:snmalloc", "win64:rpmalloc", "win64:snmalloc"])
        names = {peers.peer_of(t) for t in ts} - {None}
        # mimalloc-bench is the native-suite platform's programs, not a target's library: its
        # build is fastmm_bench.suite's, not build.sh's.
        self.assertEqual(names, set(peers.RECIPES) - {"mimalloc-bench"})
        with open(peers.BUILD_SH) as f:
            script = f.read()
        for name in names:
            self.assertIn("\n  %s)\n" % name, script)

    def test_peer_source_checks(self):
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["mimalloc"])
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["hoard=" + self.tmp.name])
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["mimalloc=" + os.path.join(self.tmp.name, "absent")])
        # A folder that is not the peer's source: refused before anything is built.
        mi = source_folder(self.tmp.name, "mi", os.path.join("src", "static.c"))
        fm = source_folder(self.tmp.name, "fm", "FastMM4.pas")
        with self.assertRaises(BenchError) as e:
            peers.parse_peer_sources(["fastmm4avx=" + mi])
        self.assertIn("is not an unchanged FastMM4-AVX source folder (it has no FastMM4.pas)",
                      str(e.exception))
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["mimalloc=" + fm])
        self.assertEqual(peers.parse_peer_sources(["fastmm4avx=" + fm, "mimalloc=" + mi]),
                         {"fastmm4avx": fm, "mimalloc": mi})
        sn = source_folder(self.tmp.name, "sn", SN_MARKER)
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["rpmalloc=" + sn])
        self.assertEqual(peers.parse_peer_sources(["snmalloc=" + sn]), {"snmalloc": sn})


if __name__ == "__main__":
    unittest.main()
