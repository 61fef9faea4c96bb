# SPDX-License-Identifier: MIT
# The Delphi side of fastmm-c, for the Windows builds (MinGW):
#   - borlndmm.dll, the drop-in for Delphi's ShareMem: the core's sources built a second time
#     with src/api/borlndmm.c and src/api/borlndmm.def;
#   - the Free Pascal cross compilers (scripts/build-fpc.sh, cached outside the build) and
#     fastmmc_pascal_program(), which compiles a Pascal program or library against
#     delphi/FastMMC.pas into ${CMAKE_BINARY_DIR}/pascal/, beside copies of the DLLs;
#   - the Pascal demo (delphi/demo), which scripts/demo.sh runs.
# Included by the top-level CMakeLists.txt and by tests/pascal/CMakeLists.txt (once).
include_guard(GLOBAL)

if(NOT WIN32 OR MSVC OR NOT TARGET fastmmc)
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

# fastmmc_pascal_program(<target> SOURCE <file.pas> [LIBRARY] [MODE delphi|objfpc]
#                        [OUTPUT_NAME <name>] [DEFINES <d>...] [OPTIONS <fpc option>...]
#                        [DEPENDS <file>...])
# Compiles a program (or, with LIBRARY, a library) for this build's target into
# ${FASTMMC_PASCAL_DIR}/<name>.exe (.dll). Units are found in delphi/ and beside the source;
# each target compiles them into a folder of its own, so targets build in parallel. Warnings
# are errors (-Sew). Sets the target's FASTMMC_OUTPUT property to the file made.
function(fastmmc_pascal_program target)
  cmake_parse_arguments(P "LIBRARY" "SOURCE;MODE;OUTPUT_NAME" "DEFINES;OPTIONS;DEPENDS" ${ARGN})
  if(NOT P_SOURCE)
    message(FATAL_ERROR "fastmmc_pascal_program(${target}): SOURCE is missing")
  endif()
  if(NOT P_MODE)
    set(P_MODE delphi)
  endif()
  if(NOT P_OUTPUT_NAME)
    set(P_OUTPUT_NAME ${target})
  endif()
  if(P_LIBRARY)
    set(file ${P_OUTPUT_NAME}.dll)
  else()
    set(file ${P_OUTPUT_NAME}.exe)
  endif()
  get_filename_component(src "${P_SOURCE}" ABSOLUTE)
  get_filename_component(src_dir "${src}" DIRECTORY)
  file(GLOB units ${src_dir}/*.pas ${src_dir}/*.inc ${PROJECT_SOURCE_DIR}/delphi/*.pas ${PROJECT_SOURCE_DIR}/delphi/*.inc)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/fpc-units/${target})
  set(defines "")
  foreach(d IN LISTS P_DEFINES)
    list(APPEND defines -d${d})
  endforeach()
  add_custom_command(
    OUTPUT ${FASTMMC_PASCAL_DIR}/${file}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${obj} ${FASTMMC_PASCAL_DIR}
    COMMAND ${FASTMMC_FPC} -M${P_MODE} -O2 -vew -Sew -Fu${PROJECT_SOURCE_DIR}/delphi -Fu${src_dir}
            -Fi${src_dir} -FU${obj} -FE${FASTMMC_PASCAL_DIR} -o${file} ${defines} ${P_OPTIONS}
            ${src}
    # No file of the toolchain among the dependencies: on a fresh machine it does not exist until
    # fastmmc_fpc_toolchain has run, and ninja refuses a missing input no rule makes. A new
    # toolchain (another compiler or recipe) is another folder, so the command above changes and
    # every program is built again anyway.
    DEPENDS ${src} ${units} ${P_DEPENDS}
    COMMENT "Free Pascal (Win${FASTMM_BITS}): pascal/${file}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${FASTMMC_PASCAL_DIR}/${file})
  add_dependencies(${target} fastmmc_fpc_toolchain fastmmc_pascal_dlls)
  set_property(TARGET ${target} PROPERTY FASTMMC_OUTPUT ${FASTMMC_PASCAL_DIR}/${file})
endfunction()

# ---- The Pascal demo ---------------------------------------------------------------------
# One workload, built twice: with FastMMC first in its uses clause, and on Free Pascal's own
# heap. delphi/demo/compare.sh runs them in turns and prints the comparison.
fastmmc_pascal_program(fastmmc_pascal_demo_dll SOURCE ${PROJECT_SOURCE_DIR}/delphi/demo/StringsAndObjects.pas
                       OUTPUT_NAME demo_fastmmc DEFINES USE_FASTMMC)
fastmmc_pascal_program(fastmmc_pascal_demo_fpc SOURCE ${PROJECT_SOURCE_DIR}/delphi/demo/StringsAndObjects.pas
                       OUTPUT_NAME demo_fpcheap)
add_custom_target(fastmmc_pascal_demo)
add_dependencies(fastmmc_pascal_demo fastmmc_pascal_demo_dll fastmmc_pascal_demo_fpc)
