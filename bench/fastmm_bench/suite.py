# SPDX-License-Identifier: MIT
"""The native-suite platform (bench/README.md, "The field's suite"): mimalloc-bench's programs
(fastmm_bench.suite_programs), built with mimalloc-bench's own bench/CMakeLists.txt from a source
folder given as `--peer-source mimalloc-bench=DIR` (never fetched, never committed), each run
under every allocator of the platform by LD_PRELOAD, through /usr/bin/time for the process's peak
resident set (getrusage's ru_maxrss of the child, as `/usr/bin/time -v` reports it)."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time

from .errors import RunFailed
from .paths import REPO
from .peers import PEERS_BUILD, default_source
from .processes import finish
from .suite_programs import (BARNES_QUICK_BODIES, ESPRESSO_QUICK_LINES, LEFT_OUT, PROCS,
                             PROGRAM_BY_NAME, PROGRAMS, SUITE)

SOURCE = "mimalloc-bench"
TIME = "/usr/bin/time"
# The files mimalloc-bench's bench/CMakeLists.txt lists that its build downloads (they are not
# in its repository): empty stand-ins let CMake configure, and their programs are not built.
DOWNLOADED = {"shbench": ("sh6bench-new.c", "sh8bench-new.c")}
# What the loader prints when LD_PRELOAD names a library it cannot load (and then runs the
# program on the C library's malloc: that run would measure the wrong allocator).
NOT_PRELOADED = "cannot be preloaded"
# The way build() makes the programs: a change of it must rebuild the folders it made before.
BUILD_STEPS = "links+stand-ins, cmake Release, one target at a time, quick inputs; 1"

# The state of the run: the source's bench/ folder, the quick inputs' folder, the built programs
# (exe name -> path: the build's, then the run's snapshot copies), why the platform cannot run,
# and the programs' outputs under the C library's malloc (by command).
STATE = {"bench": None, "data": None, "cwd": None, "problem": None}
BUILT = {}
REFERENCE = {}


def reset():
    STATE.update({"bench": None, "data": None, "cwd": None, "problem": None})
    BUILT.clear()
    REFERENCE.clear()


def build_folder(src, given):
    """Where a source's build goes: build/peers/mimalloc-bench for the default source folder,
    build/peers/mimalloc-bench-src-<hash> for a folder given with --peer-source (as the peers')."""
    out = os.path.join(PEERS_BUILD, SOURCE)
    if given:
        out += "-src-" + hashlib.sha256(src.encode()).hexdigest()[:10]
    return os.path.join(REPO, out)


def stamp_of(bench, tools):
    """What a build depends on: the way it is made (BUILD_STEPS), the programs built, every file
    of the source's bench/ folder (path, size, time), and the tools' versions."""
    h = hashlib.sha256()
    h.update(("%s %s %d %d\n" % (BUILD_STEPS, sorted({p.exe for p in PROGRAMS}),
                                 ESPRESSO_QUICK_LINES, BARNES_QUICK_BODIES)).encode())
    for root, dirs, files in os.walk(bench):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            st = os.stat(p)
            h.update(("%s %d %d\n" % (os.path.relpath(p, bench), st.st_size,
                                      st.st_mtime_ns)).encode())
    h.update(tools.encode())
    return h.hexdigest()


def shadow_tree(bench, where):
    """A folder of links to the source's bench/ entries, in which the downloaded files are empty
    stand-ins, so that mimalloc-bench's CMakeLists.txt configures without them (the source folder
    itself is not written)."""
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    for entry in sorted(os.listdir(bench)):
        src = os.path.join(bench, entry)
        dst = os.path.join(where, entry)
        if entry in DOWNLOADED and os.path.isdir(src):
            os.makedirs(dst)
            for f in sorted(os.listdir(src)):
                os.symlink(os.path.join(src, f), os.path.join(dst, f))
            for f in DOWNLOADED[entry]:
                if not os.path.exists(os.path.join(dst, f)):
                    open(os.path.join(dst, f), "w").close()
        else:
            os.symlink(src, dst)


def make_quick_inputs(bench, data):
    """The quick scale's inputs, from the source's own: the first lines of espresso's largest
    input, barnes's input with fewer bodies."""
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(bench, "espresso", "largest.espresso")) as f:
        lines = f.readlines()[:ESPRESSO_QUICK_LINES]
    with open(os.path.join(data, "espresso-quick.espresso"), "w") as f:
        f.writelines(lines)
    with open(os.path.join(bench, "barnes", "input")) as f:
        lines = f.read().split("\n")
    # The first non-empty line is the number of bodies.
    first = next(i for i, line in enumerate(lines) if line.strip())
    lines[first] = str(BARNES_QUICK_BODIES)
    with open(os.path.join(data, "barnes-quick.input"), "w") as f:
        f.write("\n".join(lines))


def tail(proc):
    return (proc.stderr.strip() or proc.stdout.strip())[-300:].replace("\n", " / ")


def build(src, out, notes, run=subprocess.run):
    """Builds the programs of PROGRAMS from `src` into `out` with mimalloc-bench's
    bench/CMakeLists.txt (one target at a time, so that one that does not build here costs only
    its programs); reuses a build of the same files and tools. Returns {exe: path}, or None when
    the build cannot start (the reason in `notes`)."""
    bench = os.path.join(src, "bench")
    exes = []
    for p in PROGRAMS:
        if p.exe not in exes:
            exes.append(p.exe)
    tools = []
    for cmd in (["cmake", "--version"], ["c++", "--version"], ["cc", "--version"]):
        proc = run(cmd, capture_output=True, text=True)
        tools.append((proc.stdout or "").split("\n")[0])
    stamp = stamp_of(bench, "\n".join(tools))
    listing = os.path.join(out, "built.json")
    try:
        with open(os.path.join(out, ".stamp")) as f, open(listing) as g:
            if f.read().strip() == stamp:
                built = json.load(g)
                if all(os.path.exists(p) for p in built.values()):
                    return built
    except (OSError, ValueError):
        pass
    started = time.monotonic()
    tree, obj = os.path.join(out, "src"), os.path.join(out, "obj")
    shadow_tree(bench, tree)
    make_quick_inputs(bench, os.path.join(out, "data"))
    proc = run(["cmake", "-S", tree, "-B", obj, "-DCMAKE_BUILD_TYPE=Release"],
               capture_output=True, text=True)
    if proc.returncode != 0:
        notes.append("native-suite skipped: mimalloc-bench's bench/CMakeLists.txt did not "
                      "configure: %s" % tail(proc))
        return None
    built = {}
    for exe in exes:
        proc = run(["cmake", "--build", obj, "--target", exe, "-j", str(PROCS)],
                   capture_output=True, text=True)
        path = os.path.join(obj, exe)
        if proc.returncode == 0 and os.path.exists(path):
            built[exe] = path
        else:
            users = ", ".join(p.name for p in PROGRAMS if p.exe == exe)
            notes.append("native-suite: %s left out: %s did not build here: %s"
                         % (users, exe, tail(proc)))
    with open(listing, "w") as f:
        json.dump(built, f)
    with open(os.path.join(out, ".stamp"), "w") as f:
        f.write(stamp + "\n")
    notes.append("native-suite: mimalloc-bench's programs built from %s into %s (%d of %d, %d s)"
                 % (src, os.path.relpath(out, REPO), len(built), len(exes),
                    time.monotonic() - started))
    return built


def prepare(platforms, sources, notes, run=subprocess.run):
    """Builds the suite when the native-suite platform is chosen and a source is there; else
    records why it is skipped (programs.check_program says it)."""
    reset()
    if SUITE not in platforms:
        return
    given = SOURCE in sources
    src = sources.get(SOURCE) or default_source(SOURCE)
    if not os.path.isdir(os.path.join(src, "bench")):
        STATE["problem"] = ("no mimalloc-bench source (bench/run --peer-source "
                            "mimalloc-bench=DIR, DIR a mimalloc-bench source folder)")
        return
    out = build_folder(src, given)
    built = build(src, out, notes, run)
    if not built:
        STATE["problem"] = STATE["problem"] or "mimalloc-bench's programs did not build"
        return
    BUILT.update(built)
    STATE.update({"bench": os.path.join(src, "bench"), "data": os.path.join(out, "data")})
    notes.append("native-suite: %s left out: %s" % LEFT_OUT)


def check():
    """None when the suite's programs are built, else why the platform is skipped."""
    if STATE["problem"]:
        return STATE["problem"]
    if not os.access(TIME, os.X_OK):
        return "%s is not installed (the time package: scripts/install-deps.sh)" % TIME
    if not BUILT:
        return "mimalloc-bench's programs are not built"
    return None


def select(workloads, scale, notes):
    """The workloads without the suite's programs that cannot run: not built here, or, at a
    scale below 1, those with no smaller form (one note)."""
    kept, small = [], []
    for w in workloads:
        p = PROGRAM_BY_NAME.get(w)
        if p is None:
            kept.append(w)
        elif p.exe not in BUILT:
            continue
        elif scale < 1 and p.quick is None:
            small.append(w)
        else:
            kept.append(w)
    if small:
        notes.append("native-suite: %s left out at scale below 1: no argument makes them "
                     "smaller" % ", ".join(small))
    return kept


def take_snapshot(targets, where):
    """Copies the built programs and the targets' libraries into `where`/native-suite, and the
    runs start those copies (as programs.take_snapshot does for the other platforms)."""
    d = os.path.join(where, SUITE)
    progs = os.path.join(d, "programs")
    os.makedirs(progs, exist_ok=True)
    for exe, path in list(BUILT.items()):
        copy = os.path.join(progs, exe)
        shutil.copy2(path, copy)
        BUILT[exe] = copy
    STATE["cwd"] = progs
    for t in targets:
        if t.lib_path():
            td = os.path.join(d, t.name)
            os.makedirs(td, exist_ok=True)
            t.snapshot_lib = os.path.join(td, os.path.basename(t.lib_path()))
            shutil.copy2(t.lib_path(), t.snapshot_lib)


def fill(arg):
    return arg.format(procs=PROCS, bench=STATE["bench"], data=STATE["data"])


def execute(cmd, stdin_path, preexec, timeout, env=None):
    """Runs `cmd` (a /usr/bin/time command that writes ru_maxrss to the file after its -o):
    (exit status, stdout, stderr, wall seconds, peak resident bytes or None)."""
    rusage = cmd[cmd.index("-o") + 1]
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin,
                                env=env, preexec_fn=preexec, cwd=STATE["cwd"] or REPO)
        out, err = finish(proc, timeout)
        wall = time.monotonic() - t0
    finally:
        if stdin_path:
            stdin.close()
    peak = None
    try:
        with open(rusage) as f:
            # GNU time puts "Command exited with non-zero status N" (or "terminated by signal")
            # before the format's line.
            lines = [line for line in f.read().splitlines() if line.strip()]
        peak = int(lines[-1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return proc.returncode, out, err, wall, peak


def environment():
    """The parent's environment without an LD_PRELOAD of its own: the command sets the target's."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def first_difference(want, got):
    a, b = want.split("\n"), got.split("\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<end>"
        y = b[i] if i < len(b) else "<end>"
        if x != y:
            return "line %d: %r under the C library's malloc, %r here" % (i + 1, x[:120], y[:120])
    return "no line differs"


def process(prog, args, stdin, preload, preexec, timeout, run_cmd):
    """One process of a program under /usr/bin/time, LD_PRELOAD=`preload` (None: the C
    library's malloc): (stdout, wall seconds, peak bytes); RunFailed when it fails."""
    with tempfile.TemporaryDirectory(prefix="fastmm-suite-") as d:
        cmd = [TIME, "-f", "%M", "-o", os.path.join(d, "rusage"), "env"]
        if preload:
            cmd.append("LD_PRELOAD=" + preload)
        cmd += [BUILT[prog.exe]] + args
        rc, out, err, wall, peak = run_cmd(cmd, stdin, preexec, timeout, environment())
    if NOT_PRELOADED in err:
        raise RunFailed("the loader did not preload %s (the run would measure the C library's "
                        "malloc): %s" % (preload, err.strip()[-300:]))
    if rc != 0:
        raise RunFailed("exit status %s: %s" % (rc, (err.strip() or out.strip())[-600:]))
    if peak is None:
        raise RunFailed("%s reported no peak resident set" % TIME)
    return out, wall, peak


def run_one(target, workload, scale, preexec, timeout, run_cmd=None):
    """Runs a program of the suite once under `target`'s allocator; returns its record (the
    fields fastmm_bench's JSON line has, for fastmm_bench.comparisons). A deterministic output
    that differs from the C library's malloc's is a failure, not a figure."""
    run_cmd = run_cmd or execute
    prog = PROGRAM_BY_NAME[workload]
    args, stdin = prog.command_args(scale)
    if args is None:
        raise RunFailed("%s has no smaller form than bench.sh's" % workload)
    args = [fill(a) for a in args]
    stdin = fill(stdin) if stdin else None
    preload = target.run_lib_path() or target.lib
    out, wall, peak = process(prog, args, stdin, preload, preexec, timeout, run_cmd)
    if prog.figure is None:
        seconds = wall
    else:
        seconds = prog.figure(out)
        if seconds is None:
            raise RunFailed("no time figure in its output (%s): %s"
                            % (prog.figure.pattern, out.strip()[-300:]))
    if prog.output is not None:
        key = (workload, tuple(args), stdin)
        got = prog.output(out)
        if key not in REFERENCE:
            REFERENCE[key] = got if preload is None else prog.output(
                process(prog, args, stdin, None, preexec, timeout, run_cmd)[0])
        if got != REFERENCE[key]:
            raise RunFailed("OUTPUT DIFFERS from the C library's malloc's (%s)"
                            % first_difference(REFERENCE[key], got))
    return {"workload": workload, "alloc": target.name, "threads": prog.threads, "scale": scale,
            "ops": 1, "seconds": seconds, "ns_per_op": seconds * 1e9, "wall_s": round(wall, 4),
            "time_figure": "wall" if prog.figure is None else "relative",
            "mem_kind": "maxrss", "peak_mem": peak, "base_mem": 0, "end_mem": 0, "peak_live": 0,
            "args": args, "stdin": stdin, "preload": preload}
