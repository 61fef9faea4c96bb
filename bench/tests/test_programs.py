# SPDX-License-Identifier: MIT
"""The run's snapshot of the programs and libraries, and the command each run starts
(fastmm_bench.programs)."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

from fastmm_bench import programs, targets


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class SnapshotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fastmm-bench-test-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.where = os.path.join(self.tmp, "snapshot")
        self.built = {}  # platform -> the fake built program
        patcher = mock.patch.object(programs, "bench_exe", self.fake_bench_exe)
        patcher.start()
        self.addCleanup(patcher.stop)
        saved = dict(programs.SNAPSHOT_EXES)
        self.addCleanup(lambda: (programs.SNAPSHOT_EXES.clear(),
                                 programs.SNAPSHOT_EXES.update(saved)))

    def fake_bench_exe(self, platform, built=False):
        if not built and platform in programs.SNAPSHOT_EXES:
            return programs.SNAPSHOT_EXES[platform]
        return self.built[platform]

    def program(self, platform, name, data):
        self.built[platform] = os.path.join(self.tmp, "build", platform, name)
        write(self.built[platform], data)

    def two_builds(self, path, new_data, main_data):
        """The same library file in two trees (a worktree's and main's): their paths."""
        new = os.path.join(self.tmp, "wt", path)
        main = os.path.join(self.tmp, "main", path)
        write(new, new_data)
        write(main, main_data)
        return new, main

    def test_pascal_targets_with_same_named_dlls_get_a_folder_and_program_each(self):
        # Two builds of fastmmc32.dll (another tree's, given by an absolute path, and this
        # one's), and Free Pascal's heap, which loads no DLL.
        self.program("pascal-win32", "fastmm_pascal_bench.exe", b"the program")
        new, main = self.two_builds(os.path.join("build", "win32", "bin", "fastmmc32.dll"),
                                    b"the new DLL", b"main's DLL")
        ts = targets.parse_targets([
            "pascal-win32 candidate new      pascal %s fastmmc pas_memsize" % new,
            "pascal-win32 baseline  main     pascal %s fastmmc pas_memsize" % main,
            "pascal-win32 baseline  fpc-heap pascal -  fpcheap pas_memsize"], "test.conf")
        programs.take_snapshot("pascal-win32", ts, self.where)
        new_t, main_t, heap_t = ts

        for t, dll in ((new_t, b"the new DLL"), (main_t, b"main's DLL")):
            # The DLL the program loads by name from its own folder is this target's.
            folder = os.path.dirname(t.snapshot_exe)
            self.assertEqual(folder, os.path.join(self.where, "pascal-win32", t.name))
            self.assertEqual(t.snapshot_lib, os.path.join(folder, "fastmmc32.dll"))
            self.assertEqual(read(t.snapshot_lib), dll)
            self.assertEqual(read(t.snapshot_exe), b"the program")
            self.assertEqual(sorted(os.listdir(folder)),
                             ["fastmm_pascal_bench.exe", "fastmmc32.dll"])
        self.assertNotEqual(new_t.snapshot_exe, main_t.snapshot_exe)
        self.assertEqual(read(heap_t.snapshot_exe), b"the program")
        self.assertIsNone(heap_t.snapshot_lib)

        # Each run starts its target's copy; the DLL is not on the command line.
        args = ["--workload", "pas_memsize"]
        for t in ts:
            cmd = programs.command("pascal-win32", args + t.alloc_args(), t)
            self.assertEqual(cmd[0], programs.WINE_RUN)
            self.assertEqual(cmd[1], t.snapshot_exe)
            self.assertNotIn(t.snapshot_lib, cmd)
        # Without a target (the --list check): the platform's program.
        self.assertEqual(programs.command("pascal-win32", ["--list"])[1],
                         programs.SNAPSHOT_EXES["pascal-win32"])

    def test_a_pascal_target_with_a_program_of_its_own_runs_that_program(self):
        # A peer built into the program (fastmm4avx): its lib is that build of the program.
        self.program("pascal-win64", "fastmm_pascal_bench.exe", b"the program")
        peer = os.path.join(self.tmp, "build", "peers", "fastmm4avx", "win64",
                            "fastmm_pascal_bench.exe")
        write(peer, b"the program with FastMM4")
        dll = os.path.join(self.tmp, "build", "win64", "bin", "fastmmc64.dll")
        write(dll, b"the DLL")
        ts = targets.parse_targets([
            "pascal-win64 candidate fastmm-c   pascal %s fastmmc    pas_mixed" % dll,
            "pascal-win64 baseline  fastmm4avx pascal %s fastmm4avx pas_mixed" % peer],
            "test.conf")
        programs.take_snapshot("pascal-win64", ts, self.where)
        cand, avx = ts
        self.assertEqual(read(cand.snapshot_exe), b"the program")
        self.assertEqual(read(cand.snapshot_lib), b"the DLL")
        folder = os.path.join(self.where, "pascal-win64", "fastmm4avx")
        self.assertEqual(avx.snapshot_exe, os.path.join(folder, "fastmm_pascal_bench.exe"))
        self.assertEqual(read(avx.snapshot_exe), b"the program with FastMM4")
        self.assertIsNone(avx.snapshot_lib)
        self.assertEqual(os.listdir(folder), ["fastmm_pascal_bench.exe"])
        cmd = programs.command("pascal-win64", ["--workload", "pas_mixed"] + avx.alloc_args(), avx)
        self.assertEqual(cmd[1:], [avx.snapshot_exe, "--workload", "pas_mixed", "--alloc",
                                   "fastmm4avx"])
        # The platform's own program (the --list check) is still the CMake build.
        self.assertEqual(read(programs.SNAPSHOT_EXES["pascal-win64"]), b"the program")

    def test_native_targets_share_one_program_and_load_their_libraries_by_path(self):
        self.program("native", "fastmm_bench", b"the native program")
        new, main = self.two_builds("libfastmmc.so", b"new", b"main")
        ts = targets.parse_targets([
            "native candidate new   record %s fastmm_get_memory_manager all" % new,
            "native baseline  main  record %s fastmm_get_memory_manager all" % main,
            "native baseline  glibc malloc -  -                         all"], "test.conf")
        programs.take_snapshot("native", ts, self.where)
        exe = os.path.join(self.where, "native", "fastmm_bench")
        self.assertEqual(read(exe), b"the native program")
        self.assertEqual(read(ts[0].snapshot_lib), b"new")
        self.assertEqual(read(ts[1].snapshot_lib), b"main")
        self.assertNotEqual(os.path.dirname(ts[0].snapshot_lib),
                            os.path.dirname(ts[1].snapshot_lib))
        for t in ts:
            self.assertIsNone(t.snapshot_exe)
            cmd = programs.command("native", t.alloc_args(), t)
            self.assertEqual(cmd[0], exe)
            if t.snapshot_lib:
                self.assertEqual(cmd[cmd.index("--lib") + 1], t.snapshot_lib)


if __name__ == "__main__":
    unittest.main()


class NativePascalTest(unittest.TestCase):
    def test_pascal_native_runs_its_program_with_no_wine(self):
        exe = programs.bench_exe("pascal-native", built=True)
        self.assertTrue(exe.endswith(os.path.join("build", "native", "pascal", "fastmm_pascal_bench")))
        saved = dict(programs.SNAPSHOT_EXES)
        self.addCleanup(lambda: (programs.SNAPSHOT_EXES.clear(), programs.SNAPSHOT_EXES.update(saved)))
        programs.SNAPSHOT_EXES["pascal-native"] = "/snap/fastmm_pascal_bench"
        self.assertEqual(programs.command("pascal-native", ["--list"]), ["/snap/fastmm_pascal_bench", "--list"])
        self.assertEqual(programs.environment("pascal-native")["GLIBC_TUNABLES"],
                         programs.NATIVE_ENV["GLIBC_TUNABLES"])
        self.assertNotEqual(programs.command("pascal-win64", ["--list"])[0], programs.bench_exe("pascal-win64"))

