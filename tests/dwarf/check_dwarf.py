#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the DWARF reader (src/report/dwarf_reader.c, through the dwarf_lookup program) on
binaries built here, against binutils' addr2line.

For each image, every byte address of the fixture's own routines is looked up both ways: the
routine (the innermost one, inlined routines included), the file's base name and the line must
be addr2line's (a nested Pascal routine is "Outer.Inner" in ours, the last part in addr2line's);
the unit must be the fixture's. Then what the fixture is for: the inlined routine is named inside
its caller at -O2, a nested Pascal routine is named with its outer one.

    check_dwarf.py --lookup build/native/bin/dwarf_lookup --work DIR CASE...

CASE: seeds (the fuzzer's hand-made images, exact answers), elf-gcc, elf-clang (DWARF 4 and 5, -O0 and -O2 each), pe-mingw (Win32 and Win64, DWARF 4
and 5), fpc-native (-gw, -gw3), fpc-win32, fpc-win64 (-gw, -gw3; scripts/build-fpc.sh's cross
compilers). A case whose compiler is missing is skipped (exit 77 when every case was).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
SKIP = 77


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def symbols(nm, image, names):
    """{name: (start, end)} for the routines named: the symbol's size where the format has one
    (ELF), else up to the next symbol (PE)."""
    out = run([nm, "-n", "-S", image])
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "TtWw":
            rows.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
        elif len(parts) == 3 and parts[1] in "TtWw":
            rows.append((int(parts[0], 16), None, parts[2]))
    def wanted(symbol):
        """The name asked for that `symbol` is: "f" is f, "f*" also GCC's local "f.0"."""
        for n in names:
            if symbol == n.rstrip("*") or (n.endswith("*") and symbol.startswith(n[:-1] + ".")):
                return n
        return None

    found = {}
    for i, (addr, size, symbol) in enumerate(rows):
        name = wanted(symbol)
        if name is not None and name not in found:
            if size is not None:
                end = addr + size
            else:
                end = next((a for a, _, _ in rows[i + 1:] if a > addr), addr + 64)
            found[name] = (addr, min(end, addr + 4096))
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{image}: no symbol for {missing}")
    return found


def addr2line(tool, image, addresses):
    """{address: (function, file base name, line)} of the innermost routine, as addr2line says."""
    out = run([tool, "-a", "-f", "-i", "-e", image], input="".join(f"{a:x}\n" for a in addresses))
    result, current, pending = {}, None, None
    for line in out.splitlines():
        if re.fullmatch(r"0x[0-9a-f]+", line):
            current, pending = int(line, 16), None
        elif current is not None and current not in result:
            if pending is None:
                pending = line
            else:
                where = re.sub(r" \(discriminator \d+\)$", "", line)
                path, _, number = where.rpartition(":")
                base = re.split(r"[\\/]", path)[-1]
                result[current] = (pending, base if base != "??" else "",
                                   int(number) if number.isdigit() else 0)
    return result


def lookup(tool, image, addresses):
    proc = subprocess.run([tool, image, "-"], input="".join(f"{a:x}\n" for a in addresses),
                          capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines or lines[0] != "table: ok":
        raise SystemExit(f"{image}: dwarf_lookup: {' '.join(lines[:1])} {proc.stderr.strip()}")
    result = {}
    for line in lines[1:]:
        addr, _, rest = line.partition(" ")
        if rest == "-":
            result[int(addr, 16)] = None
        else:
            routine, file, unit, number = rest.split("|")
            result[int(addr, 16)] = (routine, file, unit, int(number))
    return result


class Checker:
    def __init__(self, args):
        self.args = args
        self.failures = 0
        self.checked = 0

    def name(self, image):
        return os.path.relpath(image, self.args.work)

    def fail(self, text):
        print("FAIL " + text)
        self.failures += 1

    def image(self, image, tools, routines, unit, same_name=None, expect=()):
        """Compares every address of `routines` with addr2line. expect: (routine in which, the
        name that must answer for some address of it)."""
        nm, a2l = tools
        spans = symbols(nm, image, routines)
        addresses = [a for lo, hi in spans.values() for a in range(lo, hi)]
        truth = addr2line(a2l, image, addresses)
        ours = lookup(self.args.lookup, image, addresses)
        bad = 0
        for a in addresses:
            t, o = truth.get(a), ours.get(a)
            if t is None or t[0] == "??":
                continue  # addr2line knows nothing there: padding between routines
            self.checked += 1
            if o is None:
                problem = "not found"
            else:
                routine = o[0]
                if same_name:
                    routine = same_name(routine)
                problem = None
                if routine != t[0] or o[1] != t[1] or o[3] != t[2]:
                    problem = f"ours {o}, addr2line {t}"
                elif o[2] != unit:
                    problem = f"unit {o[2]!r}, want {unit!r}"
            if problem:
                bad += 1
                if bad <= 5:
                    self.fail(f"{self.name(image)} 0x{a:x}: {problem}")
        for within, name in expect:
            lo, hi = spans[within]
            if not any(ours.get(a) and ours[a][0].lower() == name.lower() for a in range(lo, hi)):
                self.fail(f"{self.name(image)}: no address of {within} named {name}")
        print(f"{'ok  ' if bad == 0 else 'FAIL'} {self.name(image)} ({unit}): "
              f"{len(addresses)} addresses, {bad} differ from addr2line")
        if bad:
            self.failures += 1


def last_part(name):
    """A nested routine's or a method's own name: ours is "Outer.Inner", addr2line's "Inner"."""
    return name.rpartition(".")[2]


def case_elf(ck, cc):
    # binutils 2.40's addr2line misreads clang's DWARF 5 (DW_FORM_rnglistx ranges of inlined
    # routines): clang's binaries are checked against LLVM's own addr2line.
    oracle = "llvm-addr2line" if cc == "clang" else "addr2line"
    if not shutil.which(cc) or not shutil.which(oracle):
        return False
    src = os.path.join(FIXTURES, "lines.c")
    for version in (4, 5):
        for opt in (0, 2):
            out = os.path.join(ck.args.work, f"lines-{cc}-dwarf{version}-O{opt}")
            run([cc, "-g", f"-gdwarf-{version}", f"-O{opt}", "-o", out, src])
            names = ["main", "outer_caller", "plain_function"]
            expect = [("outer_caller", "inlined_square")] if opt == 2 else []
            if cc == "gcc":
                names += ["outer_with_nested", "nested_step*"]
                expect.append(("nested_step*", "outer_with_nested.nested_step"))
            ck.image(out, ("nm", oracle), names, "lines", same_name=last_part, expect=expect)
    return True


def case_mingw(ck):
    found = False
    for triple in ("i686-w64-mingw32", "x86_64-w64-mingw32"):
        cc = f"{triple}-gcc"
        if not shutil.which(cc):
            continue
        found = True
        prefix = "_" if triple.startswith("i686") else ""
        for version in (4, 5):
            out = os.path.join(ck.args.work, f"lines-{triple}-dwarf{version}.exe")
            run([cc, "-g", f"-gdwarf-{version}", "-O2", "-o", out, os.path.join(FIXTURES, "lines.c")])
            names = [prefix + n for n in ("main", "outer_caller", "plain_function",
                                          "outer_with_nested", "nested_step*")]
            ck.image(out, (f"{triple}-nm", f"{triple}-addr2line"), names, "lines",
                     same_name=last_part,
                     expect=[(prefix + "outer_caller", "inlined_square"),
                             (prefix + "nested_step*", "outer_with_nested.nested_step")])
    return found


SEED_ANSWERS = {  # offset from the seed's code: (routine, file, unit, line), None for nothing
    0x00: ("outer", "seed.c", "seed", 10), 0x10: ("inl", "seed.c", "seed", 20),
    0x1F: ("inl", "seed.c", "seed", 20), 0x20: ("outer", "seed.c", "seed", 20),
    0x80: ("outer.inner", "seed.c", "seed", 30), 0xA0: ("ranged", "seed.c", "seed", 40),
    0xB5: ("", "seed.c", "seed", 40), 0xC0: ("ranged", "seed.c", "seed", 40),
    0xD0: ("spec", "seed.c", "seed", 40), 0xE0: ("", "seed.c", "seed", 40), 0x100: None,
}


def case_seeds(ck):
    """The fuzzer's seeds (tests/fuzz/make_dwarf_seeds.py, written again here and compared with
    the committed ones): every way of naming, in ELF32/64 and PE32/32+, DWARF 2 to 5."""
    folder = os.path.join(ck.args.work, "seeds")
    script = os.path.join(HERE, "..", "fuzz", "make_dwarf_seeds.py")
    run([sys.executable, script, folder])
    committed = os.path.join(HERE, "..", "fuzz", "dwarf_corpus")
    for name in sorted(os.listdir(folder)):
        image = os.path.join(folder, name)
        with open(image, "rb") as a, open(os.path.join(committed, name), "rb") as b:
            if a.read() != b.read():
                ck.fail(f"{name}: differs from tests/fuzz/dwarf_corpus (run make_dwarf_seeds.py)")
        code = 0x401000 if "-pe" in name else 0x1000
        ours = lookup(ck.args.lookup, image, [code + k for k in SEED_ANSWERS])
        bad = 0
        for k, want in SEED_ANSWERS.items():
            ck.checked += 1
            if ours[code + k] != want:
                bad += 1
                ck.fail(f"{name} +0x{k:x}: ours {ours[code + k]}, want {want}")
        print(f"{'ok  ' if bad == 0 else 'FAIL'} {name}: {len(SEED_ANSWERS)} addresses")
    return True


FPC_ROUTINES = {  # symbol: the unit the reader must name
    "P$NESTED_$$_OUTER$LONGINT": "nested",
    "P$NESTED$_$OUTER$LONGINT_$$_INNER$LONGINT": "nested",
    "NESTEDUNIT_$$_UNITFUNCTION$LONGINT$$LONGINT": "nestedunit",
    "NESTEDUNIT$_$TCOUNTER_$__$$_BUMP$LONGINT": "nestedunit",
}


def case_fpc(ck, target):
    """Free Pascal, -gw (DWARF 2) and -gw3 (DWARF 3). Free Pascal writes a nested routine's DIE
    beside its outer one's, not in it: the format names "Inner" alone. Methods are in their
    class's DIE: "TCounter.Bump"."""
    if target == "native":
        compiler, tools = shutil.which("fpc"), ("nm", "addr2line")
    else:
        script = os.path.join(HERE, "..", "..", "scripts", "build-fpc.sh")
        try:
            folder = run(["bash", script]).strip().splitlines()[-1]
        except subprocess.CalledProcessError:
            return False
        compiler = os.path.join(folder, f"fpc-{target}")
        triple = "i686-w64-mingw32" if target == "win32" else "x86_64-w64-mingw32"
        tools = (f"{triple}-nm", f"{triple}-addr2line")
    if not compiler or not os.path.exists(compiler) or not shutil.which(tools[1]):
        return False
    for flag in ("-gw", "-gw3"):
        folder = os.path.join(ck.args.work, f"fpc-{target}{flag}")
        os.makedirs(folder, exist_ok=True)
        for f in ("nested.pas", "nestedunit.pas"):
            shutil.copy(os.path.join(FIXTURES, f), folder)
        run([compiler, flag, "-O1", f"-FU{folder}", f"-FE{folder}", "nested.pas"], cwd=folder)
        exe = os.path.join(folder, "nested" + ("" if target == "native" else ".exe"))
        # Each unit's routines on their own, to check its unit name.
        for unit in ("nested", "nestedunit"):
            names = [n for n, u in FPC_ROUTINES.items() if u == unit]
            expect = [("NESTEDUNIT$_$TCOUNTER_$__$$_BUMP$LONGINT", "TCounter.Bump")] \
                if unit == "nestedunit" else \
                [("P$NESTED$_$OUTER$LONGINT_$$_INNER$LONGINT", "Inner")]
            ck.image(exe, tools, names, unit, same_name=last_part, expect=expect)
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lookup", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("cases", nargs="+")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ck = Checker(args)
    ran = 0
    for case in args.cases:
        if case == "elf-gcc":
            done = case_elf(ck, "gcc")
        elif case == "elf-clang":
            done = case_elf(ck, "clang")
        elif case == "pe-mingw":
            done = case_mingw(ck)
        elif case == "seeds":
            done = case_seeds(ck)
        elif case in ("fpc-native", "fpc-win32", "fpc-win64"):
            done = case_fpc(ck, case[4:])
        else:
            raise SystemExit(f"unknown case {case}")
        if not done:
            print(f"skip {case}: no compiler")
        ran += done
    print(f"check_dwarf: {ck.checked} addresses compared, {ck.failures} failures")
    if ck.failures:
        return 1
    return 0 if ran else SKIP


if __name__ == "__main__":
    sys.exit(main())
