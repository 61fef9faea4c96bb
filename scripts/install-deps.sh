#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what fastmm-c needs on a Debian 12 machine, and nothing when it is all there.
# Safe to run again: every step checks first. Needs root (or sudo) only when something is missing.
# Prints every package it installed, and every library it had to take back to the main suite's
# version (see install_wine below for why that can be needed).
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
deb_has() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
have cmake || need+=(cmake)
have gcc || need+=(gcc)
have g++ || need+=(g++)
have make || need+=(make)
have git || need+=(git)
have nasm || need+=(nasm)
have x86_64-w64-mingw32-gcc || need+=(gcc-mingw-w64-x86-64)
have i686-w64-mingw32-gcc || need+=(gcc-mingw-w64-i686)
# MinGW's C++ compilers, for the snmalloc peer of bench/run (C++, bench/peers/build.sh), of the
# win32 thread model that Debian's MinGW gcc defaults to.
have x86_64-w64-mingw32-g++ || need+=(g++-mingw-w64-x86-64-win32)
have i686-w64-mingw32-g++ || need+=(g++-mingw-w64-i686-win32)
have ninja || need+=(ninja-build)
have clang || need+=(clang)
have clang-format || need+=(clang-format)
have pkg-config || need+=(pkgconf)
# Debian's programs the malloc drop-in's tests run under it (tests/malloc): python3, git, make and
# gcc are there already; sqlite3's shell is not.
have sqlite3 || need+=(sqlite3)
# clang's runtimes: ASan, TSan and libFuzzer (the native-asan and native-tsan presets build
# with clang; tests/fuzz links libFuzzer), all in Debian's libclang-rt-14-dev, which
# libclang-rt-dev pulls in; a recommendation of clang's packages, so
# --no-install-recommends leaves them out.
clang_rt_has() { [ -e "$(clang --print-runtime-dir 2>/dev/null)/libclang_rt.$1-x86_64.a" ]; }
if ! have clang || ! clang_rt_has asan || ! clang_rt_has tsan || ! clang_rt_has fuzzer; then
  need+=(libclang-rt-dev)
fi
# gcc's AddressSanitizer/UBSan runtimes (for gcc builds with -fsanitize=address,undefined).
# gcc prints the bare name back when it has no such file.
gcc_has() {
  local f
  have gcc && f=$(gcc -print-file-name="$1") && [ "${f#/}" != "$f" ] && [ -e "$f" ]
}
gcc_has libasan.so || need+=(libasan8)
gcc_has libubsan.so || need+=(libubsan1)
# The benchmark (bench/run): Debian's own python3 (its shebang) with matplotlib for the chart,
# the peer allocators it loads by name or preloads (mimalloc, jemalloc, tcmalloc), valgrind for
# callgrind.
[ -x /usr/bin/python3 ] || need+=(python3)
deb_has python3-matplotlib || need+=(python3-matplotlib)
deb_has libmimalloc2.0 || need+=(libmimalloc2.0)
deb_has libjemalloc2 || need+=(libjemalloc2)
deb_has libtcmalloc-minimal4 || need+=(libtcmalloc-minimal4)
have valgrind || need+=(valgrind)
# GNU time: the peak resident set of each mimalloc-bench program (bench/run's native-suite
# platform, which builds those programs with cmake, gcc and g++, above).
[ -x /usr/bin/time ] || need+=(time)
# Free Pascal, for the Pascal tests and demo: the native tests use this compiler (fpc) itself;
# scripts/build-fpc.sh builds the Win32/Win64 cross compilers from it (ppcx64), fpcmake and the
# compiler's source.
have ppcx64 || need+=(fp-compiler-3.2.2)
have fpcmake || need+=(fp-utils-3.2.2)
[ -d /usr/share/fpcsrc/3.2.2/rtl ] || need+=(fpc-source-3.2.2)
# The packaging (cpack -G ZIP) and the MSVC import libraries (llvm-dlltool, from the .def files).
have zip || need+=(zip)
# The package test links a C program for the MSVC target with that .lib (clang, lld-link).
have lld-link || need+=(lld)
have llvm-dlltool || need+=(llvm)
# The DWARF reader's test checks clang's binaries against LLVM's addr2line (tests/dwarf/).
have llvm-addr2line || need+=(llvm)
# The README's picture of the usage report (scripts/usage-report-screenshot.sh renders the page
# with Debian's chromium, headless): only when that script asks, since no test needs a browser.
if [ "${FASTMM_INSTALL_CHROMIUM:-0}" = 1 ]; then
  have chromium || need+=(chromium)
fi
wine_ok() {
  [ -e /usr/lib/wine/wine64 ] && [ -e /usr/lib/wine/wine ] || return 1
  local t
  for t in wine wineboot wineserver; do have $t || return 1; done
}

# A kernel that runs no 32-bit programs cannot run Wine's 32-bit loader: QEMU's i386 emulator
# then runs it, so that the Win32 tests run (scripts/setup-win32-emulation.sh says how, and what
# it changes; it does nothing where the loader runs). Not fatal: without it the Win32 tests are
# skipped, as test-all.sh says.
win32_emulation() {
  bash "$(dirname "${BASH_SOURCE[0]}")/setup-win32-emulation.sh" ||
    echo "install-deps: the Win32 tests will be skipped on this machine (see above)"
}

if [ ${#need[@]} -eq 0 ] && wine_ok; then
  win32_emulation
  exit 0
fi

SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
# No progress bars in logs.
apt_opts=(-y -q --no-install-recommends -o Dpkg::Use-Pty=0)

# Prints "name:arch version" for every package apt reports it would install (Inst lines of a
# simulation), and the downgrades among them with the version they replace.
report_transaction() {
  local sim=$1
  sed -nE 's/^Inst ([^ ]+) \[([^]]+)\] \(([^ ]+) .*/\1 \2 \3/p' "$sim" | while read -r pkg old new; do
    if dpkg --compare-versions "$new" lt "$old"; then
      echo "install-deps:   downgraded $pkg $old -> $new (the main suite's version)"
    fi
  done
  local n
  n=$(grep -c '^Inst ' "$sim" || true)
  echo "install-deps:   $n package(s) installed or changed:"
  sed -nE 's/^Inst ([^ ]+) (\[[^]]+\] )?\(([^ ]+) .*/\1 \3/p' "$sim" | tr '\n' ' ' | fold -s -w 96 | sed 's/^/install-deps:     /'
  echo
}

# Wine for Win64 and Win32. 32-bit Wine needs the i386 twins of many libraries, and multiarch
# needs each twin at the same version as the amd64 copy. When the security suite's i386 index
# cannot be downloaded (seen here for days: "File has unexpected size ... Mirror sync in
# progress?"), no i386 twin of a library whose amd64 copy carries a security update can be
# had, and a plain install fails with "held broken packages" (or, worse, resolves the conflict
# by removing wine64). So: try the plain install first (a simulation); if apt cannot resolve it,
# take the Wine packages from the main suite (-t bookworm) and, for every library whose i386
# twin apt reports it cannot install, take both architectures of that library from the main
# suite, repeating until the simulation passes. That downgrades the amd64 copies of those
# libraries (printed), so it is done only when the twins cannot be had otherwise. A package the
# simulation would remove (one that needs the exact version of such a library, as a -dev
# package does) is taken from the main suite too. A transaction that would remove a package is
# never run.
install_wine() {
  local wine_pkgs=(wine wine64 wine32:i386
    libgstreamer-plugins-base1.0-0:amd64 libgstreamer-plugins-base1.0-0:i386)
  local sim pins=() round extra target_opts=() unmet
  sim=$(mktemp)
  for round in 0 1 2 3 4 5 6 7 8 9; do
    if $SUDO apt-get install -s "${apt_opts[@]}" --allow-downgrades "${target_opts[@]}" \
      "${wine_pkgs[@]}" "${pins[@]}" >"$sim" 2>&1; then
      if grep -q '^Remv ' "$sim"; then
        # A package that needs the exact version of a library taken back to the main suite
        # (a -dev package: liblzma-dev needs liblzma5 (= its own version)) would be removed:
        # take it from the main suite too, at the version that matches.
        extra=()
        local pkg
        for pkg in $(sed -nE 's/^Remv ([^ ]+) .*/\1/p' "$sim"); do
          [[ $pkg == *:* ]] || pkg=$pkg:$(dpkg --print-architecture)
          case " ${pins[*]} " in *" $pkg/bookworm "*) continue ;; esac
          extra+=("$pkg/bookworm")
        done
        if [ ${#extra[@]} -eq 0 ] || [ "$round" = 9 ]; then
          echo "install-deps: installing Wine would remove packages; not doing it:" >&2
          grep '^Remv ' "$sim" >&2
          rm -f "$sim"
          return 1
        fi
        echo "install-deps: installing Wine would remove ${extra[*]%/bookworm}; taking them from the main suite instead"
        pins+=("${extra[@]}")
        target_opts=(-t bookworm)
        continue
      fi
      if [ ${#pins[@]} -gt 0 ]; then
        echo "install-deps: the i386 twins of these libraries are not installable at their amd64 versions;"
        echo "install-deps: taking both architectures from the main suite: ${pins[*]}"
      fi
      report_transaction "$sim"
      rm -f "$sim"
      $SUDO apt-get install "${apt_opts[@]}" --allow-downgrades "${target_opts[@]}" \
        "${wine_pkgs[@]}" "${pins[@]}"
      return 0
    fi
    if [ ${#target_opts[@]} -eq 0 ]; then
      target_opts=(-t bookworm)
      continue
    fi
    # Libraries apt cannot install for i386 ("Depends: X:i386 ... but it is not installable",
    # "... not going to be installed", "... but V is to be installed") and packages whose two
    # architectures break each other ("P:i386 : Breaks: P ...").
    unmet=$(sed -nE \
      -e 's/.*Depends: ([^: ]+):i386 .*but (it is not|[^ ]+ is to be).*/\1/p' \
      -e 's/^ *([^: ]+):i386 : Breaks: \1 .*/\1/p' \
      -e 's/^ *([^: ]+) : Breaks: \1:i386 .*/\1/p' "$sim" | sort -u)
    extra=()
    local lib
    for lib in $unmet; do
      case " ${pins[*]} " in *" $lib:i386/bookworm "*) continue ;; esac
      extra+=("$lib:amd64/bookworm" "$lib:i386/bookworm")
    done
    if [ ${#extra[@]} -eq 0 ]; then
      echo "install-deps: apt cannot resolve the Wine install, and names nothing more to take from the main suite:" >&2
      grep -vE '^(Inst|Conf) ' "$sim" | tail -n 40 >&2
      rm -f "$sim"
      return 1
    fi
    pins+=("${extra[@]}")
  done
  echo "install-deps: the Wine install did not resolve in 10 rounds:" >&2
  grep -vE '^(Inst|Conf) ' "$sim" | tail -n 40 >&2
  rm -f "$sim"
  return 1
}

what=("${need[@]}")
wine_ok || what+=("wine (Win32 and Win64)")
echo "install-deps: missing: ${what[*]}"
if ! wine_ok; then
  # Win32 programs need 32-bit Wine, which needs the i386 architecture.
  dpkg --print-foreign-architectures | grep -qx i386 || $SUDO dpkg --add-architecture i386
fi
# An index of the security suite can fail to download for a while (mirror sync); a failing
# update is not fatal: install_wine copes with a missing i386 security index.
$SUDO apt-get update -q || echo "install-deps: apt-get update reported an error; going on with the indexes it got"

# Wine first: its resolution may take libraries back to the main suite's version, and the other
# packages accept those versions (installed after, they would pull security versions that the
# i386 twins cannot follow).
if ! wine_ok; then
  echo "install-deps: installing Wine (Win64 and Win32)"
  install_wine
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  sim=$(mktemp)
  opts=()
  # Should one of them want a newer amd64 library than a Wine twin has, apt would resolve it by
  # removing 32-bit Wine: then take them from the main suite too.
  if ! $SUDO apt-get install -s "${apt_opts[@]}" "${need[@]}" >"$sim" 2>&1 || grep -q '^Remv ' "$sim"; then
    opts=(-t bookworm)
    $SUDO apt-get install -s "${apt_opts[@]}" "${opts[@]}" "${need[@]}" >"$sim" 2>&1 || true
    if grep -q '^Remv ' "$sim"; then
      echo "install-deps: installing ${need[*]} would remove packages; not doing it:" >&2
      grep '^Remv ' "$sim" >&2
      exit 1
    fi
  fi
  report_transaction "$sim"
  rm -f "$sim"
  $SUDO apt-get install "${apt_opts[@]}" "${opts[@]}" "${need[@]}"
fi
wine_ok || {
  echo "install-deps: Wine is incomplete after the install (need /usr/lib/wine/wine64, /usr/lib/wine/wine, wine, wineboot, wineserver)" >&2
  exit 1
}
win32_emulation
echo "install-deps: done"
