# SPDX-License-Identifier: MIT
"""The two ways a benchmark run goes wrong."""


class BenchError(Exception):
    """The run cannot go on (a bad targets.conf, a CPU pinning that did not take, nothing to
    run): bench/run prints it and exits with status 2."""


class RunFailed(Exception):
    """One process failed (exit status, no JSON line, timeout): it is run once more, and a
    second failure marks that allocator failed for that workload."""
