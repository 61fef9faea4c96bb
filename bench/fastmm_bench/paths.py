# SPDX-License-Identifier: MIT
"""Where the repository's files are: the package lives in <repo>/bench/fastmm_bench/."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench")
TARGETS_CONF = os.path.join(BENCH, "targets.conf")
WINE_RUN = os.path.join(REPO, "cmake", "wine-run.sh")
RESULTS = os.path.join(REPO, "build", "bench", "results")
CALLGRIND_CACHE = os.path.join(REPO, "build", "bench", "callgrind-cache.json")
