#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# wine-run.sh PROGRAM.exe [ARGS...]: runs a Windows program under Wine, in fastmm-c's own
# 64-bit prefix, and exits with the program's exit code.
# wine-run.sh --prepare: only makes the prefix (if it is not there yet).
# wine-run.sh --can-run-win32: exits 0 if this machine can run Win32 programs; if not, says why
# on standard error and exits 1 when the kernel runs no 32-bit programs and no emulator is set
# up for them (scripts/setup-win32-emulation.sh, which install-deps.sh runs, sets one up), 2
# when Wine's 32-bit loader is missing (scripts/install-deps.sh installs it).
# wine-run.sh --win32-emulator: when Win32 programs run here only under an emulator of i386
# programs (QEMU's, through binfmt_misc), prints its name and version and exits 0; else exits 1.
# Under emulation the programs behave as on a 32-bit CPU; their times are not a 32-bit CPU's.
# FASTMM_WINE_WRAPPER: words (split at spaces) run before Wine's 32-bit loader when the program
# is a Win32 one, such as a qemu-i386 with a plugin that counts what the program runs
# (bench/analysis/win32-instructions.sh); the loader is then told not to execute itself again
# (WINELOADERNOEXEC=1), so that the wrapper sees the whole program. Win64 programs run as always.
# The MinGW toolchain files name this script as CMAKE_CROSSCOMPILING_EMULATOR, so ctest runs
# every Windows test through it.
#
# The prefix is ${FASTMM_WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/wineprefix}.
# It is made on first use, once, even when ctest starts several tests at the same time.
# It is a win64 prefix: it runs Win32 and Win64 programs alike (a prefix made by 32-bit-only
# Wine cannot run Win64 programs: "Bad EXE format").
#
# Exit codes: Wine passes the program's exit code on modulo 256; a crash (an unhandled
# exception such as 0xC0000005) ends with its code's low byte, non-zero for the usual ones.
set -u

export WINEDEBUG=-all
export WINEARCH=win64
default_prefix="${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/wineprefix"
export WINEPREFIX="${FASTMM_WINEPREFIX:-$default_prefix}"
# No Mono or Gecko install dialogs, no desktop menu entries.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:+$WINEDLLOVERRIDES;}mscoree,mshtml=;winemenubuilder.exe=d"

if [ $# -eq 0 ]; then
  echo "usage: wine-run.sh PROGRAM.exe [ARGS...] | wine-run.sh --prepare" >&2
  exit 2
fi
for tool in wine wineboot wineserver flock; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "wine-run: $tool is not installed: run scripts/install-deps.sh" >&2
    exit 127
  }
done

ready="$WINEPREFIX/.fastmm-c-prefix-ready"

# Win32 programs need Wine's 32-bit loader, a Linux i386 program. A kernel built or booted
# without 32-bit emulation (Linux's ia32_emulation=off) refuses it with "Exec format error";
# Win64 programs still run there, through wine64.
loader32=/usr/lib/wine/wine
loader64=/usr/lib/wine/wine64
win32_runs() {
  [ -x "$loader32" ] && "$loader32" --version >/dev/null 2>&1
}
why_no_win32() {
  if [ ! -x "$loader32" ]; then
    echo "Wine's 32-bit loader ($loader32, package wine32:i386) is not installed"
  else
    echo "this machine cannot run 32-bit Linux programs such as Wine's 32-bit loader" \
      "(Exec format error): the kernel's 32-bit emulation is off (Linux boot option" \
      "ia32_emulation=on turns it on), and QEMU's i386 emulator is not set up for it" \
      "(scripts/setup-win32-emulation.sh)"
  fi
}
# Prints the emulator that runs i386 programs here ("qemu-i386 version 10.0.2 ..."), if an
# enabled binfmt_misc entry hands them to one; prints nothing on a kernel that runs them itself.
# The entry wins over the kernel's own loader, so its presence is the whole test.
win32_emulator() {
  local f interp
  for f in /proc/sys/fs/binfmt_misc/*; do
    [ -f "$f" ] || continue
    grep -qx enabled "$f" 2>/dev/null || continue
    grep -qx 'magic 7f454c4601010100000000000000000002000300' "$f" || continue
    interp=$(sed -n 's/^interpreter //p' "$f")
    if "$interp" --version 2>/dev/null | head -n 1 | grep .; then
      :
    elif [ -e "$interp" ]; then
      echo "$interp (binfmt_misc entry ${f##*/})"
    else
      # Flag F keeps open the file the entry was written with: in another root (a chroot) the
      # same path may name no file at all.
      echo "$interp (binfmt_misc entry ${f##*/}; not in this root, so its version is not known here)"
    fi
    return 0
  done
}

if [ "$1" = "--win32-emulator" ]; then
  win32_runs && win32_emulator | grep . && exit 0
  exit 1
fi
if [ "$1" = "--can-run-win32" ]; then
  win32_runs && exit 0
  echo "wine-run: $(why_no_win32)" >&2
  [ -x "$loader32" ] && exit 1
  exit 2
fi

is_64bit_prefix() {
  [ -f "$WINEPREFIX/system.reg" ] && [ -d "$WINEPREFIX/drive_c/windows/syswow64" ]
}

make_prefix() {
  local log="$WINEPREFIX.log"
  if [ -e "$WINEPREFIX" ]; then
    if is_64bit_prefix; then
      : # a usable 64-bit prefix someone else made: use it as it is
    elif [ "$WINEPREFIX" = "$default_prefix" ] || [ -z "$(ls -A "$WINEPREFIX" 2>/dev/null)" ]; then
      # Ours (a 32-bit one, or one whose creation was cut short), or empty: make it anew.
      rm -rf "$WINEPREFIX"
    else
      echo "wine-run: $WINEPREFIX is not a 64-bit Wine prefix; remove it or set FASTMM_WINEPREFIX" \
        "to another folder" >&2
      return 1
    fi
  fi
  if ! is_64bit_prefix; then
    echo "wine-run: making the Wine prefix $WINEPREFIX (once; about 10 s)" >&2
    # Debian's wineboot starts the 32-bit loader; where that cannot run, wine64 makes the
    # prefix (it then holds what Win64 programs need, which are all such a machine can run).
    local boot=(wineboot -i) kind=both
    if ! win32_runs && [ -x "$loader64" ]; then
      boot=("$loader64" wineboot -i)
      kind=win64-only
    fi
    if ! "${boot[@]}" >"$log" 2>&1 </dev/null || ! wineserver -w; then
      echo "wine-run: wineboot failed; its output is in $log" >&2
      return 1
    fi
    if ! is_64bit_prefix; then
      echo "wine-run: $WINEPREFIX was made but is not a 64-bit prefix (is wine64 installed?);" \
        "wineboot's output is in $log" >&2
      return 1
    fi
  fi
  echo "${kind:-both}" >"$ready"
}

# A prefix wine64 made alone lacks the 32-bit half of Windows: once this machine can run Win32
# programs (its kernel turned on, or QEMU's emulator set up), it is made anew (below, under the
# lock). Only make_prefix writes "win64-only" into the ready file, for a prefix it made from
# nothing, so this removes no prefix of anyone else's.
stale_prefix() {
  local kind=""
  read -r kind 2>/dev/null <"$ready"
  [ "$kind" = win64-only ] && win32_runs
}

if [ ! -e "$ready" ] || stale_prefix; then
  mkdir -p "$(dirname "$WINEPREFIX")" || exit 1
  # One maker at a time; the others wait here and then find the prefix ready.
  exec 9>"$WINEPREFIX.lock"
  flock 9
  if stale_prefix; then
    rm -rf "$WINEPREFIX"
  fi
  if [ ! -e "$ready" ]; then
    make_prefix || exit 1
  fi
  exec 9>&-
fi

if [ "$1" = "--prepare" ]; then
  exit 0
fi

# A program started without standard input still gets one.
{ : <&0; } 2>/dev/null || exec </dev/null

# A wineserver that outlives each program by a minute: a program started while the previous
# server was shutting down can fail with "a wine server seems to be running, but I cannot
# connect to it" (seen under load). If one is running already this does nothing.
wineserver -p60 >/dev/null 2>&1 || true

# Debian's `wine` starts the 32-bit loader, which hands a Win64 program to the 64-bit one: about
# 0.1 s more per start. A PE32+ file (machine 0x8664 in its PE header) goes to wine64 directly.
loader=wine
if [ -f "$1" ] && [ -x "$loader64" ]; then
  pe=$(od -An -t u4 -j 60 -N 4 "$1" 2>/dev/null | tr -d ' ')
  if [ -n "$pe" ] && [ "$(od -An -t x2 -j $((pe + 4)) -N 2 "$1" 2>/dev/null | tr -d ' ')" = 8664 ]; then
    loader=$loader64
  fi
fi

run=("$loader")
if [ -n "${FASTMM_WINE_WRAPPER:-}" ] && [ "$loader" = wine ]; then
  # In the wrapper's environment only: the probe below must start the loader as usual.
  read -r -a wrapper <<<"$FASTMM_WINE_WRAPPER"
  run=(env WINELOADERNOEXEC=1 "${wrapper[@]}" "$loader32")
fi

# And if that message comes anyway, the program never ran: run it once more.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"${run[@]}" "$@" 2>"$err"
rc=$?
if [ $rc -ne 0 ] && grep -q "cannot connect to it" "$err"; then
  cat "$err" >&2
  echo "wine-run: Wine could not reach its server; running the program again" >&2
  sleep 2
  wineserver -p60 >/dev/null 2>&1 || true
  "${run[@]}" "$@" 2>"$err"
  rc=$?
fi
# FASTMM_WINE_RERUN_SILENT_EXIT=1 (scripts/test-all.sh sets it): a program that ends with exit
# code 1 and nothing on standard error runs once more, and the second run's result is the one
# that counts. On a heavily loaded machine Wine now and then ends a process that way, with no
# failed check and no crash (docs/experiments/2026-12-07-wine-silent-exit.md); every failure a
# test reports writes to standard error (a failed check's line, Wine's report of a crash), so
# only that ending is run again, and it says so. What the first run wrote is shown first.
if [ $rc = 1 ] && [ "${FASTMM_WINE_RERUN_SILENT_EXIT:-0}" = 1 ] && [ ! -s "$err" ]; then
  echo "wine-run: $1 ended with exit code 1 and wrote nothing on standard error (Wine under" \
    "load ends a process that way now and then): running it once more" >&2
  "${run[@]}" "$@" 2>"$err"
  rc=$?
fi
if [ $rc -ne 0 ] && [ "$loader" = wine ] && ! win32_runs; then
  # Not a Win64 program, and the 32-bit loader cannot start: say so instead of Wine's
  # "Exec format error". Asked only after a failure, so a Win32 run pays for no probe. Exit
  # code 126, as the shell's for a program it cannot execute.
  echo "wine-run: cannot run $1: $(why_no_win32)" >&2
  exit 126
fi
cat "$err" >&2
exit $rc
