# SPDX-License-Identifier: MIT
# check_peak_memory.cmake: the benchmark's peak-memory figure is a peak. Runs fastmm_bench's
# `mixed` workload (about 100 MB live at its height, all of it freed at the end) with an
# allocator that gives large blocks back to the OS, and checks from the program's JSON line:
#   - the peak above the base covers at least 80% of the workload's peak live bytes (the peak
#     saw the workload's memory: every page of every block is written);
#   - the memory at the end is below the peak by at least half the peak live bytes (the figure
#     fell when the memory was given back, and the peak did not follow it).
# Under Wine, PROCESS_MEMORY_COUNTERS.PeakPagefileUsage equals PagefileUsage (Wine 8), so a
# program that reported it as the peak fails the second check; bench_main.c reports the peak
# working set there instead.
#
#   cmake -DEXE=fastmm_bench[.exe] [-DEMULATOR=wine-run.sh] -DALLOC=heap|malloc -P check_peak_memory.cmake
foreach(var EXE ALLOC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_peak_memory: -D${var}=... is required")
  endif()
endforeach()

execute_process(
  COMMAND ${EMULATOR} ${EXE} --workload mixed --alloc ${ALLOC} --scale 0.05
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fastmm_bench failed (${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCH "{[^\n]*}" json "${out}")
if(NOT json)
  message(FATAL_ERROR "fastmm_bench printed no JSON line:\n${out}")
endif()
foreach(field mem_kind peak_mem base_mem end_mem peak_live)
  string(JSON ${field} GET "${json}" ${field})
endforeach()
message(STATUS "${mem_kind}: base ${base_mem}, peak ${peak_mem}, end ${end_mem}; "
               "the workload's peak live bytes ${peak_live}")

math(EXPR above_base "${peak_mem} - ${base_mem}")
math(EXPR fallen "${peak_mem} - ${end_mem}")
math(EXPR need_above "${peak_live} * 8 / 10")
math(EXPR need_fallen "${peak_live} / 2")
if(above_base LESS need_above)
  message(FATAL_ERROR "the ${mem_kind} figure rose by ${above_base} bytes over the base, less "
                      "than 80% of the workload's ${peak_live} live bytes: it missed the peak")
endif()
if(fallen LESS need_fallen)
  message(FATAL_ERROR "the ${mem_kind} figure at the end (${end_mem}) is within ${fallen} bytes "
                      "of the peak (${peak_mem}) after the workload freed ${peak_live} bytes: "
                      "the peak is not a peak (or the memory was not given back)")
endif()
