#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_wine_run_rerun.sh PROBE.exe: cmake/wine-run.sh with FASTMM_WINE_RERUN_SILENT_EXIT=1 runs a
# program once more when it ended with exit code 1 and nothing on standard error, says so, and
# passes the second run's exit code on; a program that wrote on standard error, or that exits 1
# silently every time, keeps its failure; without the setting nothing runs twice.
# PROBE is tests/wine_exit_probe.c's program.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
probe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "test_wine_run_rerun: $*" >&2
  failures=$((failures + 1))
}
runs() { # the probe's runs counted in file $1
  [ -f "$1" ] && grep -c . "$1" || echo 0
}
# run SETTING MODE NAME: wine-run.sh on the probe; sets rc, and leaves its output in $tmp/NAME.*
run() {
  FASTMM_WINE_RERUN_SILENT_EXIT=$1 bash "$repo/cmake/wine-run.sh" "$probe" "$2" "$tmp/$3.count" \
    >"$tmp/$3.out" 2>"$tmp/$3.err"
  rc=$?
}

run 1 silent-once once
[ "$rc" = 0 ] || fail "silent-once with the setting: exit code $rc, not 0 (the second run's)"
[ "$(runs "$tmp/once.count")" = 2 ] || fail "silent-once with the setting: $(runs "$tmp/once.count") runs, not 2"
grep -q "running it once more" "$tmp/once.err" || fail "silent-once: wine-run.sh did not say it ran the program again"
grep -q "wine_exit_probe: run 2" "$tmp/once.out" || fail "silent-once: the second run's output is missing"

run 0 silent-once unset
[ "$rc" = 1 ] || fail "silent-once without the setting: exit code $rc, not 1"
[ "$(runs "$tmp/unset.count")" = 1 ] || fail "silent-once without the setting: $(runs "$tmp/unset.count") runs, not 1"

run 1 loud loud
[ "$rc" = 1 ] || fail "loud: exit code $rc, not 1"
[ "$(runs "$tmp/loud.count")" = 1 ] || fail "loud: $(runs "$tmp/loud.count") runs, not 1: a failure that said something ran again"
grep -q "said on standard error" "$tmp/loud.err" || fail "loud: the program's standard error was lost"

run 1 silent silent
[ "$rc" = 1 ] || fail "silent: exit code $rc, not 1: a program that always fails passed"
[ "$(runs "$tmp/silent.count")" = 2 ] || fail "silent: $(runs "$tmp/silent.count") runs, not 2"

[ "$failures" = 0 ] || exit 1
echo "test_wine_run_rerun: a silent exit 1 ran once more and its second run counted; a failure on standard error, an always-silent one and a run without the setting kept their exit codes"
