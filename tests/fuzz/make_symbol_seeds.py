#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of fuzz_symbols.c to tests/fuzz/corpus_symbols/: Delphi maps for the
harness's fixed module (one it accepts, a truncated one, one of another build), and small PE
files with an export table and COFF symbols (PE32 and PE32+). Run again after changing them."""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, 'corpus_symbols')

MAP = """
 Start         Length     Name                   Class
 0001:00401000 00008000H .text                   CODE
 0002:00409000 00001000H .data                   DATA

Detailed map of segments

 0001:00000000 00000400 C=CODE     S=.text    G=(none)   M=System ACBP=A9
 0001:00000400 00000200 C=CODE     S=.text    G=(none)   M=Unit1 ACBP=A9

  Address             Publics by Name

 0001:00000010       System.@GetMem
 0001:00000410       Unit1.TForm1.Button1Click

  Address             Publics by Value

 0001:00000010       System.@GetMem
 0001:00000100       System.@FreeMem
 0001:00000410       Unit1.TForm1.Button1Click
 0002:00000010       Unit1.Form1


Line numbers for System(System.pas) segment .text

  4843 0001:00000010  4844 0001:00000018  4850 0001:00000020  4901 0001:00000100

Line numbers for Unit1(Unit1.pas) segment .text

    28 0001:00000410    29 0001:00000420    31 0001:00000433

Bound resource files

Program entry point at 0001:00000410
"""


def pe(bits):
    """A small PE file: .text with two exported routines and two COFF function symbols."""
    text_rva, text_raw, text_size = 0x1000, 0x400, 0x200
    edata_rva, edata_raw = 0x2000, 0x600
    sym_at = 0x800
    opt_size = 240 if bits == 64 else 224
    dos = b'MZ' + b'\0' * 58 + struct.pack('<I', 64)
    machine = 0x8664 if bits == 64 else 0x14c
    coff = struct.pack('<4sHHIIIHH', b'PE\0\0', machine, 2, 0, sym_at, 4, opt_size, 0x22)
    if bits == 64:
        opt = struct.pack('<HBBIIIIIQ', 0x20b, 2, 30, text_size, 0, 0, text_rva, text_rva, 0x140000000)
    else:
        opt = struct.pack('<HBBIIIIIII', 0x10b, 2, 30, text_size, 0, 0, text_rva, text_rva, 0, 0x400000)
    opt += struct.pack('<IIHHHHHHIIIIHHQQQQII' if bits == 64 else '<IIHHHHHHIIIIHHIIIIII',
                       0x1000, 0x200, 6, 0, 0, 0, 6, 0, 0, 0x3000, 0x400, 0, 3, 0,
                       0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    dirs = [(0, 0)] * 16
    dirs[0] = (edata_rva, 0x100)
    opt += b''.join(struct.pack('<II', *d) for d in dirs)
    assert len(opt) == opt_size, len(opt)
    sections = struct.pack('<8sIIIIIIHHI', b'.text', text_size, text_rva, text_size, text_raw, 0, 0, 0, 0, 0x60000020)
    sections += struct.pack('<8sIIIIIIHHI', b'.edata', 0x100, edata_rva, 0x200, edata_raw, 0, 0, 0, 0, 0x40000040)
    head = dos + coff + opt + sections
    image = bytearray(0x1000)
    image[:len(head)] = head
    image[text_raw:text_raw + text_size] = b'\xc3' * text_size
    # export directory: 2 functions, 2 names
    names_rva = edata_rva + 0x40
    ed = struct.pack('<IIHHIIIIIII', 0, 0, 0, 0, edata_rva + 0x80, 1, 2, 2,
                     edata_rva + 0x28, edata_rva + 0x30, edata_rva + 0x38)
    ed = ed.ljust(0x28, b'\0')
    ed += struct.pack('<II', text_rva + 0x10, text_rva + 0x80)
    ed += struct.pack('<II', names_rva, names_rva + 0x10)
    ed += struct.pack('<HH', 0, 1)
    ed = ed.ljust(0x40, b'\0') + b'FirstExport\0'.ljust(0x10, b'\0') + b'SecondExport\0'
    ed = ed.ljust(0x80, b'\0') + b'seed.dll\0'
    image[edata_raw:edata_raw + len(ed)] = ed
    # COFF symbols: a short name, a long one in the string table, a .file with one aux entry
    syms = struct.pack('<8sIhHBB', b'short_fn', 0x20, 1, 0x20, 2, 0)
    syms += struct.pack('<IIIhHBB', 0, 4, 0x100, 1, 0x20, 3, 0)
    syms += struct.pack('<8sIhHBB', b'.file', 0, -2, 0, 103, 1) + b'seed.c'.ljust(18, b'\0')
    strings = b'a_routine_with_a_long_name\0'
    table = syms + struct.pack('<I', 4 + len(strings)) + strings
    image[sym_at:sym_at + len(table)] = table
    return bytes(image)


def main():
    os.makedirs(out, exist_ok=True)
    text = MAP.replace('\n', '\r\n').encode()
    seeds = {
        'map-accepted': b'\0' + text,
        'map-truncated': b'\0' + text[:len(text) // 2],
        'map-other-build': b'\0' + text.replace(b'00008000H', b'00007F00H'),
        'pe-win64': b'\1' + pe(64),
        'pe-win32': b'\1' + pe(32),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
