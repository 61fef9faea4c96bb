#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_wine_run_wrapper.sh BITS PROGRAM.exe [ARGS...]: cmake/wine-run.sh runs a Win32 program
# (BITS 32) under the words of FASTMM_WINE_WRAPPER, with Wine's 32-bit loader after them and
# WINELOADERNOEXEC=1 in the environment, and passes the wrapper's exit code on; a Win64 program
# (BITS 64) runs as always, without the wrapper. PROGRAM must exit 0 with ARGS.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bits=$1
shift
fail() {
  echo "test_wine_run_wrapper: $*" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The wrapper writes what it was given (the loader's environment flag, then its arguments) and
# runs the rest, or exits 7 when told to.
cat >"$tmp/wrap.sh" <<'EOF'
marker=$1
shift
echo "${WINELOADERNOEXEC:-unset} $*" >"$marker"
[ -z "${WRAP_EXIT:-}" ] || exit "$WRAP_EXIT"
exec "$@"
EOF
wrapper="bash $tmp/wrap.sh $tmp/marker"

FASTMM_WINE_WRAPPER=$wrapper bash "$repo/cmake/wine-run.sh" "$@"
rc=$?
[ "$rc" = 0 ] || fail "the program under the wrapper exited $rc, not 0"

if [ "$bits" = 64 ]; then
  [ ! -e "$tmp/marker" ] || fail "a Win64 program went through the wrapper: $(cat "$tmp/marker")"
  echo "test_wine_run_wrapper: the Win64 program ran without the wrapper"
  exit 0
fi

[ -e "$tmp/marker" ] || fail "the Win32 program did not go through the wrapper"
read -r noexec loader program _ <"$tmp/marker"
[ "$noexec" = 1 ] || fail "WINELOADERNOEXEC was '$noexec' under the wrapper, not 1"
[ "$loader" = /usr/lib/wine/wine ] || fail "the wrapper ran '$loader', not Wine's 32-bit loader"
[ "$program" = "$1" ] || fail "the wrapper was given '$program' for the program, not '$1'"

rm -f "$tmp/marker"
WRAP_EXIT=7 FASTMM_WINE_WRAPPER=$wrapper bash "$repo/cmake/wine-run.sh" "$@"
rc=$?
[ "$rc" = 7 ] || fail "the wrapper exited 7 and wine-run.sh exited $rc"
[ -e "$tmp/marker" ] || fail "the second run did not go through the wrapper"
echo "test_wine_run_wrapper: the Win32 program ran under the wrapper, its exit code passed on"
