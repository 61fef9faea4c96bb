# Writes or checks src/asm/layout.inc, the NASM view of the block-header contract.
#
# Every `#define NAME <integer>` of src/core/block_header.h, src/core/page_map.h and src/core/policy.h becomes
# `%define NAME <integer>`. The assembly fast paths include the result; the test
# `asm_layout_matches_headers` fails when the headers changed and the include was not
# regenerated, so the assembly cannot silently go on with an old layout.
#
#   cmake -DSOURCE_DIR=<repo> -DMODE=write -P cmake/asm_layout.cmake   # regenerate
#   cmake -DSOURCE_DIR=<repo> -DMODE=check -P cmake/asm_layout.cmake   # compare (the test)
if(NOT SOURCE_DIR OR NOT MODE)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repo> -DMODE=write|check -P asm_layout.cmake")
endif()

set(text "; Generated from src/core/block_header.h, core/page_map.h and core/policy.h by cmake/asm_layout.cmake.\n")
string(APPEND text "; Do not edit: change the headers, then run\n")
string(APPEND text ";   cmake -DSOURCE_DIR=. -DMODE=write -P cmake/asm_layout.cmake\n")
foreach(header src/core/block_header.h src/core/page_map.h src/core/policy.h)
  file(STRINGS "${SOURCE_DIR}/${header}" lines REGEX "^#define [A-Z0-9_]+ ")
  string(APPEND text "\n; ${header}\n")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#define ([A-Z0-9_]+) +(0x[0-9A-Fa-f]+|[0-9]+)[uU]?[ \t]*(/\\*.*)?$")
      string(APPEND text "%define ${CMAKE_MATCH_1} ${CMAKE_MATCH_2}\n")
    endif()
  endforeach()
endforeach()

set(target "${SOURCE_DIR}/src/asm/layout.inc")
if(MODE STREQUAL "write")
  file(WRITE "${target}" "${text}")
  message(STATUS "wrote ${target}")
elseif(MODE STREQUAL "check")
  if(NOT EXISTS "${target}")
    message(FATAL_ERROR "${target} is missing: regenerate it (MODE=write)")
  endif()
  file(READ "${target}" current)
  if(NOT current STREQUAL text)
    message(FATAL_ERROR "src/asm/layout.inc does not match src/core/block_header.h, "
                        "src/core/page_map.h and src/core/policy.h: the assembly would use an old layout. Regenerate it "
                        "(cmake -DSOURCE_DIR=. -DMODE=write -P cmake/asm_layout.cmake) and check "
                        "src/win32/*.asm and src/win64/*.asm against the new layout.")
  endif()
  message(STATUS "src/asm/layout.inc matches the C headers")
else()
  message(FATAL_ERROR "MODE must be write or check")
endif()
