# SPDX-License-Identifier: MIT
# Cross build of fastmmc32.dll with MinGW-w64 GCC (Debian: gcc-mingw-w64-i686).
set(CMAKE_SYSTEM_PROCESSOR x86)
set(FASTMM_MINGW_TRIPLE i686-w64-mingw32)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw-common.cmake)
