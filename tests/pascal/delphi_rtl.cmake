# SPDX-License-Identifier: MIT
# The Delphi branch of FastMMC.pas (TMemoryManagerEx), compiled by Free Pascal: the test-only
# define FASTMMC_DELPHI_BRANCH makes the unit use DelphiMemoryManager (delphi_rtl/), which
# supplies Delphi's TMemoryManagerEx and Get/SetMemoryManager. That unit is compiled first in a
# call of its own: compiled in the same fpc call as the program, Free Pascal 3.2.2 stops with
# internal error 2015022301. Its folder is not on the program's unit path, so the program's
# call finds the compiled unit and never its source. Target pascal_delphi_rtl; a program passes
# OPTIONS -Fu${delphi_rtl_units} and DEPENDS ${delphi_rtl_ppu}. Included by CMakeLists.txt
# (Windows) and native_tests.cmake here.
set(delphi_rtl_units ${CMAKE_CURRENT_BINARY_DIR}/fpc-units/delphi_rtl)
set(delphi_rtl_source ${CMAKE_CURRENT_SOURCE_DIR}/delphi_rtl/DelphiMemoryManager.pas)
set(delphi_rtl_ppu ${delphi_rtl_units}/DelphiMemoryManager.ppu)
add_custom_command(OUTPUT ${delphi_rtl_ppu}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${delphi_rtl_units}
                   COMMAND ${FASTMMC_FPC} -Mdelphi -O2 -vew -Sew -FU${delphi_rtl_units} ${delphi_rtl_source}
                   DEPENDS ${delphi_rtl_source} ${FASTMMC_FPC}
                   COMMENT "Free Pascal (${FASTMMC_PASCAL_PLATFORM}): DelphiMemoryManager, Delphi's memory manager record"
                   VERBATIM)
add_custom_target(pascal_delphi_rtl DEPENDS ${delphi_rtl_ppu})
add_dependencies(pascal_delphi_rtl fastmmc_fpc_toolchain)
