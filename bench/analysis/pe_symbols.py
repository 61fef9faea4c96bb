# SPDX-License-Identifier: MIT
"""The code symbols of a Windows program or DLL, read with MinGW's nm, and the Free Pascal unit a
symbol belongs to: what bench/analysis/pascal_time_split.py and bench/analysis/win32_functions.py name samples
and blocks by."""

import bisect
import subprocess


def text_symbols(path, nm):
    """[(address, name)] of the code symbols of `path`, sorted, by `nm` (the MinGW nm of the
    file's machine: x86_64-w64-mingw32-nm, i686-w64-mingw32-nm)."""
    out = subprocess.run([nm, "-n", path], capture_output=True, text=True, check=True).stdout
    return sorted((int(p[0], 16), p[2]) for p in (line.split() for line in out.splitlines())
                  if len(p) == 3 and p[1] in "tT")


def symbol_at(syms, addrs, pc):
    """(the symbol before pc, whether pc is its start), or None before the first; `addrs` is
    the symbols' addresses. Code a compiler left without symbols belongs to the symbol before
    it."""
    i = bisect.bisect_right(addrs, pc) - 1
    if i < 0:
        return None
    return syms[i][1], pc == syms[i][0]


def unit_of(name):
    """The Free Pascal unit of a symbol (FASTMM4_$$_FASTGETMEM... is FASTMM4's), else the name."""
    return name.split("_$")[0].split("$")[0] or name
