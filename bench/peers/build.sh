#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build.sh: builds a peer allocator from its source for Win32 and Win64 (and natively, for the
# peers that have a native build here), as bench/run's targets run it (bench/peers/README.md).
# One recipe per peer:
#
#   bash bench/peers/build.sh mimalloc SRC OUT [win32|win64]...
#     OUT/<platform>/mimalloc.dll: the source compiled with MinGW at -O2 into a static library
#     (OUT/<platform>/libmimalloc.a), linked into a DLL that exports mi_malloc, mi_free and
#     mi_realloc (the `malloc` kind of bench/targets.conf, prefix mi_).
#   bash bench/peers/build.sh rpmalloc SRC OUT [win32|win64|native]...
#     OUT/<platform>/rpmalloc.dll (OUT/native/librpmalloc.so): rpmalloc 1.4.5's rpmalloc.c and
#     our rpmalloc-peer.c, built the same way (natively with gcc into a .so); exports rpmalloc,
#     rpfree, rprealloc (prefix rp), natively our wrappers rpw_malloc, rpw_free, rpw_realloc.
#   bash bench/peers/build.sh snmalloc SRC OUT [win32|win64|native]...
#     OUT/<platform>/snmalloc.dll (OUT/native/libsnmalloc.so): snmalloc 0.7.5's C API
#     (src/snmalloc/override/malloc.cc) built the same way with the C++ compilers; exports
#     sn_malloc, sn_free, sn_realloc.
#   bash bench/peers/build.sh fastmm4avx SRC OUT [win32|win64|native]...
#     OUT/<platform>/fastmm_pascal_bench.exe (OUT/native/fastmm_pascal_bench): this tree's Pascal
#     benchmark program built with the project's Free Pascal cross compilers
#     (scripts/build-fpc.sh; natively the machine's fpc) and FASTMM_BENCH_FASTMM4 defined, which
#     makes SRC's FastMM4 unit the first of its uses clause (the pascal-win32, pascal-win64 and
#     pascal-native targets `fastmm4avx`); SRC's AVX-512 moves are assembled with NASM (-Ox -Ov):
#     FastMM4_AVX512.asm with -f win64 on Win64, FastMM4_AVX512_Linux.asm with -f elf64
#     natively. Natively FastMM4 writes "FastMM has detected a FreeMem call after FastMM was
#     uninstalled." to standard error at exit (cthreads, initialized before it, frees after its
#     finalization); the program's exit code and results are not affected.
#   bash bench/peers/build.sh mormot2 SRC OUT [native]
#     OUT/native/fastmm_pascal_bench: the same program natively with FASTMM_BENCH_FPCX64MM
#     defined, which makes mORMot 2's src/core/mormot.core.fpcx64mm.pas (SRC is a mORMot 2
#     source tree) the first unit (the pascal-native target `fpcx64mm`).
#
# With no platform named, win32 and win64. Nothing is done when OUT holds a build of the same
# files with the same script and tools. Prints one line per platform built.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
die() {
  echo "bench/peers/build.sh: $*" >&2
  exit 1
}
[ $# -ge 3 ] ||
  die "usage: build.sh mimalloc|rpmalloc|snmalloc|fastmm4avx|mormot2 SRC OUT [win32|win64|native]..."
name=$1
src=$(cd "$2" && pwd) || die "no source folder $2"
out=$3
shift 3
platforms=("$@")
if [ ${#platforms[@]} -eq 0 ]; then
  platforms=(win32 win64)
  [ "$name" != mormot2 ] || platforms=(native)
fi

# source_files FIND-ARGS...: the files of SRC that `find` selects, sorted, as full paths (a
# recipe's inputs).
source_files() {
  (cd "$src" && find "$@" | sed 's|^\./||' | sort) | sed "s|^|$src/|"
}

# Each recipe sets: files (what it makes in OUT/<platform>/, by platform: the platforms it has),
# inputs (the files whose contents the stamp covers besides this script), build (a function
# called as build PLATFORM DIR) and tools (a function called as tools PLATFORM: the versions of
# the tools it uses, for the stamp). The peers that are a C or C++ library (mimalloc, rpmalloc,
# snmalloc) share build_library and tools_library, below: their recipe sets what those take.
declare -A files
case $name in
  mimalloc)
    [ -f "$src/src/static.c" ] && [ -f "$src/include/mimalloc.h" ] ||
      die "$src is not a mimalloc source tree (no src/static.c, include/mimalloc.h)"
    files=([win32]=mimalloc.dll [win64]=mimalloc.dll)
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
    flags=(-O2 -DNDEBUG -DMI_WIN_USE_FIXED_TLS=1 -I"$src/include")
    exports=(mi_malloc mi_free mi_realloc)
    libs=(-lpsapi -lshell32 -luser32 -ladvapi32 -lbcrypt)
    mapfile -t inputs < <(source_files . -type f \( -name '*.c' -o -name '*.h' \))
    inputs+=("${sources[@]:1}")
    build=build_library tools=tools_library
    ;;
  rpmalloc)
    [ -f "$src/rpmalloc/rpmalloc.c" ] && [ -f "$src/rpmalloc/rpmalloc.h" ] ||
      die "$src is not an rpmalloc source tree (no rpmalloc/rpmalloc.c, rpmalloc/rpmalloc.h)"
    files=([win32]=rpmalloc.dll [win64]=rpmalloc.dll [native]=librpmalloc.so)
    # rpmalloc.c as it ships, with its own defaults (no ENABLE_OVERRIDE, no ENABLE_PRELOAD: it
    # replaces nothing), and rpmalloc-peer.c, which sets each thread up: a DllMain on Windows,
    # where the DLL exports rpmalloc's own functions; natively, wrappers that do it on a
    # thread's first call.
    sources=("$src/rpmalloc/rpmalloc.c" "$here/rpmalloc-peer.c")
    flags=(-O2 -DNDEBUG -I"$src/rpmalloc")
    exports=(rpmalloc rpfree rprealloc)
    libs=()
    adjust_rpmalloc() {
      if [ "$1" = native ]; then
        exports=(rpw_malloc rpw_free rpw_realloc)
        libs=(-lpthread)
      fi
    }
    mapfile -t inputs < <(source_files rpmalloc -type f -name '*.[ch]')
    inputs+=("$here/rpmalloc-peer.c")
    build=build_library tools=tools_library
    ;;
  snmalloc)
    [ -f "$src/src/snmalloc/override/malloc.cc" ] && [ -f "$src/src/snmalloc/snmalloc.h" ] ||
      die "$src is not an snmalloc source tree (no src/snmalloc/override/malloc.cc)"
    files=([win32]=snmalloc.dll [win64]=snmalloc.dll [native]=libsnmalloc.so)
    # Header-only C++; malloc.cc defines its C functions, here with the prefix sn_ as snmalloc's
    # own static library has them (SNMALLOC_STATIC_LIBRARY_PREFIX). The defines and flags are
    # those snmalloc's CMake gives that library by default (-O2 for its Release -O3): C++20, the
    # wait-on-address backoff, -mprfchw, -mcx16 on x86-64, and the thread-end mechanism of each
    # system (C++11 thread_local destructors on Windows, glibc's __cxa_thread_atexit_impl on
    # Linux, with the initial-exec TLS model).
    sources=("$src/src/snmalloc/override/malloc.cc")
    flags=(-std=c++20 -O2 -DNDEBUG -I"$src/src" -DSNMALLOC_STATIC_LIBRARY_PREFIX=sn_
      -DSNMALLOC_USE_WAIT_ON_ADDRESS=1 -DSNMALLOC_CHECK_LOADS=false -DSNMALLOC_PAGEID=false
      -fomit-frame-pointer -mprfchw)
    exports=(sn_malloc sn_free sn_realloc)
    libs=()
    adjust_snmalloc() {
      [ "$1" = win32 ] || flags+=(-mcx16)
      if [ "$1" = native ]; then
        flags+=(-DSNMALLOC_USE_CXX11_THREAD_ATEXIT_DIRECT -ftls-model=initial-exec)
      else
        flags+=(-DSNMALLOC_USE_CXX11_DESTRUCTORS)
        libs=(-lbcrypt -lsynchronization)
      fi
    }
    mapfile -t inputs < <(source_files src/snmalloc -type f \( -name '*.h' -o -name '*.cc' \))
    build=build_library tools=tools_library
    ;;
  fastmm4avx)
    [ -f "$src/FastMM4.pas" ] && [ -f "$src/FastMM4Options.inc" ] ||
      die "$src is not a FastMM4-AVX source folder (no FastMM4.pas, FastMM4Options.inc)"
    files=([win32]=fastmm_pascal_bench.exe [win64]=fastmm_pascal_bench.exe [native]=fastmm_pascal_bench)
    build=build_fastmm4avx tools=tools_fastmm4avx
    program=$repo/bench/pascal/fastmm_pascal_bench.pas
    # The defines of the CMake build of the program (bench/CMakeLists.txt), and ours that puts
    # FastMM4 first in its uses clause. FastMM4's own options are its FastMM4Options.inc's.
    defines=(-dFastMM_DisableAutomaticInstall -dFASTMM_BENCH_FASTMM4)
    unit_dirs=("$src")
    mapfile -t inputs < <(source_files . -maxdepth 1 -type f \( -name '*.pas' -o -name '*.inc' -o -name '*.asm' \))
    inputs+=("$program" "$repo"/bench/pascal/*.pas "$repo"/delphi/*.pas "$repo"/delphi/*.inc)
    ;;
  mormot2)
    [ -f "$src/src/core/mormot.core.fpcx64mm.pas" ] && [ -f "$src/src/mormot.defines.inc" ] ||
      die "$src is not a mORMot 2 source tree (no src/core/mormot.core.fpcx64mm.pas, src/mormot.defines.inc)"
    files=([native]=fastmm_pascal_bench)
    build=build_fastmm4avx tools=tools_fastmm4avx
    program=$repo/bench/pascal/fastmm_pascal_bench.pas
    defines=(-dFastMM_DisableAutomaticInstall -dFASTMM_BENCH_FPCX64MM)
    unit_dirs=("$src/src/core" "$src/src")
    inputs=("$src/src/core/mormot.core.fpcx64mm.pas" "$src/src/mormot.defines.inc")
    inputs+=("$program" "$repo"/bench/pascal/*.pas "$repo"/delphi/*.pas "$repo"/delphi/*.inc)
    ;;
  *) die "no recipe for the peer '$name' (known: mimalloc, rpmalloc, snmalloc, fastmm4avx, mormot2)" ;;
esac

compilers_of() {
  case $1 in
    win32) echo i686-w64-mingw32-gcc i686-w64-mingw32-g++ ;;
    win64) echo x86_64-w64-mingw32-gcc x86_64-w64-mingw32-g++ ;;
    native) echo gcc g++ ;;
  esac
}

# The library peers' build: every file of `sources` compiled with `flags` (.c with the C
# compiler, .cc with the C++ one: MinGW's for win32 and win64, the machine's gcc and g++ with
# -fPIC natively) into lib<name>.a, linked whole into the DLL with a .def file (-static-libgcc,
# and -static-libstdc++ for C++) or into the .so with a version script, so that it exports only
# `exports` (malloc, free, realloc); `libs` are linked after it. A recipe whose build differs by
# platform has a function adjust_<name> PLATFORM that changes those variables; both functions
# run in a subshell, so the change holds for that platform only.
library_setup() {
  local s
  read -r cc cxx < <(compilers_of "$1")
  if declare -F "adjust_$name" >/dev/null; then "adjust_$name" "$1"; fi
  linker=$cc
  for s in "${sources[@]}"; do
    [ "${s##*.}" != cc ] || linker=$cxx
  done
  command -v "$linker" >/dev/null || die "$linker is not installed (scripts/install-deps.sh)"
}

tools_library() (
  library_setup "$1"
  "$linker" --version | head -n 1
  echo "${flags[*]} | ${exports[*]} | ${libs[*]}"
)

build_library() (
  platform=$1
  dir=$2
  library_setup "$platform"
  pic=()
  [ "$platform" != native ] || pic=(-fPIC)
  objs=()
  for s in "${sources[@]}"; do
    case $s in *.cc) c=$cxx ;; *) c=$cc ;; esac
    o=$dir/$(basename "${s%.*}").o
    "$c" "${flags[@]}" "${pic[@]}" -c "$s" -o "$o" 2>>"$dir/build.log" ||
      { cat "$dir/build.log" >&2; die "$name did not compile for $platform"; }
    objs+=("$o")
  done
  "${cc%gcc}ar" rcs "$dir/lib$name.a" "${objs[@]}"
  if [ "$platform" = native ]; then
    { echo "{ global:"; printf '  %s;\n' "${exports[@]}"; echo "  local: *; };"; } >"$dir/$name.map"
    link=(-Wl,--version-script="$dir/$name.map")
  else
    { echo "EXPORTS"; printf '  %s\n' "${exports[@]}"; } >"$dir/$name.def"
    link=("$dir/$name.def" -static-libgcc)
    [ "$linker" = "$cc" ] || link+=(-static-libstdc++)
  fi
  "$linker" -shared -O2 -o "$dir/$file" "${link[@]}" \
    -Wl,--whole-archive "$dir/lib$name.a" -Wl,--no-whole-archive "${libs[@]}" 2>>"$dir/build.log" ||
    { cat "$dir/build.log" >&2; die "$name did not link for $platform"; }
)

# The Free Pascal compiler of a platform: the project's cross compilers for Windows, the
# machine's fpc natively.
pascal_compiler() {
  if [ "$1" = native ]; then
    command -v fpc || die "fpc is not installed (scripts/install-deps.sh)"
  else
    local fpc_home
    fpc_home=$(bash "$repo/scripts/build-fpc.sh") || die "no Free Pascal toolchain (scripts/build-fpc.sh failed)"
    echo "$fpc_home/fpc-$1"
  fi
}

# The assembly a FastMM4-AVX build links on the platform, if SRC has it ('' for none).
fastmm4_asm() {
  case $name:$1 in
    fastmm4avx:win64) [ ! -f "$src/FastMM4_AVX512.asm" ] || echo "$src/FastMM4_AVX512.asm win64 FastMM4_AVX512.obj" ;;
    fastmm4avx:native) [ ! -f "$src/FastMM4_AVX512_Linux.asm" ] || echo "$src/FastMM4_AVX512_Linux.asm elf64 FastMM4_AVX512_Linux.o" ;;
  esac
}

# The Pascal peers (fastmm4avx, mormot2): the benchmark program with the peer's unit first.
tools_fastmm4avx() {
  local fpc
  fpc=$(pascal_compiler "$1")
  echo "$fpc ${defines[*]}"
  "$fpc" -iV
  if [ -n "$(fastmm4_asm "$1")" ]; then
    command -v nasm >/dev/null || die "nasm is not installed (scripts/install-deps.sh)"
    nasm -v
  fi
}

build_fastmm4avx() {
  local platform=$1 dir=$2 units=$2/units fpc asm format obj d
  local paths=()
  fpc=$(pascal_compiler "$platform")
  rm -rf "$units"
  mkdir -p "$units"
  # FastMM4.pas links its AVX-512 moves' object ({$L}) where it compiles them (Win64, and
  # natively on Linux x86_64); Free Pascal finds the object in the object path (-Fo).
  read -r asm format obj < <(fastmm4_asm "$platform"; echo) || true
  if [ -n "${asm:-}" ]; then
    nasm -Ox -Ov -f "$format" "$asm" -o "$units/$obj" 2>>"$dir/build.log" ||
      { cat "$dir/build.log" >&2; die "$(basename "$asm") did not assemble"; }
  fi
  for d in "${unit_dirs[@]}"; do
    paths+=(-Fu"$d" -Fi"$d")
  done
  # The options of the CMake build of the program (delphi/pascal_program.cmake) but -Sew:
  # FastMM4.pas has warnings (unreachable code) that are not ours to fix; the program's own
  # warnings are errors in the CMake build of the same source.
  "$fpc" -Mdelphi -O2 -vew "${defines[@]}" "${paths[@]}" \
    -Fu"$repo/delphi" -Fu"$(dirname "$program")" -Fi"$(dirname "$program")" -Fo"$units" \
    -FU"$units" -FE"$dir" -o"$file" "$program" >>"$dir/build.log" 2>&1 ||
    { cat "$dir/build.log" >&2; die "$name did not compile for $platform"; }
}

stamp_of() {
  {
    sha256sum "${BASH_SOURCE[0]}" "${inputs[@]}"
    "$tools" "$1"
    echo "$src"
  } | sha256sum | cut -d' ' -f1
}

for platform in "${platforms[@]}"; do
  case $platform in
    win32 | win64 | native) ;;
    *) die "no platform '$platform' (win32, win64, native)" ;;
  esac
  file=${files[$platform]:-}
  [ -n "$file" ] || die "$name has no $platform build here"
  dir=$out/$platform
  stamp=$(stamp_of "$platform")
  if [ -f "$dir/$file" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    continue
  fi
  mkdir -p "$dir"
  rm -f "$dir/.stamp" "$dir/$file" "$dir/lib$name.a" "$dir/build.log"
  "$build" "$platform" "$dir"
  echo "$stamp" >"$dir/.stamp"
  echo "bench/peers/build.sh: $name for $platform from $src: $dir/$file"
done
