#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_build_qemu_plugins.sh: bench/analysis/build-qemu-plugins.sh's checks before it builds,
# without building: it refuses a folder inside the repository or with a space; a folder that
# holds the emulator (answering -h with a -plugin option) and every plugin is taken as built,
# and only the paths are printed; an emulator without the plugin option is not taken as built.
# apt-get, apt-cache, dpkg-query and sudo are stand-ins that note their call and fail, and the
# apt folder is an empty one of the test's (FASTMM_APT_ETC), so nothing on the machine changes.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
script=$repo/bench/analysis/build-qemu-plugins.sh
fail() {
  echo "test_build_qemu_plugins: $*" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/apt/sources.list.d"
for tool in apt-get apt-cache dpkg-query sudo; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\nexit 99\n' "$tool" "$tmp" >"$tmp/bin/$tool"
  chmod +x "$tmp/bin/$tool"
done
run() { # DIR: the script's output (both streams) in $out, its status in $rc
  out=$(PATH="$tmp/bin:$PATH" FASTMM_APT_ETC="$tmp/apt" bash "$script" "$1" 2>&1)
  rc=$?
}
no_calls() {
  [ ! -e "$tmp/calls" ] || fail "$1: the script called $(cat "$tmp/calls")"
}

run "$repo/build/qemu-plugins"
[ "$rc" = 1 ] && [[ "$out" == *"build outside the repository"* ]] ||
  fail "a folder in the repository: status $rc, output: $out"
no_calls "a folder in the repository"
run "$tmp/with space"
[ "$rc" = 1 ] && [[ "$out" == *"must have no spaces"* ]] ||
  fail "a folder with a space: status $rc, output: $out"
no_calls "a folder with a space"

d=$tmp/q
mkdir -p "$d/build/tests/tcg/plugins" "$d/build/contrib/plugins"
for f in build/tests/tcg/plugins/libinsn.so build/tests/tcg/plugins/libmem.so \
  build/contrib/plugins/libcache.so libhotblocks.so; do
  : >"$d/$f"
done
printf '#!/bin/sh\necho "-plugin     QEMU_PLUGIN    [file=]<file>"\n' >"$d/build/qemu-i386"
chmod +x "$d/build/qemu-i386"
run "$d"
expected="build-qemu-plugins: already built in $d
export FASTMM_QEMU_I386=$d/build/qemu-i386
export FASTMM_QEMU_INSN=$d/build/tests/tcg/plugins/libinsn.so
export FASTMM_QEMU_MEM=$d/build/tests/tcg/plugins/libmem.so
export FASTMM_QEMU_HOTBLOCKS=$d/libhotblocks.so
# export FASTMM_QEMU_CACHE=$d/build/contrib/plugins/libcache.so"
[ "$rc" = 0 ] && [ "$out" = "$expected" ] ||
  fail "a built folder: status $rc, expected
$expected
got
$out"
no_calls "a built folder"
# The same from the folder's relative name.
out=$(cd "$tmp" && PATH="$tmp/bin:$PATH" FASTMM_APT_ETC="$tmp/apt" bash "$script" q 2>&1)
[ "$out" = "$expected" ] || fail "a built folder named relatively: got $out"

# Debian's emulator has no plugin interface: such a folder is not built, and the script goes on
# to its first step (here the stand-ins' failure).
printf '#!/bin/sh\necho "-d item1[,...]  QEMU_LOG"\n' >"$d/build/qemu-i386"
run "$d"
[ "$rc" = 1 ] && [[ "$out" != *"already built"* ]] && [ -e "$tmp/calls" ] ||
  fail "an emulator without plugins: status $rc, output: $out"
echo "test_build_qemu_plugins: 5 cases: a folder in the repository, a folder with a space," \
  "a built folder (absolute and relative), an emulator without plugins"
