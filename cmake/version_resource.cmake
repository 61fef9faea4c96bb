# SPDX-License-Identifier: MIT
# The DLLs' version resource: src/api/version.rc.in with the version written in.
#
#   include(cmake/version_resource.cmake)
#   fastmm_write_version_rc(<version> <output .rc>)
#
# The top-level CMakeLists.txt writes build/<preset>/rc/version.rc for the MinGW builds; the
# Visual Studio project compiles msvc/version.rc, the same output kept in the tree, which
# cmake/check_sln.cmake compares with what this function writes. After a version change:
#   cmake -DVERSION=<version> -DOUTPUT=msvc/version.rc -P cmake/version_resource.cmake
function(fastmm_write_version_rc version output)
  if(NOT version MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "fastmm_write_version_rc: '${version}' is not MAJOR.MINOR.PATCH")
  endif()
  set(PROJECT_VERSION ${version})
  set(PROJECT_VERSION_MAJOR ${CMAKE_MATCH_1})
  set(PROJECT_VERSION_MINOR ${CMAKE_MATCH_2})
  set(PROJECT_VERSION_PATCH ${CMAKE_MATCH_3})
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/api/version.rc.in ${output} @ONLY
                 NEWLINE_STYLE UNIX)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED VERSION AND DEFINED OUTPUT)
  fastmm_write_version_rc(${VERSION} ${OUTPUT})
endif()
