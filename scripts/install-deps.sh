#!/usr/bin/env bash
# Installs what fastmm-c needs on a Debian 12 machine, and nothing when it is all there.
# Safe to run again: every step checks first. Needs root (or sudo) only when something is missing.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have cmake || need+=(cmake)
have gcc || need+=(gcc)
have make || need+=(make)
have nasm || need+=(nasm)
have python3 || need+=(python3)
have x86_64-w64-mingw32-gcc || need+=(gcc-mingw-w64-x86-64)
have i686-w64-mingw32-gcc || need+=(gcc-mingw-w64-i686)
have ninja || need+=(ninja-build)
have clang || need+=(clang)
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
# the peer allocators it loads by name (mimalloc, jemalloc, tcmalloc), valgrind for callgrind.
deb_has() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
[ -x /usr/bin/python3 ] || need+=(python3)
deb_has python3-matplotlib || need+=(python3-matplotlib)
deb_has libmimalloc2.0 || need+=(libmimalloc2.0)
deb_has libjemalloc2 || need+=(libjemalloc2)
deb_has libtcmalloc-minimal4 || need+=(libtcmalloc-minimal4)
have valgrind || need+=(valgrind)
# Free Pascal, for the Pascal tests and demo: scripts/build-fpc.sh builds the Win32/Win64 cross
# compilers from the compiler (ppcx64), fpcmake and the compiler's source.
have ppcx64 || need+=(fp-compiler-3.2.2)
have fpcmake || need+=(fp-utils-3.2.2)
[ -d /usr/share/fpcsrc/3.2.2/rtl ] || need+=(fpc-source-3.2.2)
wine_ok=1
[ -e /usr/lib/wine/wine64 ] || wine_ok=0
[ -e /usr/lib/wine/wine ] || wine_ok=0
for t in wine wineboot wineserver; do have $t || wine_ok=0; done

SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

if [ ${#need[@]} -eq 0 ] && [ $wine_ok = 1 ]; then
  exit 0
fi

what=("${need[@]}")
[ $wine_ok = 1 ] || what+=("wine (Win32 and Win64)")
echo "install-deps: installing ${what[*]}"
export DEBIAN_FRONTEND=noninteractive
# No progress bars in logs.
apt_opts=(-y -q --no-install-recommends -o Dpkg::Use-Pty=0)
if [ $wine_ok = 0 ]; then
  # Win32 programs need 32-bit Wine, which needs the i386 architecture.
  dpkg --print-foreign-architectures | grep -qx i386 || $SUDO dpkg --add-architecture i386
fi
# An index of the security suite can fail to download for a while (mirror sync); the main
# suite's indexes are what we install from, so a failing update is not fatal.
$SUDO apt-get update -q || echo "install-deps: apt-get update reported an error; going on with the indexes we have"

if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get install "${apt_opts[@]}" "${need[@]}"
fi
if [ $wine_ok = 0 ]; then
  # Taking every Wine package from the main suite keeps the amd64 and i386 library versions
  # equal, which multiarch requires; otherwise apt may pick the security suite's amd64
  # libraries, fail on the i386 twins, or remove wine64 to resolve the conflict.
  $SUDO apt-get install "${apt_opts[@]}" -t bookworm \
    wine wine64 wine32:i386 \
    libgstreamer-plugins-base1.0-0:amd64 libgstreamer-plugins-base1.0-0:i386
fi
for f in /usr/lib/wine/wine64 /usr/lib/wine/wine; do
  [ -e "$f" ] || { echo "install-deps: $f is missing after the install" >&2; exit 1; }
done
echo "install-deps: done"
