# SPDX-License-Identifier: MIT
# Natively: lib/libfastmmc.a, the whole library in a static archive for programs that link it in
# (a Free Pascal program with FastMMC built with -dFASTMMC_STATIC, a C program that wants one
# file). The archive holds ONE relocatable object, made with `ld -r` from the shared library's
# own objects, so that any reference to it pulls in all of it: the start-up (src/entry/startup.c)
# is a constructor nothing calls, which a linker would leave out of an archive of separate
# objects, and without it the fast paths read an empty page map. Its hidden symbols (everything
# but the FASTMM_API exports) are made local, so the program's own names cannot clash with the
# library's. The program links libc and its threads (-lc, -lpthread; glibc 2.34 and later has
# both in libc).
if(WIN32 OR MSVC)
  return()
endif()

find_program(FASTMM_LD NAMES ld ${CMAKE_LINKER})
find_program(FASTMM_OBJCOPY NAMES objcopy ${CMAKE_OBJCOPY})
if(NOT FASTMM_LD OR NOT FASTMM_OBJCOPY OR NOT CMAKE_AR)
  message(STATUS "libfastmmc.a is not built: ld, objcopy or ar is missing")
  return()
endif()

set(FASTMM_STATIC_ARCHIVE ${CMAKE_BINARY_DIR}/lib/libfastmmc.a)
set(whole ${CMAKE_BINARY_DIR}/static/fastmmc_whole.o)
add_custom_command(
  OUTPUT ${FASTMM_STATIC_ARCHIVE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/static ${CMAKE_BINARY_DIR}/lib
  COMMAND ${FASTMM_LD} -r -o ${whole} $<TARGET_OBJECTS:fastmmc>
  COMMAND ${FASTMM_OBJCOPY} --localize-hidden ${whole}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${FASTMM_STATIC_ARCHIVE}
  COMMAND ${CMAKE_AR} rcs ${FASTMM_STATIC_ARCHIVE} ${whole}
  DEPENDS fastmmc $<TARGET_OBJECTS:fastmmc>
  COMMENT "lib/libfastmmc.a: the library as one object (ld -r), hidden symbols made local"
  COMMAND_EXPAND_LISTS VERBATIM)
add_custom_target(fastmmc_static ALL DEPENDS ${FASTMM_STATIC_ARCHIVE})
