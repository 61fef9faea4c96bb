# SPDX-License-Identifier: MIT
# What the two MinGW-w64 toolchain files share; each sets CMAKE_SYSTEM_PROCESSOR and
# FASTMM_MINGW_TRIPLE, then includes this. ctest runs the Windows test exes under Wine through
# cmake/wine-run.sh.
set(CMAKE_SYSTEM_NAME Windows)

set(CMAKE_C_COMPILER ${FASTMM_MINGW_TRIPLE}-gcc)
set(CMAKE_RC_COMPILER ${FASTMM_MINGW_TRIPLE}-windres)

# Headers and libraries from the MinGW sysroot only; programs (nasm, ...) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${FASTMM_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine-run.sh)
