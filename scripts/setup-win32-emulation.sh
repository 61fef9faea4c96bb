#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup-win32-emulation.sh: lets a machine whose kernel runs no 32-bit programs run the Win32
# tests anyway, through QEMU's user-mode emulator of i386 Linux programs.
#
# Wine runs a Win32 program in its 32-bit loader, an i386 Linux program. A kernel built or booted
# without 32-bit emulation (Linux's ia32_emulation=off) refuses that loader with "Exec format
# error", and no process can switch the CPU into 32-bit mode there. QEMU's qemu-i386 translates
# i386 code into x86-64 code and passes the system calls to the kernel, so the loader, and the
# Win32 program inside it, run as a 64-bit process. The kernel hands every i386 program to
# qemu-i386 once a binfmt_misc entry says so: this script installs qemu-i386 and writes that
# entry. It does nothing where the loader already runs (a kernel that runs 32-bit code, or an
# entry written before).
#
#   bash scripts/setup-win32-emulation.sh   # scripts/install-deps.sh runs it
#
# What it changes on the machine, all needing root (or sudo):
# - the package qemu-user, at version 10 or later. Debian 12's own is 7.2, whose emulator takes
#   about 65 s to start each Wine program, in the emulator's own code; 10.0 takes 0.4 s
#   (docs/experiments/2026-12-06-win32-under-qemu-user.md). On Debian 12 it comes from the
#   backports suite: /etc/apt/sources.list.d/fastmm-c-backports.sources (or .list, as the
#   machine's own are) is written from this machine's own package sources (their URIs and key,
#   suite bookworm-backports; scripts/apt-source-twins.sh). apt takes nothing else from
#   backports unless asked to (its packages have priority 100).
# - the binfmt_misc entry fastmm-c-i386 (its file system mounted first if it is not), with the
#   flag F: the kernel opens the emulator once, now, so the entry also works in a chroot or
#   container that has no emulator of its own. It lasts until the machine restarts, and applies
#   to every i386 program on the machine, which the kernel otherwise refuses. To remove it:
#   echo -1 > /proc/sys/fs/binfmt_misc/fastmm-c-i386
#
# Win32 programs under the emulator behave as on a 32-bit CPU (pointers, the stack, the Win32
# calling conventions are real), so the tests are real tests. Their times are not a 32-bit CPU's:
# the benchmark (bench/run) leaves the Win32 platforms out under emulation unless asked.
#
# FASTMM_NO_WIN32_EMULATION=1: do nothing (the Win32 tests are then skipped on such a machine).
# Exit status: 0 when Win32 programs run (natively or emulated) or the setup was declined;
# 1 when the setup failed (the reason on standard error).
set -euo pipefail

say() { echo "setup-win32-emulation: $*"; }
fail() {
  echo "setup-win32-emulation: $*" >&2
  exit 1
}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

loader32=/usr/lib/wine/wine
binfmt=/proc/sys/fs/binfmt_misc
entry=fastmm-c-i386
# The emulator's lowest major version: the one measured (see above). 7.2 runs the tests too,
# at about 65 s a program: over an hour for the two Win32 presets.
min_major=10
# An i386 ELF executable (class 32-bit, little endian, type EXEC or DYN, machine 3): the
# entry's magic and mask, as binfmt_misc reads them (it decodes the \x escapes itself).
magic='\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00'
mask='\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

[ "${FASTMM_NO_WIN32_EMULATION:-0}" = 1 ] && exit 0
[ -x "$loader32" ] || fail "Wine's 32-bit loader ($loader32, package wine32:i386) is not installed"
need_mount() {
  command -v mount >/dev/null 2>&1 ||
    # Not in a minimal Debian root (mmdebstrap --variant=apt): the package mount has it.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mount \
      >/dev/null
}
if "$loader32" --version >/dev/null 2>&1; then
  # Already runs. In a chroot whose /proc is a plain bind, binfmt_misc's entries (one of which
  # may be what runs the loader) are not visible until it is mounted there: mount it, so that
  # cmake/wine-run.sh --win32-emulator can tell emulated runs from native ones. Root only: not
  # worth a password prompt.
  if [ -z "$SUDO" ] && ! mountpoint -q "$binfmt" && need_mount; then
    mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  fi
  exit 0
fi
case "$("$loader32" --version 2>&1 || true)" in
  *"Exec format error"* | *"cannot execute binary file"*) ;;
  *) fail "Wine's 32-bit loader fails for another reason than the kernel's: $("$loader32" --version 2>&1 | head -n 3)" ;;
esac
say "this kernel runs no 32-bit programs; setting up QEMU's i386 emulator for the Win32 tests"

qemu_major() {
  "$1" --version 2>/dev/null | sed -nE '1s/.* version ([0-9]+)\..*/\1/p'
}
emulator=""
for candidate in /usr/bin/qemu-i386-static /usr/bin/qemu-i386; do
  if [ -x "$candidate" ] && [ "$(qemu_major "$candidate")" -ge "$min_major" ] 2>/dev/null; then
    emulator=$candidate
    break
  fi
done

if [ -z "$emulator" ]; then
  candidate_major() {
    apt-cache policy "$@" qemu-user 2>/dev/null |
      sed -nE 's/^ *Candidate: ([0-9]+:)?([0-9]+)\..*/\2/p' | head -n 1
  }
  opts=()
  if [ "$(candidate_major)" -lt "$min_major" ] 2>/dev/null || [ -z "$(candidate_major)" ]; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || fail "cannot tell this Debian's release (/etc/os-release has no VERSION_CODENAME)"
    backports=$codename-backports
    twins=/etc/apt/sources.list.d/fastmm-c-backports
    if [ ! -f "$twins.sources" ] && [ ! -f "$twins.list" ]; then
      # This machine's own deb entries that name the release's main suite, with the suite
      # replaced by its backports (scripts/apt-source-twins.sh).
      . "$(dirname "${BASH_SOURCE[0]}")/apt-source-twins.sh"
      rc=0
      wrote=$(apt_source_twins fastmm-c-backports scripts/setup-win32-emulation.sh \
        "for qemu-user $min_major or later" deb "$codename" "$backports") || rc=$?
      [ $rc != 1 ] ||
        fail "no deb entry of this machine's apt sources names $codename, to derive $backports from"
      [ $rc = 0 ] || fail "could not write the $backports entry"
      say "wrote ${wrote//$'\n'/ } (from this machine's own sources); running apt-get update"
    fi
    $SUDO apt-get update -q >/dev/null || say "apt-get update reported an error; going on with the indexes it got"
    opts=(-t "$backports")
    [ "$(candidate_major "${opts[@]}")" -ge "$min_major" ] 2>/dev/null ||
      fail "no qemu-user $min_major or later in this machine's package sources, nor in $backports"
  fi
  say "installing qemu-user ${opts[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${opts[@]}" qemu-user >/dev/null || fail "apt-get install ${opts[*]} qemu-user failed"
  for candidate in /usr/bin/qemu-i386-static /usr/bin/qemu-i386; do
    if [ -x "$candidate" ] && [ "$(qemu_major "$candidate")" -ge "$min_major" ] 2>/dev/null; then
      emulator=$candidate
      break
    fi
  done
  [ -n "$emulator" ] || fail "qemu-user is installed, yet no qemu-i386 of version $min_major or later is there"
fi

if ! mountpoint -q "$binfmt"; then
  need_mount || fail "apt-get install mount failed"
  $SUDO mount -t binfmt_misc binfmt_misc "$binfmt" || fail "cannot mount binfmt_misc on $binfmt"
fi
if [ -e "$binfmt/$entry" ]; then
  echo -1 | $SUDO tee "$binfmt/$entry" >/dev/null # ours, from an older emulator: written anew
fi
printf ':%s:M::%s:%s:%s:F' "$entry" "$magic" "$mask" "$emulator" | $SUDO tee "$binfmt/register" >/dev/null ||
  fail "cannot write the binfmt_misc entry $entry (a container without that right?)"
"$loader32" --version >/dev/null 2>&1 ||
  fail "Wine's 32-bit loader still does not run through $emulator: $("$loader32" --version 2>&1 | head -n 3)"
say "Win32 programs now run under $("$emulator" --version | head -n 1) (binfmt_misc entry $entry)"
