; The Win64 ReallocMem entry point (Windows x64 convention: RCX = pointer, RDX = new size).
; Both the C export fastmm_reallocmem and the Delphi record's ReallocMem are this code.
;
; It returns the same pointer when the block is an in-use small block and the new size keeps
; it in place under FastMM's policy (1 <= new <= usable and new*4 + 64 >= usable, compared
; unsigned so a negative size is a huge one). Every other case tail-jumps to the C code,
; heap_realloc_slow in src/core/realloc.c, with RCX and RDX untouched: no frame, no pushes, only
; volatile registers (RAX, R8-R10), and XMM registers are never touched.
;
; Before the header word is read, the page map must say that its 64 KB region is part of a
; medium span (where all small blocks live), so a foreign or NULL pointer cannot fault here
; and a word inside a large block is not taken for a small header: as the C path (alloc_fast.h).
; The map read is its fast copy, page_map_fast_l1, which is empty while a debug or erase mode
; is on (src/core/mode_hooks.h): every pointer then takes the slow path, at no cost to this one.
; Cache lines touched: the page map's two entries (hot), the header word. The pure-C build
; compiles fast_realloc in src/core/alloc_fast.h instead of this file. layout.inc is made by
; the build from the C headers (src/asm/layout.c).

%include "layout.inc"
%include "layout_assumptions.inc"

default rel
bits 64

extern heap_realloc_slow
%ifdef FASTMM_NO_MODES
%define FAST_L1 page_map_l1
%else
%define FAST_L1 page_map_fast_l1
%endif
extern FAST_L1
global fastmm_reallocmem

section .text

align 16
fastmm_reallocmem:
  lea rax, [rcx - BLOCK_HEADER_SIZE]
  mov r8, rax
  shr r8, PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS
  cmp r8, 1 << (PAGE_MAP_ADDRESS_BITS_64 - PAGE_MAP_REGION_SHIFT - PAGE_MAP_L2_BITS)
  jae .slow                          ; beyond user space, and NULL (0 - 4 wraps)
  lea r9, [FAST_L1]
  mov r9, [r9 + r8 * 8]
  test r9, r9
  jz .slow                           ; no table: not ours, or a mode is on
  shr rax, PAGE_MAP_REGION_SHIFT
  movzx eax, ax
  cmp byte [r9 + rax], REGION_MEDIUM_SPAN
  jne .slow                          ; small blocks live only in medium spans
  test cl, BLOCK_ALIGNMENT - 1
  jnz .slow
  mov eax, [rcx - BLOCK_HEADER_SIZE]
  lea r8d, [rax - BLOCK_FLAG_SMALL]
  test r8b, BLOCK_KIND_MASK          ; zero only for an in-use small block
  jnz .slow
  shr eax, SLOT_BYTES_SHIFT
  and eax, SLOT_BYTES_MASK
  sub eax, BLOCK_HEADER_SIZE         ; usable bytes
  lea r8, [rdx - 1]
  cmp r8, rax
  jae .slow                          ; 0, larger than usable, or negative
  lea r8, [rdx * 4 + REALLOC_SMALL_DOWNSIZE_ADDER]
  cmp r8, rax
  jb .slow                           ; shrinks too far: moves to a smaller class
  mov rax, rcx
  ret
.slow:
  jmp heap_realloc_slow

%if REALLOC_SMALL_DOWNSIZE_SHIFT != 2
  %error "the downsize test multiplies by 4 in one lea"
%endif

%ifdef FASTMM_BUILDING_LIBRARY
; Exported from the DLL like the C functions marked FASTMM_API (include/fastmm.h): the same
; linker directive GCC writes for __declspec(dllexport).
section .drectve info
  db ' -export:"fastmm_reallocmem"'
%endif

%ifidn __OUTPUT_FORMAT__, elf64
; Assembled as ELF64 for the native conformance test: no executable stack.
section .note.GNU-stack noalloc noexec nowrite progbits
%endif
