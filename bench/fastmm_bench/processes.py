# SPDX-License-Identifier: MIT
"""Waiting for a benchmark process: its output, or RunFailed when it outlives its time."""

import subprocess

from .errors import RunFailed


def finish(proc, timeout):
    """(stdout, stderr) of `proc` as text once it ended; killed and RunFailed after `timeout` s."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RunFailed("timed out after %d s" % timeout)
    return out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
