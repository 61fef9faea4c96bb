#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build.sh: builds a peer allocator from its source for Win32 and Win64, as bench/run's Windows
# targets run it (bench/peers/README.md). One recipe per peer:
#
#   bash bench/peers/build.sh mimalloc SRC OUT [win32|win64]...
#     OUT/<platform>/mimalloc.dll: the source compiled with MinGW at -O2 into a static library
#     (OUT/<platform>/libmimalloc.a), linked into a DLL that exports mi_malloc, mi_free and
#     mi_realloc (the `malloc` kind of bench/targets.conf, prefix mi_).
#   bash bench/peers/build.sh fastmm4avx SRC OUT [win32|win64]...
#     OUT/<platform>/fastmm_pascal_bench.exe: this tree's Pascal benchmark program built with
#     the project's Free Pascal cross compilers (scripts/build-fpc.sh) and FASTMM_BENCH_FASTMM4
#     defined, which makes SRC's FastMM4 unit the first of its uses clause (the pascal-win32 and
#     pascal-win64 targets `fastmm4avx`); on Win64 SRC's FastMM4_AVX512.asm is assembled with
#     NASM (-Ox -Ov -f win64) for the unit's AVX-512 moves.
#
# With no platform named, both. Nothing is done when OUT holds a build of the same files with the
# same script and tools. Prints one line per platform built.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
die() {
  echo "bench/peers/build.sh: $*" >&2
  exit 1
}
[ $# -ge 3 ] || die "usage: build.sh mimalloc|fastmm4avx SRC OUT [win32|win64]..."
name=$1
src=$(cd "$2" && pwd) || die "no source folder $2"
out=$3
shift 3
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(win32 win64)

# Each recipe sets: file (what it makes in OUT/<platform>/), inputs (the files whose contents
# the stamp covers besides this script), the function build_<name> PLATFORM DIR and the
# function tools_<name> PLATFORM (the versions of the tools it uses, for the stamp).
case $name in
  mimalloc)
    [ -f "$src/src/static.c" ] && [ -f "$src/include/mimalloc.h" ] ||
      die "$src is not a mimalloc source tree (no src/static.c, include/mimalloc.h)"
    file=mimalloc.dll
    # static.c is mimalloc's one translation unit of the whole library. No MI_MALLOC_OVERRIDE:
    # the DLL serves only the calls the workload makes through mi_*, not the C runtime's.
    # MI_WIN_USE_FIXED_TLS: the default heap in a TlsAlloc slot read from the TEB (newer
    # mimalloc has it; Debian's 2.0.9 has it from our patch).
    sources=("$src/src/static.c")
    # Newer mimalloc has Windows TLS callbacks; the versions that place them with MSVC pragmas
    # only (GCC ignores those: no process attach, no thread end) get ours beside them.
    prim=$src/src/prim/windows/prim.c
    if [ -f "$prim" ] && grep -q '_mi_tls_callback_pre\[\] *=' "$prim" &&
      ! grep -q 'section(".CRT\$XLB")' "$prim"; then
      sources+=("$here/mimalloc-mingw-tls.c")
    fi
    cflags=(-O2 -DNDEBUG -DMI_WIN_USE_FIXED_TLS=1 -I"$src/include")
    exports=(mi_malloc mi_free mi_realloc)
    libs=(-lpsapi -lshell32 -luser32 -ladvapi32 -lbcrypt)
    mapfile -t inputs < <(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) | sort)
    inputs=("${inputs[@]/#./$src}" "${sources[@]:1}")
    ;;
  fastmm4avx)
    [ -f "$src/FastMM4.pas" ] && [ -f "$src/FastMM4Options.inc" ] ||
      die "$src is not a FastMM4-AVX source folder (no FastMM4.pas, FastMM4Options.inc)"
    file=fastmm_pascal_bench.exe
    program=$repo/bench/pascal/fastmm_pascal_bench.pas
    fpc_home=$(bash "$repo/scripts/build-fpc.sh") || die "no Free Pascal toolchain (scripts/build-fpc.sh failed)"
    # The defines of the CMake build of the program (bench/CMakeLists.txt), and ours that puts
    # FastMM4 first in its uses clause. FastMM4's own options are its FastMM4Options.inc's.
    defines=(-dFastMM_DisableAutomaticInstall -dFASTMM_BENCH_FASTMM4)
    mapfile -t inputs < <(cd "$src" && find . -maxdepth 1 -type f \( -name '*.pas' -o -name '*.inc' -o -name '*.asm' \) | sort)
    inputs=("${inputs[@]/#./$src}" "$program" "$repo"/delphi/*.pas "$repo"/delphi/*.inc)
    ;;
  *) die "no recipe for the peer '$name' (known: mimalloc, fastmm4avx)" ;;
esac

compiler_of() {
  case $1 in
    win32) echo i686-w64-mingw32-gcc ;;
    win64) echo x86_64-w64-mingw32-gcc ;;
  esac
}

tools_mimalloc() {
  local cc
  cc=$(compiler_of "$1")
  command -v "$cc" >/dev/null || die "$cc is not installed (scripts/install-deps.sh)"
  "$cc" --version | head -n 1
  echo "${cflags[*]}"
}

build_mimalloc() {
  local platform=$1 dir=$2 cc s o objs=()
  cc=$(compiler_of "$platform")
  for s in "${sources[@]}"; do
    o=$dir/$(basename "${s%.*}").o
    "$cc" "${cflags[@]}" -c "$s" -o "$o" 2>>"$dir/build.log" || { cat "$dir/build.log" >&2; die "$name did not compile for $platform"; }
    objs+=("$o")
  done
  ${cc%gcc}ar rcs "$dir/lib$name.a" "${objs[@]}"
  { echo "EXPORTS"; printf '  %s\n' "${exports[@]}"; } >"$dir/$name.def"
  "$cc" -shared -O2 -static-libgcc -o "$dir/$file" "$dir/$name.def" \
    -Wl,--whole-archive "$dir/lib$name.a" -Wl,--no-whole-archive "${libs[@]}" 2>>"$dir/build.log" ||
    { cat "$dir/build.log" >&2; die "$name did not link for $platform"; }
}

tools_fastmm4avx() {
  echo "$fpc_home ${defines[*]}"
  "$fpc_home/fpc-$1" -iV
  if [ "$1" = win64 ] && [ -f "$src/FastMM4_AVX512.asm" ]; then
    command -v nasm >/dev/null || die "nasm is not installed (scripts/install-deps.sh)"
    nasm -v
  fi
}

build_fastmm4avx() {
  local platform=$1 dir=$2 units=$2/units
  rm -rf "$units"
  mkdir -p "$units"
  # FastMM4.pas links FastMM4_AVX512.obj ({$L}) when it compiles its AVX-512 moves, which it
  # does on Win64 only; Free Pascal finds the object in the object path (-Fo).
  if [ "$platform" = win64 ] && [ -f "$src/FastMM4_AVX512.asm" ]; then
    nasm -Ox -Ov -f win64 "$src/FastMM4_AVX512.asm" -o "$units/FastMM4_AVX512.obj" 2>>"$dir/build.log" ||
      { cat "$dir/build.log" >&2; die "FastMM4_AVX512.asm did not assemble"; }
  fi
  # The options of the CMake build of the program (delphi/delphi.cmake) but -Sew: FastMM4.pas
  # has warnings (unreachable code) that are not ours to fix; the program's own warnings are
  # errors in the CMake build of the same source.
  "$fpc_home/fpc-$platform" -Mdelphi -O2 -vew "${defines[@]}" -Fu"$src" -Fi"$src" \
    -Fu"$repo/delphi" -Fu"$(dirname "$program")" -Fi"$(dirname "$program")" -Fo"$units" \
    -FU"$units" -FE"$dir" -o"$file" "$program" >>"$dir/build.log" 2>&1 ||
    { cat "$dir/build.log" >&2; die "$name did not compile for $platform"; }
}

stamp_of() {
  {
    sha256sum "${BASH_SOURCE[0]}" "${inputs[@]}"
    "tools_$name" "$1"
    echo "$src"
  } | sha256sum | cut -d' ' -f1
}

for platform in "${platforms[@]}"; do
  case $platform in
    win32 | win64) ;;
    *) die "no platform '$platform' (win32, win64)" ;;
  esac
  dir=$out/$platform
  stamp=$(stamp_of "$platform")
  if [ -f "$dir/$file" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    continue
  fi
  mkdir -p "$dir"
  rm -f "$dir/.stamp" "$dir/$file" "$dir/lib$name.a" "$dir/build.log"
  "build_$name" "$platform" "$dir"
  echo "$stamp" >"$dir/.stamp"
  echo "bench/peers/build.sh: $name for $platform from $src: $dir/$file"
done
