# Cross build of fastmmc32.dll with MinGW-w64 GCC (Debian: gcc-mingw-w64-i686).
# ctest runs the Windows test exes under Wine through cmake/wine-run.sh.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86)

set(FASTMM_MINGW_TRIPLE i686-w64-mingw32)
set(CMAKE_C_COMPILER ${FASTMM_MINGW_TRIPLE}-gcc)
set(CMAKE_RC_COMPILER ${FASTMM_MINGW_TRIPLE}-windres)

# Headers and libraries from the MinGW sysroot only; programs (nasm, ...) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${FASTMM_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/wine-run.sh)
