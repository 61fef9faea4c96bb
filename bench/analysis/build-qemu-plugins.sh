#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-qemu-plugins.sh: builds the measuring tool that bench/analysis/win32-instructions.sh and
# bench/analysis/win32_functions.py need on a machine that cannot time Win32 code: a qemu-i386
# with QEMU's plugin interface (Debian's qemu-user has none), and the plugins that count.
#
#   bash bench/analysis/build-qemu-plugins.sh [DIR]     # DIR: /var/tmp/fastmm-qemu-plugins
#
# Everything goes to DIR, outside the repository; nothing is installed there but packages. The
# last lines it prints are the variables to export (or to put before a command):
#   FASTMM_QEMU_I386      DIR/build/qemu-i386
#   FASTMM_QEMU_INSN      DIR/build/tests/tcg/plugins/libinsn.so   (instructions executed)
#   FASTMM_QEMU_MEM       DIR/build/tests/tcg/plugins/libmem.so    (memory accesses: loads and
#                         stores the guest's instructions make)
#   FASTMM_QEMU_HOTBLOCKS DIR/libhotblocks.so  (contrib/plugins/hotblocks.c with its report of
#                         the 20 hottest blocks raised to every block: win32_functions.py reads it)
#   FASTMM_QEMU_CACHE     DIR/build/contrib/plugins/libcache.so  (a simulated cache's misses;
#                         printed as a comment, so that `eval` of the output leaves it out)
# A second run, with these present and the emulator answering with its plugin option, only
# prints them again.
#
# The steps, each skipped when its result is there:
# 1. Debian packages: libglib2.0-dev, ninja-build, python3-venv, dpkg-dev, xz-utils, gcc.
# 2. QEMU's source from Debian: the newest `qemu` source package apt knows, of major version 10
#    or later (the version scripts/setup-win32-emulation.sh runs the tests with). apt gets to
#    see source packages through deb-src twins of this machine's own package entries
#    (scripts/apt-source-twins.sh): fastmm-c-deb-src for the release's suites and, where the
#    release's own QEMU is older (Debian 12 has 7.2), fastmm-c-backports-src for its backports.
#    Only the package's upstream tarball (its .orig.tar.xz) is used, unpacked to DIR/src without
#    Debian's patches: `apt-get source --download-only` fetches the package, and the tarball is
#    checked against the SHA256 the index gives, so a mirror that lacks the package's Debian
#    parts (its .dsc or debian.tar.xz, as seen for a backport) still serves.
# 3. meson at the version QEMU's pythondeps.toml accepts, and python3-pycotap (which QEMU's
#    configure checks for its own tests): from the release where its own will do, else from the
#    backports suite (fastmm-c-backports, the deb twin setup-win32-emulation.sh also writes).
#    Debian 12's meson is 1.0 and it has no pycotap: both come from bookworm-backports.
# 4. configure for the i386 user-mode emulator with --enable-plugins and nothing else (no system
#    emulators, tools, docs or firmware; no download), then ninja builds the emulator and the
#    plugins, FASTMM_QEMU_JOBS jobs at once (2 unless set).
# 5. hotblocks.c copied to DIR with its report limit raised, compiled against QEMU's plugin
#    header.
# Takes about 10 minutes on two cores. Needs root, or sudo, for apt. FASTMM_APT_ETC names another
# folder than /etc/apt for the entries it writes (as for scripts/apt-source-twins.sh; the test
# tests/scripts/test_build_qemu_plugins.sh uses it). Exit status 0 when the tool is built; 1
# with the reason on standard error.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:-/var/tmp/fastmm-qemu-plugins}
jobs=${FASTMM_QEMU_JOBS:-2}
min_major=10
say() { echo "build-qemu-plugins: $*" >&2; }
fail() {
  echo "build-qemu-plugins: $*" >&2
  exit 1
}
case "$dir" in /*) ;; *) dir=$PWD/$dir ;; esac
[[ "$dir" != *" "* ]] || fail "the directory's path must have no spaces (QEMU_PLUGIN takes it)"
case "$dir/" in "$repo"/*) fail "build outside the repository, not in $dir" ;; esac
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

src=$dir/src
build=$dir/build
qemu=$build/qemu-i386
insn=$build/tests/tcg/plugins/libinsn.so
mem=$build/tests/tcg/plugins/libmem.so
cache=$build/contrib/plugins/libcache.so
hot=$dir/libhotblocks.so

print_exports() {
  echo "export FASTMM_QEMU_I386=$qemu"
  echo "export FASTMM_QEMU_INSN=$insn"
  echo "export FASTMM_QEMU_MEM=$mem"
  echo "export FASTMM_QEMU_HOTBLOCKS=$hot"
  # Commented: a simulated cache is a model, and slows each run; win32-instructions.sh adds its
  # columns when this is exported too.
  echo "# export FASTMM_QEMU_CACHE=$cache"
}
built() {
  [ -x "$qemu" ] && [ -f "$insn" ] && [ -f "$mem" ] && [ -f "$cache" ] && [ -f "$hot" ] &&
    "$qemu" -h 2>/dev/null | grep -q -- '^-plugin'
}
if built; then
  say "already built in $dir"
  print_exports
  exit 0
fi
mkdir -p "$dir"

apt_install() { # [apt-get options] PACKAGE...
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
    >/dev/null
}
apt_update() {
  $SUDO apt-get update -q >/dev/null || say "apt-get update reported an error; going on"
}
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || fail "cannot tell this Debian's release (/etc/os-release has no VERSION_CODENAME)"
backports=$codename-backports
# A twin of this machine's own apt entries (scripts/apt-source-twins.sh), written once.
twin() { # NAME TYPE [SUITE NEW_SUITE]
  local name=$1 rc=0
  shift
  local d=${FASTMM_APT_ETC:-/etc/apt}/sources.list.d
  [ ! -f "$d/$name.sources" ] && [ ! -f "$d/$name.list" ] || return 0
  . "$repo/scripts/apt-source-twins.sh"
  apt_source_twins "$name" bench/analysis/build-qemu-plugins.sh "for QEMU with plugins" "$@" \
    >/dev/null || rc=$?
  [ $rc = 0 ] || say "wrote no $name entry (apt_source_twins returned $rc)"
  [ $rc != 0 ] || say "wrote the apt entry $name (from this machine's own sources)"
  return 0
}
major_of() { sed -nE 's/^([0-9]+:)?([0-9]+)\..*/\2/p'; }

# ---- 1. packages -----------------------------------------------------------------------------
need=()
for p in libglib2.0-dev ninja-build python3-venv dpkg-dev xz-utils gcc; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt_install "${need[@]}" || { apt_update && apt_install "${need[@]}"; } ||
    fail "could not install ${need[*]}"
fi

# ---- 2. QEMU's source ------------------------------------------------------------------------
if [ ! -x "$src/configure" ]; then
  newest() { { apt-cache showsrc qemu 2>/dev/null || true; } | sed -n "s/^Version: //p" | sort -V | tail -n 1; }
  version=$(newest)
  if [ "$(major_of <<<"$version")" -lt "$min_major" ] 2>/dev/null || [ -z "$version" ]; then
    twin fastmm-c-deb-src deb-src
    twin fastmm-c-backports-src deb-src "$codename" "$backports"
    say "running apt-get update for the source indexes"
    apt_update
    version=$(newest)
  fi
  [ -n "$version" ] || fail "apt knows no qemu source package (no deb-src entry could be written)"
  [ "$(major_of <<<"$version")" -ge "$min_major" ] ||
    fail "the newest qemu source package apt knows is $version; $min_major or later is needed"
  say "downloading Debian's qemu $version source package"
  rm -rf "$dir/dl"
  mkdir -p "$dir/dl"
  # Only the upstream tarball is used: its name, size and hash as the index gives them.
  read -r orig_name orig_hash < <(cd "$dir/dl" && apt-get source -q --print-uris "qemu=$version" |
    sed -nE "s/^'[^']*' (qemu_[^ ]*\.orig\.tar\.[a-z0-9]+) [0-9]+ SHA256:([0-9a-f]+).*/\1 \2/p" |
    head -n 1) || true
  [ -n "${orig_name:-}" ] || fail "the qemu $version source package lists no .orig tarball with a SHA256"
  # The whole package is asked for; a mirror that lacks its Debian parts still gives the tarball.
  (cd "$dir/dl" && apt-get source -q --download-only "qemu=$version" >"$dir/dl.log" 2>&1) ||
    say "apt-get source did not fetch every file of the package (see $dir/dl.log); checking the tarball"
  orig=$dir/dl/$orig_name
  [ -f "$orig" ] && [ "$(sha256sum "$orig" | cut -d ' ' -f 1)" = "$orig_hash" ] ||
    fail "$orig is missing or its SHA256 is not the index's ($dir/dl.log)"
  rm -rf "$src" "$dir/src.tmp"
  mkdir -p "$dir/src.tmp"
  tar -xf "$orig" -C "$dir/src.tmp" --strip-components=1
  [ -x "$dir/src.tmp/configure" ] || fail "$orig has no configure at its top"
  mv "$dir/src.tmp" "$src"
fi

# ---- 3. meson and pycotap --------------------------------------------------------------------
# pythondeps.toml's line: meson = { accepted = ">=1.5.0", ... }
want=$(sed -nE 's/^meson *= *\{ *accepted *= *">=([0-9.]+)".*/\1/p' "$src/pythondeps.toml" | head -n 1)
[ -n "$want" ] || fail "cannot read the meson version $src/pythondeps.toml accepts"
at_least() { [ -n "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }
py_need=()
at_least "$want" "$(meson --version 2>/dev/null || true)" || py_need+=(meson)
# Debian's python3, the one configure is given (another python3 may come first in PATH).
/usr/bin/python3 -c 'import pycotap' 2>/dev/null || py_need+=(python3-pycotap)
if [ ${#py_need[@]} -gt 0 ]; then
  opts=()
  candidate() { apt-cache policy "$@" 2>/dev/null | sed -nE 's/^ *Candidate: ([0-9]+:)?([0-9.]+).*/\2/p'; }
  if ! at_least "$want" "$(candidate meson)" || [ -z "$(candidate python3-pycotap)" ]; then
    twin fastmm-c-backports deb "$codename" "$backports"
    apt_update
    opts=(-t "$backports")
  fi
  say "installing ${py_need[*]} ${opts[*]}"
  apt_install "${opts[@]}" "${py_need[@]}" || fail "could not install ${py_need[*]} ${opts[*]}"
  at_least "$want" "$(meson --version 2>/dev/null || true)" ||
    fail "meson $(meson --version 2>/dev/null) is installed; QEMU needs $want or later"
fi

# ---- 4. configure and build ------------------------------------------------------------------
if [ ! -f "$build/build.ninja" ]; then
  rm -rf "$build"
  mkdir -p "$build"
  say "configuring in $build"
  (cd "$build" && "$src/configure" --python=/usr/bin/python3 \
    --target-list=i386-linux-user --enable-plugins --disable-system \
    --disable-tools --disable-docs --disable-werror --disable-download --disable-install-blobs \
    >"$dir/configure.log" 2>&1) || fail "configure failed: the end of $dir/configure.log:
$(tail -n 15 "$dir/configure.log")"
fi
say "building qemu-i386 and the plugins with $jobs jobs (the log: $dir/build.log)"
(cd "$build" && ninja -j "$jobs" qemu-i386 "${insn#"$build"/}" "${mem#"$build"/}" \
  "${cache#"$build"/}" >"$dir/build.log" 2>&1) || fail "the build failed: the end of $dir/build.log:
$(tail -n 15 "$dir/build.log")"

# ---- 5. hotblocks, every block reported ------------------------------------------------------
# As QEMU ships it, the plugin prints its 20 hottest blocks only.
sed -E 's/^(static guint64 limit = )20;/\11000000;/' "$src/contrib/plugins/hotblocks.c" \
  >"$dir/hotblocks.c"
grep -q 'limit = 1000000;' "$dir/hotblocks.c" ||
  fail "$src/contrib/plugins/hotblocks.c has no 'static guint64 limit = 20;' to raise"
# shellcheck disable=SC2046 # pkg-config's flags are words
gcc -O2 -shared -fPIC -I "$src/include/qemu" $(pkg-config --cflags glib-2.0) \
  -o "$hot" "$dir/hotblocks.c" || fail "could not compile $dir/hotblocks.c"

built || fail "the build ended, but $qemu or a plugin is missing, or $qemu has no -plugin option"
say "built in $dir"
print_exports
