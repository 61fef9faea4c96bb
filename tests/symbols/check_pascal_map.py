#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Free Pascal program's debug reports named from a Delphi-format map (tests/pascal/sym_leaks.pas).

The program (built with -gw -gl) is copied to a work folder with the DLL, a map is written beside
it from its own symbols and line information (delphi_map.py), and it is run under Wine: FastMMC
writes its double free and its leak with FastMM5's templates, each frame as the DLL names it.
Every frame of the program's own code must read "ADDRESS [file][unit][routine][line]" exactly as
the map says, and the marked lines of the source must be named: the leaking routine and its
caller, the twice-freed block's allocation and first free.

With --no-map the program runs with no map beside it, and the DLL names its frames from the
DWARF the program carries (-gw): the same marked lines must be named, the routine as DWARF names
it (Free Pascal's upper-case name; the main program "main" or PASCALMAIN), and every frame of the
program's own code must have a routine. With --no-map --no-debug the program was built without
debug information: it must still run and report both events, and no frame may claim a source
file or line (each is the routine of an export or COFF symbol, or module+offset).

check_pascal_map.py --program P.exe --source sym_leaks.pas --dll-dir D --emulator wine-run.sh
                    --objdump X --nm Y --work DIR [--example F] [--no-map [--no-debug]]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delphi_map  # noqa: E402
from check_symbols import check, failures, marks as source_marks  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    for name in ('program', 'source', 'dll_dir', 'emulator', 'objdump', 'nm', 'work'):
        ap.add_argument('--' + name.replace('_', '-'), required=True)
    ap.add_argument('--example')
    ap.add_argument('--no-map', action='store_true')
    ap.add_argument('--no-debug', action='store_true')
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    exe = os.path.join(args.work, 'sym_leaks.exe')
    shutil.copy(args.program, exe)
    for dll in os.listdir(args.dll_dir):
        if dll.startswith('fastmmc') and dll.endswith('.dll'):
            shutil.copy(os.path.join(args.dll_dir, dll), args.work)
    map_path = os.path.join(args.work, 'sym_leaks.map')
    if os.path.exists(map_path):
        os.remove(map_path)
    the_map = None
    if not args.no_map:
        delphi_map.write_map(exe, map_path, args.objdump, args.nm)
        the_map = delphi_map.read_map(map_path)
    _, _, sections, _ = delphi_map.pe_headers(exe)
    size = max(s[1] + s[2] for s in sections)
    text_rva = [s for s in sections if s[0] == '.text'][0][1]
    marks = source_marks(args.source)
    log = os.path.join(args.work, 'events.txt')
    if os.path.exists(log):
        os.remove(log)
    r = subprocess.run([args.emulator, exe, log], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, 'the program exits 0 (%d: %s)' % (r.returncode, r.stderr[-400:]))
    m = re.search(r'base: ([0-9A-Fa-f]+)', r.stdout)
    base = int(m.group(1), 16) if m else 0
    text = open(log, encoding='latin-1').read() if os.path.exists(log) else ''
    if args.example and text:
        shutil.copy(log, args.example)

    # The traces: runs of frame lines, with the line before each run as its heading.
    traces, current, heading = [], None, ''
    for line in text.splitlines():
        f = re.match(r'^\s*([0-9A-F]{6,}) (.*)$', line)
        if f and not re.match(r'^[0-9A-F ]+$', line.strip()):
            if current is None:
                current = (heading, [])
                traces.append(current)
            current[1].append((int(f.group(1), 16), f.group(2)))
        else:
            current, heading = None, line
    own = [(a, t) for _, fr in traces for a, t in fr if base <= a < base + size]
    check(len(own) >= 6, 'the log has frames of the program (%d)' % len(own))
    check('still allocated at exit' in text, 'the leak is reported')
    check('freed twice' in text, 'the double free is reported')
    if args.no_debug:
        for address, said in own:
            check(not re.search(r'\.pas\]|\]\[\d+\]$', said),
                  'frame %X claims a source line with no debug information: %r' % (address, said))
        print('check_pascal_map: %d frames of the program with no debug information, %d failed' %
              (len(own), len(failures)))
        return 1 if failures else 0
    for address, said in own:
        if the_map is None:
            check(re.match(r'^\[[^\]]*\]\[[^\]]*\]\[[^\]]+\]\[\d*\]$', said) is not None,
                  'frame %X has no routine from DWARF: %r' % (address, said))
            continue
        f = delphi_map.lookup(the_map, address - base - 1 - text_rva)
        want = '[%s][%s][%s][%s]' % (f[0], f[1], f[2], f[3] or '') if f else None
        check(said == want, 'frame %X reads %r, the map says %r' % (address, said, want))

    def named(routine, mark, fr):
        if the_map is None and routine == 'PASCALMAIN':
            routine = '(?:main|PASCALMAIN)'
        want = re.compile(r'^\[sym_leaks\.pas\]\[sym_leaks\]\[[^\]]*%s[^\]]*\]\[%d\]$' % (routine, marks[mark]),
                          re.I if the_map is None else 0)
        return [i for i, (_, t) in enumerate(fr) if want.match(t)]

    def in_order(fr, *steps):
        first = named(steps[0][0], steps[0][1], fr)
        then = named(steps[1][0], steps[1][1], fr) if len(steps) > 1 else [99]
        return first and then and min(then) > min(first)

    alloc = [fr for h, fr in traces if h.startswith('Allocated')]
    check(any(in_order(fr, ('LEAKHERE', 'leak'), ('PASCALMAIN', 'main_leak')) for fr in alloc),
          'the leak names LeakHere and the main program at their lines')
    check(any(in_order(fr, ('FREETWICE', 'alloc'), ('PASCALMAIN', 'main_double')) for fr in alloc),
          'the twice-freed block\'s allocation names FreeTwice and the main program at their lines')
    freed = [fr for h, fr in traces if h.startswith('Freed')]
    check(any(in_order(fr, ('FREETWICE', 'free'), ('PASCALMAIN', 'main_double')) for fr in freed),
          'its first free names FreeTwice and the main program at their lines')
    print('check_pascal_map: %d frames of the program (%s), %d failed' %
          (len(own), 'DWARF' if the_map is None else 'the map', len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
