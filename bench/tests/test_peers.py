# SPDX-License-Identifier: MIT
"""The peers bench/run builds from a source folder (fastmm_bench.peers): which targets they are,
where a build goes, the one note when the source is absent, --peer-source's checks."""

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
""".splitlines()


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
                         [None, "mimalloc", None, "mimalloc", None])

    def test_absent_source_drops_the_targets_with_one_note(self):
        notes, calls = [], []
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": os.path.join(self.tmp.name, "none")}):
            kept = peers.prepare(self.ts, ["win64", "win32", "native"], {}, notes, ok_build(calls))
        self.assertEqual([t.key for t in kept], ["win64:fastmm-c", "win32:fastmm-c", "native:mimalloc"])
        self.assertEqual(len(notes), 1)
        self.assertIn("win64:mimalloc, win32:mimalloc skipped: no mimalloc source", notes[0])
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
        sources = peers.parse_peer_sources(["mimalloc=" + self.tmp.name])
        notes, calls = [], []
        kept = peers.prepare(self.ts, ["win64"], sources, notes, ok_build(calls))
        lib = {t.key: t.lib for t in kept}["win64:mimalloc"]
        self.assertTrue(lib.startswith("build/peers/mimalloc-src-"), lib)
        self.assertTrue(lib.endswith("/win64/mimalloc.dll"), lib)
        # a platform not chosen is left as it is (the run does not look at it)
        self.assertEqual({t.key: t.lib for t in kept}["win32:mimalloc"],
                         "build/peers/mimalloc/win32/mimalloc.dll")
        self.assertEqual(calls[0][3], os.path.abspath(self.tmp.name))

    def test_failed_build_drops_the_peer_with_its_message(self):
        os.mkdir(os.path.join(self.tmp.name, "mimalloc"))
        notes = []

        def failing(cmd, **_):
            return subprocess.CompletedProcess(cmd, 1, "", "mimalloc did not compile for win32")
        with mock.patch.dict(os.environ, {"FASTMM_PEERS_DIR": self.tmp.name}):
            kept = peers.prepare(self.ts, ["win64", "win32"], {}, notes, failing)
        self.assertEqual([t.key for t in kept], ["win64:fastmm-c", "win32:fastmm-c", "native:mimalloc"])
        self.assertEqual(len(notes), 1)
        self.assertIn("did not compile for win32", notes[0])

    def test_peer_source_checks(self):
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["mimalloc"])
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["hoard=" + self.tmp.name])
        with self.assertRaises(BenchError):
            peers.parse_peer_sources(["mimalloc=" + os.path.join(self.tmp.name, "absent")])


if __name__ == "__main__":
    unittest.main()
