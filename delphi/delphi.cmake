# SPDX-License-Identifier: MIT
# The Delphi side of fastmm-c, for the Windows builds (MinGW):
#   - borlndmm.dll, the drop-in for Delphi's ShareMem: the core's sources built a second time
#     with src/api/borlndmm.c and src/api/borlndmm.def;
#   - the Free Pascal cross compilers (scripts/build-fpc.sh, cached outside the build) and
#     fastmmc_pascal_program(), which compiles a Pascal program or library against
#     delphi/FastMMC.pas into ${CMAKE_BINARY_DIR}/pascal/, beside copies of the DLLs;
#   - the Pascal demo (delphi/demo), which scripts/demo.sh runs.
# Included by the top-level CMakeLists.txt and by tests/pascal/CMakeLists.txt (once).
#   - natively (Linux), the same fastmmc_pascal_program() with the machine's own Free Pascal
#     (/usr/bin/fpc): programs in ${CMAKE_BINARY_DIR}/pascal/ beside a copy of libfastmmc.so,
#     or with STATIC linked to lib/libfastmmc.a (cmake/static_library.cmake).
include_guard(GLOBAL)

if(MSVC OR NOT TARGET fastmmc)
  return()
endif()
if(NOT WIN32)
  include(${CMAKE_CURRENT_LIST_DIR}/native_pascal.cmake)
  return()
endif()

# ---- borlndmm.dll ------------------------------------------------------------------------
# The same C sources as fastmmc (and its NASM fast paths, if any): one self-contained DLL, so a
# ShareMem program ships borlndmm.dll alone. It exports only borlndmm.def's names: the
# fastmm_* exports are fastmmc's alone (FASTMM_BUILDING_LIBRARY is fastmmc's DEFINE_SYMBOL).
get_target_property(fastmmc_sources fastmmc SOURCES)
add_library(borlndmm SHARED ${fastmmc_sources} ${PROJECT_SOURCE_DIR}/src/api/borlndmm.c
                            ${PROJECT_SOURCE_DIR}/src/api/borlndmm.def)
target_include_directories(borlndmm PRIVATE $<TARGET_PROPERTY:fastmmc,INCLUDE_DIRECTORIES>)
add_dependencies(borlndmm fastmm_asm_layout) # the NASM fast paths include layout.inc
target_compile_definitions(borlndmm PRIVATE $<TARGET_PROPERTY:fastmmc,COMPILE_DEFINITIONS>)
target_compile_definitions(borlndmm PRIVATE $<$<COMPILE_LANGUAGE:RC>:FASTMM_RC_BORLNDMM>) # its version resource
set_target_properties(borlndmm PROPERTIES OUTPUT_NAME borlndmm PREFIX "")
target_link_options(borlndmm PRIVATE ${FASTMM_DLL_LINK_OPTIONS}) # CMakeLists.txt says why

# ---- Free Pascal -------------------------------------------------------------------------
option(FASTMM_PASCAL "Build the Pascal tests and demo with Free Pascal (scripts/build-fpc.sh)" ON)
if(NOT FASTMM_PASCAL)
  return()
endif()

execute_process(COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/build-fpc.sh --print-dir
                OUTPUT_VARIABLE FASTMMC_FPC_HOME ERROR_VARIABLE fpc_error RESULT_VARIABLE fpc_rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT fpc_rc EQUAL 0)
  message(FATAL_ERROR "Free Pascal is needed for the Pascal tests and demo: ${fpc_error}"
                      "Run scripts/install-deps.sh, or configure with -DFASTMM_PASCAL=OFF.")
endif()
set(FASTMMC_FPC_HOME "${FASTMMC_FPC_HOME}" CACHE INTERNAL "the Free Pascal toolchain folder")
set(FASTMMC_FPC "${FASTMMC_FPC_HOME}/fpc-win${FASTMM_BITS}" CACHE INTERNAL "the Free Pascal compiler")
set(FASTMMC_PASCAL_DIR "${CMAKE_BINARY_DIR}/pascal" CACHE INTERNAL "Pascal programs and their DLLs")

# Builds the toolchain when the cache has none (about 10 s, once per machine); else a no-op.
add_custom_target(fastmmc_fpc_toolchain
                  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/build-fpc.sh
                  COMMENT "Free Pascal Win32/Win64 toolchain (scripts/build-fpc.sh)" VERBATIM)

# The Pascal programs find the DLLs beside them, as a user's program would.
set(pascal_dlls ${FASTMMC_PASCAL_DIR}/fastmmc${FASTMM_BITS}.dll ${FASTMMC_PASCAL_DIR}/borlndmm.dll)
add_custom_command(OUTPUT ${pascal_dlls}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${FASTMMC_PASCAL_DIR}
                   COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:fastmmc> $<TARGET_FILE:borlndmm>
                           ${FASTMMC_PASCAL_DIR}/
                   DEPENDS fastmmc borlndmm
                   COMMENT "DLLs for the Pascal programs" VERBATIM)
add_custom_target(fastmmc_pascal_dlls ALL DEPENDS ${pascal_dlls})

# What the Pascal programs print for their platform ("test_rtl (Win64): ..."), and
# fastmmc_pascal_program() (delphi/pascal_program.cmake).
set(FASTMMC_PASCAL_PLATFORM "Win${FASTMM_BITS}")
include(${CMAKE_CURRENT_LIST_DIR}/pascal_program.cmake)

# ---- The Pascal demo ---------------------------------------------------------------------
# One workload, built twice: with FastMMC first in its uses clause, and on Free Pascal's own
# heap. delphi/demo/compare.sh runs them in turns and prints the comparison.
fastmmc_pascal_program(fastmmc_pascal_demo_dll SOURCE ${PROJECT_SOURCE_DIR}/delphi/demo/StringsAndObjects.pas
                       OUTPUT_NAME demo_fastmmc DEFINES USE_FASTMMC)
fastmmc_pascal_program(fastmmc_pascal_demo_fpc SOURCE ${PROJECT_SOURCE_DIR}/delphi/demo/StringsAndObjects.pas
                       OUTPUT_NAME demo_fpcheap)
add_custom_target(fastmmc_pascal_demo)
add_dependencies(fastmmc_pascal_demo fastmmc_pascal_demo_dll fastmmc_pascal_demo_fpc)
