; SPDX-License-Identifier: MIT
; The Win32 ReallocMem entry points: `_fastmm_reallocmem`, the C export (cdecl: arguments on
; the stack), and `_fastmm_delphi_realloc_mem`, the Delphi record's ReallocMem (Delphi's
; `register` convention: EAX = pointer, EDX = new size).
;
; Each returns the same pointer when the new size keeps the block in place under FastMM's policy
; (tested first, on the header word as it reads) and the block is a live small block of ours
; (1 <= new <= usable and new*4 + 64 >= usable, compared unsigned so a negative size is a huge
; one), or a live medium block of ours (medium_block_sealed: the header word and the seal of its
; address and size) whose new size medium_size_stays keeps (src/core/inline_paths.h). Every other
; case goes to the C code in src/entry/dispatch.c with its arguments untouched:
; the cdecl entry tail-jumps to entry_realloc_slow with the stack as it found it and EAX and EDX
; loaded from it (GCC's build reads them there, FMM_REGCALL in src/core/linkage.h; MSVC's reads
; the stack); the register entry tail-jumps to entry_realloc_slow_register (GCC's regparm(3), the
; same convention) with EAX and EDX as they came. EAX and EDX are kept; ECX is the scratch
; register; ESI is pushed for the small size test, EBX for the validation, and each is popped
; before either exit. MSVC has no regparm: its build defines FASTMM_SLOW_PATH_CDECL and the
; register entry calls the cdecl slow path instead (a push and a call, on the slow path only).
;
; "A live small block of ours" is the validation contract of the C paths (small_block_span in
; src/core/small.h, docs/architecture-reference.md), step for step, as in
; src/win64/realloc_fast.asm: the page map (32-bit builds have one static second-level table, so
; it is one indexed load) says p's header word is in a later region of a medium span
; (REGION_MEDIUM_SPAN), so the span record of p's granule is committed (32-bit builds have one
; record table, src/core/span_record.h); the record holds the header's kind, class and slot, and
; p lies a whole number of slots after the record's first block, below its carved end (one
; multiply and compare).
; The table read is the page map's fast copy, page_map_fast_l2, which holds no region while a
; debug or erase mode is on (src/modes/gate.h): every pointer then takes the slow path.
; layout.inc is made by the build from the C headers (src/asm_shared/layout.c).

%include "layout.inc"
%include "layout_assumptions.inc"
%if PAGE_MAP_L2_BITS != 16
  %error "Win32's page map is one table of 64 K regions, indexed by address >> 16"
%endif

bits 32

extern _entry_realloc_slow
%ifdef FASTMM_NO_MODES
%define FAST_L2 _page_map_l2_static
%else
%define FAST_L2 _page_map_fast_l2
%endif
extern FAST_L2
extern _span_record_tables
extern _medium_block_key
%ifndef FASTMM_SLOW_PATH_CDECL
extern _entry_realloc_slow_register
%endif
global _fastmm_reallocmem
global _fastmm_delphi_realloc_mem

section .text

; ENTRY_RET: an entry's return when the block stays in place, EAX its pointer. An entry that
; pushed ENTRY_EXTRA_WORDS words of its own before IN_PLACE_OR (Free Pascal's keeps the address
; of the caller's variable for the slow path) drops them first.
%assign ENTRY_EXTRA_WORDS 0
%macro ENTRY_RET 0
%if ENTRY_EXTRA_WORDS > 0
  add esp, 4 * ENTRY_EXTRA_WORDS
%endif
  ret
%endmacro

; NOT_SMALL_MEDIUM_OR slow: after the small in-place test failed on a pointer whose header word
; is in a medium span, EAX = pointer (16-aligned), EDX = size: returns (EAX unchanged) when p is
; a live medium block that stays (medium_stays_in_place in src/core/inline_paths.h), else jumps
; to `slow` with EAX and EDX unchanged. Uses ECX only.
%macro NOT_SMALL_MEDIUM_OR 1
  mov ecx, [eax - BLOCK_HEADER_SIZE]
  and ecx, ~MEDIUM_HEADER_VARIABLE_BITS
  cmp ecx, BLOCK_FLAG_MEDIUM
  jne %1                             ; not exactly MEDIUM, an arena and a kept alignment
%ifndef FASTMM_UNCHECKED
  imul ecx, eax, -MEDIUM_SEAL_MULTIPLIER_NEGATED
  xor ecx, [_medium_block_key]
  xor ecx, [eax - MEDIUM_SIZE_BELOW]
  cmp ecx, [eax - MEDIUM_SEAL_BELOW]
  jne %1                             ; no seal of this address and size: not a live block
%endif
  mov ecx, [eax - MEDIUM_SIZE_BELOW]
  sub ecx, MEDIUM_HEADER_SIZE        ; usable bytes
  cmp edx, ecx
  ja %1                              ; larger than usable, or negative
  shr ecx, 1
  cmp edx, ecx
  jb %1                              ; below half its usable size: a smaller block
  ENTRY_RET
%endmacro

; SMALL_SIZE_STAYS_OR not_small: EAX = pointer, EDX = size. Pushes ESI; jumps to `not_small`
; (ESI still pushed) unless the header word's usable size keeps `size` under FastMM's small rule
; (1 <= size <= usable, size*4 + 64 >= usable; a medium header word's slot field reads 0, so its
; usable size wraps to almost 2^32 and fails the second test). Leaves the usable size in ECX.
; The two compares against one usable size are written as the C compiler writes them: a form
; that needed no second register (four branches) measured a fifth slower (docs/experiments).
%macro SMALL_SIZE_STAYS_OR 1
  push esi
  mov ecx, [eax - BLOCK_HEADER_SIZE]
  shr ecx, SLOT_BYTES_SHIFT
  and ecx, SLOT_BYTES_MASK
  sub ecx, BLOCK_HEADER_SIZE         ; usable bytes
  lea esi, [edx - 1]
  cmp esi, ecx
  jae %1                             ; 0, larger than usable, or negative
  lea esi, [edx * 4 + REALLOC_SMALL_DOWNSIZE_ADDER]
  cmp esi, ecx
  jb %1                              ; shrinks too far: moves to a smaller class
%endmacro

; IN_PLACE_OR slow: EAX = pointer, EDX = size; returns (EAX unchanged) when in place, else
; jumps to `slow` with EAX and EDX unchanged. Uses ECX, and EBX and ESI saved on the stack.
%macro IN_PLACE_OR 1
%ifdef FASTMM_UNCHECKED
  ; The yardstick build (inline_paths.h): the header word is trusted, as FastMM trusts it.
  test eax, eax
  jz %1
  mov ecx, [eax - BLOCK_HEADER_SIZE]
  and ecx, BLOCK_KIND_MASK           ; the kind, FREE and outer bits
  cmp ecx, BLOCK_FLAG_SMALL
  jne %%not_small
  SMALL_SIZE_STAYS_OR %%not_small_pop
  pop esi
  ENTRY_RET
%%not_small_pop:
  pop esi
%%not_small:
  NOT_SMALL_MEDIUM_OR %1
%else
  test al, BLOCK_ALIGNMENT - 1
  jnz %1
  lea ecx, [eax - BLOCK_HEADER_SIZE]
  shr ecx, PAGE_MAP_REGION_SHIFT
  cmp byte [FAST_L2 + ecx], REGION_MEDIUM_SPAN
  jne %1                             ; small blocks live only in medium spans (NULL: 0 - 4
                                     ; wraps to a region never ours), or a mode is on
  ; FastMM's in-place rule first, on the header word as it reads: a resize that moves goes to
  ; the slow path, which validates the pointer itself.
  SMALL_SIZE_STAYS_OR %%not_small_pop
  ; Then the validation contract, from the span record of p's granule (EBX).
  push ebx
  lea ebx, [eax - BLOCK_ALIGNMENT]
  shr ebx, SPAN_RECORD_GRANULE_SHIFT
  shl ebx, SPAN_RECORD_SHIFT
  add ebx, [_span_record_tables]     ; made before the map marked the span
  mov ecx, [eax - BLOCK_HEADER_SIZE]
  and ecx, SMALL_HEADER_TAG_MASK
  cmp ecx, [ebx + SPAN_RECORD_BITS_OFFSET]
  jne %%fail                         ; no span of this class here, or not a live block
  mov ecx, eax
  sub ecx, [ebx + SPAN_RECORD_FIRST_OFFSET] ; the slot offset
  imul ecx, [ebx + SPAN_RECORD_DIVISOR_OFFSET]
  cmp ecx, [ebx + SPAN_RECORD_LIMIT_OFFSET]
  jae %%fail                         ; inside a block, in the uncarved tail, or past the span
  pop ebx
  pop esi
  ENTRY_RET
%%fail:
  pop ebx
  pop esi
  jmp %1
%%not_small_pop:
  pop esi
  NOT_SMALL_MEDIUM_OR %1
%endif
%endmacro

; The exits jump to a local label that jumps on: straight conditional jumps to the slow path
; (rel32 each) measured the in-place case 3.9% slower here (docs/experiments). Each entry starts
; where no jump of its in-place path crosses or ends on a 32-byte boundary (the JCC erratum, as
; for the bound records' entries below): the cdecl one 12 bytes past a 32-byte boundary (its two
; loads shift the rest by 8), Delphi's 20 bytes past one.
align 32
  times 12 int3                      ; never run
_fastmm_reallocmem:
  mov eax, [esp + 4]
  mov edx, [esp + 8]
  IN_PLACE_OR .slow
.slow:
  jmp _entry_realloc_slow

align 32
  times 20 int3                      ; never run
_fastmm_delphi_realloc_mem:
  IN_PLACE_OR .slow
.slow:
%ifdef FASTMM_SLOW_PATH_CDECL
  push edx
  push eax
  call _entry_realloc_slow
  add esp, 8
  ret
%else
  jmp _entry_realloc_slow_register
%endif

;  The ReallocMem entry points of the records bound to a previous manager (the Pascal unit's:
; src/api/pascal_records.h), one per slot as the C ones they replace: Delphi's ReallocMem (EAX =
; pointer, EDX = size) and Free Pascal's ReAllocMem (EAX = the address of the caller's pointer
; variable, EDX = size), each with the same in-place test as the entries above. Every other case
; goes on to the slot's slow path with EAX and EDX as they came, by a tail jump through
; _pascal_realloc_slow_paths: the records' code is above this layer, so it lends its slow paths
; (delphi_api.c, fpc_api.c fill their slot's entries before they hand the record out). Free
; Pascal's entry keeps the variable's address on the stack while it tests the block, for the
; slow path, which writes the new pointer there. Left out of the MSVC build, whose Win32 records
; call C entry points through thunks.
; Where each entry starts is chosen so that no jump (with the compare fused into it) or return on
; the in-place path crosses or ends on a 32-byte boundary, which Intel's cores with the JCC
; erratum fix run from the legacy decoders: Delphi's 20 bytes past a 32-byte boundary, Free
; Pascal's 16 bytes past one (its first push and load shift the rest by 3). Free Pascal's
; in-place resize ran 7% slower with its entry 64-aligned (docs/experiments). A change to the
; macros moves the jumps: check the layout again then (the experiment file says how).
%ifndef FASTMM_SLOW_PATH_CDECL
global _pascal_realloc_slow_paths

%macro PASCAL_SLOT_REALLOC 1
global _fastmm_delphi_realloc_mem_%1
global _fastmm_fpc_realloc_mem_%1

align 32
  times 20 int3                      ; never run: places the entry 20 bytes into a 32-byte block
_fastmm_delphi_realloc_mem_%1:
  IN_PLACE_OR %%delphi_slow
%%delphi_slow:
  jmp [_pascal_realloc_slow_paths + 8 * %1]

%assign ENTRY_EXTRA_WORDS 1
align 32
  times 16 int3                      ; never run: places the entry 16 bytes into a 32-byte block
_fastmm_fpc_realloc_mem_%1:
  push eax
  mov eax, [eax]
  IN_PLACE_OR %%fpc_slow
%%fpc_slow:
  pop eax
  jmp [_pascal_realloc_slow_paths + 8 * %1 + 4]
%assign ENTRY_EXTRA_WORDS 0
%endmacro

%if PASCAL_SLOT_COUNT != 8
  %error "PASCAL_SLOT_REALLOC is made for slots 0-7"
%endif
%assign slot 0
%rep 8
  PASCAL_SLOT_REALLOC slot
%assign slot slot + 1
%endrep

section .bss
alignb 64
; Per slot: Delphi's slow path, then Free Pascal's (pascal_realloc_slow_paths in pascal_records.h).
_pascal_realloc_slow_paths:
  resd 2 * PASCAL_SLOT_COUNT
section .text
%endif

%if REALLOC_SMALL_DOWNSIZE_SHIFT != 2
  %error "the small size test multiplies by 4 in one lea"
%endif

%ifdef FASTMM_BUILDING_LIBRARY
; Exported from the DLL like the C functions marked FASTMM_API (include/fastmm.h): the same
; linker directive GCC writes for __declspec(dllexport) (undecorated, as for cdecl C).
section .drectve info
  db ' -export:"fastmm_reallocmem"'
%endif
