# SPDX-License-Identifier: MIT
"""What results.json says about the machine and the tree: CPU, OS, kernel, Wine, valgrind, and
the commit ("+changes" when tracked files differ from it)."""

import os
import platform as pyplatform
import subprocess

from .paths import REPO


def machine_info():
    info = {"host": pyplatform.node(), "kernel": pyplatform.release(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    for tool, args in (("wine", ["wine", "--version"]), ("valgrind", ["valgrind", "--version"])):
        try:
            info[tool] = subprocess.run(args, capture_output=True, text=True,
                                        timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        info["commit"] = commit + ("+changes" if dirty else "")
    except OSError:
        pass
    return info
