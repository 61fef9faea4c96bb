# SPDX-License-Identifier: MIT
# The DLLs' version resource: src/api/version.rc.in with the version written in.
#
#   include(cmake/version_resource.cmake)
#   fastmm_write_version_rc(<version> <output .rc>)
#   fastmm_split_version(<version> <prefix>)    (also used by cmake/check_version.cmake)
#
# The top-level CMakeLists.txt writes build/<preset>/rc/version.rc for the MinGW builds; the
# Visual Studio project compiles msvc/version.rc, the same output kept in the tree, which
# cmake/check_sln.cmake compares with what this function writes. After a version change:
#   cmake -DVERSION=<version> -DOUTPUT=msvc/version.rc -P cmake/version_resource.cmake

# fastmm_split_version(<version> <prefix>): sets <prefix>_MAJOR, _MINOR and _PATCH of a
# MAJOR.MINOR.PATCH version, or stops.
macro(fastmm_split_version version prefix)
  if(NOT "${version}" MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "'${version}' is not a MAJOR.MINOR.PATCH version")
  endif()
  set(${prefix}_MAJOR ${CMAKE_MATCH_1})
  set(${prefix}_MINOR ${CMAKE_MATCH_2})
  set(${prefix}_PATCH ${CMAKE_MATCH_3})
endmacro()

function(fastmm_write_version_rc version output)
  fastmm_split_version("${version}" PROJECT_VERSION)
  set(PROJECT_VERSION ${version})
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../src/api/version.rc.in ${output} @ONLY
                 NEWLINE_STYLE UNIX)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED VERSION AND DEFINED OUTPUT)
  fastmm_write_version_rc(${VERSION} ${OUTPUT})
endif()
