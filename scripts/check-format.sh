#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that every C file in the repository is formatted with its .clang-format (the files git
# tracks: generated sources are never committed). Prints the offending lines and exits non-zero
# when one is not; `clang-format -i FILE` fixes it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || {
  echo "check-format: clang-format is not installed: run scripts/install-deps.sh" >&2
  exit 1
}
n=$(git ls-files '*.c' '*.h' | wc -l)
if git ls-files -z '*.c' '*.h' | xargs -0 clang-format --dry-run --Werror; then
  echo "check-format: $n C files formatted ($(clang-format --version | sed 's/.*version //'))"
else
  echo "check-format: the files above are not formatted: clang-format -i FILE" >&2
  exit 1
fi
