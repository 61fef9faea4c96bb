#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-fresh-machine.sh: runs the README's two commands as a new user would, each on a fresh
# Debian 12 machine of its own, and reports how each went.
#
#   sudo bash scripts/check-fresh-machine.sh
#
# 1. Makes a minimal Debian 12 root with mmdebstrap (--variant=apt: apt and the essential
#    packages, nothing of this project's) from this machine's own package sources: the
#    sources files that name Debian's bookworm suites are copied into it, with the apt.conf.d
#    files that set Acquire:: options (a snapshot mirror may need Check-Valid-Until "false").
# 2. Reads the commands from HEAD's README.md, between the markers
#    <!-- fresh-machine-commands --> and <!-- /fresh-machine-commands -->, so the check runs
#    exactly what the README tells a user to run.
# 3. For each command: a copy of that root, a clone of this repository's HEAD (the committed
#    tree: uncommitted changes are not in it) in /root/fastmm-c, /etc/resolv.conf copied,
#    /proc, /sys, /dev, /dev/pts bound (and a tmpfs on /dev/shm), the command run as root in
#    a chroot from the clone's folder. The commands run one after the other: the machine has
#    2 cores, and each command's duration is part of the result.
# 4. Prints each command's exit status and duration and the end of its output (the whole
#    output: build/fresh-machine/<n>.log), then removes the roots, also when it fails or is
#    interrupted.
#
# Needs root (mmdebstrap, chroot, mount), about 1 GB of downloads per command and
# FASTMM_FRESH_MIN_GB (default 12) GB free where the roots go: ${FASTMM_FRESH_DIR:-/var/tmp}.
# Takes about as long as the two commands plus a minute per root. Exit status: 0 when every
# command exited 0. Not part of .ci/run (too long); run it before changing installation,
# build or the README's commands.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { echo "check-fresh-machine: $*"; }
die() {
  echo "check-fresh-machine: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot and mount): sudo bash $0"

# ---- The commands, from the README --------------------------------------------------------
mapfile -t commands < <(awk '
  /<!-- fresh-machine-commands -->/ { inside = 1; next }
  /<!-- \/fresh-machine-commands -->/ { inside = 0 }
  inside && /^```/ { fence = !fence; next }
  inside && fence && NF && $1 !~ /^#/ { print }' <(git -C "$repo" show HEAD:README.md))
[ ${#commands[@]} -gt 0 ] || die "README.md has no commands between <!-- fresh-machine-commands --> and <!-- /fresh-machine-commands -->"

# ---- What to run them on ------------------------------------------------------------------
sha=$(git -C "$repo" rev-parse HEAD)
short=$(git -C "$repo" rev-parse --short HEAD)
commit_date=$(git -C "$repo" show -s --format=%cs HEAD)
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  say "note: the working tree has uncommitted changes; the check runs the commit $short only"
fi

# This machine's package sources for Debian 12: the files naming a bookworm suite (other
# repositories may need keys the fresh root does not have).
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  grep -qE '^[^#]*([[:space:]]|^Suites:.*[[:space:]])bookworm(-updates|-security)?([[:space:]]|$)' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || die "no apt sources file of this machine names Debian 12 (bookworm)"
aptopts=()
for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
  [ -f "$f" ] && grep -qE '^[[:space:]]*Acquire::' "$f" && aptopts+=("--aptopt=$f")
done
includes=()
if cat "${sources[@]}" | grep -qE '^[^#]*https://'; then includes=(--include=ca-certificates); fi

command -v mmdebstrap >/dev/null || {
  say "installing mmdebstrap"
  apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null ||
    { apt-get update -q >/dev/null || true; apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null; }
}

parent=${FASTMM_FRESH_DIR:-/var/tmp}
min_gb=${FASTMM_FRESH_MIN_GB:-12}
mkdir -p "$parent"
avail_gb=$(df --output=avail -BG "$parent" | tail -n 1 | tr -dc 0-9)
[ "$avail_gb" -ge "$min_gb" ] || die "$parent has $avail_gb GB free; a root needs up to $min_gb GB (FASTMM_FRESH_DIR=another folder)"

work=$(mktemp -d "$parent/fastmm-fresh.XXXXXX")
logs=$repo/build/fresh-machine
mkdir -p "$logs"

# ---- Cleaning up, whatever happens ---------------------------------------------------------
mounted_under() { awk -v r="$1/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts; }

# Ends the processes still running inside a root (Wine's server outlives its programs by a
# minute), by their ids, then unmounts what was mounted there.
release_root() {
  local root=$1 pid pids m
  for sig in TERM KILL; do
    pids=()
    for pid in /proc/[0-9]*; do
      [ "$(readlink "$pid/root" 2>/dev/null)" = "$root" ] && pids+=("${pid#/proc/}")
    done
    [ ${#pids[@]} -gt 0 ] || break
    kill -s "$sig" "${pids[@]}" 2>/dev/null || true
    sleep 2
  done
  for m in $(mounted_under "$root" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}

# Removes a folder unless something is still mounted under it (a bound /dev would go with it).
remove_tree() {
  if [ -n "$(mounted_under "$1")" ]; then
    echo "check-fresh-machine: still mounted, not removing $1:" >&2
    mounted_under "$1" >&2
    return 1
  fi
  rm -rf --one-file-system "$1"
}

cleanup() {
  local root
  for root in "$work"/root-* "$work"/base; do
    [ -d "$root" ] && release_root "$root"
  done
  remove_tree "$work" || true
}
trap cleanup EXIT
trap 'echo "check-fresh-machine: interrupted" >&2; exit 130' INT TERM

# ---- The base root ------------------------------------------------------------------------
say "commit $short ($commit_date); ${#commands[@]} commands from README.md; roots in $work"
say "making a Debian 12 root with mmdebstrap from this machine's package sources (${#sources[@]} file(s))"
t0=$SECONDS
if ! mmdebstrap --variant=apt --quiet "${aptopts[@]}" "${includes[@]}" bookworm "$work/base" \
  "${sources[@]}" >"$logs/mmdebstrap.log" 2>&1; then
  tail -n 30 "$logs/mmdebstrap.log" >&2
  die "mmdebstrap failed (log: $logs/mmdebstrap.log)"
fi
say "base root made in $((SECONDS - t0)) s ($(du -sh --one-file-system "$work/base" | cut -f1))"

# ---- Each command in a root of its own ----------------------------------------------------
declare -a status duration
n=0
for cmd in "${commands[@]}"; do
  n=$((n + 1))
  root=$work/root-$n
  log=$logs/$n.log
  echo
  say "[$n] $cmd"
  cp -a "$work/base" "$root"
  git clone --quiet --no-local --single-branch "$repo" "$root/root/fastmm-c"
  git -C "$root/root/fastmm-c" -c advice.detachedHead=false checkout --quiet "$sha"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  mount --bind /proc "$root/proc"
  mount --bind /sys "$root/sys"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
  t0=$(date +%s)
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/fastmm-c && $cmd" </dev/null >"$log" 2>&1
  rc=$?
  set -e
  status[$n]=$rc
  duration[$n]=$(($(date +%s) - t0))
  say "[$n] exit $rc after ${duration[$n]} s; the last lines of its output ($log):"
  tail -n 25 "$log" | sed 's/^/    /'
  say "[$n] root size: $(du -sh --one-file-system "$root" | cut -f1)"
  release_root "$root"
  remove_tree "$root"
done

# ---- Summary ------------------------------------------------------------------------------
echo
say "commit $short ($commit_date), each command in a fresh Debian 12 root, $(nproc) cores:"
failed=0
for i in $(seq 1 $n); do
  shown=${commands[$((i - 1))]%%#*}
  printf '  %-28s exit %-3s %4d s (%dm%02ds)\n' "${shown%"${shown##*[! ]}"}" "${status[$i]}" \
    "${duration[$i]}" $((duration[$i] / 60)) $((duration[$i] % 60))
  [ "${status[$i]}" = 0 ] || failed=1
done
exit $failed
