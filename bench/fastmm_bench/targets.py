# SPDX-License-Identifier: MIT
"""bench/targets.conf: the allocators of each platform, one line each (the file explains the
fields): platform, role, name, kind, library, symbol, workloads."""

import os

from .errors import BenchError
from .paths import REPO, TARGETS_CONF
from .suite_programs import SUITE
from .workloads import SEED, workloads_of

PLATFORMS = ("native", "native-suite", "win64", "win32", "pascal-win64", "pascal-win32",
             "pascal-native")
ROLES = ("candidate", "baseline")
KINDS = ("record", "malloc", "heap", "pascal", "preload")


class Target:
    def __init__(self, platform, role, name, kind, lib, sym, workloads, line):
        self.platform, self.role, self.name, self.kind = platform, role, name, kind
        self.lib = None if lib == "-" else lib
        self.sym = None if sym == "-" else sym
        self.workloads = workloads
        self.line = line
        self.snapshot_lib = None  # the run's copy of the library (programs.take_snapshot)
        self.snapshot_exe = None  # a pascal-* target's own copy of the program (the same)

    @property
    def key(self):
        return "%s:%s" % (self.platform, self.name)

    def lib_path(self):
        """The library as a file of the repository, or None for a bare name / no library."""
        if self.lib is None or "/" not in self.lib:
            return None
        return os.path.join(REPO, self.lib)

    def own_program(self):
        """A pascal target whose `lib` is a program (.exe, or on pascal-native a file that is no
        shared library): a build of the Pascal program of its own (a peer's,
        bench/peers/build.sh; natively the program linked with libfastmmc.a, or with cmem), run
        instead of the platform's, with no library beside it."""
        if self.kind != "pascal" or self.lib is None:
            return False
        name = os.path.basename(self.lib)
        return name.endswith(".exe") or not (name.endswith(".dll") or ".so" in name)

    def run_lib_path(self):
        """The file the runs load: the run's snapshot copy once take_snapshot made it."""
        return self.snapshot_lib or self.lib_path()

    def runs(self, workload):
        if self.workloads == "all":
            return True
        if self.workloads == "seed":
            return workload in SEED
        return workload in self.workloads.split(",")

    def alloc_args(self):
        """The program's options that choose this allocator. A pascal target names its
        manager (`sym`); its library, if any, sits beside the target's own copy of the program
        (programs.take_snapshot)."""
        if self.kind == "pascal":
            return ["--alloc", self.sym]
        args = ["--alloc", self.kind]
        path = self.run_lib_path()
        if path is not None:
            args += ["--lib", windows_path(path) if self.platform != "native" else path]
        elif self.lib is not None:
            args += ["--lib", self.lib]
        if self.sym is not None:
            args += ["--sym", self.sym]
        return args


def windows_path(path):
    # Wine maps drive Z: to the Unix root.
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def is_pascal_platform(platform):
    return platform.startswith("pascal-")


def parse_targets(lines, source=TARGETS_CONF):
    """Targets from the lines of a targets.conf; `source` names it in errors."""
    targets = []
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 7:
            raise BenchError("%s:%d: expected 7 fields, found %d" % (source, number, len(fields)))
        platform, role, name, kind, lib, sym, workloads = fields
        if platform not in PLATFORMS:
            raise BenchError("%s:%d: unknown platform %s" % (source, number, platform))
        if role not in ROLES:
            raise BenchError("%s:%d: role must be candidate or baseline" % (source, number))
        if kind not in KINDS:
            raise BenchError("%s:%d: unknown kind %s" % (source, number, kind))
        if workloads not in ("all", "seed"):
            for w in workloads.split(","):
                if w not in workloads_of(platform):
                    raise BenchError("%s:%d: %s has no workload %s" % (source, number, platform, w))
        if (kind == "pascal") != is_pascal_platform(platform):
            raise BenchError("%s:%d: the pascal-* platforms, and only they, have targets of kind "
                             "pascal" % (source, number))
        if (kind == "preload") != (platform == SUITE):
            raise BenchError("%s:%d: the native-suite platform, and only it, has targets of kind "
                             "preload" % (source, number))
        if kind == "pascal" and sym == "-":
            raise BenchError("%s:%d: a pascal target names its manager in the symbol field"
                             % (source, number))
        if any(t.platform == platform and t.name == name for t in targets):
            # The results, and the snapshot's folders, are keyed by platform and name.
            raise BenchError("%s:%d: %s already has a target named %s" % (source, number,
                                                                         platform, name))
        targets.append(Target(platform, role, name, kind, lib, sym, workloads, number))
    for p in PLATFORMS:
        cands = [t for t in targets if t.platform == p and t.role == "candidate"]
        if len(cands) > 1:
            raise BenchError("%s: more than one candidate for %s" % (source, p))
    return targets


def read_targets(path=TARGETS_CONF):
    with open(path) as f:
        return parse_targets(f, path)
