# SPDX-License-Identifier: MIT
# The Pascal tests natively (x86_64-linux, the machine's Free Pascal, no emulator), each built
# twice: pascal_<name> loads libfastmmc.so from beside the program, pascal_<name>_static has the
# library linked in from lib/libfastmmc.a (-dFASTMMC_STATIC). A test that does not apply on Linux
# is registered all the same, as a skipped test that says why. Included by CMakeLists.txt here.
if(NOT COMMAND fastmmc_pascal_program OR NOT FASTMMC_PASCAL_DIR)
  return()
endif()

set(runner ${CMAKE_COMMAND} -DRUNNER=)
set(check ${CMAKE_CURRENT_SOURCE_DIR}/run_check.cmake)
set(ways loaded static)

# fastmmc_native_pascal(<name> [SOURCE <file.pas>] [fastmmc_pascal_program options]): the program
# built both ways, pascal/<name> and pascal/<name>_static (targets pascal_<name>[_static]).
function(fastmmc_native_pascal name)
  cmake_parse_arguments(N "" "SOURCE" "" ${ARGN})
  if(NOT N_SOURCE)
    set(N_SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/${name}.pas)
  endif()
  fastmmc_pascal_program(pascal_${name} SOURCE ${N_SOURCE} OUTPUT_NAME ${name} ${N_UNPARSED_ARGUMENTS})
  fastmmc_pascal_program(pascal_${name}_static SOURCE ${N_SOURCE} OUTPUT_NAME ${name}_static STATIC
                         ${N_UNPARSED_ARGUMENTS})
endfunction()

# fastmmc_native_pascal_test(<name> [options]): built both ways, each run by ctest.
function(fastmmc_native_pascal_test name)
  fastmmc_native_pascal(${name} ${ARGN})
  add_test(NAME pascal_${name} COMMAND ${FASTMMC_PASCAL_DIR}/${name} WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
  add_test(NAME pascal_${name}_static COMMAND ${FASTMMC_PASCAL_DIR}/${name}_static
           WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
endfunction()

# fastmmc_windows_only(<test> <reason>): the test is listed natively as skipped, with its reason.
function(fastmmc_windows_only test reason)
  add_test(NAME ${test} COMMAND ${CMAKE_COMMAND} -E echo "Windows only: ${reason}")
  set_tests_properties(${test} PROPERTIES SKIP_REGULAR_EXPRESSION "Windows only")
endfunction()

# The RTL's allocations (strings, objects, TStringList, dynamic arrays, exceptions, 4 threads)
# all go through the library.
fastmmc_native_pascal_test(test_rtl)
# ReallocMem keeps data and follows the policy at its boundaries.
fastmmc_native_pascal_test(test_realloc)
# The library's debug mode, erase modes and memory usage limit through FastMM5's routines.
fastmmc_native_pascal_test(test_debug)
# Installing by hand: refused a second time, uninstalled cleanly.
fastmmc_native_pascal_test(test_install DEFINES FastMM_DisableAutomaticInstall)
# Refused over another memory manager.
fastmmc_native_pascal_test(test_othermm)
# FastMM5's walk of the blocks, the state, the memory map, the state log, alignment, strategy and
# the usage report.
fastmmc_native_pascal_test(test_walk)
# The unit's whole interface, from a program in mode delphi and in mode objfpc.
foreach(mode IN ITEMS delphi objfpc)
  fastmmc_native_pascal(test_modes_${mode} SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_modes.pas MODE ${mode})
  foreach(suffix IN ITEMS "" _static)
    add_test(NAME pascal_test_modes_${mode}${suffix} COMMAND ${FASTMMC_PASCAL_DIR}/test_modes_${mode}${suffix}
             WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
  endforeach()
endforeach()
# The installed record is the library's own entry points (loaded: code of libfastmmc.so), bound to
# the previous manager: bad pointers raise EInvalidPointer from the library's slow path through
# its C frames and never reach the previous manager; out of memory.
fastmmc_native_pascal_test(test_records)
# FastMM5's interface from a program that names only FastMM5's routines, types and variables;
# libfake_support.so stands in for FastMM5's debug support library.
fastmmc_pascal_program(pascal_fake_support SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/fake_support.pas
                       OUTPUT_NAME fake_support LIBRARY)
fastmmc_native_pascal_test(test_fastmm5)
add_dependencies(pascal_test_fastmm5 pascal_fake_support)
add_dependencies(pascal_test_fastmm5_static pascal_fake_support)
# A Pascal library (libsharelib.so) and the program using it share the manager, the library linked
# at load time (the program's RUNPATH is $ORIGIN) and loaded with dlopen. The loaded way only:
# linked in, each module has a heap of its own, and strings must not cross.
fastmmc_pascal_program(pascal_sharelib SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/sharelib.pas OUTPUT_NAME sharelib LIBRARY)
fastmmc_pascal_program(pascal_test_share SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_share.pas OUTPUT_NAME test_share
                       OPTIONS -Fl${FASTMMC_PASCAL_DIR} "-k-rpath=\$ORIGIN")
fastmmc_pascal_program(pascal_test_share_dynamic SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_share_dynamic.pas
                       OUTPUT_NAME test_share_dynamic)
foreach(name IN ITEMS test_share test_share_dynamic)
  add_dependencies(pascal_${name} pascal_sharelib)
  add_test(NAME pascal_${name} COMMAND ${FASTMMC_PASCAL_DIR}/${name} WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
endforeach()
# Linux only, loaded: a program that execs itself (the same process id, the owner's environment
# variable set) owns its heap again after the exec.
fastmmc_pascal_program(pascal_test_exec_owner SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_exec_owner.pas
                       OUTPUT_NAME test_exec_owner)
add_test(NAME pascal_test_exec_owner
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_exec_owner
                 "-DEXPECT_OUTPUT=test_exec_owner after-exec \\(Linux64\\): [0-9]+ checks, 0 failed"
                 "-DREJECT_OUTPUT=FAILED"
                 -P ${check})
# Linux only: threads on cthreads (FastMMC named before cthreads and after it), strings and
# objects made on one thread and freed on another, each thread's cache flushed at its end.
fastmmc_native_pascal_test(test_linux_threads)
fastmmc_native_pascal(test_linux_threads_ct_first SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_linux_threads.pas
                      DEFINES CTHREADS_FIRST)
foreach(suffix IN ITEMS "" _static)
  add_test(NAME pascal_test_linux_threads_ct_first${suffix}
           COMMAND ${FASTMMC_PASCAL_DIR}/test_linux_threads_ct_first${suffix} WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
endforeach()
# Linux only: FastMMC after a unit that started a thread stops the program with its message and
# exit code 70, before main.
fastmmc_native_pascal(test_wrong_order)
foreach(suffix IN ITEMS "" _static)
  add_test(NAME pascal_test_wrong_order${suffix}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_wrong_order${suffix} -DEXPECT_EXIT=70
                   "-DEXPECT_OUTPUT=FastMMC: a thread was started before FastMMC was initialized. Put FastMMC first"
                   "-DREJECT_OUTPUT=main program ran"
                   -P ${check})
endforeach()
# The Delphi branch of FastMMC.pas on Linux (Delphi's Linux64: TMemoryManagerEx, SetMemoryManager,
# the library loaded with dlopen), compiled by Free Pascal in mode delphi against the stand-in for
# Delphi's record (delphi_rtl/DelphiMemoryManager.pas, delphi_rtl.cmake), and run: debug mode and threads through it. Delphi itself is not run here.
include(${CMAKE_CURRENT_SOURCE_DIR}/delphi_rtl.cmake)
foreach(name IN ITEMS test_debug test_linux_threads)
  fastmmc_pascal_program(pascal_${name}_delphi_branch SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/${name}.pas
                         OUTPUT_NAME ${name}_delphi_branch DEFINES FASTMMC_DELPHI_BRANCH
                         OPTIONS -Fu${delphi_rtl_units} DEPENDS ${delphi_rtl_ppu})
  add_dependencies(pascal_${name}_delphi_branch pascal_delphi_rtl)
  add_test(NAME pascal_${name}_delphi_branch COMMAND ${FASTMMC_PASCAL_DIR}/${name}_delphi_branch
           WORKING_DIRECTORY ${FASTMMC_PASCAL_DIR})
endforeach()

# The loaded way with no libfastmmc.so to be found: the RTL's manager stays, and stderr says why.
fastmmc_pascal_program(pascal_test_no_library SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/test_wrong_order.pas
                       OUTPUT_NAME test_no_library DEFINES NO_EARLY_THREAD)
add_test(NAME pascal_test_no_library
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_no_library
                 -DRUN_FROM=${FASTMMC_PASCAL_DIR}/no_library
                 "-DEXPECT_OUTPUT=libfastmmc.so could not be loaded \\(libfastmmc.so: cannot open shared object file@@main program ran, FastMMC installed: FALSE"
                 -P ${check})
set_tests_properties(pascal_test_no_library PROPERTIES ENVIRONMENT "LD_LIBRARY_PATH=")

foreach(way IN ITEMS "" _static)
  # Blocks of the previous manager, and library blocks freed after FastMMC's finalization.
  if(way STREQUAL "")
    fastmmc_native_pascal(test_foreign)
    fastmmc_native_pascal(test_leaks)
  endif()
  add_test(NAME pascal_test_foreign${way}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_foreign${way} -DWORKDIR=${FASTMMC_PASCAL_DIR}
                   "-DEXPECT_OUTPUT=test_foreign \\(Linux[0-9]+\\): [0-9]+ checks, 0 failed@@EarlyAlloc finalization: blocks freed after FastMMC's finalization"
                   -P ${check})
  # Leaks at exit: reported by size and class on standard error and in the event log, with each
  # one's detail in the log; the expected ones not.
  add_test(NAME pascal_test_leaks_reported${way}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_leaks${way} -DWORKDIR=${FASTMMC_PASCAL_DIR}
                   "-DARGS=leak@@test_leaks_reported${way}.log"
                   "-DEXPECT_OUTPUT=[0-9]+ checks, 0 failed@@Leaks found by test_leaks: test_leaks summary for test_leaks_reported${way}.log:@@5008: 1 x Unknown[^:]+6000: 1 x Unknown@@[0-9]+: 1 x TUnexpectedLeak@@[0-9]+: 1 x AnsiString"
                   "-DREJECT_OUTPUT=TExpectedLeak"
                   -DFILE=${FASTMMC_PASCAL_DIR}/test_leaks_reported${way}.log
                   "-DEXPECT_FILE=--------------------------------[0-9]+-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]--------------------------------\n@@test_leaks summary for test_leaks_reported${way}.log:@@5008: 1 x Unknown[^:]+6000: 1 x Unknown@@A block of 5008 bytes was still allocated at exit.@@Object class: TUnexpectedLeak@@Object class: AnsiString@@a leaked"
                   "-DREJECT_FILE=\r"
                   -P ${check})
  add_test(NAME pascal_test_leaks_debug${way}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_leaks${way} -DWORKDIR=${FASTMMC_PASCAL_DIR}
                   "-DARGS=debug@@test_leaks_debug${way}.log"
                   "-DEXPECT_OUTPUT=[0-9]+ checks, 0 failed"
                   -DFILE=${FASTMMC_PASCAL_DIR}/test_leaks_debug${way}.log
                   "-DEXPECT_FILE=DEBUG LEAK 77 bytes, number [1-9][0-9]*, class Unknown@@DEBUG LEAK [0-9]+ bytes, number [1-9][0-9]*, class TUnexpectedLeak"
                   "-DREJECT_FILE=class TExpectedLeak@@FastMM-C memory leak report@@number , @@DEBUG LEAK 3000 bytes"
                   -P ${check})
  add_test(NAME pascal_test_leaks_none${way}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${FASTMMC_PASCAL_DIR}/test_leaks${way} -DWORKDIR=${FASTMMC_PASCAL_DIR}
                   "-DARGS=clean@@test_leaks_none${way}.log"
                   "-DEXPECT_OUTPUT=[0-9]+ checks, 0 failed" "-DREJECT_OUTPUT=leaked memory"
                   -DNO_FILE=${FASTMMC_PASCAL_DIR}/test_leaks_none${way}.log
                   -P ${check})
endforeach()

# Windows only, with the reason.
fastmmc_windows_only(pascal_test_borlndmm "borlndmm.dll is the drop-in for Delphi's ShareMem on Windows")
fastmmc_windows_only(pascal_test_sharemem "ShareMem and borlndmm.dll are Windows' (Delphi's Linux RTL has no ShareMem)")
fastmmc_windows_only(pascal_test_records_no_slot
  "SlotHog takes the DLL's slots through kernel32's LoadLibrary before FastMMC loads it; not written for Linux yet")
fastmmc_windows_only(pascal_test_delphi_branch
  "it calls kernel32 to compare the record with the DLL's; natively the Delphi branch's Linux64 part runs in pascal_test_debug_delphi_branch and pascal_test_linux_threads_delphi_branch")
