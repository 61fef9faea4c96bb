# SPDX-License-Identifier: MIT
# Checks that every place that states fastmm-c's version states the CMake project's:
#   include/fastmm.h     FASTMM_VERSION_MAJOR, _MINOR, _PATCH and FASTMM_VERSION_STRING
#   delphi/FastMMC.pas   CFastMMC_Version
#   CHANGELOG.md         its newest entry (the first "## [x.y.z]" heading)
#   tests/consumer/CMakeLists.txt   find_package(fastmmc MAJOR.MINOR): the package accepts the
#                        same minor version only (0.x), so the package tests need the current one
# (the DLLs' version resource is written from the project's version; msvc/version.rc is checked
# by cmake/check_sln.cmake). Run by the version_matches test:
#   cmake -DREPO=<repository root> -DVERSION=<project version> -P cmake/check_version.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED REPO)
  set(REPO "${CMAKE_CURRENT_LIST_DIR}/..")
endif()
get_filename_component(REPO "${REPO}" ABSOLUTE)
include("${REPO}/cmake/version_resource.cmake")
fastmm_split_version("${VERSION}" want)

set(problems "")
macro(problem text)
  string(APPEND problems "  - ${text}\n")
endmacro()

# The value of `#define NAME value` in fastmm.h, or empty.
file(READ "${REPO}/include/fastmm.h" header)
foreach(part IN ITEMS MAJOR MINOR PATCH STRING)
  if(header MATCHES "\n#define FASTMM_VERSION_${part}[ \t]+([^ \t\n]+)")
    set(have "${CMAKE_MATCH_1}")
  else()
    set(have "")
  endif()
  if(part STREQUAL "STRING")
    set(want "\"${VERSION}\"")
  else()
    set(want "${want_${part}}")
  endif()
  if(NOT have STREQUAL want)
    problem("include/fastmm.h: FASTMM_VERSION_${part} is '${have}', expected ${want}")
  endif()
endforeach()

file(READ "${REPO}/delphi/FastMMC.pas" unit)
if(NOT unit MATCHES "\n[ \t]*CFastMMC_Version[ \t]*=[ \t]*'([^']*)'")
  problem("delphi/FastMMC.pas: no CFastMMC_Version = '...' constant")
elseif(NOT CMAKE_MATCH_1 STREQUAL VERSION)
  problem("delphi/FastMMC.pas: CFastMMC_Version is '${CMAKE_MATCH_1}', expected '${VERSION}'")
endif()

file(READ "${REPO}/tests/consumer/CMakeLists.txt" consumer)
if(NOT consumer MATCHES "\nfind_package\\(fastmmc ([0-9.]+) ")
  problem("tests/consumer/CMakeLists.txt: no find_package(fastmmc <version> ...)")
elseif(NOT CMAKE_MATCH_1 STREQUAL "${want_MAJOR}.${want_MINOR}")
  problem("tests/consumer/CMakeLists.txt: find_package(fastmmc ${CMAKE_MATCH_1}), expected ${want_MAJOR}.${want_MINOR}")
endif()

if(NOT EXISTS "${REPO}/CHANGELOG.md")
  problem("CHANGELOG.md is missing")
else()
  file(READ "${REPO}/CHANGELOG.md" changelog)
  if(NOT changelog MATCHES "\n## \\[([^]\n]*)\\]")
    problem("CHANGELOG.md has no \"## [x.y.z]\" entry")
  elseif(NOT CMAKE_MATCH_1 STREQUAL VERSION)
    problem("CHANGELOG.md: the newest entry is ${CMAKE_MATCH_1}, expected ${VERSION}")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "check_version: not every place says version ${VERSION}:\n${problems}")
endif()
message(STATUS "check_version: fastmm.h, FastMMC.pas, CHANGELOG.md and the package consumer say ${VERSION}")
