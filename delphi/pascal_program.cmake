# SPDX-License-Identifier: MIT
# fastmmc_pascal_program(<target> SOURCE <file.pas> [LIBRARY] [STATIC] [MODE delphi|objfpc]
#                        [OUTPUT_NAME <name>] [DEFINES <d>...] [OPTIONS <fpc option>...]
#                        [DEPENDS <file>...])
# Compiles a program (or, with LIBRARY, a library) with ${FASTMMC_FPC} for this build's target
# into ${FASTMMC_PASCAL_DIR}: <name>.exe (<name>.dll) on Windows, <name> (lib<name>.so) natively.
# Units are found in delphi/ and beside the source; each target compiles them into a folder of
# its own, so targets build in parallel. Warnings are errors (-Sew). STATIC (native only) links
# lib/libfastmmc.a into the program (-dFASTMMC_STATIC). Sets the target's FASTMMC_OUTPUT property
# to the file made. Included by delphi/delphi.cmake (Windows) and delphi/native_pascal.cmake.
include_guard(GLOBAL)

function(fastmmc_pascal_program target)
  cmake_parse_arguments(P "LIBRARY;STATIC" "SOURCE;MODE;OUTPUT_NAME" "DEFINES;OPTIONS;DEPENDS" ${ARGN})
  if(NOT P_SOURCE)
    message(FATAL_ERROR "fastmmc_pascal_program(${target}): SOURCE is missing")
  endif()
  if(NOT P_MODE)
    set(P_MODE delphi)
  endif()
  if(NOT P_OUTPUT_NAME)
    set(P_OUTPUT_NAME ${target})
  endif()
  if(WIN32 AND P_LIBRARY)
    set(file ${P_OUTPUT_NAME}.dll)
  elseif(WIN32)
    set(file ${P_OUTPUT_NAME}.exe)
  elseif(P_LIBRARY)
    set(file lib${P_OUTPUT_NAME}.so)
  else()
    set(file ${P_OUTPUT_NAME})
  endif()
  get_filename_component(src "${P_SOURCE}" ABSOLUTE)
  get_filename_component(src_dir "${src}" DIRECTORY)
  file(GLOB units ${src_dir}/*.pas ${src_dir}/*.inc ${PROJECT_SOURCE_DIR}/delphi/*.pas ${PROJECT_SOURCE_DIR}/delphi/*.inc)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/fpc-units/${target})
  set(defines "")
  foreach(d IN LISTS P_DEFINES)
    list(APPEND defines -d${d})
  endforeach()
  set(link "")
  set(link_depends "")
  if(P_STATIC)
    if(WIN32 OR NOT TARGET fastmmc_static)
      message(FATAL_ERROR "fastmmc_pascal_program(${target}): STATIC needs the native lib/libfastmmc.a")
    endif()
    set(link -dFASTMMC_STATIC -Fo${CMAKE_BINARY_DIR}/lib)
    set(link_depends ${CMAKE_BINARY_DIR}/lib/libfastmmc.a)
  endif()
  add_custom_command(
    OUTPUT ${FASTMMC_PASCAL_DIR}/${file}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${obj} ${FASTMMC_PASCAL_DIR}
    COMMAND ${FASTMMC_FPC} -M${P_MODE} -O2 -vew -Sew -Fu${PROJECT_SOURCE_DIR}/delphi -Fu${src_dir}
            -Fi${src_dir} -FU${obj} -FE${FASTMMC_PASCAL_DIR} -o${file} ${link} ${defines} ${P_OPTIONS}
            ${src}
    # No file of the Windows toolchain among the dependencies: on a fresh machine it does not
    # exist until fastmmc_fpc_toolchain has run, and ninja refuses a missing input no rule makes.
    # A new toolchain (another compiler or recipe) is another folder, so the command above
    # changes and every program is built again anyway.
    DEPENDS ${src} ${units} ${P_DEPENDS} ${link_depends}
    COMMENT "Free Pascal (${FASTMMC_PASCAL_PLATFORM}): pascal/${file}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${FASTMMC_PASCAL_DIR}/${file})
  add_dependencies(${target} fastmmc_fpc_toolchain fastmmc_pascal_dlls)
  if(P_STATIC)
    add_dependencies(${target} fastmmc_static)
  endif()
  set_property(TARGET ${target} PROPERTY FASTMMC_OUTPUT ${FASTMMC_PASCAL_DIR}/${file})
endfunction()
