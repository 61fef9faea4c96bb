; SPDX-License-Identifier: MIT
; The Win64 ReallocMem entry point (Windows x64 convention: RCX = pointer, RDX = new size).
; Both the C export fastmm_reallocmem and the Delphi record's ReallocMem are this code.
;
; It returns the same pointer when the new size keeps the block in place under FastMM's policy
; (tested first, on the header word as it reads) and the block is a live small block of ours (1 <=
; new <= usable and new*4 + 64 >= usable, compared unsigned so a negative size is a huge one), or a
; live medium block of ours whose new size medium_size_stays keeps (src/core/inline_paths.h: from
; half its usable size to all of it). Every other case
; tail-jumps to the C code with RCX and RDX untouched: entry_realloc_slow_region in
; src/entry/dispatch.c, with the page map's answer for p in R8D (its third argument), or before
; there is one, entry_realloc_slow. No frame, no pushes, only volatile registers (RAX, R8-R11),
; and XMM registers are never touched.
;
; "A live small block of ours" is the validation contract of the C paths (small_block_span in
; src/core/small.h, docs/architecture-reference.md), step for step:
;  1. the page map says p's header word is in a medium span (where all small blocks live), so a
;     foreign or NULL pointer cannot fault here and a word inside a large block is not taken for
;     a header. The map read is its fast copy: the hot slot's table (page_map_fast_hot) for
;     an address in the hot slot, else page_map_fast_l1; both are empty while a debug or erase
;     mode is on (src/modes/gate.h): every pointer then takes the slow path;
;  2. the span record of p's granule (src/core/span_record.h: committed wherever the map says a
;     medium span is, found from p's address alone) holds the header's kind, class and slot: a
;     span of this class is there and the block is live (FREE clear, no other flag);
;  3. p lies a whole number of slots after the record's first block, below its carved end (one
;     multiply and compare, small_slot_carved): p is where a block the span handed out begins.
; A live medium block is medium_block_sealed's: p 16-aligned, its header word in a medium span
; (step 1), the word exactly MEDIUM plus an arena and a kept alignment, and the seal beside it that
; of p's address and the block's size under the process's key (medium_seal in src/core/medium.h).
; Cache lines touched: the hot slot's line, its byte and record, the header word (a medium block:
; its own 16-byte header, no record).
; The pure-C build compiles entry_realloc in src/entry/alloc_fast.h instead of this file.
; layout.inc is made by the build from the C headers (src/asm_shared/layout.c).

%include "layout.inc"
%include "layout_assumptions.inc"

default rel
bits 64

extern entry_realloc_slow
extern entry_realloc_slow_region
; Every exit that is not "in place" jumps straight to the slow path, conditional jumps included:
; no second jump on a resize that moves. Once the page map has answered, the exits go to
; entry_realloc_slow_region with that answer in R8D, its third argument, so that the slow path does
; not look the pointer up again (the native C entry does the same); before that, and for a header
; word the yardstick build cannot place, to entry_realloc_slow, which looks it up.
%define SLOW entry_realloc_slow
%define SLOW_REGION entry_realloc_slow_region
; NOT_MEDIUM: a header word that is neither a small block's that stays nor a medium block's; the
; shipped build knows its region, the yardstick, which trusts the word, does not. SMALL_MOVES: a
; small header word whose size test fails; in the shipped build maybe a medium block's (its slot
; field reads 0), in the yardstick, which has tested the kind, a small block that moves.
%ifdef FASTMM_UNCHECKED
%define NOT_MEDIUM SLOW
%define SMALL_MOVES SLOW_REGION
%else
%define NOT_MEDIUM SLOW_REGION
%define SMALL_MOVES .not_small
%endif
%define FAST_L1 page_map_fast_l1
extern FAST_L1
extern page_map_fast_hot
extern span_record_tables
extern medium_block_key
global fastmm_reallocmem

section .text

; The fast copy's first-level entries are biased (src/core/page_map.h): entry i holds its
; second-level table's address less i << PAGE_MAP_L2_BITS, and every entry names a table (an
; all-zero one where no region is ours, and all of them while a mode is on), so the byte of
; address a is [entry(a >> (REGION_SHIFT + L2_BITS)) + (a >> REGION_SHIFT)]: no test, no mask.

; FastMM's in-place rule for a small block, on the header word EAX as it reads (R11 and R9 its
; scratch): a resize that moves goes to the slow path (SMALL_MOVES), which validates the pointer
; itself. A medium header word fails it at once (its slot field reads 0, so usable wraps to almost
; 2^32).
%macro SMALL_SIZE_STAYS 0
  mov r11d, eax
  shr r11d, SLOT_BYTES_SHIFT
  and r11d, SLOT_BYTES_MASK
  sub r11d, BLOCK_HEADER_SIZE        ; usable bytes
  lea r9, [rdx - 1]
  cmp r9, r11
  jae SMALL_MOVES                    ; 0, larger than usable, or negative
  lea r9, [rdx * 4 + REALLOC_SMALL_DOWNSIZE_ADDER]
  cmp r9, r11
  jb SMALL_MOVES                     ; shrinks too far
%endmacro

; Then the validation contract, from p's span record (R10), and in place.
%macro SMALL_LIVE_STAYS 0
  and eax, SMALL_HEADER_TAG_MASK
  cmp eax, [r10 + SPAN_RECORD_BITS_OFFSET]
  jne SLOW_REGION                    ; no span of this class here, or not a live block
  mov r11d, ecx
  sub r11d, [r10 + SPAN_RECORD_FIRST_OFFSET] ; the slot offset
  imul r11d, [r10 + SPAN_RECORD_DIVISOR_OFFSET]
  cmp r11d, [r10 + SPAN_RECORD_LIMIT_OFFSET]
  jae SLOW_REGION                    ; inside a block, in the uncarved tail, or past the span
  mov rax, rcx
  ret
%endmacro

; The entry is 16-aligned. Placed 26 bytes past a 32-byte boundary, where no jump of the small
; in-place path crosses or ends on one (Intel's JCC erratum, as src/win32/realloc_fast.asm places
; its entries), the small in-place resize ran no faster and a large block's, which leaves at the
; region test, 9% slower (docs/experiments).
align 16
fastmm_reallocmem:
%ifdef FASTMM_UNCHECKED
  ; The yardstick build (inline_paths.h): the header word is trusted, as FastMM trusts it.
  test rcx, rcx
  jz SLOW
  mov eax, [rcx - BLOCK_HEADER_SIZE]
  mov r8d, eax
  and r8d, BLOCK_KIND_MASK           ; the kind, FREE and outer bits
  cmp r8d, BLOCK_FLAG_SMALL
  mov r8d, REGION_MEDIUM_SPAN        ; a small or medium block's region, as the C yardstick says
  jne .not_small
  SMALL_SIZE_STAYS
  mov rax, rcx
  ret
%else
  ; p - 16 lies in the region of the header word (p is 16-aligned). The hot slot first, as the C
  ; path does (fast_header_region): its base is 16 GB aligned, so one test asks "in the slot and
  ; aligned" of p less the slot's header_base (its base plus 16: p - 16's offset in the slot), and
  ; the slot's table is loaded beside the arithmetic, not after a first-level load.
  mov r8, rcx
  sub r8, [page_map_fast_hot + PAGE_MAP_HOT_HEADER_BASE_OFFSET]
  mov r9, ~((1 << (PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS)) - 1) | (BLOCK_ALIGNMENT - 1)
  test r8, r9
  jnz .cold_lookup
  mov r10, r8
  shr r8, PAGE_MAP_REGION_SHIFT
  mov r9, [page_map_fast_hot + PAGE_MAP_HOT_L2_OFFSET] ; all zeros while a mode is on
  movzx r8d, byte [r9 + r8]          ; the region, R8D from here on
  cmp r8d, REGION_MEDIUM_SPAN
  jne SLOW_REGION                    ; small blocks live only in medium spans
  mov eax, [rcx - BLOCK_HEADER_SIZE] ; the header word
  SMALL_SIZE_STAYS
  ; p's record, from its offset in the slot (R10): found only now, so that a medium block's path
  ; does not pay for it.
  shr r10, SPAN_RECORD_GRANULE_SHIFT
  shl r10, SPAN_RECORD_SHIFT
  add r10, [page_map_fast_hot + PAGE_MAP_HOT_RECORDS_OFFSET]
  SMALL_LIVE_STAYS
%endif

; Not a small block that stays: a live medium block that stays (medium_stays_in_place in
; src/core/inline_paths.h), else the slow path. EAX is the header word; p is 16-aligned and its
; header word in a medium span (the yardstick build trusts the header word alone). Placed 8 bytes
; past a 32-byte boundary, where none of its jumps (with the compare fused into it) crosses or
; ends on one, which Intel's cores with the JCC erratum fix run from the legacy decoders: the
; medium in-place resize 4-5% faster than 16-aligned (docs/experiments).
align 32
  times 8 int3                       ; never run
.not_small:
  mov r11d, eax
  and r11d, ~MEDIUM_HEADER_VARIABLE_BITS
  cmp r11d, BLOCK_FLAG_MEDIUM
  jne NOT_MEDIUM                     ; not exactly MEDIUM, an arena and a kept alignment
  mov r11d, [rcx - MEDIUM_SIZE_BELOW] ; the block's size
%ifndef FASTMM_UNCHECKED
  imul eax, ecx, -MEDIUM_SEAL_MULTIPLIER_NEGATED
  xor eax, [medium_block_key]
  xor eax, r11d
  cmp eax, [rcx - MEDIUM_SEAL_BELOW]
  jne SLOW_REGION                    ; no seal of this address and size: not a live block
%endif
  sub r11d, MEDIUM_HEADER_SIZE       ; usable bytes
  cmp rdx, r11
  ja SLOW_REGION                     ; larger than usable, or negative
  shr r11, 1
  cmp rdx, r11
  jb SLOW_REGION                     ; below half its usable size: a smaller block
  mov rax, rcx
  ret

%ifndef FASTMM_UNCHECKED
; p - 16 is not in the hot slot, or misaligned: a misaligned pointer is refused, then the
; two-level lookup of RAX = p - 16, which also refuses an address beyond the map (NULL wraps past
; it), and the record from the slot's record table (R10), R8D the region; then the small
; block's tests, as on the hot path.
.cold_lookup:
  lea rax, [rcx - BLOCK_ALIGNMENT]
  test al, BLOCK_ALIGNMENT - 1
  jnz SLOW
  mov r11, rax
  shr r11, PAGE_MAP_REGION_SHIFT + PAGE_MAP_L2_BITS
  cmp r11, 1 << (PAGE_MAP_ADDRESS_BITS_64 - PAGE_MAP_REGION_SHIFT - PAGE_MAP_L2_BITS)
  jae SLOW
  lea r9, [FAST_L1]
  mov r9, [r9 + r11 * 8]             ; never empty: not ours, or a mode on, reads zeros
  mov r10, rax
  shr r10, PAGE_MAP_REGION_SHIFT
  movzx r8d, byte [r9 + r10]
  cmp r8d, REGION_MEDIUM_SPAN
  jne SLOW_REGION
  lea r9, [span_record_tables]
  mov r9, [r9 + r11 * 8]             ; made before the map marked the span
  mov r10, rax
  shr r10, SPAN_RECORD_GRANULE_SHIFT
  and r10d, (1 << SPAN_RECORD_TABLE_BITS) - 1
  shl r10, SPAN_RECORD_SHIFT
  add r10, r9                        ; p's record
  mov eax, [rcx - BLOCK_HEADER_SIZE] ; the header word
  SMALL_SIZE_STAYS
  SMALL_LIVE_STAYS
%endif

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
