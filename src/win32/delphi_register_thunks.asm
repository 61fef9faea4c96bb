; SPDX-License-Identifier: MIT
; Delphi `register` entry points for a Visual Studio Win32 build, which has no regparm.
; Delphi passes the first arguments in EAX and EDX and expects the result in EAX (AL for a
; Boolean); EBX, ESI, EDI and EBP must survive, which the cdecl callee guarantees. Each thunk
; pushes its register arguments, calls the cdecl body in delphi_api.c and pops them again.
; The MinGW build does not need these (GCC's regparm(3) is the same convention), but
; assembles and tests them so the Visual Studio route stays checked.

bits 32
section .text

extern _fastmm_delphi_get_mem_c
extern _fastmm_delphi_free_mem_c
extern _fastmm_delphi_realloc_mem_c
extern _fastmm_delphi_alloc_mem_c
extern _fastmm_delphi_register_leak_c
extern _fastmm_delphi_unregister_leak_c

global _fastmm_delphi_get_mem_register
global _fastmm_delphi_free_mem_register
global _fastmm_delphi_realloc_mem_register
global _fastmm_delphi_alloc_mem_register
global _fastmm_delphi_register_leak_register
global _fastmm_delphi_unregister_leak_register

%macro ONE_ARGUMENT 2
%1:
  push eax
  call %2
  add esp, 4
  ret
%endmacro

ONE_ARGUMENT _fastmm_delphi_get_mem_register, _fastmm_delphi_get_mem_c
ONE_ARGUMENT _fastmm_delphi_free_mem_register, _fastmm_delphi_free_mem_c
ONE_ARGUMENT _fastmm_delphi_alloc_mem_register, _fastmm_delphi_alloc_mem_c
ONE_ARGUMENT _fastmm_delphi_register_leak_register, _fastmm_delphi_register_leak_c
ONE_ARGUMENT _fastmm_delphi_unregister_leak_register, _fastmm_delphi_unregister_leak_c

_fastmm_delphi_realloc_mem_register:
  push edx
  push eax
  call _fastmm_delphi_realloc_mem_c
  add esp, 8
  ret

; The slots of the records bound to a previous manager (src/api/pascal_records.h): Free
; Pascal's six entries and the Delphi record's FreeMem and ReallocMem, per slot, each calling
; the slot's cdecl function of src/api/fpc_api.c or delphi_api.c. PASCAL_SLOT_COUNT there is 8.

%macro TWO_ARGUMENTS 2
%1:
  push edx
  push eax
  call %2
  add esp, 8
  ret
%endmacro

%macro SLOT_THUNK 3 ; name, slot, argument count
  extern _%1_%2
  global _%1_%2_register
%if %3 == 1
  ONE_ARGUMENT _%1_%2_register, _%1_%2
%else
  TWO_ARGUMENTS _%1_%2_register, _%1_%2
%endif
%endmacro

%assign slot 0
%rep 8
  SLOT_THUNK fastmm_fpc_get_mem, slot, 1
  SLOT_THUNK fastmm_fpc_free_mem, slot, 1
  SLOT_THUNK fastmm_fpc_free_mem_size, slot, 2
  SLOT_THUNK fastmm_fpc_alloc_mem, slot, 1
  SLOT_THUNK fastmm_fpc_realloc_mem, slot, 2
  SLOT_THUNK fastmm_fpc_mem_size, slot, 1
  SLOT_THUNK fastmm_delphi_free_mem, slot, 1
  SLOT_THUNK fastmm_delphi_realloc_mem, slot, 2
%assign slot slot + 1
%endrep
