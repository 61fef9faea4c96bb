# SPDX-License-Identifier: MIT
# Cross build of fastmmc64.dll with MinGW-w64 GCC (Debian: gcc-mingw-w64-x86-64).
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(FASTMM_MINGW_TRIPLE x86_64-w64-mingw32)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw-common.cmake)
