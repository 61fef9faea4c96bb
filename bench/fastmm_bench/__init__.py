# SPDX-License-Identifier: MIT
"""fastmm-c's benchmark driver, run as bench/run (the method is in bench/README.md).

For every platform (win32 and win64 under Wine, native Linux, mimalloc-bench's programs
natively), every workload and every baseline
allocator of bench/targets.conf, it measures fastmm-c (the candidate) against the baseline as
the seed review did: warmup rounds, then N alternating baseline/candidate process pairs, each
process pinned to a CPU, the gain of each pair (baseline time / candidate time - 1) * 100, their
median and a deterministic 10,000-resample bootstrap 95% interval of that median. Natively it
adds callgrind's instruction counts. It writes results.json, results.md, chart.png and runs.jsonl
to a results folder and prints that folder's path as its last line.

The modules, in the order a run uses them:
  cli          the command line, the modes, and the run from start to end
  paths        where the repository's files are
  workloads    the workloads bench/run knows (they must match `fastmm_bench --list`)
  targets      bench/targets.conf: the allocators of each platform
  programs     the fastmm_bench programs: snapshot copies, commands, environments, Wine's server
  suite_programs, suite
               the native-suite platform: mimalloc-bench's programs, their build with its own
               CMakeLists.txt, their runs by LD_PRELOAD under /usr/bin/time, the output check
  runner       one pinned process, and the rounds of alternating baseline/candidate pairs
  processes    waiting for one process, with its time limit
  callgrind    instruction counts of the timed region (native)
  stats        the statistics of paired runs: gains, medians, the bootstrap interval
  comparisons  one record of results.json per baseline/candidate comparison
  machine      what the results say about the machine
  progress     the progress bar
  report       the issue's targets, the tables (terminal, Markdown) and results.json
  chart        chart.png (matplotlib)

Python 3 standard library, plus Debian's python3-matplotlib for the chart.
"""
