# SPDX-License-Identifier: MIT
# What a user of fastmm-c installs, and the tests that use the installed tree as a user would.
# Included at the end of the top-level CMakeLists.txt, when the targets exist.
#
#   cmake --install build/win64 --prefix DIR     (likewise win32, native)
#   cpack --preset win64                         build/win64/fastmm-c-<version>-win64.zip
#
#   cpack --config build/native/CPackConfig.cmake -G DEB    build/native/fastmm-c_<version>_<arch>.deb
#
# Windows (MinGW builds):            native:
#   bin/fastmmcNN.dll                  lib/libfastmmc.so
#   bin/borlndmm.dll                   lib/libfastmmc-malloc.so (the process's malloc)
#   lib/libfastmmcNN.dll.a  (MinGW)    lib/libfastmmc.a (when the build makes it)
#   lib/fastmmcNN.lib       (MSVC)     lib/pkgconfig/fastmmc.pc, fastmmc-malloc.pc
#   lib/fastmmcNN.def                  lib/cmake/fastmmc/ (find_package: fastmmc::fastmmc,
#   lib/cmake/fastmmc/      (find_package(fastmmc),      fastmmc::malloc)
#                            target fastmmc::fastmmc)    include/fastmm.h
#   include/fastmm.h                   share/fastmm-c/pascal/FastMMC.pas, FastMMC.*.inc
#   delphi/FastMMC.pas, delphi/FastMMC.*.inc (the unit and the parts it includes)
#                                      share/doc/fastmm-c/LICENSE, copyright, linux.md
#   README.md               (cmake/package/README.md.in)
#   LICENSE
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(fastmm_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/fastmmc)

install(TARGETS fastmmc EXPORT fastmmcTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET fastmmc_malloc)
  # find_package(fastmmc) gives it as fastmmc::malloc.
  set_target_properties(fastmmc_malloc PROPERTIES EXPORT_NAME malloc)
  install(TARGETS fastmmc_malloc EXPORT fastmmcTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(DEFINED FASTMM_STATIC_ARCHIVE)
  install(FILES ${FASTMM_STATIC_ARCHIVE} DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/fastmm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The licence goes with every install and every zip: on Windows beside README.md at the top,
# natively where Linux distributions keep a package's licence.
if(WIN32)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION .)
else()
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()

install(EXPORT fastmmcTargets NAMESPACE fastmmc:: DESTINATION ${fastmm_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/package/fastmmcConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/fastmmcConfig.cmake
                              INSTALL_DESTINATION ${fastmm_cmake_dir})
# 0.x: a new minor version may change the interface. The file also refuses a package of the
# other bitness (a Win32 consumer never picks up the Win64 DLL).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/fastmmcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/fastmmcConfig.cmake
              ${CMAKE_BINARY_DIR}/package/fastmmcConfigVersion.cmake
        DESTINATION ${fastmm_cmake_dir})

if(NOT WIN32)
  # pkg-config, for builds without CMake: relocatable (the prefix is found from the .pc file's
  # own folder), so an install moved elsewhere still works.
  file(RELATIVE_PATH fastmm_pc_to_prefix /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/package/fastmmc.pc.in ${CMAKE_BINARY_DIR}/package/fastmmc.pc
                 @ONLY)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/package/fastmmc-malloc.pc.in
                 ${CMAKE_BINARY_DIR}/package/fastmmc-malloc.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/package/fastmmc.pc ${CMAKE_BINARY_DIR}/package/fastmmc-malloc.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  # The Pascal unit for Free Pascal on Linux (FastMMC.pas and every FastMMC.*.inc it includes): a
  # package's data, where a program's build names it with -Fu.
  file(GLOB fastmmc_pascal_parts ${PROJECT_SOURCE_DIR}/delphi/FastMMC.*.inc)
  install(FILES ${PROJECT_SOURCE_DIR}/delphi/FastMMC.pas ${fastmmc_pascal_parts}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/fastmm-c/pascal)
  # Debian keeps a package's licence as copyright in its documentation folder, and the guide to
  # the Linux library beside it.
  file(READ ${PROJECT_SOURCE_DIR}/LICENSE fastmm_license)
  if(NOT fastmm_license MATCHES "Copyright \\(c\\) ([^\n]+)\n\n(.*[^\n])\n*$")
    message(FATAL_ERROR "LICENSE has no \"Copyright (c) ...\" line followed by the licence text")
  endif()
  set(fastmm_holder "${CMAKE_MATCH_1}")
  string(REPLACE "\n\n" "\n.\n" fastmm_license "${CMAKE_MATCH_2}")
  string(REPLACE "\n" "\n " fastmm_license " ${fastmm_license}")
  file(WRITE ${CMAKE_BINARY_DIR}/package/copyright
       "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
       "Upstream-Name: fastmm-c\n\nFiles: *\nCopyright: ${fastmm_holder}\nLicense: MIT\n"
       "${fastmm_license}\n")
  install(FILES ${CMAKE_BINARY_DIR}/package/copyright ${PROJECT_SOURCE_DIR}/docs/linux.md
          DESTINATION ${CMAKE_INSTALL_DOCDIR})

  # cpack -G DEB (or the default, DEB): one package, fastmm-c, with the libraries, the header,
  # the pkg-config and CMake files and the unit. It needs the C library only (the libraries link
  # nothing else; dpkg-shlibdeps says which version when it is there).
  set(FASTMM_PACKAGE_MAINTAINER "fastmm-c authors" CACHE STRING
      "The .deb's Maintainer field (a packager sets \"Name <address>\")")
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME fastmm-c)
  set(CPACK_PACKAGE_VENDOR fastmm-c)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGE_CONTACT "${FASTMM_PACKAGE_MAINTAINER}")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "FastMM-style memory manager in C (library, malloc drop-in, Pascal unit)")
  # The long description, after the summary's line (which CPack puts first).
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "fastmm-c is a memory manager in the manner of Delphi's FastMM, written in C
and released under the MIT licence. This package holds libfastmmc.so (the
fastmm_* interface, include/fastmm.h), libfastmmc-malloc.so (the manager as
a process's malloc, for linking or LD_PRELOAD), their pkg-config and CMake
files, and the FastMMC unit that makes it a Free Pascal program's memory
manager.")
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_STRIP_FILES ON) # the libraries without their debugging information, as Debian ships them
  find_program(FASTMM_DPKG_SHLIBDEPS dpkg-shlibdeps)
  if(FASTMM_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  else()
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
  endif()
  set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR})
  include(CPack)
endif()

if(WIN32 AND NOT MSVC)
  # The MSVC import library, made from the exports of the DLL as linked (the linker writes them
  # as a .def): llvm-dlltool gives each cdecl name the underscore MSVC's Win32 objects refer to
  # (_fastmm_getmem, __imp__fastmm_getmem), and the DLL is named by its file name.
  find_program(FASTMM_LLVM_DLLTOOL NAMES llvm-dlltool llvm-dlltool-14
               DOC "llvm-dlltool, for the MSVC import library")
  set(fastmm_dll_name fastmmc${FASTMM_BITS})
  set(fastmm_def ${CMAKE_BINARY_DIR}/lib/${fastmm_dll_name}.def)
  set(fastmm_msvc_lib ${CMAKE_BINARY_DIR}/lib/${fastmm_dll_name}.lib)
  target_link_options(fastmmc PRIVATE "LINKER:--output-def,${fastmm_def}")
  if(FASTMM_BITS EQUAL 32)
    set(fastmm_dlltool_machine i386)
  else()
    set(fastmm_dlltool_machine i386:x86-64)
  endif()
  if(FASTMM_LLVM_DLLTOOL)
    add_custom_command(OUTPUT ${fastmm_msvc_lib}
                       COMMAND ${FASTMM_LLVM_DLLTOOL} -m ${fastmm_dlltool_machine} -d ${fastmm_def}
                               -D $<TARGET_FILE_NAME:fastmmc> -l ${fastmm_msvc_lib}
                       DEPENDS fastmmc
                       COMMENT "MSVC import library lib/${fastmm_dll_name}.lib"
                       VERBATIM)
    add_custom_target(fastmmc_msvc_import_lib ALL DEPENDS ${fastmm_msvc_lib})
    install(FILES ${fastmm_msvc_lib} ${fastmm_def} DESTINATION ${CMAKE_INSTALL_LIBDIR})
  else()
    message(WARNING "llvm-dlltool was not found: no MSVC import library (run scripts/install-deps.sh);"
                    " the package_msvc_import_lib test will fail")
  endif()
  if(TARGET borlndmm)
    install(TARGETS borlndmm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
  # The unit and its include files: FastMMC.pas compiles only with every FastMMC.*.inc beside it.
  file(GLOB fastmmc_pascal_parts ${PROJECT_SOURCE_DIR}/delphi/FastMMC.*.inc)
  install(FILES ${PROJECT_SOURCE_DIR}/delphi/FastMMC.pas ${fastmmc_pascal_parts} DESTINATION delphi)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/package/README.md.in ${CMAKE_BINARY_DIR}/package/README.md
                 @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/package/README.md DESTINATION .)

  set(CPACK_GENERATOR ZIP)
  set(CPACK_PACKAGE_NAME fastmm-c)
  set(CPACK_PACKAGE_VENDOR fastmm-c)
  set(CPACK_PACKAGE_FILE_NAME fastmm-c-${PROJECT_VERSION}-win${FASTMM_BITS})
  set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR})
  include(CPack)
endif()

# ---- The package tests -------------------------------------------------------------------
# On the builds a user takes (not under the sanitizers, whose runtime a consumer would not link,
# nor the pure-C and no-modes variants): install into build/<preset>/package-test/prefix, then
# build tests/consumer against that tree with find_package and run it (Windows: under Wine);
# natively also with pkg-config; on Windows link a C program with the MSVC import library
# (clang for the MSVC target, lld-link) and run it, and check the zip's file list.
set(fastmm_package_tests_default ON)
if(FASTMM_SANITIZE OR FASTMM_PURE_C OR FASTMM_NO_MODES OR MSVC)
  set(fastmm_package_tests_default OFF)
endif()
option(FASTMM_PACKAGE_TESTS "Test the installed tree and the package (tests/consumer)"
       ${fastmm_package_tests_default})
if(NOT FASTMM_PACKAGE_TESTS)
  return()
endif()

set(fastmm_package_test_dir ${CMAKE_BINARY_DIR}/package-test)
set(fastmm_package_test_args
    -DBUILD_DIR=${CMAKE_BINARY_DIR} -DWORK_DIR=${fastmm_package_test_dir}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/consumer -DGENERATOR=${CMAKE_GENERATOR}
    -DC_COMPILER=${CMAKE_C_COMPILER} -DTOOLCHAIN_FILE=${CMAKE_TOOLCHAIN_FILE}
    -DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR} -DBITS=${FASTMM_BITS} -DWINDOWS=${WIN32}
    -DVERSION=${PROJECT_VERSION} -DLIBDIR=${CMAKE_INSTALL_LIBDIR} -DDOCDIR=${CMAKE_INSTALL_DOCDIR} -DOBJDUMP=${CMAKE_OBJDUMP})
function(fastmm_package_test step)
  add_test(NAME package_${step}
           COMMAND ${CMAKE_COMMAND} ${fastmm_package_test_args} -DSTEP=${step}
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/package_test.cmake)
  if(step STREQUAL "install")
    set_tests_properties(package_${step} PROPERTIES FIXTURES_SETUP fastmmc_installed)
  else()
    set_tests_properties(package_${step} PROPERTIES FIXTURES_REQUIRED fastmmc_installed)
  endif()
endfunction()

fastmm_package_test(install)
fastmm_package_test(consumer_cmake)
if(WIN32)
  find_program(FASTMM_CLANG NAMES clang clang-14 DOC "clang, for the MSVC import library test")
  find_program(FASTMM_LLD_LINK NAMES lld-link lld-link-14 DOC "lld-link, for the same test")
  fastmm_package_test(msvc_import_lib)
  set_property(TEST package_msvc_import_lib APPEND PROPERTY ENVIRONMENT
               FASTMM_CLANG=${FASTMM_CLANG} FASTMM_LLD_LINK=${FASTMM_LLD_LINK}
               FASTMM_LLVM_DLLTOOL=${FASTMM_LLVM_DLLTOOL})
  add_test(NAME package_zip
           COMMAND ${CMAKE_COMMAND} ${fastmm_package_test_args} -DSTEP=zip
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/package_test.cmake)
else()
  fastmm_package_test(consumer_pkgconfig)
  fastmm_package_test(deb)
endif()
