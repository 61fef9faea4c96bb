# SPDX-License-Identifier: MIT
"""The workload programs of each platform (fastmm_bench; fastmm_pascal_bench for the pascal-*
platforms): where they are, the snapshot copies a run uses, the command and environment of one
process, and the wineserver the Windows runs share."""

import functools
import os
import shutil
import subprocess

from . import suite
from .paths import REPO, WINE_RUN
from .suite_programs import SUITE
from .targets import is_pascal_platform
from .workloads import threads_of, workloads_of

# The Windows runs use a Wine prefix of their own, so that the wineserver they keep up for the
# run (keep_wineserver) serves only them: other Wine programs on the machine neither share nor
# stop it. Made on first use by cmake/wine-run.sh (about 10 s).
WINE_PREFIX = os.environ.get("FASTMM_BENCH_WINEPREFIX") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fastmm-c",
    "bench-wineprefix")
# jemalloc's initial-exec TLS needs room in the static TLS block to be dlopen'ed; the same
# environment is given to every native run so that every allocator runs alike.
NATIVE_ENV = {"GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=16384"}

# platform -> the run's copy of its program (take_snapshot), the one its targets run; on the
# pascal-* platforms each target runs a copy of it in a folder of its own (Target.snapshot_exe).
SNAPSHOT_EXES = {}


def under_wine(platform):
    """Whether the platform's programs are Windows programs (run under Wine)."""
    return platform not in ("native", SUITE, "pascal-native")


def bench_exe(platform, built=False):
    """The platform's program: the snapshot copy once there is one (built=True: the file under
    build/). pascal-win32, pascal-win64 and pascal-native run the Pascal program that the win32,
    win64 and native presets build beside their copies of the library."""
    if not built and platform in SNAPSHOT_EXES:
        return SNAPSHOT_EXES[platform]
    if is_pascal_platform(platform):
        preset = platform[len("pascal-"):]
        name = "fastmm_pascal_bench" + ("" if preset == "native" else ".exe")
        return os.path.join(REPO, "build", preset, "pascal", name)
    name = "fastmm_bench" + ("" if platform == "native" else ".exe")
    return os.path.join(REPO, "build", platform, "bin", name)


def program_of(platform, target=None):
    """The program a run of `target` starts: its own copy once the snapshot made one (pascal-*
    targets), else the platform's."""
    if target is not None and target.snapshot_exe:
        return target.snapshot_exe
    return bench_exe(platform)


def take_snapshot(platform, targets, where):
    """Copies the platform's program and every library its targets load by path into
    `where`/<platform>, and the runs start those copies: a build that replaces a file in build/
    during the run (the tree is shared) cannot mix two builds into one comparison, nor make a
    run fail to start. The Pascal program loads its DLL by name from its own folder, so on the
    pascal-* platforms every target gets a folder of its own, <platform>/<target name>, holding a
    copy of the program (a copy of the platform's copy: the same bytes for every target) and the
    target's DLL, if it has one: two builds of fastmmc32.dll can then be compared in one run. A
    pascal target whose library field names a program (Target.own_program: a peer built into
    the program) gets a copy of that program in its folder instead, and no DLL.
    The other programs load a library by path: one program, each library in
    <platform>/<target name>. The native-suite platform's programs are mimalloc-bench's
    (suite.take_snapshot)."""
    if platform == SUITE:
        suite.take_snapshot(targets, where)
        return
    d = os.path.join(where, platform)
    os.makedirs(d, exist_ok=True)
    src = bench_exe(platform, built=True)
    exe = os.path.join(d, os.path.basename(src))
    shutil.copy2(src, exe)
    SNAPSHOT_EXES[platform] = exe
    for t in targets:
        td = os.path.join(d, t.name)  # a target's name is its platform's only one (targets.py)
        if is_pascal_platform(platform):
            os.makedirs(td)
            t.snapshot_exe = os.path.join(td, os.path.basename(exe))
            shutil.copy2(t.lib_path() if t.own_program() else exe, t.snapshot_exe)
            if t.own_program():
                continue
        if t.lib_path():
            os.makedirs(td, exist_ok=True)
            t.snapshot_lib = os.path.join(td, os.path.basename(t.lib_path()))
            shutil.copy2(t.lib_path(), t.snapshot_lib)


def is_native(platform):
    """The platforms whose programs run as they are, with no Wine."""
    return platform in ("native", "pascal-native")


def command(platform, args, target=None):
    """The command line of one run of `target` (None: of the platform's program, e.g. --list)."""
    exe = program_of(platform, target)
    if is_native(platform):
        return [exe] + args
    return [WINE_RUN, exe] + args


def environment(platform):
    env = dict(os.environ)
    if is_native(platform):
        env.update(NATIVE_ENV)
    else:
        env["FASTMM_WINEPREFIX"] = WINE_PREFIX  # read by cmake/wine-run.sh
    return env


def prepare_wine():
    """Makes the benchmark's Wine prefix if it is not there yet."""
    subprocess.run([WINE_RUN, "--prepare"], env=environment("win64"), check=False)


def keep_wineserver():
    """Starts a wineserver for the benchmark's Wine prefix that stays up for 60 s after its last
    client. Debian's wineserver wrapper passes -p0, so a server that a program starts ends with
    that program, and the next program pays for a new server and Wine's service processes
    (about 1.2 s here, and noisy). If our server is already up, this does nothing."""
    env = environment("win64")
    env["WINEPREFIX"] = WINE_PREFIX
    subprocess.run(["wineserver", "-p60"], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


@functools.lru_cache(maxsize=None)
def win32_emulator():
    """The emulator that runs Win32 programs here ("qemu-i386 version 10.0.2 ..."), when this
    kernel runs no 32-bit programs itself and scripts/setup-win32-emulation.sh set one up; else
    None. Asked once per run: the skip test and the report's note both want it, for each Win32
    platform, and the machine's answer does not change while bench/run runs."""
    probe = subprocess.run([WINE_RUN, "--win32-emulator"], capture_output=True, text=True,
                           env=environment("win32"), check=False)
    return (probe.stdout.strip() or None) if probe.returncode == 0 else None


def check_program(platform, emulated_win32=False):
    """None if the platform's program is there and lists the workloads bench/run knows, else
    why the platform is skipped. Under an emulator of i386 programs the Win32 platforms are
    skipped unless `emulated_win32`: their times would be the emulator's."""
    if platform == SUITE:
        return suite.check()
    exe = bench_exe(platform)
    if not os.path.exists(exe):
        preset = platform[len("pascal-"):] if is_pascal_platform(platform) else platform
        return "%s is missing (build it: cmake --preset %s && cmake --build --preset %s)" % (
            os.path.relpath(exe, REPO), preset, preset)
    if platform.endswith("win32"):
        # A kernel with its 32-bit emulation off runs no Win32 program: say that, not "lists
        # other workloads".
        probe = subprocess.run([WINE_RUN, "--can-run-win32"], capture_output=True, text=True,
                               env=environment(platform), check=False)
        if probe.returncode == 1:  # 2 and others: an install problem, which --list reports
            return probe.stderr.strip().replace("wine-run: ", "", 1)
        emulator = win32_emulator()
        if emulator and not emulated_win32:
            return ("Win32 programs run here only under %s (this kernel runs no 32-bit programs): "
                    "their times would be the emulator's, not a 32-bit CPU's (--emulated-win32 "
                    "runs them anyway)" % emulator)
    try:
        out = subprocess.run(command(platform, ["--list"]), capture_output=True, text=True,
                             env=environment(platform), timeout=120, cwd=REPO).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return "%s --list failed: %s" % (os.path.relpath(exe, REPO), e)
    listed = [line.split("\t") for line in out.splitlines() if line.strip()]
    names = [f[0] for f in listed]
    if names != workloads_of(platform) or any(int(f[1]) != threads_of(f[0]) for f in listed):
        return ("%s lists other workloads than bench/run knows (rebuild it): %s" %
                (os.path.relpath(exe, REPO), ",".join(names)))
    return None
