#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fetch-peer-mimalloc.sh: puts Debian's source of mimalloc, with our MinGW patch applied, in a
# folder outside the tree, for bench/peers/build.sh to build for Win32 and Win64
# (bench/peers/README.md says why and what the patch changes).
#
#   bash scripts/fetch-peer-mimalloc.sh          # prints the source folder it made or found
#
# The folder: ${FASTMM_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/peers}/mimalloc.
# Nothing is done when it is there with this patch applied. Otherwise:
# 1. apt needs a deb-src entry. When no source index names mimalloc, one is written, derived
#    from this machine's own package sources (the same URIs, suites, components and key, type
#    deb-src), to /etc/apt/sources.list.d/fastmm-c-deb-src.sources (root, or sudo), and
#    `apt-get update` is run once.
# 2. `apt-get source mimalloc` downloads and unpacks Debian's package into the folder (with
#    Debian's own patches applied by dpkg-source; without dpkg-dev the upstream tarball is
#    unpacked instead).
# 3. bench/peers/mimalloc-mingw.patch is applied.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
patch_file=$repo/bench/peers/mimalloc-mingw.patch
peers=${FASTMM_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/peers}
dest=$peers/mimalloc
say() { echo "fetch-peer-mimalloc: $*" >&2; }
die() {
  say "$*"
  exit 1
}

stamp=$(sha256sum "$patch_file" | cut -d' ' -f1)
if [ -f "$dest/.fastmm-c-patch" ] && [ "$(cat "$dest/.fastmm-c-patch")" = "$stamp" ]; then
  echo "$dest"
  exit 0
fi
command -v apt-get >/dev/null || die "no apt-get: give bench/run --peer-source mimalloc=DIR instead"
SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

# ---- 1. A deb-src entry ----------------------------------------------------------------
has_source_index() { apt-get source --print-uris -q mimalloc 2>/dev/null | grep -q "\.dsc'"; }
if ! has_source_index; then
  # Every deb entry of this machine's sources, as a deb-src entry (scripts/apt-source-twins.sh).
  . "$repo/scripts/apt-source-twins.sh"
  rc=0
  wrote=$(apt_source_twins fastmm-c-deb-src scripts/fetch-peer-mimalloc.sh \
    "for apt-get source mimalloc" deb-src) || rc=$?
  [ $rc != 1 ] || die "no deb entry in this machine's apt sources to derive a deb-src entry from"
  [ $rc = 0 ] || die "could not write the deb-src entry (root, or sudo, is needed once)"
  say "wrote ${wrote//$'\n'/ } (deb-src, from this machine's own sources); running apt-get update"
  # A failing index (a mirror in sync) is not fatal when the one that has mimalloc came.
  $SUDO apt-get update -q >&2 || say "apt-get update reported an error; going on with the indexes it got"
  has_source_index || die "apt still finds no source package of mimalloc"
fi

# ---- 2. apt-get source -----------------------------------------------------------------
work=$(mktemp -d "$peers.fetch.XXXXXX" 2>/dev/null || { mkdir -p "$peers" && mktemp -d "$peers.fetch.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
if command -v dpkg-source >/dev/null; then
  (cd "$work" && apt-get source -q mimalloc >&2)
else
  say "no dpkg-source (dpkg-dev): unpacking the upstream tarball without Debian's patches"
  (cd "$work" && apt-get source -q --download-only mimalloc >&2)
  orig=$(ls "$work"/mimalloc_*.orig.tar.* | head -n 1)
  mkdir "$work/mimalloc-src"
  tar -xf "$orig" -C "$work/mimalloc-src" --strip-components=1
fi
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$src/src/prim/windows/prim.c" ] || [ -f "$src/src/os.c" ] || die "the source package has no mimalloc tree: $src"
version=$(ls "$work" | sed -nE 's/^mimalloc_(.*)\.dsc$/\1/p')

# ---- 3. Our patch ------------------------------------------------------------------------
patch -d "$src" -p1 --forward --quiet <"$patch_file" >&2 ||
  die "bench/peers/mimalloc-mingw.patch does not apply to Debian's mimalloc ${version:-?}"
echo "${version:-unknown}" >"$src/.fastmm-c-debian-version"
echo "$stamp" >"$src/.fastmm-c-patch"
mkdir -p "$peers"
rm -rf "$dest"
mv "$src" "$dest"
say "mimalloc ${version:-?} (Debian's source, our patch applied) in $dest"
echo "$dest"
