# SPDX-License-Identifier: MIT
# libfastmmc-malloc.so: the manager as the process's malloc (src/api/malloc_api.c), for linking
# (-lfastmmc-malloc) or LD_PRELOAD. A library of its own, built from libfastmmc's objects and that
# one file: a program that loads libfastmmc.so (a Pascal program, a C program calling fastmm_*)
# keeps the C library's malloc. It exports the fastmm_* functions too, for a program that wants
# the manager's state while it serves malloc; a process loads one of the two libraries, not both
# (each would have a heap of its own under the same names). Included by the top-level
# CMakeLists.txt once the fastmmc target exists; native builds only.
if(WIN32)
  return()
endif()

fastmm_repo_paths(fastmm_malloc_sources ${FASTMM_MALLOC_SOURCES})
add_library(fastmmc_malloc SHARED ${fastmm_malloc_sources} $<TARGET_OBJECTS:fastmmc>)
set_target_properties(fastmmc_malloc PROPERTIES OUTPUT_NAME fastmmc-malloc
                                                DEFINE_SYMBOL FASTMM_BUILDING_LIBRARY
                                                C_VISIBILITY_PRESET hidden)
target_include_directories(fastmmc_malloc
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
# The compiler must not take malloc, free, calloc... for the C library's functions it knows
# (it would fold a call to one into another, or assume what it returns): this file defines them.
target_compile_options(fastmmc_malloc PRIVATE -fno-builtin -falign-functions=64)
get_target_property(fastmm_malloc_defs fastmmc COMPILE_DEFINITIONS)
if(fastmm_malloc_defs)
  target_compile_definitions(fastmmc_malloc PRIVATE ${fastmm_malloc_defs})
endif()
target_link_libraries(fastmmc_malloc PRIVATE Threads::Threads)
# A program linked to it references none of its symbols when its allocations are all made by
# other libraries (C++'s operator new, in libstdc++): a linker with --as-needed (Debian's and
# Ubuntu's default for some toolchains) would drop the library, and the program would run on the
# C library's malloc. Whoever links the target keeps it.
target_link_options(fastmmc_malloc INTERFACE "LINKER:--no-as-needed")
