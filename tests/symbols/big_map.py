#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a large Delphi detailed map for a PE program (to measure the first report's cost):
the program's real segment table, then `units` made-up units, each with publics and line
numbers spread over the program's code segment, until the file is about `megabytes` MB.

big_map.py <exe> <out.map> [--megabytes 20]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import delphi_map  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('exe')
    ap.add_argument('out')
    ap.add_argument('--megabytes', type=float, default=20)
    a = ap.parse_args()
    base, entry, sections, bits = delphi_map.pe_headers(a.exe)
    digits = 16 if bits == 64 else 8
    text = [s for s in sections if s[0] == '.text'][0]
    size = text[2]
    target = int(a.megabytes * 1024 * 1024)
    units = 2000
    publics_per_unit = 40
    w = ['', ' Start         Length     Name                   Class',
         ' 0001:%0*X %08XH .text                   CODE' % (digits, base + text[1], size), '', '',
         'Detailed map of segments', '']
    span = max(1, size // units)
    for u in range(units):
        w.append(' 0001:%08X %08X C=CODE     S=.text    G=(none)   M=Vendor.Library.Unit%04d ACBP=A9'
                 % (u * span, span, u))
    w += ['', '', '  Address             Publics by Value', '']
    step = max(1, span // publics_per_unit)
    for u in range(units):
        for p in range(publics_per_unit):
            w.append(' 0001:%08X       Vendor.Library.Unit%04d.TSomeClass%02d.SomeMethodWithALongName%d'
                     % (min(size - 1, u * span + p * step), u, p % 7, p))
    head = '\r\n'.join(w) + '\r\n'
    body = []
    length = len(head)
    u = 0
    while length < target:
        lines = ['', 'Line numbers for Vendor.Library.Unit%04d(Vendor.Library.Unit%04d.pas) segment .text' % (u % units, u % units), '']
        pairs = ['%6d 0001:%08X' % (100 + i, min(size - 1, (u % units) * span + i % span)) for i in range(400)]
        lines += [''.join(pairs[i:i + 4]) for i in range(0, len(pairs), 4)]
        chunk = '\r\n'.join(lines) + '\r\n'
        body.append(chunk)
        length += len(chunk)
        u += 1
    tail = '\r\nBound resource files\r\n\r\nProgram entry point at 0001:%08X\r\n' % (entry - text[1])
    with open(a.out, 'w', newline='') as f:
        f.write(head + ''.join(body) + tail)
    print('%s: %.1f MB, %d units, %d publics, %d line sections' %
          (a.out, os.path.getsize(a.out) / 1048576, units, units * publics_per_unit, u))


if __name__ == '__main__':
    main()
