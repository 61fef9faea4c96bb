# SPDX-License-Identifier: MIT
"""Delphi-format detailed map files for programs built here, and what such a map says.

write_map(exe, out, objdump, nm) writes the map Delphi's linker would write with "Map file:
Detailed" for a PE program, from the program's own symbols and line information: the segment
table (the PE's sections, with the preferred image base), "Detailed map of segments" (one range a
unit), "Publics by Name" and "Publics by Value" (nm's code symbols, "Unit.Routine" where the
routine lies in a unit with line information), one "Line numbers for Unit(File) segment .text"
section a compilation unit (objdump --dwarf=decodedline), and the closing "Program entry point"
line. read_map(path) reads it back and lookup(map, rva) answers as the map says: the public at or
before the address, the line at or before it but not before that public, the unit of that line
(else of the range) with "Unit." taken off the routine's name.

Run as a script: delphi_map.py <exe> <map> [--objdump X] [--nm Y].
"""
import argparse
import bisect
import os
import re
import struct
import subprocess


def pe_headers(path):
    """(image base, entry point rva, [(name, rva, virtual size, characteristics)], bits)."""
    data = open(path, 'rb').read()
    nt = struct.unpack_from('<I', data, 60)[0]
    assert data[nt:nt + 4] == b'PE\0\0', path
    sections, opt_size = struct.unpack_from('<H12xH', data, nt + 6)
    opt = nt + 24
    magic = struct.unpack_from('<H', data, opt)[0]
    entry = struct.unpack_from('<I', data, opt + 16)[0]
    if magic == 0x20b:
        base, bits = struct.unpack_from('<Q', data, opt + 24)[0], 64
    else:
        base, bits = struct.unpack_from('<I', data, opt + 28)[0], 32
    out = []
    at = opt + opt_size
    for i in range(sections):
        name, vsize, rva = struct.unpack_from('<8sII', data, at + 40 * i)
        chars = struct.unpack_from('<I', data, at + 40 * i + 36)[0]
        out.append((name.rstrip(b'\0').decode('latin-1'), rva, vsize, chars))
    return base, entry, out, bits


def code_symbols(exe, nm, bits=64):
    out = subprocess.run([nm, '--defined-only', exe], check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        # Free Pascal's DEBUGSTART_/DEBUGEND_ labels mark debug information, not routines.
        if (len(parts) == 3 and parts[1] in 'Tt' and not parts[2].startswith('.') and
                not parts[2].startswith(('DEBUGSTART_', 'DEBUGEND_'))):
            name = parts[2]
            # i386 C names carry a leading underscore; the map names routines without it.
            if bits == 32 and name.startswith('_') and len(name) > 1:
                name = name[1:]
            syms.setdefault(int(parts[0], 16), name)
    return syms


def line_rows(exe, objdump):
    """{compilation unit's file: [(address, line)]} from DWARF's decoded line table."""
    out = subprocess.run([objdump, '--dwarf=decodedline', exe], check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    cu = None
    for line in out.splitlines():
        m = (re.match(r'^(\S.*):\[\+\+\]$', line) or re.match(r'^CU: (\S.*):$', line) or
             re.match(r'^(\S+\.\w+):$', line))
        if m:
            # An included header's rows (inline functions of winnt.h) are left out: a unit's
            # lines are its own file's.
            name = os.path.basename(m.group(1))
            cu = None if name.endswith('.h') else name
            continue
        m = re.match(r'^(\S+)\s+(\d+)\s+(0x[0-9a-f]+)', line)
        if m and cu and os.path.basename(m.group(1)) == cu:
            rows.setdefault(cu, []).append((int(m.group(3), 16), int(m.group(2))))
    return rows


def write_map(exe, out, objdump, nm):
    base, entry, sections, bits = pe_headers(exe)
    digits = 16 if bits == 64 else 8
    text = [s for s in sections if s[0] == '.text'][0]
    data = [s for s in sections if s[0] == '.data']
    segs = [(1, text, 'CODE')] + ([(2, data[0], 'DATA')] if data else [])
    t_start, t_end = base + text[1], base + text[1] + text[2]
    syms = {a: n for a, n in code_symbols(exe, nm, bits).items() if t_start <= a < t_end}
    rows = {cu: [r for r in rs if t_start <= r[0] < t_end] for cu, rs in line_rows(exe, objdump).items()}
    rows = {cu: rs for cu, rs in rows.items() if rs}
    unit_of = lambda cu: os.path.splitext(cu)[0]
    ranges = sorted((min(a for a, _ in rs), max(a for a, _ in rs), cu) for cu, rs in rows.items())

    def unit_at(addr):
        for lo, hi, cu in ranges:
            if lo <= addr <= hi:
                return unit_of(cu)
        return None

    publics = []
    for a, n in sorted(syms.items()):
        u = unit_at(a)
        publics.append((a - t_start, '%s.%s' % (u, n) if u else n))
    w = []
    w.append('')
    w.append(' Start         Length     Name                   Class')
    for num, s, cls in segs:
        w.append(' %04X:%0*X %08XH %-23s %s' % (num, digits, base + s[1], s[2], s[0], cls))
    w.append('')
    w.append('')
    w.append('Detailed map of segments')
    w.append('')
    for lo, hi, cu in ranges:
        w.append(' 0001:%08X %08X C=CODE     S=.text    G=(none)   M=%s ALIGN=4' % (lo - t_start, hi - lo + 1, unit_of(cu)))
    w.append('')
    w.append('')
    w.append('  Address             Publics by Name')
    w.append('')
    for off, n in sorted(publics, key=lambda p: p[1]):
        w.append(' 0001:%08X       %s' % (off, n))
    w.append('')
    w.append('')
    w.append('  Address             Publics by Value')
    w.append('')
    for off, n in publics:
        w.append(' 0001:%08X       %s' % (off, n))
    w.append('')
    for cu, rs in sorted(rows.items()):
        w.append('')
        w.append('Line numbers for %s(%s) segment .text' % (unit_of(cu), cu))
        w.append('')
        pairs = ['%6d 0001:%08X' % (ln, a - t_start) for a, ln in rs]
        for i in range(0, len(pairs), 4):
            w.append(''.join(pairs[i:i + 4]))
        w.append('')
    w.append('')
    w.append('Bound resource files')
    w.append('')
    w.append('')
    w.append('Program entry point at 0001:%08X' % (entry - text[1]))
    with open(out, 'w', newline='\r\n') as f:
        f.write('\n'.join(w) + '\n')


def read_map(path):
    """What a map says: segments, publics, lines, ranges, as lookup() reads them."""
    segs, publics, lines, ranges = {}, [], [], []
    part, unit = 'head', None
    for raw in open(path, encoding='latin-1'):
        line = raw.rstrip()
        if 'Detailed map of segments' in line:
            part = 'detailed'
        elif 'Publics by Name' in line:
            part = 'byname'
        elif 'Publics by Value' in line:
            part = 'byvalue'
        elif line.startswith('Line numbers for '):
            part = 'lines'
            m = re.match(r'Line numbers for ([^(]+)\(([^)]*)\) segment', line)
            unit = (m.group(1), m.group(2))
        elif line.startswith('Bound resource') or line.startswith('Program entry'):
            part = 'end'
        elif part == 'head':
            m = re.match(r'\s*([0-9A-F]{4}):([0-9A-F]+) ([0-9A-F]+)H (\S+)\s+(\S+)', line)
            if m:
                segs[int(m.group(1), 16)] = (int(m.group(2), 16), int(m.group(3), 16), m.group(5))
        elif part == 'detailed':
            m = re.match(r'\s*0001:([0-9A-F]+) ([0-9A-F]+) .* M=(\S+)', line)
            if m:
                ranges.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
        elif part == 'byvalue':
            m = re.match(r'\s*0001:([0-9A-F]+)\s+(\S.*)$', line)
            if m:
                publics.append((int(m.group(1), 16), m.group(2)))
        elif part == 'lines':
            for ln, off in re.findall(r'(\d+) 0001:([0-9A-F]+)', line):
                lines.append((int(off, 16), int(ln), unit))
    publics.sort(key=lambda p: p[0])
    lines.sort(key=lambda p: p[0])
    return {'segs': segs, 'publics': publics, 'lines': lines, 'ranges': sorted(ranges)}


def lookup(m, off):
    """(file, unit, routine, line) the map gives for code offset `off` in segment 0001."""
    start, length, _ = m['segs'][1]
    if not 0 <= off < length:
        return None
    routine, r_start = '', 0
    i = bisect.bisect_right([p[0] for p in m['publics']], off) - 1
    if i >= 0:
        r_start, routine = m['publics'][i]
    line, unit, file = 0, '', ''
    j = bisect.bisect_right([p[0] for p in m['lines']], off) - 1
    if j >= 0 and m['lines'][j][0] >= r_start:
        line = m['lines'][j][1]
        unit, file = m['lines'][j][2]
    else:
        k = bisect.bisect_right([r[0] for r in m['ranges']], off) - 1
        if k >= 0 and off - m['ranges'][k][0] < m['ranges'][k][1]:
            unit = m['ranges'][k][2]
    if unit and routine.startswith(unit + '.'):
        routine = routine[len(unit) + 1:]
    return file, unit, routine, line


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('exe')
    ap.add_argument('map')
    ap.add_argument('--objdump', default='x86_64-w64-mingw32-objdump')
    ap.add_argument('--nm', default='x86_64-w64-mingw32-nm')
    a = ap.parse_args()
    write_map(a.exe, a.map, a.objdump, a.nm)
