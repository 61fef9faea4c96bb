# SPDX-License-Identifier: MIT
# Checks that the Windows DLL and every exe beside it import only Windows' own DLLs (and the
# exes our DLL): no libgcc_s_*.dll, libwinpthread-1.dll or other MinGW runtime DLL that a
# Delphi program's folder would not have. Run by the dll_imports test:
#   cmake -DOBJDUMP=<mingw objdump> -DBIN_DIR=<build>/bin -P cmake/check_dll_imports.cmake
cmake_minimum_required(VERSION 3.25)

# Matched case-insensitively (the names are lowered first).
set(system_dlls kernel32.dll msvcrt.dll ntdll.dll kernelbase.dll advapi32.dll user32.dll
                ucrtbase.dll ws2_32.dll bcrypt.dll version.dll)
set(our_dlls fastmmc32.dll fastmmc64.dll)
# A test's own DLL, which its exe imports (tests/exit_check_dll.c, for test_exit_check).
set(test_dlls exit_check.dll)

file(GLOB binaries "${BIN_DIR}/*.dll" "${BIN_DIR}/*.exe")
set(problems "")
set(found_dll FALSE)
foreach(bin IN LISTS binaries)
  get_filename_component(name "${bin}" NAME)
  string(TOLOWER "${name}" lname)
  if(lname IN_LIST our_dlls)
    set(found_dll TRUE)
  endif()
  execute_process(COMMAND "${OBJDUMP}" -p "${bin}" OUTPUT_VARIABLE dump RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND problems "  - ${name}: objdump failed: ${err}\n")
    continue()
  endif()
  string(REGEX MATCHALL "DLL Name: [^\r\n]+" imports "${dump}")
  foreach(line IN LISTS imports)
    string(REGEX REPLACE "DLL Name: " "" dll "${line}")
    string(STRIP "${dll}" dll)
    string(TOLOWER "${dll}" ldll)
    if(ldll IN_LIST system_dlls OR ldll MATCHES "^api-ms-win-")
      continue()
    endif()
    if(ldll IN_LIST our_dlls AND NOT lname IN_LIST our_dlls)
      continue()
    endif()
    if(ldll IN_LIST test_dlls)
      continue()
    endif()
    string(APPEND problems "  - ${name} imports ${dll}\n")
  endforeach()
endforeach()

if(NOT found_dll)
  string(APPEND problems "  - no fastmmc32.dll / fastmmc64.dll in ${BIN_DIR}\n")
endif()
if(problems)
  message(FATAL_ERROR "Windows binaries need DLLs that are not part of Windows:\n${problems}")
endif()
list(LENGTH binaries n)
message(STATUS "dll_imports: ${n} binaries in ${BIN_DIR} import only Windows DLLs and ours")
