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
