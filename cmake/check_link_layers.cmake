# SPDX-License-Identifier: MIT
# Checks the layers of src/ where the include check cannot look: in the objects the library is
# linked from (ARCHITECTURE.md, "Layers"). Each object's layer is its source's folder:
#
#   prim (0)  <  core (1)  <  modes (2)  <  report (3)  <  entry (4, with the NASM of src/win32,
#   src/win64)  <  api (5)
#
# and an object may reference (nm: an undefined symbol) only what its own layer or a layer below
# it defines. A reference to a symbol defined only above it is a call (or a read) up the layers,
# which a declaration in a lower header would hide from include_layers. Symbols no object
# defines (the C library, the OS) are not ours and are skipped. Run by the link_layers test:
#
#   cmake -DNM=<nm> -DOBJECTS=<objects joined by |> -P cmake/check_link_layers.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "link_layers: NM and OBJECTS are required")
endif()
string(REPLACE "|" ";" objects "${OBJECTS}")

set(rank_prim 0)
set(rank_core 1)
set(rank_modes 2)
set(rank_report 3)
set(rank_entry 4)
set(rank_win32 4)
set(rank_win64 4)
set(rank_api 5)

# The layer of an object from the path of its source: .../src/<layer>/<file>.o
function(layer_of object out)
  string(REGEX MATCH "/src/([^/]+)/[^/]+$" _ "${object}")
  set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

set(defined_symbols "")
set(n_objects 0)
foreach(object IN LISTS objects)
  # The version resource (rc/version.rc.res) holds data only: no symbol to define or reference.
  if(object MATCHES "\\.res$")
    continue()
  endif()
  layer_of("${object}" layer)
  if(NOT DEFINED rank_${layer})
    message(FATAL_ERROR "link_layers: ${object} is in no layer (src/prim, core, modes, report, entry, api, win32, win64)")
  endif()
  execute_process(COMMAND "${NM}" -P "${object}" OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "link_layers: ${NM} failed on ${object}")
  endif()
  math(EXPR n_objects "${n_objects} + 1")
  string(REPLACE "\n" ";" lines "${listing}")
  set(undefined_${n_objects} "")
  set(object_${n_objects} "${object}")
  set(object_layer_${n_objects} "${layer}")
  foreach(line IN LISTS lines)
    # nm -P: "name type [value [size]]"; uppercase types are global, U undefined.
    if(line MATCHES "^([^ ]+) ([A-Za-z])")
      set(name "${CMAKE_MATCH_1}")
      set(type "${CMAKE_MATCH_2}")
      if(type STREQUAL "U")
        list(APPEND undefined_${n_objects} "${name}")
      elseif(type MATCHES "^[A-TV-Z]$")
        string(MAKE_C_IDENTIFIER "${name}" key)
        if(NOT DEFINED lowest_${key} OR rank_${layer} LESS lowest_${key})
          set(lowest_${key} ${rank_${layer}})
          set(where_${key} "${layer}")
        endif()
      endif()
    endif()
  endforeach()
endforeach()

if(n_objects LESS 10)
  message(FATAL_ERROR "link_layers: only ${n_objects} objects: nothing much was checked")
endif()

set(problems "")
set(n_refs 0)
foreach(i RANGE 1 ${n_objects})
  set(layer "${object_layer_${i}}")
  foreach(name IN LISTS undefined_${i})
    string(MAKE_C_IDENTIFIER "${name}" key)
    if(NOT DEFINED lowest_${key})
      continue() # not ours: the C library, the OS
    endif()
    math(EXPR n_refs "${n_refs} + 1")
    if(lowest_${key} GREATER rank_${layer})
      get_filename_component(file "${object_${i}}" NAME)
      string(APPEND problems "  - ${layer}/${file} references ${name}, defined in ${where_${key}}\n")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "Objects reference symbols of a layer above their own:\n${problems}")
endif()
message(STATUS "link_layers: ${n_objects} objects, ${n_refs} references to our own symbols, none up the layers")
