#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/apt-source-twins.sh on fixtures (FASTMM_APT_ETC): the deb-src twins that
# fetch-peer-mimalloc.sh writes and the backports twins that setup-win32-emulation.sh writes,
# byte for byte, from deb822 stanzas and one-line entries with options, comments, a disabled
# stanza, a deb-src line and a file of our own among them; no file for a release no entry names
# (status 1); status 2 and no twin claimed when the file cannot be written.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/apt-source-twins.sh
. "$repo/scripts/apt-source-twins.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
check() { # WHAT EXPECTED-FILE ACTUAL-FILE
  if ! diff -u "$2" "$3" >"$work/diff"; then
    echo "FAILED: $1"
    cat "$work/diff"
    failed=1
  fi
}
expect_status() { # WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    echo "FAILED: $1: status $3, expected $2"
    failed=1
  fi
}

export FASTMM_APT_ETC=$work/etc
mkdir -p "$FASTMM_APT_ETC/sources.list.d"
cat >"$FASTMM_APT_ETC/sources.list" <<'EOF'
# deb http://example.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://example.invalid/debian bookworm main contrib
  deb http://example.invalid/debian-security bookworm-security main
deb-src http://example.invalid/debian bookworm main
EOF
cat >"$FASTMM_APT_ETC/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://example.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# security
Types: deb deb-src
URIs: http://example.invalid/debian-security
Suites: bookworm-security
Components: main

Enabled: no
Types: deb
URIs: http://example.invalid/off
Suites: bookworm
Components: main
EOF
cat >"$FASTMM_APT_ETC/sources.list.d/fastmm-c-other.sources" <<'EOF'
Types: deb
URIs: http://example.invalid/ours
Suites: bookworm
Components: main
EOF
d=$FASTMM_APT_ETC/sources.list.d

# ---- deb-src twins of every deb entry ----
status=0
apt_source_twins fastmm-c-deb-src writer.sh "for a test" deb-src >"$work/out" || status=$?
expect_status "deb-src twins" 0 "$status"
printf '%s\n' "$d/fastmm-c-deb-src.sources" "$d/fastmm-c-deb-src.list" >"$work/want"
check "deb-src twins: the files named" "$work/want" "$work/out"
cat >"$work/want" <<'EOF'
# Written by fastmm-c's writer.sh: the deb-src twins of this machine's own
# package sources, for a test. Safe to remove.
Types: deb-src
URIs: http://example.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://example.invalid/debian-security
Suites: bookworm-security
Components: main

EOF
check "deb-src twins: deb822" "$work/want" "$d/fastmm-c-deb-src.sources"
cat >"$work/want" <<'EOF'
# Written by fastmm-c's writer.sh: the deb-src twins of this machine's own
# package sources, for a test. Safe to remove.
deb-src [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://example.invalid/debian bookworm main contrib
deb-src http://example.invalid/debian-security bookworm-security main
EOF
check "deb-src twins: one-line" "$work/want" "$d/fastmm-c-deb-src.list"
rm -f "$d"/fastmm-c-deb-src.*

# ---- backports twins of the entries naming the release ----
status=0
apt_source_twins fastmm-c-backports writer.sh "for a test" deb bookworm bookworm-backports \
  >"$work/out" || status=$?
expect_status "backports twins" 0 "$status"
cat >"$work/want" <<'EOF'
# Written by fastmm-c's writer.sh: the deb twins of this machine's own
# package sources (suite bookworm as bookworm-backports), for a test. Safe to remove.
Types: deb
URIs: http://example.invalid/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

EOF
check "backports twins: deb822" "$work/want" "$d/fastmm-c-backports.sources"
cat >"$work/want" <<'EOF'
# Written by fastmm-c's writer.sh: the deb twins of this machine's own
# package sources (suite bookworm as bookworm-backports), for a test. Safe to remove.
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://example.invalid/debian bookworm-backports main contrib
EOF
check "backports twins: one-line" "$work/want" "$d/fastmm-c-backports.list"

# ---- a release no entry names ----
status=0
apt_source_twins fastmm-c-none writer.sh "for a test" deb trixie trixie-backports \
  >"$work/out" 2>&1 || status=$?
expect_status "no entry names trixie" 1 "$status"
if [ -s "$work/out" ] || ls "$d"/fastmm-c-none.* >/dev/null 2>&1; then
  echo "FAILED: no entry names trixie, yet something was written or said: $(cat "$work/out")"
  failed=1
fi

# ---- a file that cannot be written (a directory stands where it would go) ----
mkdir "$d/fastmm-c-blocked.sources"
status=0
apt_source_twins fastmm-c-blocked writer.sh "for a test" deb-src >"$work/out" 2>"$work/err" ||
  status=$?
expect_status "an unwritable file" 2 "$status"
if [ -s "$work/out" ] || ! grep -q "cannot write $d/fastmm-c-blocked.sources" "$work/err"; then
  echo "FAILED: an unwritable file: said '$(cat "$work/out")', reported '$(cat "$work/err")'"
  failed=1
fi

if [ $failed = 0 ]; then
  echo "test_apt_source_twins: all checks passed"
fi
exit $failed
