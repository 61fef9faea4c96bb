# SPDX-License-Identifier: MIT
# The package tests (registered by cmake/packaging.cmake), one STEP each:
#   install             cmake --install of the build into WORK_DIR/prefix (a fresh one), and
#                       every file a user expects is there
#   consumer_cmake      tests/consumer configured against that prefix (find_package), built with
#                       the build's compiler or MinGW toolchain, and run (Windows: under Wine)
#   consumer_pkgconfig  natively: consumer.c compiled with `pkg-config --cflags --libs fastmmc`
#                       from the prefix, and consumer_malloc.c with fastmmc-malloc's, and run
#   deb                 natively: cpack makes the .deb, whose files (dpkg-deb -c) are the
#                       expected ones under /usr and whose fields (dpkg-deb -f) name the package,
#                       this version, a maintainer, a description and no dependency but libc
#   msvc_import_lib     Windows: the .lib's names are the DLL's exports (with MSVC's Win32
#                       underscore), and msvc_consumer.c, built for the MSVC target and linked
#                       with lld-link against it, runs
#   zip                 Windows: cpack makes the zip, which holds every file a user expects
# Variables: STEP BUILD_DIR WORK_DIR SOURCE_DIR GENERATOR C_COMPILER TOOLCHAIN_FILE EMULATOR
# BITS WINDOWS VERSION LIBDIR DOCDIR OBJDUMP; the msvc step reads FASTMM_CLANG, FASTMM_LLD_LINK and
# FASTMM_LLVM_DLLTOOL from the environment.
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  cmake_parse_arguments(R "QUIET" "WORKING_DIRECTORY;OUTPUT" "COMMAND" ${ARGN})
  if(NOT R_WORKING_DIRECTORY)
    set(R_WORKING_DIRECTORY ${WORK_DIR})
  endif()
  string(REPLACE ";" " " shown "${R_COMMAND}")
  message(STATUS "package_test: ${shown}")
  execute_process(COMMAND ${R_COMMAND} WORKING_DIRECTORY ${R_WORKING_DIRECTORY}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT R_QUIET OR NOT rc EQUAL 0)
    message("${out}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package_test ${STEP}: failed (exit ${rc}): ${shown}")
  endif()
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# The files a user of this build expects in the installed tree (and in the zip).
if(WINDOWS)
  set(expected bin/fastmmc${BITS}.dll bin/borlndmm.dll lib/libfastmmc${BITS}.dll.a
      lib/fastmmc${BITS}.lib lib/fastmmc${BITS}.def include/fastmm.h delphi/FastMMC.pas README.md LICENSE
      lib/cmake/fastmmc/fastmmcConfig.cmake lib/cmake/fastmmc/fastmmcConfigVersion.cmake
      lib/cmake/fastmmc/fastmmcTargets.cmake)
else()
  set(expected ${LIBDIR}/libfastmmc.so ${LIBDIR}/libfastmmc-malloc.so include/fastmm.h
      ${LIBDIR}/pkgconfig/fastmmc.pc ${LIBDIR}/pkgconfig/fastmmc-malloc.pc
      ${LIBDIR}/cmake/fastmmc/fastmmcConfig.cmake ${LIBDIR}/cmake/fastmmc/fastmmcConfigVersion.cmake
      ${LIBDIR}/cmake/fastmmc/fastmmcTargets.cmake ${DOCDIR}/LICENSE ${DOCDIR}/copyright
      ${DOCDIR}/linux.md share/fastmm-c/pascal/FastMMC.pas)
endif()
# FastMMC.pas includes these: the unit does not compile without each of them.
get_filename_component(project_dir ${SOURCE_DIR}/../.. ABSOLUTE) # SOURCE_DIR is tests/consumer
file(GLOB pascal_parts RELATIVE ${project_dir}/delphi ${project_dir}/delphi/FastMMC.*.inc)
if(NOT pascal_parts)
  message(FATAL_ERROR "package_test: no delphi/FastMMC.*.inc in ${project_dir}")
endif()
if(WINDOWS)
  list(TRANSFORM pascal_parts PREPEND delphi/)
else()
  list(TRANSFORM pascal_parts PREPEND share/fastmm-c/pascal/)
endif()
list(APPEND expected ${pascal_parts})

# missing_from(<out> <listing> <before> <after>): the expected files f that a package's listing
# does not name, as the regular expression <before>f<after> would find it.
function(missing_from out listing before after)
  set(missing "")
  foreach(f IN LISTS expected)
    if(NOT listing MATCHES "${before}${f}${after}")
      list(APPEND missing ${f})
    endif()
  endforeach()
  set(${out} "${missing}" PARENT_SCOPE)
endfunction()

# run_program(<exe> <folder>): runs a program of this build's platform and checks that it
# printed its "N checks, 0 failed" line.
function(run_program exe dir)
  set(cmd ${exe})
  if(EMULATOR)
    set(cmd ${EMULATOR} ${exe})
  endif()
  run(COMMAND ${cmd} WORKING_DIRECTORY ${dir} OUTPUT out)
  if(NOT out MATCHES " [1-9][0-9]* checks, 0 failed")
    message(FATAL_ERROR "package_test ${STEP}: ${exe} did not report its checks")
  endif()
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${prefix})
  run(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  set(missing "")
  foreach(f IN LISTS expected)
    if(NOT EXISTS ${prefix}/${f})
      list(APPEND missing ${f})
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR "package_test install: missing from ${prefix}: ${missing}")
  endif()
  list(LENGTH expected n)
  message(STATUS "package_test install: the ${n} expected files are in ${prefix}")

elseif(STEP STREQUAL "consumer_cmake")
  set(build ${WORK_DIR}/consumer-build)
  file(REMOVE_RECURSE ${build})
  set(args -S ${SOURCE_DIR} -B ${build} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release)
  if(TOOLCHAIN_FILE)
    # The MinGW toolchain confines find_package to its sysroot: name the package's folder.
    list(APPEND args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}
         -Dfastmmc_DIR=${prefix}/lib/cmake/fastmmc)
  else()
    list(APPEND args -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_PREFIX_PATH=${prefix})
  endif()
  run(COMMAND ${CMAKE_COMMAND} ${args} OUTPUT configured)
  # The package found must be the one just installed, not one elsewhere on the machine.
  file(STRINGS ${build}/CMakeCache.txt dir_line REGEX "^fastmmc_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" found_dir "${dir_line}")
  file(REAL_PATH "${found_dir}" found_dir)
  file(REAL_PATH "${prefix}" real_prefix)
  string(FIND "${found_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "package_test consumer_cmake: find_package found ${found_dir}, not ${prefix}")
  endif()
  run(COMMAND ${CMAKE_COMMAND} --build ${build})
  if(WINDOWS)
    run_program(${build}/consumer.exe ${build})
  else()
    run_program(${build}/consumer ${build})
    run_program(${build}/consumer_malloc ${build})
  endif()

elseif(STEP STREQUAL "consumer_pkgconfig")
  set(env ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig pkg-config)
  run(COMMAND ${env} --modversion fastmmc OUTPUT version)
  string(STRIP "${version}" version)
  if(NOT version STREQUAL VERSION)
    message(FATAL_ERROR "package_test consumer_pkgconfig: pkg-config says ${version}, the build is ${VERSION}")
  endif()
  run(COMMAND ${env} --cflags --libs fastmmc OUTPUT flags)
  run(COMMAND ${env} --variable=libdir fastmmc OUTPUT libdir)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  string(STRIP "${libdir}" libdir)
  set(exe ${WORK_DIR}/consumer-pkgconfig)
  file(REMOVE ${exe})
  run(COMMAND ${C_COMPILER} ${SOURCE_DIR}/consumer.c ${flags} -Wl,-rpath,${libdir} -o ${exe})
  run_program(${exe} ${WORK_DIR})
  # The malloc drop-in: its flags keep the library in a link that names none of its symbols.
  run(COMMAND ${env} --cflags --libs fastmmc-malloc OUTPUT flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(exe ${WORK_DIR}/consumer-malloc-pkgconfig)
  file(REMOVE ${exe})
  run(COMMAND ${C_COMPILER} ${SOURCE_DIR}/consumer_malloc.c ${flags} -Wl,-rpath,${libdir} -o ${exe})
  run_program(${exe} ${WORK_DIR})

elseif(STEP STREQUAL "msvc_import_lib")
  foreach(tool FASTMM_CLANG FASTMM_LLD_LINK FASTMM_LLVM_DLLTOOL)
    if(NOT EXISTS "$ENV{${tool}}")
      message(FATAL_ERROR "package_test msvc_import_lib: ${tool} was not found at configure time"
                          " (clang, lld, llvm: run scripts/install-deps.sh and configure again)")
    endif()
  endforeach()
  set(dir ${WORK_DIR}/msvc)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  set(lib ${prefix}/lib/fastmmc${BITS}.lib)
  set(dll ${prefix}/bin/fastmmc${BITS}.dll)

  # The names: every export of the DLL has its import thunk and __imp_ pointer in the .lib,
  # under the name an MSVC object refers to (Win32 cdecl: a leading underscore).
  run(COMMAND ${OBJDUMP} -p ${dll} OUTPUT dll_dump QUIET)
  string(REGEX MATCHALL "\n\t\\[ *[0-9]+\\] [A-Za-z_][A-Za-z0-9_@]*" rows "${dll_dump}")
  set(exports "")
  foreach(r IN LISTS rows)
    string(REGEX REPLACE ".*\\] " "" name "${r}")
    list(APPEND exports ${name})
  endforeach()
  get_filename_component(llvm_bin "$ENV{FASTMM_LLVM_DLLTOOL}" DIRECTORY)
  find_program(llvm_nm NAMES llvm-nm llvm-nm-14 HINTS ${llvm_bin} REQUIRED)
  execute_process(COMMAND ${llvm_nm} ${lib} OUTPUT_VARIABLE lib_symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT exports)
    message(FATAL_ERROR "package_test msvc_import_lib: cannot read ${lib} or the exports of ${dll}")
  endif()
  if(BITS EQUAL 32)
    set(decoration _)
  else()
    set(decoration "")
  endif()
  set(wrong "")
  foreach(name IN LISTS exports)
    if(NOT lib_symbols MATCHES "T __imp_${decoration}${name}\n"
       OR NOT lib_symbols MATCHES "T ${decoration}${name}\n")
      list(APPEND wrong ${name})
    endif()
  endforeach()
  list(LENGTH exports n)
  if(wrong)
    message(FATAL_ERROR "package_test msvc_import_lib: ${lib} lacks the MSVC names of: ${wrong}")
  endif()
  message(STATUS "package_test msvc_import_lib: the ${n} exports of fastmmc${BITS}.dll are in the .lib as ${decoration}<name> and __imp_${decoration}<name>")

  # A call links and runs.
  if(BITS EQUAL 32)
    set(target i686-pc-windows-msvc)
    set(machine i386)
    set(kernel32_exports "ExitProcess@4\nGetStdHandle@4\nWriteFile@20\n")
    set(kill_at -k) # import by the undecorated name, as kernel32.dll exports it
  else()
    set(target x86_64-pc-windows-msvc)
    set(machine i386:x86-64)
    set(kernel32_exports "ExitProcess\nGetStdHandle\nWriteFile\n")
    set(kill_at "")
  endif()
  file(WRITE ${dir}/kernel32.def "LIBRARY kernel32.dll\nEXPORTS\n${kernel32_exports}")
  run(COMMAND $ENV{FASTMM_LLVM_DLLTOOL} -m ${machine} ${kill_at} -d ${dir}/kernel32.def
              -l ${dir}/kernel32.lib)
  run(COMMAND $ENV{FASTMM_CLANG} --target=${target} -ffreestanding -fno-stack-protector -O1
              -Wall -Werror -I${prefix}/include -c ${SOURCE_DIR}/msvc_consumer.c
              -o ${dir}/msvc_consumer.obj)
  run(COMMAND $ENV{FASTMM_LLD_LINK} /nologo /subsystem:console /entry:mainCRTStartup
              /nodefaultlib /out:${dir}/msvc_consumer.exe ${dir}/msvc_consumer.obj ${lib}
              ${dir}/kernel32.lib)
  file(COPY ${dll} DESTINATION ${dir})
  run_program(${dir}/msvc_consumer.exe ${dir})

elseif(STEP STREQUAL "zip")
  set(dir ${WORK_DIR}/zip)
  file(REMOVE_RECURSE ${dir})
  run(COMMAND ${CMAKE_CPACK_COMMAND} --config ${BUILD_DIR}/CPackConfig.cmake -B ${dir})
  set(zip ${dir}/fastmm-c-${VERSION}-win${BITS}.zip)
  if(NOT EXISTS ${zip})
    message(FATAL_ERROR "package_test zip: cpack made no ${zip}")
  endif()
  run(COMMAND ${CMAKE_COMMAND} -E tar tf ${zip} OUTPUT listing)
  missing_from(missing "${listing}" "(^|\n)fastmm-c-${VERSION}-win${BITS}/" "\n")
  if(missing)
    message(FATAL_ERROR "package_test zip: missing from ${zip}: ${missing}")
  endif()
  list(LENGTH expected n)
  message(STATUS "package_test zip: the ${n} expected files are in ${zip}")

elseif(STEP STREQUAL "deb")
  set(dir ${WORK_DIR}/deb)
  file(REMOVE_RECURSE ${dir})
  run(COMMAND ${CMAKE_CPACK_COMMAND} --config ${BUILD_DIR}/CPackConfig.cmake -G DEB -B ${dir} QUIET)
  file(GLOB debs ${dir}/fastmm-c_${VERSION}_*.deb)
  list(LENGTH debs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "package_test deb: cpack made ${n} fastmm-c_${VERSION}_*.deb in ${dir}")
  endif()
  run(COMMAND dpkg-deb -c ${debs} OUTPUT listing QUIET)
  missing_from(missing "${listing}" " \\./usr/" "\n")
  if(missing)
    message(FATAL_ERROR "package_test deb: missing from ${debs}: ${missing}\n${listing}")
  endif()
  # Nothing but what is installed under /usr (no build paths, no files of the build folder).
  string(REGEX MATCHALL " \\./[^\n]*" paths "${listing}")
  foreach(p IN LISTS paths)
    if(NOT p MATCHES "^ \\./(usr/.*)?$")
      message(FATAL_ERROR "package_test deb: ${p} is outside /usr")
    endif()
  endforeach()
  run(COMMAND dpkg-deb -f ${debs} Package Version Maintainer Description Depends OUTPUT fields QUIET)
  foreach(want "Package: fastmm-c\n" "Version: ${VERSION}\n" "Maintainer: [^\n]+\n"
          "Description: [^\n]+\n [^\n]+")
    if(NOT fields MATCHES "${want}")
      message(FATAL_ERROR "package_test deb: no ${want} in the fields:\n${fields}")
    endif()
  endforeach()
  # The C library is the one dependency.
  if(NOT fields MATCHES "\nDepends: libc6( \\([^)]*\\))?\n")
    message(FATAL_ERROR "package_test deb: it must depend on libc6 only:\n${fields}")
  endif()
  list(LENGTH expected n)
  message(STATUS "package_test deb: ${debs}: the ${n} expected files under /usr, and its fields:\n${fields}")

else()
  message(FATAL_ERROR "package_test: unknown STEP '${STEP}'")
endif()
