#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The i386 instructions a Win32 benchmark program runs per operation, function by function:
where bench/analysis/win32-instructions.sh gives one total per workload, this says which functions of the
program and of the memory manager's DLL run them, with the calls per operation and the
instructions per call. Counted by QEMU's `hotblocks` plugin (instructions and executions of every
translated block) with its report limit raised past the number of blocks (it prints the 20
hottest as built; the experiment file gives the one-line change), at two scales, differenced:

  FASTMM_QEMU_I386=.../qemu-i386 FASTMM_QEMU_HOTBLOCKS=.../libhotblocks.so \\
  python3 bench/analysis/win32_functions.py --dir build/win32/pascal --alloc fastmmc \\
      --workload pas_mixed [--dll fastmmc32.dll] [--unit FASTMM4] [--top 25]

--dir holds the program (fastmm_pascal_bench.exe, else fastmm_bench.exe) and the DLL; --alloc
and any --arg words choose the allocator as for bench/analysis/win32-instructions.sh. A block is named by
the symbol before it in the program (loaded at 0x400000) or in --dll (at its preferred base,
which the report checks: a DLL Wine moved elsewhere gets no instructions and is said so). Code a
compiler left without symbols counts under the symbol before it. --unit groups a Pascal unit
compiled into the program (FastMM4-AVX's) as the manager, and --unit-after the symbol its
routines without symbols follow. Counts, not time.
"""

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from pe_symbols import symbol_at, text_symbols, unit_of

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WINE_RUN = os.path.join(REPO, "cmake", "wine-run.sh")
LINE = re.compile(r"^0x([0-9a-fA-F]+), \d+, (\d+), (\d+)$")


def pe_layout(path):
    """(image base, size of image) from a PE file's optional header, by MinGW's objdump."""
    out = subprocess.run(["i686-w64-mingw32-objdump", "-p", path], capture_output=True, text=True,
                         check=True).stdout
    base = re.search(r"^ImageBase\s+([0-9a-fA-F]+)", out, re.M)
    size = re.search(r"^SizeOfImage\s+([0-9a-fA-F]+)", out, re.M)
    return int(base.group(1), 16), int(size.group(1), 16)


def parse_blocks(text):
    """{block address: [instructions run, executions]} of one hotblocks report."""
    blocks = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            b = blocks.setdefault(int(m.group(1), 16), [0, 0])
            b[0] += int(m.group(2)) * int(m.group(3))
            b[1] += int(m.group(3))
    return blocks


class Image:
    def __init__(self, tag, path):
        self.tag = tag
        self.base, self.size = pe_layout(path)
        self.syms = text_symbols(path, "i686-w64-mingw32-nm")
        self.addrs = [a for a, _ in self.syms]

    def name(self, pc):
        """(symbol, is its first block) for an address in this image, else None."""
        if not self.base <= pc < self.base + self.size:
            return None
        return symbol_at(self.syms, self.addrs, pc) or ("?", False)


def per_function(low, high, ops, images):
    """{(image tag, function): [instructions per op, calls per op]} from two runs' blocks, the
    second `ops` operations longer; blocks outside every image go under ("other", "")."""
    funcs = collections.defaultdict(lambda: [0.0, 0.0])
    for pc in set(low) | set(high):
        ins = high.get(pc, [0, 0])[0] - low.get(pc, [0, 0])[0]
        runs = high.get(pc, [0, 0])[1] - low.get(pc, [0, 0])[1]
        key, first = ("other", ""), False
        for image in images:
            found = image.name(pc)
            if found is not None:
                key, first = (image.tag, found[0]), found[1]
                break
        funcs[key][0] += ins / ops
        if first:
            funcs[key][1] += runs / ops
    return funcs


def count(args, scale, workdir):
    """(operations, blocks) of one run."""
    logs = os.path.join(workdir, "s%s" % scale)
    os.makedirs(logs)
    env = dict(os.environ, QEMU_LOG="plugin", QEMU_LOG_FILENAME=os.path.join(logs, "q.%d"),
               FASTMM_WINE_WRAPPER="%s -plugin %s,inline=on" % (args.qemu, args.plugin))
    run = subprocess.run(["bash", WINE_RUN, args.program, "--workload", args.workload, "--alloc",
                          args.alloc, *args.arg, "--scale", str(scale)], cwd=args.dir, env=env,
                         capture_output=True, text=True)
    line = [l for l in run.stdout.splitlines() if l.startswith("{")]
    if not line:
        sys.exit("win32_functions: the run at scale %s failed (%d): %s" % (
            scale, run.returncode, run.stderr[-400:]))
    # The largest report: a run wine-run.sh repeated leaves the first start's too.
    reports = [open(f).read() for f in glob.glob(os.path.join(logs, "q.*"))]
    blocks = max((parse_blocks(r) for r in reports), key=lambda b: sum(v[0] for v in b.values()),
                 default={})
    return json.loads(line[-1])["ops"], blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--alloc", required=True)
    ap.add_argument("--arg", action="append", default=[],
                    help="a further word of the program's arguments (repeat)")
    ap.add_argument("--workload", required=True)
    ap.add_argument("--dll", help="the manager's DLL in --dir")
    ap.add_argument("--unit", help="the manager's Pascal unit compiled into the program")
    ap.add_argument("--unit-after", metavar="SYMBOL",
                    help="a symbol whose code runs on into the unit's routines without symbols "
                         "(FastMM4-AVX's Win32 build: _OBJPAS_$$_finalize$), counted as the "
                         "manager's")
    ap.add_argument("--scales", default="0.1 0.2")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    args.qemu = os.environ.get("FASTMM_QEMU_I386", "")
    args.plugin = os.environ.get("FASTMM_QEMU_HOTBLOCKS", "")
    if not os.access(args.qemu, os.X_OK) or not os.path.isfile(args.plugin):
        sys.exit("win32_functions: FASTMM_QEMU_I386 must name a qemu-i386 built with plugins and "
                 "FASTMM_QEMU_HOTBLOCKS its hotblocks plugin with the report limit raised")
    if " " in args.qemu + args.plugin:
        sys.exit("win32_functions: the emulator's and the plugin's paths must have no spaces")
    args.program = next((p for p in ("fastmm_pascal_bench.exe", "fastmm_bench.exe")
                         if os.path.isfile(os.path.join(args.dir, p))), None)
    if args.program is None:
        sys.exit("win32_functions: %s has no benchmark program" % args.dir)
    images = [Image("exe", os.path.join(args.dir, args.program))]
    if args.dll:
        images.append(Image("dll", os.path.join(args.dir, args.dll)))
    a, b = (float(s) for s in args.scales.split())
    with tempfile.TemporaryDirectory(prefix="fastmm-win32-fn-") as workdir:
        ops_a, low = count(args, a, workdir)
        ops_b, high = count(args, b, workdir)
    if ops_b <= ops_a:
        sys.exit("win32_functions: the second scale ran no more operations than the first")
    funcs = per_function(low, high, ops_b - ops_a, images)
    if args.dll and not any(tag == "dll" and v[0] > 0 for (tag, _), v in funcs.items()):
        print("win32_functions: no instructions in %s at its preferred base: Wine loaded it "
              "elsewhere, and its functions are not named" % args.dll)

    def is_manager(tag, name):
        return tag == "dll" or (tag == "exe" and ((args.unit is not None and
                                                   unit_of(name) == args.unit) or
                                                  name == args.unit_after))

    total = sum(v[0] for v in funcs.values())
    manager = sum(v[0] for (tag, name), v in funcs.items() if is_manager(tag, name))
    # The "other" blocks (Wine's own code) differ from run to run by what Wine's start did, so
    # they are shown apart and left out of the total.
    other = funcs.get(("other", ""), [0.0])[0]
    print("%s %s: %.1f instructions an operation in the program and the DLL, the manager %.1f "
          "(Wine's own code %+.1f, left out)" % (args.workload, args.alloc, total - other, manager,
                                                 other))
    print("%10s %10s %10s  %s" % ("instr/op", "calls/op", "instr/call", "function"))
    rows = sorted(((v[0], v[1], tag, name) for (tag, name), v in funcs.items() if tag != "other"),
                  reverse=True)
    for ins, calls, tag, name in rows[:args.top]:
        per_call = "%10.1f" % (ins / calls) if calls > 0 else "%10s" % "-"
        print("%10.1f %10.3f %s  %s%s" % (ins, calls, per_call, "* " if is_manager(tag, name)
                                           else "", name))


if __name__ == "__main__":
    main()
