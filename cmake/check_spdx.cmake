# SPDX-License-Identifier: MIT
# Checks that LICENSE is there and that every source file of the project starts with its licence
# line, on the first line or on the second after a shebang:
#
#   C, headers, .rc, .rc.in               /* SPDX-License-Identifier: MIT */
#   NASM (.asm, src/asm_shared/*.inc), .def      ; SPDX-License-Identifier: MIT
#   Pascal (.pas .pp .dpr .lpr .inc)      { SPDX-License-Identifier: MIT }
#   CMake, shell, Python, other scripts   # SPDX-License-Identifier: MIT
#
# The files are the ones git tracks (a fresh clone has exactly those); outside a git tree, every
# file below the root but build/ and .git. The fuzz corpora (data) are left out, as is anything
# not listed above (documentation, data, project files). Run by the spdx_lines test:
#   cmake -DREPO=<repository root> -P cmake/check_spdx.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED REPO)
  set(REPO "${CMAKE_CURRENT_LIST_DIR}/..")
endif()
get_filename_component(REPO "${REPO}" ABSOLUTE)

set(c_line "/* SPDX-License-Identifier: MIT */")
set(nasm_line "; SPDX-License-Identifier: MIT")
set(pascal_line "{ SPDX-License-Identifier: MIT }")
set(hash_line "# SPDX-License-Identifier: MIT")

set(problems "")
if(NOT EXISTS "${REPO}/LICENSE")
  string(APPEND problems "  - LICENSE is missing\n")
else()
  file(READ "${REPO}/LICENSE" license)
  if(NOT license MATCHES "^MIT License\n")
    string(APPEND problems "  - LICENSE is not the MIT licence\n")
  endif()
endif()

find_package(Git QUIET)
set(files "")
set(listed_by "")
if(GIT_EXECUTABLE AND EXISTS "${REPO}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -c core.quotepath=off ls-files
                  WORKING_DIRECTORY "${REPO}" OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    string(REGEX REPLACE "\n$" "" listing "${listing}")
    string(REPLACE "\n" ";" files "${listing}")
    set(listed_by "git ls-files")
  endif()
endif()
if(NOT listed_by)
  file(GLOB_RECURSE files RELATIVE "${REPO}" "${REPO}/*")
  list(FILTER files EXCLUDE REGEX "^(build|\\.git)/")
  set(listed_by "the files below ${REPO}")
endif()
list(FILTER files EXCLUDE REGEX "^tests/fuzz/(corpus|dwarf_corpus)/")
list(SORT files)

set(n_checked 0)
foreach(f IN LISTS files)
  if(NOT EXISTS "${REPO}/${f}" OR IS_DIRECTORY "${REPO}/${f}")
    continue() # deleted in the work tree, or a submodule
  endif()
  get_filename_component(name "${f}" NAME)
  file(READ "${REPO}/${f}" head LIMIT 512)
  string(FIND "${head}" "\n" end)
  string(SUBSTRING "${head}" 0 ${end} line1) # the whole head when it has no newline (end -1)
  set(expected "")
  if(name MATCHES "\\.(c|h|rc|rc\\.in)$")
    set(expected "${c_line}")
  elseif(name MATCHES "\\.(asm|def)$" OR f MATCHES "^src/asm_shared/.*\\.inc$")
    set(expected "${nasm_line}")
  elseif(name MATCHES "\\.(pas|pp|dpr|lpr|inc)$")
    set(expected "${pascal_line}")
  elseif(name STREQUAL "CMakeLists.txt" OR name MATCHES "\\.(cmake|cmake\\.in|sh|py)$"
         OR line1 MATCHES "^#!")
    set(expected "${hash_line}")
  else()
    continue()
  endif()
  math(EXPR n_checked "${n_checked} + 1")
  set(line "${line1}")
  set(where "first line")
  if(line1 MATCHES "^#!")
    math(EXPR start "${end} + 1")
    string(SUBSTRING "${head}" ${start} -1 rest)
    string(FIND "${rest}" "\n" end)
    string(SUBSTRING "${rest}" 0 ${end} line)
    set(where "line after the shebang")
  endif()
  string(REGEX REPLACE "\r$" "" line "${line}")
  if(NOT line STREQUAL expected)
    string(APPEND problems "  - ${f}: its ${where} is not `${expected}`\n")
  endif()
endforeach()

if(n_checked EQUAL 0)
  string(APPEND problems "  - no source file found (${listed_by} in ${REPO})\n")
endif()
if(problems)
  message(FATAL_ERROR "check_spdx: licence lines missing (${n_checked} source files, from ${listed_by}):\n${problems}")
endif()
message(STATUS "check_spdx: LICENSE is MIT and all ${n_checked} source files (from ${listed_by}) start with their SPDX line")
