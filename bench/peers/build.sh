#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build.sh: builds a peer allocator's source for Win32 and Win64 with MinGW, as bench/run's
# Windows targets load it (bench/peers/README.md).
#
#   bash bench/peers/build.sh mimalloc SRC OUT [win32|win64]...
#
# gives OUT/win32/mimalloc.dll and OUT/win64/mimalloc.dll (or the platforms named): the source compiled at -O2 into a
# static library (OUT/<platform>/libmimalloc.a), linked into a DLL that exports mi_malloc,
# mi_free and mi_realloc (the `malloc` kind of bench/targets.conf, prefix mi_). Nothing is done
# when OUT holds a build of the same source files with the same script and compilers. Prints
# one line per platform built.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() {
  echo "bench/peers/build.sh: $*" >&2
  exit 1
}
[ $# -ge 3 ] || die "usage: build.sh mimalloc SRC OUT [win32|win64]..."
name=$1
src=$(cd "$2" && pwd) || die "no source folder $2"
out=$3
shift 3
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(win32 win64)

case $name in
  mimalloc)
    [ -f "$src/src/static.c" ] && [ -f "$src/include/mimalloc.h" ] ||
      die "$src is not a mimalloc source tree (no src/static.c, include/mimalloc.h)"
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
    ;;
  *) die "no recipe for the peer '$name' (known: mimalloc)" ;;
esac

stamp_of() {
  local cc=$1
  {
    sha256sum "${BASH_SOURCE[0]}" "${sources[@]:1}"
    "$cc" --version | head -n 1
    echo "$src ${cflags[*]}"
    (cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) -printf '%p %s %T@\n' | sort)
  } | sha256sum | cut -d' ' -f1
}

for platform in "${platforms[@]}"; do
  case $platform in
    win32) cc=i686-w64-mingw32-gcc ;;
    win64) cc=x86_64-w64-mingw32-gcc ;;
    *) die "no platform '$platform' (win32, win64)" ;;
  esac
  command -v "$cc" >/dev/null || die "$cc is not installed (scripts/install-deps.sh)"
  dir=$out/$platform
  stamp=$(stamp_of "$cc")
  if [ -f "$dir/$name.dll" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
    continue
  fi
  mkdir -p "$dir"
  rm -f "$dir/.stamp" "$dir/$name.dll" "$dir/lib$name.a" "$dir/build.log"
  objs=()
  for s in "${sources[@]}"; do
    o=$dir/$(basename "${s%.*}").o
    "$cc" "${cflags[@]}" -c "$s" -o "$o" 2>>"$dir/build.log" || { cat "$dir/build.log" >&2; die "$name did not compile for $platform"; }
    objs+=("$o")
  done
  ${cc%gcc}ar rcs "$dir/lib$name.a" "${objs[@]}"
  { echo "EXPORTS"; printf '  %s\n' "${exports[@]}"; } >"$dir/$name.def"
  "$cc" -shared -O2 -static-libgcc -o "$dir/$name.dll" "$dir/$name.def" \
    -Wl,--whole-archive "$dir/lib$name.a" -Wl,--no-whole-archive "${libs[@]}" 2>>"$dir/build.log" ||
    { cat "$dir/build.log" >&2; die "$name did not link for $platform"; }
  echo "$stamp" >"$dir/.stamp"
  echo "bench/peers/build.sh: $name for $platform from $src: $dir/$name.dll"
done
