#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A resumable libFuzzer campaign of tests/fuzz/fuzz_heap.c (or, with --target dwarf, of
# tests/fuzz/fuzz_dwarf.c, the DWARF reader's fuzzer): pieces of at most 10 minutes,
# alternating a build with AddressSanitizer and UBSan (build/fuzz-asan) and one without
# sanitizers (build/fuzz-nosan), both clang, RelWithDebInfo (optimised: the native-asan preset's
# Debug build runs a fraction as fast), FASTMM_FUZZ=ON. The corpus and
# the totals live in a folder outside the tree, so a later run goes on where the last stopped.
# Every crash is minimised (-minimize_crash=1) into tests/fuzz/corpus/regress-<sha1>, which
# fuzz_heap_replay then runs on every preset (dwarf: tests/fuzz/dwarf_corpus/, fuzz_dwarf_replay).
#
#   bash scripts/fuzz-campaign.sh                      # on to 10^8 operations in all, resuming
#   bash scripts/fuzz-campaign.sh --ops 200000000 --time 3600
#   bash scripts/fuzz-campaign.sh --fresh --dir /tmp/fz --time 600
#   bash scripts/fuzz-campaign.sh --target dwarf --time 1800
#
# Options:
#   --target T     heap (fuzz_heap, the default) or dwarf (fuzz_dwarf: an operation is an input)
#   --ops N        stop once the campaign (every run in the folder) has done N operations
#                  (default 100000000; dwarf 10000000)
#   --time S       stop after S seconds of this run (default: no limit)
#   --piece S      seconds per piece, at most 600 (default 600)
#   --dir D        the campaign folder (default $FASTMM_FUZZ_DIR, else
#                  ${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/fuzz, dwarf: .../fuzz-dwarf)
#   --resume       go on from the folder's corpus and totals (the default)
#   --fresh        empty the folder first
#   --nice N       niceness of the fuzzer (default 10: the machine is shared)
#   --max-len N    libFuzzer's -max_len (default 4096)
#   --jobs N       pieces at once, 1 or 2 (default 1; 2 runs an ASan+UBSan piece and a plain
#                  one side by side on one corpus, for a machine with two free cores)
#   --no-build     use the binaries as they are
#   --symbols S    then S seconds of the symbol readers' fuzzer (tests/fuzz/fuzz_symbols.c,
#                  the ASan+UBSan build) on the folder's symbols/ corpus (default 0: none); a
#                  crash is minimised into tests/fuzz/corpus_symbols/regress-<sha1>
#
# Each piece prints one line: its sanitizers, operations, inputs, coverage (libFuzzer's cov and
# ft at its end) and whether it crashed; the last line is the campaign's summary. The harness
# counts its operations into the file FASTMM_FUZZ_COUNT_FILE names (fuzz_heap.c,
# report_counts), at exit, every 2^20 operations and before it aborts on a failed check
# (fuzz_dwarf.c: its inputs, every 2^14).
set -euo pipefail
# One group, read whole before it runs: the script may be edited while a campaign runs.
{
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

target=heap
target_ops=
time_budget=0
piece=600
dir=${FASTMM_FUZZ_DIR:-}
fresh=0
niceness=10
max_len=4096
jobs=1
build=1
symbols=0

die() {
  echo "fuzz-campaign: $*" >&2
  exit 2
}
number() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 needs a whole number, not '$2'"; }

while [ $# -gt 0 ]; do
  case $1 in
  --target) [ "${2-}" = heap ] || [ "${2-}" = dwarf ] || die "--target is heap or dwarf" && target=$2 && shift ;;
  --ops) number "$1" "${2-}" && target_ops=$2 && shift ;;
  --time) number "$1" "${2-}" && time_budget=$2 && shift ;;
  --piece) number "$1" "${2-}" && piece=$2 && shift ;;
  --dir) [ -n "${2-}" ] || die "--dir needs a folder" && dir=$2 && shift ;;
  --resume) fresh=0 ;;
  --fresh) fresh=1 ;;
  --nice) number "$1" "${2-}" && niceness=$2 && shift ;;
  --max-len) number "$1" "${2-}" && max_len=$2 && shift ;;
  --jobs) number "$1" "${2-}" && jobs=$2 && shift ;;
  --no-build) build=0 ;;
  --symbols) number "$1" "${2-}" && symbols=$2 && shift ;;
  -h | --help)
    sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown option $1 (--help lists them)" ;;
  esac
  shift
done
if [ "$piece" -gt 600 ] || [ "$piece" -lt 1 ]; then
  die "--piece must be 1..600 seconds"
fi
if [ "$jobs" -lt 1 ] || [ "$jobs" -gt 2 ]; then
  die "--jobs must be 1 or 2"
fi

seeds=tests/fuzz/corpus
default_ops=100000000
folder=fuzz
if [ "$target" = dwarf ]; then
  seeds=tests/fuzz/dwarf_corpus
  default_ops=10000000
  folder=fuzz-dwarf
fi
target_ops=${target_ops:-$default_ops}
dir=${dir:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/$folder}
asan_bin=$repo/build/fuzz-asan/bin/fuzz_$target
plain_bin=$repo/build/fuzz-nosan/bin/fuzz_$target
# build_fuzzer FOLDER SANITIZERS
build_fuzzer() {
  [ -f "$1/CMakeCache.txt" ] ||
    cmake -S . -B "$1" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFASTMM_WERROR=ON -DFASTMM_FUZZ=ON -DFASTMM_SANITIZE="$2"
  nice -n "$niceness" cmake --build "$1" --target "fuzz_$target"
  if [ "$symbols" != 0 ] && [ "$2" != "" ]; then
    nice -n "$niceness" cmake --build "$1" --target fuzz_symbols
  fi
}
if [ $build = 1 ]; then
  echo "fuzz-campaign: building fuzz_$target with and without sanitizers"
  {
    build_fuzzer build/fuzz-asan address,undefined
    build_fuzzer build/fuzz-nosan ""
  } >"${TMPDIR:-/tmp}/fuzz-campaign-build.$$.log" 2>&1 ||
    die "the build failed: ${TMPDIR:-/tmp}/fuzz-campaign-build.$$.log"
  rm -f "${TMPDIR:-/tmp}/fuzz-campaign-build.$$.log"
fi
if [ ! -x "$asan_bin" ] || [ ! -x "$plain_bin" ]; then
  die "no fuzz_$target binaries (run without --no-build)"
fi

if [ $fresh = 1 ]; then
  rm -rf "$dir"
fi
mkdir -p "$dir/corpus" "$dir/crashes" "$dir/logs"
state=$dir/state
# state: one line "operations inputs pieces crashes seconds"
read -r total_ops total_inputs pieces crashes seconds < <(cat "$state" 2>/dev/null || echo 0 0 0 0 0)
run_ops=0
run_inputs=0
run_crashes=0
new_regressions=0
declare -A last_cov=([asan]=- [plain]=-)
start=$SECONDS
echo "fuzz-campaign: folder $dir; so far $total_ops operations, $total_inputs inputs, $pieces pieces, $crashes crashes; target $target_ops operations${time_budget:+, this run at most ${time_budget} s}"

save_state() {
  echo "$total_ops $total_inputs $pieces $crashes $seconds" >"$state.tmp"
  mv "$state.tmp" "$state"
}

# minimise CRASH BIN: the smallest input that still fails, kept as a regression input.
minimise() {
  local crash=$1 bin=$2 out sha
  out=$dir/crashes/min-$(basename "$crash")
  # libFuzzer's -max_total_time does not bound the first replay of the input, which a crash that
  # needs another thread's timing (the idle release) may never end: the whole of it is bounded.
  timeout -k 10 330 nice -n "$niceness" "$bin" -minimize_crash=1 -runs=2000 -max_total_time=300 \
    -exact_artifact_path="$out" "$crash" >"$out.log" 2>&1 || true
  [ -s "$out" ] || cp "$crash" "$out"
  sha=$(sha1sum "$out" | cut -c1-40)
  if [ ! -e "$seeds/regress-$sha" ]; then
    cp "$out" "$seeds/regress-$sha"
    new_regressions=$((new_regressions + 1))
  fi
  echo "    minimised to $(stat -c %s "$out") bytes: $seeds/regress-$sha"
  grep -m1 -E 'fuzz_heap: operation|fuzz_dwarf: input|ERROR: (Address|Undefined|libFuzzer)|runtime error' \
    "$crash.log" | sed 's/^/    /' || true
}

# run_piece N KIND BIN LENGTH: one libFuzzer piece; its exit code goes to piece-N.rc, its counts
# to piece-N.count (the fuzzer writes them), its output to logs/piece-N.log.
run_piece() {
  local n=$1 bin=$3 length=$4 rc=0
  rm -f "$dir/piece-$n.count" "$dir/piece-$n.rc"
  FASTMM_FUZZ_COUNT_FILE=$dir/piece-$n.count nice -n "$niceness" "$bin" -max_total_time="$length" \
    -max_len="$max_len" -timeout=120 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/" "$dir/corpus" "$seeds" >"$dir/logs/piece-$n.log" 2>&1 ||
    rc=$?
  echo "$rc" >"$dir/piece-$n.rc"
}

# account_piece N KIND SECONDS: adds a finished piece to the totals, prints its line and
# minimises what it found (the crash files that appeared since crashes.before).
account_piece() {
  local n=$1 kind=$2 secs=$3 rc ops=0 inputs=0 cov result f bin=$asan_bin
  [ "$kind" = plain ] && bin=$plain_bin
  local log=$dir/logs/piece-$n.log
  rc=$(cat "$dir/piece-$n.rc" 2>/dev/null || echo 1)
  if [ -s "$dir/piece-$n.count" ]; then read -r ops inputs <"$dir/piece-$n.count"; fi
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/cov \1 ft \2/')
  cov=${cov:-cov - ft -}
  last_cov[$kind]=$cov
  total_ops=$((total_ops + ops))
  total_inputs=$((total_inputs + inputs))
  run_ops=$((run_ops + ops))
  run_inputs=$((run_inputs + inputs))
  pieces=$((pieces + 1))
  result=clean
  # A crash file names no piece: with two at once, the log that mentions it is its piece's.
  mapfile -t found < <(comm -13 "$dir/crashes.before" <(ls "$dir/crashes") |
    grep -E '^(crash|leak|timeout|oom|slow-unit)-' | while read -r f; do
      grep -q -F "$f" "$log" && echo "$f"
    done || true)
  if [ "$rc" != 0 ] || [ ${#found[@]} -gt 0 ]; then
    result="CRASH (exit $rc)"
    crashes=$((crashes + 1))
    run_crashes=$((run_crashes + 1))
  fi
  printf 'piece %d (%s, %d s): %d operations, %d inputs (%d op/s), %s, %s\n' "$n" "$kind" "$secs" \
    "$ops" "$inputs" $((ops / (secs > 0 ? secs : 1))) "$cov" "$result"
  for f in "${found[@]}"; do
    cp "$log" "$dir/crashes/$f.log"
    minimise "$dir/crashes/$f" "$bin"
  done
  if [ "$rc" != 0 ] && [ ${#found[@]} = 0 ]; then
    echo "    no input saved; the end of $log:"
    tail -n 5 "$log" | sed 's/^/    /'
  fi
  rm -f "$dir/piece-$n.count" "$dir/piece-$n.rc"
}

while [ "$total_ops" -lt "$target_ops" ]; do
  elapsed=$((SECONDS - start))
  length=$piece
  if [ "$time_budget" -gt 0 ]; then
    [ "$elapsed" -lt "$time_budget" ] || break
    [ $((time_budget - elapsed)) -ge "$length" ] || length=$((time_budget - elapsed))
  fi
  ls "$dir/crashes" >"$dir/crashes.before"
  t0=$SECONDS
  kinds=()
  for ((j = 0; j < jobs; j++)); do
    if [ $(((pieces + j) % 2)) = 0 ]; then kind=asan bin=$asan_bin; else kind=plain bin=$plain_bin; fi
    kinds+=("$kind")
    run_piece $((pieces + 1 + j)) "$kind" "$bin" "$length" &
  done
  wait
  secs=$((SECONDS - t0))
  seconds=$((seconds + secs * jobs))
  first=$((pieces + 1))
  for ((j = 0; j < jobs; j++)); do
    account_piece $((first + j)) "${kinds[$j]}" "$secs"
  done
  save_state
done
rm -f "$dir/crashes.before"

# The symbol readers: one bounded piece of their own fuzzer.
symbols_crashes=0
if [ "$symbols" != 0 ]; then
  mkdir -p "$dir/symbols/corpus" "$dir/symbols/crashes"
  if ! nice -n "$niceness" "$repo/build/fuzz-asan/bin/fuzz_symbols" -max_total_time="$symbols" \
    -max_len=8192 -timeout=30 -rss_limit_mb=3072 -artifact_prefix="$dir/symbols/crashes/" \
    "$dir/symbols/corpus" "$repo/tests/fuzz/corpus_symbols" >"$dir/logs/symbols.log" 2>&1; then
    symbols_crashes=1
    for c in "$dir"/symbols/crashes/crash-*; do
      [ -f "$c" ] || continue
      "$repo/build/fuzz-asan/bin/fuzz_symbols" -minimize_crash=1 -max_total_time=60 \
        -exact_artifact_path="$c.min" "$c" >/dev/null 2>&1 || true
      m=$c.min
      [ -f "$m" ] || m=$c
      cp "$m" "$repo/tests/fuzz/corpus_symbols/regress-$(sha1sum "$m" | cut -c1-40)"
    done
  fi
  echo "fuzz-campaign: symbol readers $symbols s, $(grep -m1 -o 'DONE.*' "$dir/logs/symbols.log" || echo 'no summary'), crashed: $symbols_crashes"
fi

echo "fuzz-campaign: $total_ops operations in $total_inputs inputs over $pieces pieces ($seconds s of pieces in all; this run $run_ops operations, $run_inputs inputs, $((SECONDS - start)) s), coverage at the last pieces: asan ${last_cov[asan]}, plain ${last_cov[plain]}; $crashes crashes ($run_crashes this run, $new_regressions new regression inputs in $seeds)"
[ "$run_crashes" = 0 ] && [ "$symbols_crashes" = 0 ]
exit
}
