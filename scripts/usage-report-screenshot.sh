#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes docs/usage-report.png, the README's picture of the usage report: the C demo
# (demo/demo.c, native build) writes the page while its four threads hold their blocks, and
# Debian's chromium, headless, renders it. Installs chromium first if it is missing
# (scripts/install-deps.sh with FASTMM_INSTALL_CHROMIUM=1). Prints the commit and date to name
# with the picture.
#
#   bash scripts/usage-report-screenshot.sh [width height]    # 1180 x 1500 pixels by default
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FASTMM_INSTALL_CHROMIUM=1 bash scripts/install-deps.sh
width=${1:-1180}
height=${2:-1500}
out=build/usage-report
mkdir -p "$out" docs
cmake --preset native >"$out/build.log" 2>&1
cmake --build --preset native --target fastmm_demo >>"$out/build.log" 2>&1
build/native/bin/fastmm_demo --usage-report "$out/usage-report.html"
# The flags that keep headless chromium off the network (a closed machine refuses it anyway) and
# out of the user's profile.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile" --window-size="$width,$height" \
  --screenshot="$PWD/docs/usage-report.png" "file://$PWD/$out/usage-report.html" \
  >"$out/chromium.log" 2>&1
echo "docs/usage-report.png: ${width}x${height}, commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)'), $(date -u +%Y-%m-%d)"
