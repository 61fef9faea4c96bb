# SPDX-License-Identifier: MIT
# The one list of fastmm-c's source files, as paths relative to the repository root.
#
# CMakeLists.txt builds from these lists, and cmake/check_sln.cmake (the sln_matches_cmake
# test) checks that msvc/fastmmc.vcxproj lists the same files. A file added here must be
# added to the Visual Studio project too, and the other way round.

# Portable C, one list per layer of src/ (ARCHITECTURE.md, "Layers"; the link_layers test reads
# their objects): prim < core < modes < entry < api.
# The core: the allocator with no mode, no OS call of its own and no call above it.
set(FASTMM_CORE_SOURCES
  src/core/heap.c
  src/core/realloc.c
  src/core/size_class.c
  src/core/small.c
  src/core/medium.c
  src/core/large.c
  src/core/idle_clock.c
  src/core/region_handover.c
  src/core/release.c
  src/core/thread_cache.c
  src/core/page_map.c
  src/core/span_record.c
  src/core/os_memory.c
  src/core/stats.c
  src/core/heap_check.c
  src/core/expected_leaks.c
  src/core/aligned.c
  src/core/arena.c
  src/core/walk.c
  src/core/contention.c
  src/core/lock.c
  src/core/fork_locks.c
)
# The modes: debug mode, the erase modes, scan before every operation, and the mode gate.
set(FASTMM_MODES_SOURCES
  src/modes/gate.c
  src/modes/mode_paths.c
  src/modes/switches.c
  src/modes/debug_settings.c
  src/modes/stack_trace.c
  src/modes/debug_registry.c
  src/modes/debug_block.c
  src/modes/delphi_class.c
  src/modes/debug_report.c
  src/modes/debug_walk.c
)
# The reports: formatted output built from what the modes and the core record.
set(FASTMM_REPORT_SOURCES
  src/report/sym_table.c
  src/report/pe_symbols.c
  src/report/map_reader.c
  src/report/symbolize.c
  src/report/stack_text.c
  src/report/text.c
  src/report/event_log.c
  src/report/debug_text.c
  src/report/usage_report.c
  src/report/debug_sections.c
  src/report/dwarf_store.c
  src/report/dwarf_form.c
  src/report/dwarf_abbrev.c
  src/report/dwarf_line.c
  src/report/dwarf_info.c
  src/report/dwarf_reader.c
)
# The entry: the fast paths' slow-path dispatch (a mode on, or the core's normal path) and the
# start-up.
set(FASTMM_ENTRY_SOURCES
  src/entry/dispatch.c
  src/entry/startup.c
)
# The exports.
set(FASTMM_API_SOURCES
  src/api/memory.c
  src/api/state.c
  src/api/debug_mode.c
  src/api/delphi_api.c
  src/api/walk.c
  src/api/tuning.c
  src/api/fpc_api.c
  src/api/pascal_router.c
)
# The C library's malloc, free, realloc... served by the manager: natively only, in a library of
# its own (libfastmmc-malloc.so: cmake/malloc_library.cmake), not in the DLLs nor libfastmmc.so.
set(FASTMM_MALLOC_SOURCES
  src/api/malloc_api.c
)
# Every portable C file of the library, lowest layer first.
set(FASTMM_LIBRARY_C_SOURCES ${FASTMM_CORE_SOURCES} ${FASTMM_MODES_SOURCES}
    ${FASTMM_REPORT_SOURCES} ${FASTMM_ENTRY_SOURCES} ${FASTMM_API_SOURCES})

# The OS layer: one of these is built, by target.
set(FASTMM_WINDOWS_SOURCES
  src/prim/prim_windows.c
)
set(FASTMM_POSIX_SOURCES
  src/prim/prim_posix.c
)

# Delphi `register`-convention thunks for the Win32 DLL, in NASM syntax. Only MSVC builds use
# them (MSVC has no regparm); MinGW builds get the same convention from
# __attribute__((regparm(3))). The MinGW Win32 build assembles this file into an object that
# it does not link, so a syntax error shows up here too.
set(FASTMM_WIN32_MSVC_ASM src/win32/delphi_register_thunks.asm)

# Assembly fast paths linked into the DLLs (NASM syntax): ReallocMem's in-place small-block
# path. They include layout.inc, which the build makes from the C headers (src/asm_shared/layout.c).
# Builds with FASTMM_PURE_C=ON leave them out. Files listed here belong in the Visual Studio
# project too (Win32-only or x64-only items), which check_sln.cmake checks.
set(FASTMM_WIN32_ASM_SOURCES src/win32/realloc_fast.asm)
set(FASTMM_WIN64_ASM_SOURCES src/win64/realloc_fast.asm)
