# SPDX-License-Identifier: MIT
"""Running the workload program: one process pinned to its CPUs, and the rounds of alternating
baseline/candidate pairs (bench/README.md, "The method")."""

import json
import os
import subprocess
import time

from .errors import BenchError, RunFailed
from .paths import REPO
from .programs import command, environment, is_native, keep_wineserver
from .workloads import threads_of, workloads_of

RUN_TIMEOUT = 600
RETRIES = 1  # a run that fails is run again once (Wine can fail to start a program on a busy
             # machine); a second failure marks the allocator failed for that workload


def mask_of(cpus):
    m = 0
    for c in cpus:
        m |= 1 << c
    return m


def run_one(platform, target, workload, scale, cpus, extra_prefix=None, timeout=RUN_TIMEOUT):
    """Runs the target's program once, pinned to `cpus`; returns its JSON record."""
    args = ["--workload", workload, "--scale", repr(scale)] + target.alloc_args()
    cmd = command(platform, args, target)
    if extra_prefix:
        cmd = extra_prefix + cmd

    def pin():
        os.sched_setaffinity(0, cpus)
        if os.sched_getaffinity(0) != set(cpus):
            raise OSError("the CPU set did not take")

    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=environment(platform),
                                preexec_fn=pin, cwd=REPO)
    except subprocess.SubprocessError as e:
        raise BenchError("setting the CPU affinity of a benchmark process to %s failed (%s): "
                         "the run stops, as the method requires" % (sorted(cpus), e))
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RunFailed("timed out after %d s" % timeout)
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    record = None
    for line in reversed(out.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                pass
            break
    if proc.returncode != 0 or record is None:
        tail = (err.strip() or out.strip())[-600:]
        raise RunFailed("exit status %s: %s" % (proc.returncode, tail))
    record["wall_s"] = round(time.monotonic() - t0, 4)
    if record.get("affinity") not in (None, 0) and record["affinity"] != mask_of(cpus):
        raise BenchError("a benchmark process ran on CPU mask %#x, not %#x as requested: the run "
                         "stops, as the method requires" % (record["affinity"], mask_of(cpus)))
    return record


def preflight(target, cpus):
    """A tiny run, so that a peer that cannot load drops out with a note instead of failing.
    Run after the snapshot: it starts the copies the measured runs start (the target's own
    program and library on the pascal-* platforms), once each before the rounds."""
    path = target.lib_path()
    if path is not None and not os.path.exists(path):
        return "%s is not built" % target.lib
    probe = next((w for w in workloads_of(target.platform) if target.runs(w)),
                 workloads_of(target.platform)[0])
    try:
        run_one(target.platform, target, probe, 0.001, cpus, timeout=120)
    except RunFailed as e:
        return "cannot run: %s" % e
    return None


def make_plan(platforms, workloads, active):
    """Per platform and workload, the targets that run it: (platform, workload, targets), for
    every workload that has a candidate and at least one baseline."""
    plan = []
    for p in platforms:
        if p not in active:
            continue
        for w in workloads:
            if w not in workloads_of(p):
                continue
            ts = [t for t in active[p] if t.runs(w)]
            if len(ts) < 2:
                continue
            plan.append((p, w, ts))
    return plan


def round_order(targets, round_index):
    """A round's order: the candidate goes first in even rounds and last in odd rounds, so the
    order within every baseline/candidate pair alternates."""
    cand = [t for t in targets if t.role == "candidate"]
    base = [t for t in targets if t.role != "candidate"]
    return cand + base if round_index % 2 == 0 else base + cand


def run_rounds(plan, warmups, pairs, scale, single_cpus, multi_cpus, raw, progress, notes):
    """Runs the plan: per (platform, workload), `warmups` rounds then `pairs` measured ones, one
    process per target and round, one after the other. Writes every record to `raw` (a file,
    one JSON line each, warmups included). Returns (samples, failures, phase durations):
    samples[(platform, workload, target name)] = the measured rounds' records."""
    samples = {}
    failures = {}
    phases = {}
    phase_start = time.monotonic()
    last_platform = None
    for p, w, ts in plan:
        if p != last_platform:
            if last_platform is not None:
                phases[last_platform] = round(time.monotonic() - phase_start, 1)
            phase_start = time.monotonic()
            last_platform = p
            if not is_native(p):
                keep_wineserver()
        cpus = multi_cpus if threads_of(w) > 1 else single_cpus
        for r in range(warmups + pairs):
            measured = r >= warmups
            pair_index = r - warmups
            for t in round_order(ts, r):
                progress.step("%s %s %s" % (p, w, t.name))
                if (p, w, t.name) in failures:
                    continue
                rec = None
                for attempt in range(RETRIES + 1):
                    try:
                        rec = run_one(p, t, w, scale, cpus)
                        break
                    except RunFailed as e:
                        if attempt == RETRIES:
                            failures[(p, w, t.name)] = str(e)
                        else:
                            notes.append("%s %s %s round %d: run failed, repeated: %s" % (
                                p, w, t.name, r, str(e)[:200]))
                if rec is None:
                    continue
                rec.update({"platform": p, "target": t.name, "round": r,
                            "warmup": not measured, "pair": pair_index if measured else None,
                            "cpus": sorted(cpus)})
                raw.write(json.dumps(rec) + "\n")
                if measured:
                    samples.setdefault((p, w, t.name), []).append(rec)
    if last_platform is not None:
        phases[last_platform] = round(time.monotonic() - phase_start, 1)
    return samples, failures, phases
