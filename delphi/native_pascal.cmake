# SPDX-License-Identifier: MIT
# Free Pascal natively (x86_64-linux): the machine's own compiler builds the Pascal tests against
# delphi/FastMMC.pas, and they run as they are, with no emulator. Included by delphi/delphi.cmake
# on a native build. Two ways for a program to have the library:
#   - loaded: libfastmmc.so copied beside the programs in ${CMAKE_BINARY_DIR}/pascal/ (FastMMC
#     dlopens it from its own module's folder first, then from the library path);
#   - linked in (STATIC): -dFASTMMC_STATIC, with lib/libfastmmc.a on the object path, so the
#     program needs no libfastmmc.so.
option(FASTMM_PASCAL "Build the Pascal tests with the machine's Free Pascal (fpc)" ON)
if(NOT FASTMM_PASCAL)
  return()
endif()
# A sanitizer build's library needs the sanitizer's runtime, which a Free Pascal program neither
# links nor loads first: the Pascal tests run in the plain native preset.
if(FASTMM_SANITIZE)
  message(STATUS "Pascal tests: not built with sanitizers (FASTMM_SANITIZE=${FASTMM_SANITIZE})")
  return()
endif()
find_program(FASTMMC_FPC NAMES fpc)
if(NOT FASTMMC_FPC OR NOT TARGET fastmmc_static)
  message(STATUS "Pascal tests: no native Free Pascal (fpc) found, or no libfastmmc.a; not built")
  return()
endif()
set(FASTMMC_PASCAL_DIR "${CMAKE_BINARY_DIR}/pascal" CACHE INTERNAL "Pascal programs and their library")
# What the Pascal programs print for their platform ("test_rtl (Linux64): ...").
set(FASTMMC_PASCAL_PLATFORM "Linux${FASTMM_BITS}")

set(pascal_so ${FASTMMC_PASCAL_DIR}/libfastmmc.so)
add_custom_command(OUTPUT ${pascal_so}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${FASTMMC_PASCAL_DIR}
                   COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:fastmmc> ${FASTMMC_PASCAL_DIR}/
                   DEPENDS fastmmc
                   COMMENT "libfastmmc.so for the Pascal programs" VERBATIM)
add_custom_target(fastmmc_pascal_dlls ALL DEPENDS ${pascal_so})
add_custom_target(fastmmc_fpc_toolchain) # the machine's compiler: nothing to build

include(${CMAKE_CURRENT_LIST_DIR}/pascal_program.cmake) # fastmmc_pascal_program()
