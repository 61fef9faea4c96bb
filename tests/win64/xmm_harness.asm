; SPDX-License-Identifier: MIT
; Calls fn(a, b) (Windows x64 convention) with XMM4-XMM15 holding known values and reports
; which of them came back changed: bit i set for XMM(i). Delphi expects XMM4-XMM15 kept
; across the memory manager's entry points (its docs list them as callee-saved), where
; Microsoft's convention lets a callee clobber XMM4 and XMM5.
;   uint32_t xmm_clobbered_by(void *fn, void *a, void *b, void **result);
bits 64
default rel
section .text
global xmm_clobbered_by

%macro SENTINEL 1
  mov rax, 0x5EED000000000000 + %1
  movq xmm%1, rax
  pinsrq xmm%1, rax, 1
%endmacro

%macro COMPARE 1
  mov rax, 0x5EED000000000000 + %1
  movq r10, xmm%1
  cmp r10, rax
  jne %%bad
  pextrq r10, xmm%1, 1
  cmp r10, rax
  je %%ok
%%bad:
  or r11d, 1 << %1
%%ok:
%endmacro

xmm_clobbered_by:
  push rbx
  push rsi
  sub rsp, 16 * 10 + 8 + 32       ; room for XMM6-XMM15 (callee-saved for our caller) + shadow
  %assign i 6
  %rep 10
    movdqu [rsp + 32 + (i - 6) * 16], xmm %+ i
    %assign i i + 1
  %endrep
  mov rbx, rcx                     ; fn
  mov rsi, r9                      ; where the result goes
  mov rcx, rdx                     ; a
  mov rdx, r8                      ; b
  %assign i 4
  %rep 12
    SENTINEL i
    %assign i i + 1
  %endrep
  call rbx
  mov [rsi], rax
  xor r11d, r11d
  %assign i 4
  %rep 12
    COMPARE i
    %assign i i + 1
  %endrep
  mov eax, r11d
  %assign i 6
  %rep 10
    movdqu xmm %+ i, [rsp + 32 + (i - 6) * 16]
    %assign i i + 1
  %endrep
  add rsp, 16 * 10 + 8 + 32
  pop rsi
  pop rbx
  ret

; For the test's self-check: a function that clobbers XMM4 and XMM15 and returns a.
global xmm_clobbering_function
xmm_clobbering_function:
  pxor xmm4, xmm4
  pxor xmm15, xmm15
  mov rax, rcx
  ret
