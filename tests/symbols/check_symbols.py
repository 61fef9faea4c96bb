#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debug reports named from a Delphi-format detailed map (symbols/map_program.c under Wine).

The program is copied to a work folder, a map is written for it from its own symbols and line
information (delphi_map.py), and the copy is stripped, so that the map is all it has. Run in
debug mode it leaks a block and frees another twice: every frame of its own code in the event log
must read "ADDRESS [file][unit][routine][line]" exactly as the map says, the marked lines of the
source must be named where they are expected, and fastmm_describe_address must give the same
text. Then the map is replaced by one of another build of the program, a truncated one, a
garbage one and one older than the program: each time every frame of the program falls back to
"ADDRESS program.exe+0xOFFSET" and the log says once why. Without a map: module+offset, no reason.

check_symbols.py --program P.exe --other O.exe --source map_program.c --dll-dir D
                 --emulator wine-run.sh --objdump X --nm Y --strip Z --work DIR [--example F]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delphi_map  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAILED:', what)
    return cond


def marks(source):
    out = {}
    for i, line in enumerate(open(source), 1):
        m = re.search(r'MARK:(\w+)', line)
        if m:
            out[m.group(1)] = i
    return out


def run(args, exe, log):
    if os.path.exists(log):
        os.remove(log)
    r = subprocess.run([args.emulator, exe, log], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, '%s exits 0 (got %d: %s)' % (exe, r.returncode, r.stderr[-500:]))
    text = open(log, encoding='latin-1').read() if os.path.exists(log) else ''
    check(text != '', 'the event log %s was written' % log)
    base = re.search(r'base: (?:0x)?([0-9A-Fa-f]+)', r.stdout)
    describe = re.search(r'describe: (.*)', r.stdout)
    return text, int(base.group(1), 16) if base else 0, describe.group(1).strip() if describe else ''


def traces(log):
    """[(event title, trace title, [(address, text)])]"""
    out, event, current = [], '', None
    for line in log.splitlines():
        if line.startswith('FastMM-C detected an error:') or 'leak' in line.lower() and not line.startswith(' '):
            event = line
        if line.startswith('Stack trace'):
            current = (event, line, [])
            out.append(current)
            continue
        m = re.match(r'^  ([0-9A-F]+) (.*)$', line)
        if current is not None and m:
            current[2].append((int(m.group(1), 16), m.group(2)))
        else:
            current = None
    return out


def own_frames(log, base, size):
    return [(a, t) for _, _, frames in traces(log) for a, t in frames if base <= a < base + size]


def main():
    ap = argparse.ArgumentParser()
    for name in ('program', 'other', 'source', 'dll_dir', 'emulator', 'objdump', 'nm', 'strip', 'work'):
        ap.add_argument('--' + name.replace('_', '-'), required=True)
    ap.add_argument('--example', help='copy the named run\'s event log here (for the docs)')
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    name = 'map_program.exe'
    exe = os.path.join(args.work, name)
    shutil.copy(args.program, exe)
    for dll in os.listdir(args.dll_dir):
        if dll.startswith('fastmmc') and dll.endswith('.dll'):
            shutil.copy(os.path.join(args.dll_dir, dll), args.work)
    map_path = os.path.join(args.work, 'map_program.map')
    good_map = os.path.join(args.work, 'good.map.txt')
    other_map = os.path.join(args.work, 'other.map.txt')
    delphi_map.write_map(args.program, good_map, args.objdump, args.nm)
    delphi_map.write_map(args.other, other_map, args.objdump, args.nm)
    subprocess.run([args.strip, exe], check=True)
    image_base, _, sections, _ = delphi_map.pe_headers(exe)
    size = max(s[1] + s[2] for s in sections)
    text_rva = [s for s in sections if s[0] == '.text'][0][1]
    the_map = delphi_map.read_map(good_map)
    lines = marks(args.source)
    log = os.path.join(args.work, 'events.txt')

    # 1. The map beside the program.
    shutil.copy(good_map, map_path)
    text, base, describe = run(args, exe, log)
    if args.example:
        shutil.copy(log, args.example)
    check(base != 0, 'the program printed its base')
    own = own_frames(text, base, size)
    check(len(own) >= 8, 'the log has frames of the program (%d)' % len(own))
    for address, said in own:
        f = delphi_map.lookup(the_map, address - base - 1 - text_rva)
        want = '[%s][%s][%s][%s]' % (f[0], f[1], f[2], f[3] or '') if f else None
        check(said == want, 'frame %X reads %r, the map says %r' % (address, said, want))
    check('not used' not in text, 'no reason line with a good map')

    def named(routine, mark):
        return '[map_program.c][map_program][%s][%d]' % (routine, lines[mark])

    all_traces = traces(text)
    leak = [fr for ev, title, fr in all_traces if 'leak' in ev.lower() and 'allocation' in title]
    # The caller of the allocating routine follows it: next on Win64 (the unwinder), further
    # down on Win32, whose raw trace also finds stale return addresses of earlier calls.
    def then(fr, text):
        return any(t == text for _, t in fr[1:])

    check(any(fr and fr[0][1] == named('leak_here', 'leak') and then(fr, named('main', 'main_leak'))
              for fr in leak), 'the leak\'s allocation names leak_here and main at their lines')
    double = [(title, fr) for ev, title, fr in all_traces if 'freed twice' in ev]
    check(any('detected' in t and fr and fr[0][1] == named('free_twice', 'double') and
              then(fr, named('main', 'main_double')) for t, fr in double),
          'the double free is detected in free_twice at its line, called from main')
    check(any('allocation' in t and fr and fr[0][1] == named('free_twice', 'alloc') for t, fr in double),
          'the twice-freed block\'s allocation names its line')
    check(any('of the free' in t and fr and fr[0][1] == named('free_twice', 'free') for t, fr in double),
          'the twice-freed block\'s first free names its line')
    check(re.fullmatch(r'[0-9A-F]+ ' + re.escape(named('main', 'main_describe')), describe) is not None,
          'fastmm_describe_address gives the frame line (%r)' % describe)

    # 2. Maps that must not be used.
    with open(good_map, 'rb') as f:
        good = f.read()
    cases = [
        ('another build', lambda: shutil.copy(other_map, map_path), 'does not match the module\'s sections'),
        ('truncated', lambda: open(map_path, 'wb').write(good[:len(good) * 6 // 10]), 'truncated'),
        ('garbage', lambda: open(map_path, 'wb').write(bytes((i * 7919 + 13) % 251 for i in range(200000))),
         'does not start with a segment table'),
        ('stale', lambda: (shutil.copy(good_map, map_path),
                           os.utime(map_path, (time.time() - 7200, os.path.getmtime(exe) - 7200))), 'older'),
        ('missing', lambda: os.remove(map_path), None),
    ]
    for what, make, why in cases:
        make()
        text, base, _ = run(args, exe, log)
        own = own_frames(text, base, size)
        check(len(own) >= 8, '%s map: the log has frames of the program' % what)
        for address, said in own:
            check(said == '%s+0x%x' % (name, address - base),
                  '%s map: frame %X falls back to module+offset (reads %r)' % (what, address, said))
        reasons = re.findall(r'\(Symbols of map_program\.exe: its map is not used: (.*)\)', text)
        if why is None:
            check(reasons == [] and 'not used' not in text, '%s map: no reason line' % what)
        else:
            check(len(reasons) == 1 and why in reasons[0],
                  '%s map: one reason line saying "%s" (got %r)' % (what, why, reasons))
    print('check_symbols: %d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
