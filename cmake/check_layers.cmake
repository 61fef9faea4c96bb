# SPDX-License-Identifier: MIT
# Checks the include hierarchy of src/ (ARCHITECTURE.md, "Layers"): a C file or header may
# include headers of its own folder and of the folders below it, and include/fastmm.h (api also
# include/fastmm_test.h, the exports only the tests call):
#
#   prim  <-  core  <-  modes  <-  report  <-  entry  <-  api    (asm_shared: what the NASM of src/win32 and src/win64 share, above core)
#
# so the core never includes a header of the modes (nor declares what they define: the
# link_layers test, cmake/check_link_layers.cmake, checks the objects).
# Every quoted #include must name a file that exists (beside the includer, under src/, or under
# include/), and every .c/.h file under src/ must be in one of these folders. Run by the
# include_layers test:  cmake -DREPO=<repository root> -P cmake/check_layers.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED REPO)
  set(REPO "${CMAKE_CURRENT_LIST_DIR}/..")
endif()
get_filename_component(REPO "${REPO}" ABSOLUTE)

# Rank of each folder: a file may include from folders of lower rank, and from its own.
set(rank_prim 0)
set(rank_core 1)
set(rank_asm_shared 2)
set(rank_modes 2)
set(rank_report 3)
set(rank_entry 4)
set(rank_api 5)
set(layers prim core asm_shared modes report entry api)

file(GLOB_RECURSE files RELATIVE "${REPO}" "${REPO}/src/*.c" "${REPO}/src/*.h")
list(SORT files)
set(problems "")
set(n_files 0)
set(n_includes 0)
foreach(f IN LISTS files)
  string(REGEX MATCH "^src/([^/]+)/[^/]+$" _ "${f}")
  set(layer "${CMAKE_MATCH_1}")
  if(NOT layer OR NOT layer IN_LIST layers)
    string(APPEND problems "  - ${f} is in no layer (src/prim, core, asm_shared, modes, report, entry or api)\n")
    continue()
  endif()
  math(EXPR n_files "${n_files} + 1")
  get_filename_component(dir "${REPO}/${f}" DIRECTORY)
  file(STRINGS "${REPO}/${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" name "${line}")
    math(EXPR n_includes "${n_includes} + 1")
    # Where the compiler finds it: beside the includer, then src/, then include/.
    if(EXISTS "${dir}/${name}")
      set(target "${dir}/${name}")
    elseif(EXISTS "${REPO}/src/${name}")
      set(target "${REPO}/src/${name}")
    elseif(EXISTS "${REPO}/include/${name}")
      set(target "${REPO}/include/${name}")
    else()
      string(APPEND problems "  - ${f} includes \"${name}\", which is not beside it, under src/ or under include/\n")
      continue()
    endif()
    cmake_path(NORMAL_PATH target)
    cmake_path(RELATIVE_PATH target BASE_DIRECTORY "${REPO}")
    if(target STREQUAL "include/fastmm.h")
      continue()
    endif()
    # The exports only the tests call are defined by the exports' layer alone.
    if(target STREQUAL "include/fastmm_test.h")
      if(NOT layer STREQUAL "api")
        string(APPEND problems "  - ${f} (${layer}) includes include/fastmm_test.h, which only api may include\n")
      endif()
      continue()
    endif()
    string(REGEX MATCH "^src/([^/]+)/[^/]+$" _ "${target}")
    set(to "${CMAKE_MATCH_1}")
    if(NOT to OR NOT to IN_LIST layers)
      string(APPEND problems "  - ${f} includes ${target}, which is in no layer\n")
    elseif(NOT to STREQUAL layer AND NOT rank_${to} LESS rank_${layer})
      string(APPEND problems "  - ${f} (${layer}) includes ${target} (${to}): ${layer} may include only "
                             "its own folder, the folders below it and include/fastmm.h\n")
    endif()
  endforeach()
endforeach()

if(n_files EQUAL 0 OR n_includes EQUAL 0)
  message(FATAL_ERROR "include_layers: found ${n_files} files and ${n_includes} includes under ${REPO}/src: nothing was checked")
endif()
if(problems)
  message(FATAL_ERROR "The include hierarchy of src/ is broken:\n${problems}")
endif()
message(STATUS "include_layers: ${n_files} files, ${n_includes} includes, every one within the layers")
