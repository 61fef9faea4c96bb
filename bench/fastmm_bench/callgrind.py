# SPDX-License-Identifier: MIT
"""Instruction counts of the timed region, natively: every workload once per allocator under
valgrind --tool=callgrind. The program zeroes callgrind's counters when its timed region starts
and dumps them when it ends; the dump of that region is the count. Counts do not depend on
timing, so two run at once, and a count is cached by what it depends on (the program, the
library, the workload, the scale, valgrind's version)."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading

from .errors import BenchError, RunFailed
from .programs import program_of
from .runner import run_one


def file_digest(path, h):
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)


def callgrind_key(target, workload, scale):
    h = hashlib.sha256()
    h.update(repr((workload, scale, target.kind, target.lib, target.sym)).encode())
    file_digest(program_of("native", target), h)
    if target.run_lib_path():
        file_digest(target.run_lib_path(), h)
    h.update(subprocess.run(["valgrind", "--version"], capture_output=True).stdout)
    return h.hexdigest()


def timed_region_count(dump_dir):
    """The instruction total of the dump of the timed region in `dump_dir`, or None."""
    ir = None
    for name in sorted(os.listdir(dump_dir)):
        path = os.path.join(dump_dir, name)
        desc_ok, total = False, None
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: fastmm_bench timed region"):
                    desc_ok = True
                elif line.startswith("summary:") or line.startswith("totals:"):
                    total = int(line.split()[1])
        if desc_ok and total is not None:
            ir = total
    return ir


def callgrind_count(target, workload, scale, cpus):
    """Instructions of the timed region (from the client-request dump) and the ops it did."""
    tmp = tempfile.mkdtemp(prefix="fastmm-cg-")
    try:
        out = os.path.join(tmp, "cg.out")
        prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                  "--dump-instr=no", "--dump-line=no", "--compress-strings=no"]
        rec = run_one("native", target, workload, scale, cpus, extra_prefix=prefix, timeout=1800)
        ir = timed_region_count(tmp)
        if ir is None:
            raise RunFailed("callgrind wrote no dump of the timed region")
        return {"instructions": ir, "ops": rec["ops"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_callgrind(jobs, scale, cpus, cache_path, progress):
    """jobs: (target, workload). Runs two at a time (counts do not depend on timing). Returns
    (results, failures), keyed by (target key, workload)."""
    try:
        with open(cache_path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    results, failures = {}, {}
    lock = threading.Lock()
    todo = []
    for target, workload in jobs:
        key = callgrind_key(target, workload, scale)
        if key in cache:
            results[(target.key, workload)] = cache[key]
            progress.step("callgrind %s %s (cached)" % (workload, target.name))
        else:
            todo.append((key, target, workload))
    cpu_list = sorted(cpus)

    def worker(index):
        while True:
            with lock:
                if not todo:
                    return
                key, target, workload = todo.pop(0)
            try:
                r = callgrind_count(target, workload, scale, {cpu_list[index % len(cpu_list)]})
                with lock:
                    results[(target.key, workload)] = r
                    cache[key] = r
            except (RunFailed, BenchError) as e:
                with lock:
                    failures[(target.key, workload)] = str(e)
            with lock:
                progress.step("callgrind %s %s" % (workload, target.name))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(min(2, len(cpu_list)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
    with open(cache_path, "w") as f:
        json.dump(cache, f)
    return results, failures
