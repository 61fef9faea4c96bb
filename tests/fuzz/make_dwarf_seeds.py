#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of the DWARF reader's fuzzer (tests/fuzz/dwarf_corpus/seed-*): small
ELF and PE files whose debug sections are written here byte by byte, one for each way the reader
finds names, so the fuzzer starts from every path and nothing large is committed.

Each seed's code: 0x100 bytes at CODE (ELF: 0x1000, PE: ImageBase 0x400000 + RVA 0x1000) in
the unit "seed.c", with
  - "outer" at CODE + [0x00, 0x80), with "inl" inlined into it at CODE + [0x10, 0x20);
  - "outer.inner" (a subprogram nested in outer's DIE) at CODE + [0x80, 0xa0);
  - "ranged" at CODE + [0xa0, 0xb0) and [0xc0, 0xd0), through a range list;
  - "spec" at CODE + [0xd0, 0xe0), named through DW_AT_specification (a DIE later in the unit);
and line rows: line 10 from CODE, 20 from CODE + 0x10, 30 from CODE + 0x80, 40 from CODE + 0xa0,
to the sequence's end at CODE + 0x100, in file "seed.c". check_dwarf.py's "seeds" case checks
the reader's answers for them.

    python3 tests/fuzz/make_dwarf_seeds.py [folder]
"""
import os
import struct
import sys

CODE_ELF = 0x1000
PE_BASE, PE_RVA = 0x400000, 0x1000

# Tags, attributes, forms.
CU, SUBPROGRAM, INLINED = 0x11, 0x2E, 0x1D
AT_NAME, AT_STMT, AT_LOW, AT_HIGH, AT_INLINE = 0x03, 0x10, 0x11, 0x12, 0x20
AT_ORIGIN, AT_SPEC, AT_DECL, AT_RANGES = 0x31, 0x47, 0x3C, 0x55
AT_STR_BASE, AT_ADDR_BASE, AT_RNG_BASE = 0x72, 0x73, 0x74
F_ADDR, F_DATA1, F_DATA4, F_STRING, F_STRP, F_REF4, F_SECOFF = 0x01, 0x0B, 0x06, 0x08, 0x0E, 0x13, 0x17
F_FLAG_PRESENT, F_STRX1, F_ADDRX, F_LINE_STRP, F_RNGLISTX = 0x19, 0x25, 0x1B, 0x1F, 0x23
F_REF_ADDR = 0x10


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


class Strings:
    def __init__(self):
        self.data = bytearray(b"\0")

    def add(self, s):
        at = len(self.data)
        self.data += s.encode() + b"\0"
        return at


def dwarf(version, addr_size, code):
    """The debug sections for one seed: {name: bytes}."""
    a = "<I" if addr_size == 4 else "<Q"
    strs, line_strs = Strings(), Strings()
    str_index = []  # DWARF 5: .debug_str_offsets entries

    def name_form(s):
        if version >= 5:
            str_index.append(strs.add(s))
            return bytes([len(str_index) - 1])  # DW_FORM_strx1
        if version >= 4:
            return struct.pack("<I", strs.add(s))  # DW_FORM_strp
        return s.encode() + b"\0"  # DW_FORM_string

    nf = F_STRX1 if version >= 5 else F_STRP if version >= 4 else F_STRING
    addr_list = []  # DWARF 5: .debug_addr entries

    def addr(v):
        if version >= 5:
            addr_list.append(v)
            return uleb(len(addr_list) - 1)
        return struct.pack(a, v)

    af = F_ADDRX if version >= 5 else F_ADDR
    ref_form = F_REF4
    # Abbreviations: code -> (tag, children, [(attr, form)])
    abbrevs = {
        1: (CU, 1, [(AT_NAME, nf), (AT_STMT, F_SECOFF if version >= 4 else F_DATA4), (AT_LOW, af),
                    (AT_HIGH, F_DATA4)] +
            ([(AT_STR_BASE, F_SECOFF), (AT_ADDR_BASE, F_SECOFF), (AT_RNG_BASE, F_SECOFF)]
             if version >= 5 else [])),
        2: (SUBPROGRAM, 1, [(AT_NAME, nf), (AT_LOW, af), (AT_HIGH, F_DATA4)]),
        3: (SUBPROGRAM, 0, [(AT_NAME, nf), (AT_INLINE, F_DATA1)]),
        4: (INLINED, 0, [(AT_ORIGIN, ref_form), (AT_LOW, af), (AT_HIGH, F_DATA4)]),
        5: (SUBPROGRAM, 0, [(AT_NAME, nf), (AT_LOW, af), (AT_HIGH, F_DATA4)]),
        6: (SUBPROGRAM, 0, [(AT_NAME, nf),
                            (AT_RANGES, F_RNGLISTX if version >= 5 else F_DATA4 if version < 4
                             else F_SECOFF)]),
        7: (SUBPROGRAM, 0, [(AT_SPEC, F_REF_ADDR), (AT_LOW, af), (AT_HIGH, F_DATA4)]),
        8: (SUBPROGRAM, 0, [(AT_NAME, nf), (AT_DECL, F_FLAG_PRESENT)]),
    }
    abbrev = bytearray()
    for code_, (tag, children, attrs) in abbrevs.items():
        abbrev += uleb(code_) + uleb(tag) + bytes([children])
        for at, form in attrs:
            abbrev += uleb(at) + uleb(form)
        abbrev += b"\0\0"
    abbrev += b"\0"

    # Range list for "ranged".
    if version >= 5:
        body = (bytes([6]) + struct.pack(a, code + 0xA0) + struct.pack(a, code + 0xB0) +  # start_end
                bytes([7]) + struct.pack(a, code + 0xC0) + uleb(0x10) + bytes([0]))  # start_length
        offsets = struct.pack("<I", 4)  # one offset, relative to the base just past it
        rng_body = struct.pack("<H", 5) + bytes([addr_size, 0]) + struct.pack("<I", 1) + offsets + body
        rnglists = struct.pack("<I", len(rng_body)) + rng_body
        ranges = b""
    else:
        rnglists = b""
        ranges = (struct.pack(a, 0xA0) + struct.pack(a, 0xB0) + struct.pack(a, 0xC0) +
                  struct.pack(a, 0xD0) + struct.pack(a, 0) + struct.pack(a, 0))

    # The DIEs; "spec"'s DW_AT_specification points at the declaration after it (patched).
    def die_bytes(spec_target):
        d = bytearray()
        d += uleb(1) + name_form("seed.c") + struct.pack("<I", 0) + addr(code) + struct.pack("<I", 0x100)
        if version >= 5:
            d += struct.pack("<III", 8, 8, 12)
        inl_at = len(d)
        d += uleb(3) + name_form("inl") + bytes([3])
        d += uleb(2) + name_form("outer") + addr(code) + struct.pack("<I", 0x80)
        d += uleb(4) + struct.pack("<I", header_size + inl_at) + addr(code + 0x10) + struct.pack("<I", 0x10)
        d += uleb(5) + name_form("inner") + addr(code + 0x80) + struct.pack("<I", 0x20)
        d += b"\0"  # outer's children end
        d += uleb(6) + name_form("ranged") + (uleb(0) if version >= 5 else struct.pack("<I", 0))
        d += uleb(7) + struct.pack(a if version <= 2 else "<I", spec_target) + addr(code + 0xD0) + struct.pack("<I", 0x10)
        decl_at = len(d)
        d += uleb(8) + name_form("spec")
        d += b"\0"  # the unit's children end
        return d, decl_at

    header_size = 11 if version < 5 else 12
    # Build twice: the declaration's offset is known after the first pass.
    saved = (list(str_index), list(addr_list), bytes(strs.data))
    body, decl_at = die_bytes(0)
    str_index[:], addr_list[:] = saved[0], saved[1]
    strs.data = bytearray(saved[2])
    body, _ = die_bytes(header_size + decl_at)
    if version >= 5:
        head = struct.pack("<HBBI", version, 1, addr_size, 0)
    else:
        head = struct.pack("<HIB", version, 0, addr_size)
    info = struct.pack("<I", len(head) + len(body)) + head + body

    # .debug_line
    if version >= 5:
        dirs = bytes([1]) + uleb(1) + uleb(F_LINE_STRP) + uleb(1) + struct.pack("<I", line_strs.add("/seed"))
        files = (bytes([2]) + uleb(1) + uleb(F_LINE_STRP) + uleb(2) + uleb(F_DATA1) + uleb(1) +
                 struct.pack("<I", line_strs.add("seed.c")) + bytes([0]))
        tables = dirs + files
    else:
        tables = b"/seed\0\0" + b"seed.c\0" + uleb(1) + uleb(0) + uleb(0) + b"\0"
    std_lengths = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    params = bytes([1] + ([1] if version >= 4 else []) + [1]) + struct.pack("<bBB", -5, 14, 13) + std_lengths
    hdr_rest = params + tables
    file_reg = 0 if version >= 5 else 1
    prog = bytearray()
    prog += bytes([0]) + uleb(1 + addr_size) + bytes([2]) + struct.pack(a, code)  # set_address
    prog += bytes([4]) + uleb(file_reg)  # set_file
    prog += bytes([3]) + sleb(9) + bytes([1])  # line 10, copy
    for delta_addr, delta_line in ((0x10, 10), (0x70, 10), (0x20, 10)):
        prog += bytes([2]) + uleb(delta_addr) + bytes([3]) + sleb(delta_line) + bytes([1])
    prog += bytes([2]) + uleb(0x60) + bytes([0, 1, 1])  # advance to the end, end_sequence
    if version >= 5:
        lhead = struct.pack("<HBB", version, addr_size, 0) + struct.pack("<I", len(hdr_rest)) + hdr_rest
    else:
        lhead = struct.pack("<H", version) + struct.pack("<I", len(hdr_rest)) + hdr_rest
    line = struct.pack("<I", len(lhead) + len(prog)) + lhead + prog

    sections = {".debug_abbrev": bytes(abbrev), ".debug_info": info, ".debug_line": line,
                ".debug_str": bytes(strs.data)}
    if version >= 5:
        so = b"".join(struct.pack("<I", o) for o in str_index)
        sections[".debug_str_offsets"] = struct.pack("<IHH", len(so) + 4, 5, 0) + so
        ad = b"".join(struct.pack(a, v) for v in addr_list)
        sections[".debug_addr"] = struct.pack("<IHBB", len(ad) + 4, 5, addr_size, 0) + ad
        sections[".debug_rnglists"] = rnglists
        sections[".debug_line_str"] = bytes(line_strs.data)
    else:
        sections[".debug_ranges"] = ranges
    return sections


def elf(sections, wide):
    """An ELF executable: a NOBITS .text at CODE_ELF, the debug sections, .shstrtab."""
    names = bytearray(b"\0")
    entries = []  # (name offset, type, flags, addr, data)

    def add(name, type_, flags, address, data):
        entries.append((len(names), type_, flags, address, data))
        names.extend(name.encode() + b"\0")

    add(".text", 8, 6, CODE_ELF, b"\0" * 0x100)  # SHT_NOBITS, alloc + exec: no bytes in the file
    for name, data in sections.items():
        add(name, 1, 0, 0, data)
    shstr_name = len(names)
    names.extend(b".shstrtab\0")
    entries.append((shstr_name, 3, 0, 0, bytes(names)))
    ehsize = 64 if wide else 52
    body = bytearray()
    placed = []
    for name_at, type_, flags, address, data in entries:
        off = ehsize + len(body)
        if type_ != 8:
            body += data
        placed.append((name_at, type_, flags, address, off, len(data)))
    shoff = ehsize + len(body)
    shnum = len(placed) + 1
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1, 1]) + b"\0" * 9
    if wide:
        header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, CODE_ELF, 0, shoff, 0, 64, 0, 0, 64,
                                     shnum, shnum - 1)
        sh = b"\0" * 64 + b"".join(struct.pack("<IIQQQQIIQQ", n, t, f, ad, o, s, 0, 0, 1, 0)
                                   for n, t, f, ad, o, s in placed)
    else:
        header = ident + struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, CODE_ELF, 0, shoff, 0, 52, 0, 0, 40,
                                     shnum, shnum - 1)
        sh = b"\0" * 40 + b"".join(struct.pack("<IIIIIIIIII", n, t, f, ad, o, s, 0, 0, 1, 0)
                                   for n, t, f, ad, o, s in placed)
    return bytes(header + body + sh)


def pe(sections, wide):
    """A PE image: .text at RVA 0x1000 (no raw bytes), the debug sections with long names in the
    COFF string table ("/N"), as MinGW and Free Pascal write them."""
    strtab = bytearray(4)
    heads, raw = [], bytearray()
    n_sections = 1 + len(sections)
    opt_size = 240 if wide else 224
    headers_end = 0x40 + 4 + 20 + opt_size + 40 * n_sections
    data_at = (headers_end + 15) & ~15

    def short(name):
        if len(name) <= 8:
            return name.encode().ljust(8, b"\0")
        at = len(strtab)
        strtab.extend(name.encode() + b"\0")
        return f"/{at}".encode().ljust(8, b"\0")

    heads.append(short(".text") + struct.pack("<IIIIIIHHI", 0x100, PE_RVA, 0, 0, 0, 0, 0, 0, 0x60000020))
    rva = 0x2000
    for name, data in sections.items():
        heads.append(short(name) + struct.pack("<IIIIIIHHI", len(data), rva, len(data),
                                                data_at + len(raw), 0, 0, 0, 0, 0x42000040))
        raw += data
        rva += 0x1000
    symbols_at = data_at + len(raw)
    struct.pack_into("<I", strtab, 0, len(strtab))
    dos = b"MZ" + b"\0" * 0x3A + struct.pack("<I", 0x40)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664 if wide else 0x14C, n_sections, 0, symbols_at, 0,
                                   opt_size, 0x22)
    if wide:
        opt = struct.pack("<HBBIIIII", 0x20B, 2, 0, 0, 0, 0, PE_RVA, PE_RVA) + struct.pack("<Q", PE_BASE)
    else:
        opt = struct.pack("<HBBIIIIII", 0x10B, 2, 0, 0, 0, 0, PE_RVA, PE_RVA, 0) + struct.pack("<I", PE_BASE)
    opt = opt.ljust(opt_size, b"\0")
    head = (dos + coff + opt + b"".join(heads)).ljust(data_at, b"\0")
    return bytes(head + raw + strtab)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                                 "dwarf_corpus")
    os.makedirs(folder, exist_ok=True)
    seeds = {}
    for version in (2, 3, 4, 5):
        seeds[f"seed-elf64-dwarf{version}"] = elf(dwarf(version, 8, CODE_ELF), True)
    seeds["seed-elf32-dwarf4"] = elf(dwarf(4, 4, CODE_ELF), False)
    seeds["seed-pe32-dwarf2"] = pe(dwarf(2, 4, PE_BASE + PE_RVA), False)
    seeds["seed-pe64-dwarf5"] = pe(dwarf(5, 8, PE_BASE + PE_RVA), True)
    for name, data in seeds.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
