# SPDX-License-Identifier: MIT
"""The peers bench/run builds itself from a source folder (bench/peers/README.md): a target of
bench/targets.conf whose library (or, on the pascal-* platforms, program) lies under
build/peers/<name>/ is built there by bench/peers/build.sh on demand, by the recipe of its name,
for the chosen platforms that have such a target, from the default folder (which a fetch script
may fill) or from `--peer-source NAME=DIR`. Without a source the targets drop out with one
note."""

import hashlib
import os
import subprocess

from .errors import BenchError
from .paths import BENCH, REPO

PEERS_BUILD = os.path.join("build", "peers")
BUILD_SH = os.path.join(BENCH, "peers", "build.sh")


class Recipe:
    """What bench/run knows of a peer that bench/peers/build.sh builds (the build itself is
    build.sh's recipe of the same name): `what` names its source, `marker` is a file every such
    source folder has (a --peer-source folder without it is refused), `fetch` the command that
    puts a source in the default folder, or None when there is none to run."""

    def __init__(self, what, marker, fetch=None):
        self.what, self.marker, self.fetch = what, marker, fetch

    def how_to_get(self, name):
        given = "bench/run --peer-source %s=DIR, DIR %s" % (name, self.what)
        return "%s, or %s" % (self.fetch, given) if self.fetch else given


RECIPES = {
    # Debian's mimalloc source, built with MinGW into mimalloc.dll (win32, win64).
    "mimalloc": Recipe("a mimalloc source tree", os.path.join("src", "static.c"),
                       "bash scripts/fetch-peer-mimalloc.sh"),
    # FastMM4-AVX's unit, the first unit of the Pascal benchmark program built a second time
    # (pascal-win32, pascal-win64, pascal-native).
    "fastmm4avx": Recipe("an unchanged FastMM4-AVX source folder", "FastMM4.pas"),
    # mORMot 2's fpcx64mm (src/core/mormot.core.fpcx64mm.pas), the first unit of the same program
    # built natively (pascal-native, target fpcx64mm).
    "mormot2": Recipe("a mORMot 2 source tree", os.path.join("src", "core", "mormot.core.fpcx64mm.pas")),
    # rpmalloc (tag 1.4.5) and snmalloc (tag 0.7.5), built with MinGW into rpmalloc.dll and
    # snmalloc.dll (win32, win64) and with gcc/g++ into librpmalloc.so and libsnmalloc.so
    # (native); nothing fetches them.
    "rpmalloc": Recipe("an rpmalloc 1.4.5 source tree", os.path.join("rpmalloc", "rpmalloc.c")),
    # mimalloc-bench's benchmark programs, the native-suite platform's (fastmm_bench.suite builds
    # them with its own bench/CMakeLists.txt; no target of it lies under build/peers/).
    "mimalloc-bench": Recipe("a mimalloc-bench source folder", os.path.join("bench",
                                                                         "CMakeLists.txt")),
    "snmalloc": Recipe("an snmalloc 0.7.5 source tree",
                       os.path.join("src", "snmalloc", "override", "malloc.cc")),
}


def default_source(name):
    """The folder the fetch script fills (outside the tree, as the script says)."""
    base = os.environ.get("FASTMM_PEERS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fastmm-c", "peers")
    return os.path.join(base, name)


def parse_peer_sources(values):
    """--peer-source NAME=DIR (repeatable) -> {name: absolute DIR}."""
    sources = {}
    for v in values or []:
        name, sep, folder = v.partition("=")
        if not sep or not folder:
            raise BenchError("--peer-source wants NAME=DIR, not %r" % v)
        if name not in RECIPES:
            raise BenchError("--peer-source: no recipe for %r (known: %s)"
                             % (name, ", ".join(sorted(RECIPES))))
        if not os.path.isdir(folder):
            raise BenchError("--peer-source %s: %s is no folder" % (name, folder))
        if not os.path.isfile(os.path.join(folder, RECIPES[name].marker)):
            raise BenchError("--peer-source %s: %s is not %s (it has no %s)"
                             % (name, folder, RECIPES[name].what, RECIPES[name].marker))
        sources[name] = os.path.abspath(folder)
    return sources


def peer_of(target):
    """The peer a target is built from (`build/peers/<name>/<folder>/<file>`, the folder win32,
    win64 or native: the pascal-* platforms' peers are built in win32 and win64 too), or None."""
    if target.lib is None:
        return None
    parts = target.lib.split("/")
    if len(parts) >= 4 and "/".join(parts[:2]) == PEERS_BUILD:
        return parts[2]
    return None


def build_folders(targets, name, platforms):
    """What one build.sh run makes for a peer: the folders (its platform arguments) of the peer's
    targets on the chosen platforms."""
    folders = []
    for t in targets:
        if peer_of(t) == name and t.platform in platforms:
            folder = t.lib.split("/")[3]
            if folder not in folders:
                folders.append(folder)
    return folders


def prepare(targets, platforms, sources, notes, run=subprocess.run):
    """Builds the peers that the chosen platforms' targets need and points those targets at the
    build; returns the targets that remain. A --peer-source build goes to a folder of its own
    (named after the source folder), so it never replaces the default source's build."""
    keep, missing = [], {}
    built = {}
    for t in targets:
        name = peer_of(t)
        if name is None or t.platform not in platforms:
            keep.append(t)
            continue
        src = sources.get(name) or default_source(name)
        if not os.path.isdir(src):
            missing.setdefault(name, []).append(t.key)
            continue
        if (name, src) not in built:
            out = os.path.join(PEERS_BUILD, name)
            if name in sources:
                out += "-src-" + hashlib.sha256(src.encode()).hexdigest()[:10]
            proc = run(["bash", BUILD_SH, name, src, os.path.join(REPO, out)]
                       + build_folders(targets, name, platforms), capture_output=True, text=True)
            built[name, src] = out if proc.returncode == 0 else None
            if proc.returncode != 0:
                tail = (proc.stderr.strip() or proc.stdout.strip())[-400:]
                notes.append("%s skipped: its build from %s failed: %s" % (name, src, tail))
            elif proc.stdout.strip():
                notes.append(proc.stdout.strip().replace("\n", "; "))
        out = built[name, src]
        if out is None:
            continue
        rest = t.lib.split("/", 3)[3]  # win32|win64|native/<file>
        t.lib = "%s/%s" % (out, rest)
        keep.append(t)
    for name, keys in sorted(missing.items()):
        notes.append("%s skipped: no %s source (%s)"
                     % (", ".join(keys), name, RECIPES[name].how_to_get(name)))
    return keep
