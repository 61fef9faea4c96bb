#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Free Pascal cross compilers and run-time libraries that the Pascal tests and the
# Pascal demo use, from the Free Pascal source on this machine (Debian: fpc-source-3.2.2), and
# keeps them in a cache so that this happens once per machine:
#
#   ${FASTMM_FPC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/fpc}/<key>/
#     fpc-win64              compiles for Win64: the host's ppcx64 with the Win64 RTL
#     fpc-win32              compiles for Win32: a ppc386 built here with the Win32 RTL
#     bin/ppcx64, bin/ppc386 the compilers (Linux programs)
#     units/<cpu>-<os>/rtl/  the RTL units (System, SysUtils, Classes, Windows, ...)
#
# <key> names the compiler version, the source package's version and this recipe's revision,
# so a new Free Pascal or a changed recipe builds anew beside the old one. The tree is built in
# a scratch folder and moved into place when complete; a lock lets parallel callers wait for
# one build. About 10 s on 2 cores, 40 MB. Free Pascal's internal assembler and PE linker need
# no MinGW binutils.
#
#   scripts/build-fpc.sh              builds if needed; prints the toolchain folder
#   scripts/build-fpc.sh --print-dir  prints the folder it would use, builds nothing
#
# fpc-win64 / fpc-win32 take ordinary fpc options, e.g.
#   "$dir/fpc-win64" -Mdelphi -O2 -FUobj -FEbin prog.pas
# They pass -n, so /etc/fpc.cfg (and the host's units) are never read.
# Needs: ppcx64 and fpcmake (Debian: fp-compiler-3.2.2, fp-utils-3.2.2), the source
# (fpc-source-3.2.2) and make; scripts/install-deps.sh installs them.
set -euo pipefail

# Bump when the steps below change what ends up in the cache.
RECIPE=2

die() {
  echo "build-fpc: $*" >&2
  exit 1
}

mode=build
case "${1:-}" in
  --print-dir) mode=print ;;
  "") ;;
  -h | --help)
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown option $1 (try --help)" ;;
esac

# ---- What we build from ---------------------------------------------------------------------
host_ppc=${FASTMM_FPC_PPCX64:-}
if [ -z "$host_ppc" ]; then
  host_ppc=$(command -v ppcx64 || true)
fi
if [ -z "$host_ppc" ]; then # installed, but its alternatives link is missing
  for c in /usr/lib/x86_64-linux-gnu/fpc/*/ppcx64 /usr/lib/fpc/*/ppcx64; do
    [ -x "$c" ] && host_ppc=$c
  done
fi
[ -n "$host_ppc" ] && [ -x "$host_ppc" ] ||
  die "ppcx64 (Free Pascal for x86_64) is not installed: run scripts/install-deps.sh"
host_ppc=$(readlink -f "$host_ppc")
version=$("$host_ppc" -iV) || die "$host_ppc -iV failed"

src=${FASTMM_FPC_SOURCE:-/usr/share/fpcsrc/$version}
[ -d "$src/rtl" ] && [ -d "$src/compiler" ] ||
  die "the Free Pascal $version source is not in $src (Debian: fpc-source-$version): run scripts/install-deps.sh"

pkg_version=$(dpkg-query -W -f='${Version}' "fpc-source-$version" 2>/dev/null || true)
[ -n "$pkg_version" ] || pkg_version=local
key=$(printf '%s-%s-r%s' "$version" "$pkg_version" "$RECIPE" | tr -c 'A-Za-z0-9._\n-' '_')

cache_root=${FASTMM_FPC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/fpc}
out=$cache_root/$key

if [ "$mode" = print ]; then
  echo "$out"
  exit 0
fi

complete() { [ -f "$out/.complete" ] && [ -x "$out/fpc-win64" ] && [ -x "$out/fpc-win32" ]; }

if complete; then
  echo "$out"
  exit 0
fi

# ---- One builder at a time ------------------------------------------------------------------
mkdir -p "$cache_root"
exec 9>"$cache_root/$key.lock"
flock 9
if complete; then # another caller built it while we waited
  echo "$out"
  exit 0
fi

fpcmake_bin=$(command -v fpcmake || command -v "fpcmake-$version" || true)
[ -n "$fpcmake_bin" ] || die "fpcmake is not installed (Debian: fp-utils-$version): run scripts/install-deps.sh"
command -v make >/dev/null || die "make is not installed: run scripts/install-deps.sh"

# The compiler's message file: Debian's source package leaves it out; the compiler package
# has it.
msg=""
for m in "$src/compiler/msg/errore.msg" "$(dirname "$host_ppc")/msg/errore.msg" \
  "/usr/lib/x86_64-linux-gnu/fpc/$version/msg/errore.msg" "/usr/lib/fpc/$version/msg/errore.msg"; do
  if [ -f "$m" ]; then
    msg=$m
    break
  fi
done
[ -n "$msg" ] || die "errore.msg (the compiler's messages) was not found; is fp-compiler-$version installed?"

work=$cache_root/$key.tmp.$$
log=$cache_root/$key.log
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

echo "build-fpc: building the Free Pascal $version Win32/Win64 toolchain in $out (once; log: $log)" >&2
t0=$SECONDS
jobs=$(nproc 2>/dev/null || echo 2)

run() {
  # Runs a step with its output to the log; on failure shows the end of the log.
  local what=$1
  shift
  echo "==== $what: $*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "$what failed (full log: $log)"
  fi
}

: >"$log"
# A writable copy of the parts we build (the source package's tree is read-only and has no
# generated Makefiles).
run "copy the source" cp -r "$src/rtl" "$src/compiler" "$work/"
s=$work

# Generated Makefiles, and the two files the Debian source leaves out: the per-CPU include
# lists (they only feed dependency lists, so empty ones do) and the message file.
run "fpcmake rtl" sh -c "cd '$s/rtl' && '$fpcmake_bin' -q -Tall -w win64/Makefile.fpc win32/Makefile.fpc"
run "fpcmake compiler" sh -c "cd '$s/compiler' && '$fpcmake_bin' -q -Tall -w Makefile.fpc"
for cpu in x86_64 i386; do
  [ -f "$s/rtl/$cpu/makefile.cpu" ] || echo "CPUINCNAMES=" >"$s/rtl/$cpu/makefile.cpu"
done
mkdir -p "$s/compiler/msg"
[ -f "$s/compiler/msg/errore.msg" ] || cp "$msg" "$s/compiler/msg/errore.msg"

# The RTLs are optimized (-O2) as Free Pascal's releases and Debian's packages build theirs: a
# program's memory manager calls go through RTL routines (System.ReAllocMem, MemSize, GetMem),
# which without it keep every argument on the stack and cost about 2 ns more per call under
# Wine here, more than some of the calls they make.
rtl_opt=-O2
# The Win64 RTL, with the host compiler (it targets Win64 as it is).
run "Win64 RTL" make -C "$s/rtl/win64" all FPC="$host_ppc" OS_TARGET=win64 CPU_TARGET=x86_64 OPT="$rtl_opt"
# ppc386: a Linux program that emits i386 code.
run "i386 compiler" make -C "$s/compiler" -j"$jobs" compiler PPC_TARGET=i386 FPC="$host_ppc"
[ -x "$s/compiler/ppc386" ] || die "the i386 compiler was not built (log: $log)"
# The Win32 RTL, with that compiler.
run "Win32 RTL" make -C "$s/rtl/win32" all FPC="$s/compiler/ppc386" OS_TARGET=win32 CPU_TARGET=i386 OPT="$rtl_opt"

# ---- The cached tree ------------------------------------------------------------------------
stage=$work/out
mkdir -p "$stage/bin" "$stage/units/x86_64-win64" "$stage/units/i386-win32"
cp "$host_ppc" "$stage/bin/ppcx64"
cp "$s/compiler/ppc386" "$stage/bin/ppc386"
cp -r "$s/rtl/units/x86_64-win64" "$stage/units/x86_64-win64/rtl"
cp -r "$s/rtl/units/i386-win32" "$stage/units/i386-win32/rtl"
[ -f "$stage/units/x86_64-win64/rtl/system.ppu" ] || die "no Win64 system.ppu was built (log: $log)"
[ -f "$stage/units/i386-win32/rtl/system.ppu" ] || die "no Win32 system.ppu was built (log: $log)"

wrapper() { # wrapper NAME COMPILER TARGET CPU-OS
  cat >"$stage/$1" <<EOF
#!/bin/sh
# Free Pascal $version for $3 (made by fastmm-c's scripts/build-fpc.sh). -n: no fpc.cfg.
d=\$(cd "\$(dirname "\$0")" && pwd)
exec "\$d/bin/$2" -n -T$3 "-Fu\$d/units/$4/rtl" "\$@"
EOF
  chmod +x "$stage/$1"
}
wrapper fpc-win64 ppcx64 win64 x86_64-win64
wrapper fpc-win32 ppc386 win32 i386-win32

# A smoke test: both compilers build a program that uses SysUtils and Classes.
mkdir -p "$work/smoke"
cat >"$work/smoke/smoke.pas" <<'EOF'
program smoke;
{$mode delphi}
uses SysUtils, Classes;
var L: TStringList;
begin
  L := TStringList.Create;
  L.Add(IntToStr(SizeOf(Pointer)));
  L.Free;
end.
EOF
for t in win64 win32; do
  mkdir -p "$work/smoke/$t"
  run "smoke test ($t)" "$stage/fpc-$t" -vew "-FU$work/smoke/$t" "-FE$work/smoke/$t" "$work/smoke/smoke.pas"
  [ -f "$work/smoke/$t/smoke.exe" ] || die "the $t smoke test built no exe (log: $log)"
done

printf 'Free Pascal %s (fpc-source %s), recipe %s\n' "$version" "$pkg_version" "$RECIPE" >"$stage/.complete"
rm -rf "$out"
mv "$stage" "$out"
echo "build-fpc: done in $((SECONDS - t0)) s" >&2
echo "$out"
