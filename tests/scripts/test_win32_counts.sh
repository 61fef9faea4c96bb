#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_win32_counts.sh: bench/analysis/win32-instructions.sh reads the plugins' logs and
# differences two scales as documented, with a stand-in for the emulator. The stand-in answers
# `-h` with a -plugin option; run as cmake/wine-run.sh's wrapper it runs no program but prints
# the benchmark's JSON line with ops = scale x 100,000, and writes the logs that the plugins
# named on its command line would write: per operation 43 instructions (libinsn.so), 20 memory
# accesses (libmem.so), and from libcache.so 21 data accesses, 2.5 data misses and 0.5
# instruction misses, each over a fixed start. It also writes a shorter log of a process that
# started first (as when wine-run.sh runs the program again), which the script must not take.
# Workload "nocount" gets logs without counts: the script must print "failed" for it.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
script=$repo/bench/analysis/win32-instructions.sh
fail() {
  echo "test_win32_counts: $*" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/prog"
: >"$tmp/prog/fastmm_pascal_bench.exe" # not a PE32+ file: wine-run.sh takes it for Win32
for p in libinsn libmem libcache; do : >"$tmp/$p.so"; done
cat >"$tmp/qemu-i386" <<'EOF'
#!/usr/bin/env bash
if [ "${1:-}" = -h ]; then
  echo "-plugin     QEMU_PLUGIN    [file=]<file>[,<argname>=<argvalue>]"
  exit 0
fi
plugins=() scale="" workload="" cores=1
while [ $# -gt 0 ]; do
  case $1 in
    -plugin) plugins+=("${2%%,*}"); case $2 in *cores=2*) cores=2 ;; esac; shift ;;
    --scale) scale=$2; shift ;;
    --workload) workload=$2; shift ;;
  esac
  shift
done
ops=$(awk -v s="$scale" 'BEGIN { printf "%d", s * 100000 }')
log=${QEMU_LOG_FILENAME/\%d/$$}
[ "$workload" != nocount ] || { echo "nothing counted" >"$log"; echo "{\"ops\":$ops}"; exit 0; }
# A shorter process that started first: the script must take the longer one.
echo "total insns: 1000" >"$log.early"
{
  for p in "${plugins[@]}"; do
    case ${p##*/} in
      libinsn.so) echo "total insns: $((7000000 + 43 * ops))" ;;
      libmem.so) echo "mem accesses: $((3000000 + 20 * ops))" ;;
      libcache.so)
        echo "core #, data accesses, data misses, dmiss rate, insn accesses, insn misses, imiss rate"
        da=$((3100000 + 21 * ops)) dm=$((50000 + 5 * ops / 2)) im=$((9000 + ops / 2))
        if [ "$cores" = 1 ]; then
          echo "0       $da  $dm   1.0000%  $((7000000 + 43 * ops)) $im   0.1000%"
        else
          # Two simulated cores: the script must read the sum, not core 0.
          echo "0       1  1   1.0000%  1 1   0.1000%"
          echo "1       1  1   1.0000%  1 1   0.1000%"
          echo "sum     $da  $dm   1.0000%  $((7000000 + 43 * ops)) $im   0.1000%"
        fi
        echo
        echo "address, data misses, instruction"
        echo "0x00401000, 12, mov eax, [ebx]"
        ;;
    esac
  done
} >"$log"
echo "{\"workload\":\"$workload\",\"threads\":1,\"ops\":$ops}"
EOF
chmod +x "$tmp/qemu-i386"

run() { # EXPECTED [VAR=VALUE]...: the output for workloads w1 and nocount, column "lab"
  local expected=$1 out
  shift
  out=$(env -u FASTMM_QEMU_MEM -u FASTMM_QEMU_CACHE -u FASTMM_QEMU_CACHE_ARGS \
    FASTMM_QEMU_I386="$tmp/qemu-i386" FASTMM_QEMU_INSN="$tmp/libinsn.so" "$@" \
    bash "$script" w1,nocount lab="$tmp/prog":"--alloc x" 2>&1)
  [ "$out" = "$expected" ] || fail "with ${*:-no optional plugin}: expected
$expected
got
$out"
}

tab=$'\t'
run "w1${tab}lab${tab}43.00
nocount${tab}lab${tab}failed"
run "w1${tab}lab${tab}43.00${tab}20.00
nocount${tab}lab${tab}failed" FASTMM_QEMU_MEM="$tmp/libmem.so"
# Without libmem.so the accesses are the cache's data accesses.
run "w1${tab}lab${tab}43.00${tab}21.00${tab}2.50${tab}0.50
nocount${tab}lab${tab}failed" FASTMM_QEMU_CACHE="$tmp/libcache.so"
run "w1${tab}lab${tab}43.00${tab}20.00${tab}2.50${tab}0.50
nocount${tab}lab${tab}failed" FASTMM_QEMU_MEM="$tmp/libmem.so" FASTMM_QEMU_CACHE="$tmp/libcache.so"
run "w1${tab}lab${tab}43.00${tab}21.00${tab}2.50${tab}0.50
nocount${tab}lab${tab}failed" FASTMM_QEMU_CACHE="$tmp/libcache.so" FASTMM_QEMU_CACHE_ARGS=cores=2
run "win32-instructions: FASTMM_QEMU_MEM must name its tests/tcg/plugins/libmem.so" \
  FASTMM_QEMU_MEM="$tmp/absent.so"
echo "test_win32_counts: 6 cases: instructions alone, with accesses, with the cache's columns" \
  "(one core and a sum), a failed run, an absent plugin"
