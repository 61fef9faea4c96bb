#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Names from a PDB: tests/symbols/pdb_program.c built for the MSVC target with CodeView debug
information and a PDB (clang, lld-link /debug), run under Wine with the DLL: the DLL's
fastmm_describe_address must name the file, unit, routine and line of marker_function from the
PDB, through dbghelp.dll. Then the PDB is removed and the same program run again: no frame may
claim a file or a line (the routine may still come from elsewhere, or module+offset).

check_pdb.py --bits 32|64 --clang C --lld-link L --dlltool D --lib fastmmcNN.lib --dll fastmmcNN.dll
             --emulator wine-run.sh --source pdb_program.c --include DIR --work DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if r.returncode != 0:
        sys.exit('check_pdb: %s failed (%d): %s%s' % (cmd[0], r.returncode, r.stdout, r.stderr))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    for name in ('bits', 'clang', 'lld_link', 'dlltool', 'lib', 'dll', 'emulator', 'source',
                 'include', 'work'):
        ap.add_argument('--' + name.replace('_', '-'), required=True)
    a = ap.parse_args()
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    w = lambda f: os.path.join(a.work, f)
    if a.bits == '32':
        target, machine, kill = 'i686-pc-windows-msvc', 'i386', ['-k']
        exports = 'ExitProcess@4\nGetStdHandle@4\nWriteFile@20\n'
    else:
        target, machine, kill = 'x86_64-pc-windows-msvc', 'i386:x86-64', []
        exports = 'ExitProcess\nGetStdHandle\nWriteFile\n'
    with open(w('kernel32.def'), 'w') as f:
        f.write('LIBRARY kernel32.dll\nEXPORTS\n' + exports)
    run([a.dlltool, '-m', machine] + kill + ['-d', w('kernel32.def'), '-l', w('kernel32.lib')])
    run([a.clang, '--target=' + target, '-ffreestanding', '-fno-stack-protector', '-O1', '-g',
         '-gcodeview', '-Wall', '-Werror', '-I' + a.include, '-c', a.source, '-o',
         w('pdb_program.obj')])
    run([a.lld_link, '/nologo', '/subsystem:console', '/entry:mainCRTStartup', '/nodefaultlib',
         '/debug', '/pdb:' + w('pdb_program.pdb'), '/out:' + w('pdb_program.exe'),
         w('pdb_program.obj'), a.lib, w('kernel32.lib')])
    shutil.copy(a.dll, a.work)
    line = [i + 1 for i, t in enumerate(open(a.source)) if 'MARK:marker' in t][0]
    failures = []

    def described():
        out = run([a.emulator, w('pdb_program.exe')], cwd=a.work)
        m = re.search(r'^described: (.*)$', out, re.M)
        return m.group(1).strip() if m else ''

    with_pdb = described()
    want = r'^[0-9A-F]+ \[pdb_program\.c\]\[pdb_program\]\[marker_function\]\[%d\]$' % line
    print('with its PDB: %s' % with_pdb)
    if not re.match(want, with_pdb):
        failures.append('with its PDB the frame reads %r, not file, unit, routine and line %d'
                        % (with_pdb, line))
    os.remove(w('pdb_program.pdb'))
    without = described()
    print('without it:   %s' % without)
    if not without or re.search(r'\.c\]|\]\[\d+\]$', without):
        failures.append('without the PDB the frame reads %r: a file or line it cannot know'
                        % without)
    for f in failures:
        print('FAILED: ' + f)
    print('check_pdb: 2 runs, %d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
