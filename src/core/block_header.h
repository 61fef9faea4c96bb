/* SPDX-License-Identifier: MIT */
/* The block header: the contract between the C core and the assembly fast paths.
 *
 * Every block handed out, of every kind, has a 32-bit header word in the 4 bytes just before
 * the user pointer: `*(uint32_t *)(p - 4)`. User pointers are always 16-byte aligned, on Win32,
 * Win64 and natively. The low five bits say what the block is (FastMM5's numbering); exactly one
 * kind bit is set in a small, medium or large block. The rest of the word depends on the kind.
 *
 *   bit  0      FREE         the block is free (in a span free list, a thread cache or a pending
 *                            list)
 *   bit  1      DEBUG_OUTER  the block holds a debug block (FastMM5's CHasDebugInfoFlag): it is
 *                            the debug block's "outer" block, the manager's and not the program's
 *   bit  2      SMALL        small block, carved from a small-block span
 *   bit  3      MEDIUM       medium block, binned in a medium span (a small span is one of these)
 *   bit  4      LARGE        large block, mapped from the OS by itself
 *
 * Debug blocks (src/modes/debug_block.h) are laid out as FastMM5's: a 64-byte header at the
 * start of their outer block, the user pointer 64 bytes after it. Their header word is the
 * header's last four bytes, DebugFeatureFlags | StackTraceEntryCount << 8 | DebugBlockFlags << 16
 * with DebugFeatureFlags in 0..3 and DebugBlockFlags 0x20 (live) or 0x21 (freed): bits 2-4 are
 * clear, so no debug header word is ever taken for a small, medium or large block, and the
 * slow paths recognise one by block_header_is_debug. Bit 1 of an outer block's word keeps a stale
 * pointer to it off every fast path: its word no longer matches its span's record (below), as a
 * FREE one does not.
 *
 * Small blocks (SMALL set):
 *   bits  5-10  size class index (0 .. SMALL_CLASS_COUNT-1)
 *   bits 11-18  slot size / 16: the block's bytes including its header; usable = slot - 4
 *   bits 19-31  slot offset / 16: the distance from the span's first block to p, a whole
 *               number of slots; the span header is SMALL_SPAN_HEADER_SIZE bytes before the
 *               first block, so the span of a block already validated (a cached or free one)
 *               is found from the header word alone (spans are at most 128 KB)
 *   Its usable size is `((h >> 11) & 0xFF) * 16 - 4`: one load, no table. Bits 0-18 (kind,
 *   class, slot: SMALL_HEADER_TAG_MASK) are the same in every live block of a span, and the
 *   span's records (span_record.h), out of the program's reach, keep them: the header word is
 *   trusted only once the record of its block's 16 KB granule carries those bits and places p
 *   a whole number of slots after the span's first block, below its carved end (small.h,
 *   small_block_span: the validation contract, docs/architecture-reference.md). The offset
 *   field is not part of the check.
 *
 * Medium blocks (MEDIUM set): a 16-byte header before the user pointer
 *   p - 16  uint32 prev_size   bytes of the block before this one in its span, 0 for the first
 *   p - 12  uint32 size        bytes of this block, header included (a multiple of 16)
 *   p -  8  uint32 seal: of a live block, medium_seal(p, size) (medium.h), a keyed mark of its
 *           own address and size, which data a program wrote does not carry; anything in a
 *           free block
 *   p -  4  uint32 header word: bit 5 SMALL_SPAN (the block holds a small-block span),
 *           bit 6 SENTINEL (the end marker of a span, never handed out),
 *           bits 8-15 arena index,
 *           bits 16-20 the alignment fastmm_getmem_aligned asked for, as its log2 (0: none),
 *           kept when ReallocMem moves the block
 *
 * Large blocks (LARGE set): a 64-byte header at the start of the block (struct large_header in
 *   large.h), the user pointer right after it, its header word the header's last field. A block
 *   fastmm_getmem_aligned aligns coarser than 64 has its user pointer further in (up to 64 KB)
 *   and a header word of its own at p - 4. User pointers of large blocks are 64-aligned.
 *
 * The values below are the ones src/win32/ and src/win64/ assemble against (through the
 * build's layout.inc, which tests/test_asm_layout.c checks); tests/test_header_contract.c
 * checks the layout itself. */
#ifndef FASTMM_BLOCK_HEADER_H
#define FASTMM_BLOCK_HEADER_H

#include <stdint.h>

#define BLOCK_HEADER_SIZE 4u /* bytes of the header word before every user pointer */
#define BLOCK_ALIGNMENT 16u  /* every user pointer is a multiple of this */

#define BLOCK_FLAG_FREE 0x01u
#define BLOCK_FLAG_DEBUG_OUTER 0x02u
#define BLOCK_FLAG_SMALL 0x04u
#define BLOCK_FLAG_MEDIUM 0x08u
#define BLOCK_FLAG_LARGE 0x10u
#define BLOCK_KIND_MASK 0x1Fu /* the free bit, the outer bit and the three kind bits */
#define BLOCK_KINDS (BLOCK_FLAG_SMALL | BLOCK_FLAG_MEDIUM | BLOCK_FLAG_LARGE)

/* A debug block's header word: DebugBlockFlags in the high half (FastMM5's CIsDebugBlockFlag,
 * with CBlockIsFreeFlag once freed). */
#define DEBUG_WORD_FLAGS_SHIFT 16u
#define DEBUG_WORD_LIVE 0x20u
#define DEBUG_WORD_FREED 0x21u

#define SMALL_CLASS_SHIFT 5u
#define SMALL_CLASS_MASK 0x3Fu
#define SMALL_SLOT_SHIFT 11u
#define SMALL_SLOT_MASK 0xFFu
#define SMALL_SLOT_UNIT 16u
#define SMALL_SPAN_OFFSET_SHIFT 19u
#define SMALL_SPAN_OFFSET_UNIT 16u
/* The bits a live small block's header shares with its span's tag: kind (exactly SMALL, so a
 * free or flagged block never matches), class and slot. */
#define SMALL_HEADER_TAG_MASK ((1u << SMALL_SPAN_OFFSET_SHIFT) - 1u)
/* The span header's bytes: the first block's user pointer sits this far into its span. */
#define SMALL_SPAN_HEADER_SIZE 64u

#define MEDIUM_HEADER_SIZE 16u
#define MEDIUM_FLAG_SMALL_SPAN 0x20u
#define MEDIUM_FLAG_SENTINEL 0x40u
#define MEDIUM_ARENA_SHIFT 8u
#define MEDIUM_ARENA_MASK 0xFFu
#define MEDIUM_KEEP_SHIFT 16u
#define MEDIUM_KEEP_MASK 0x1Fu

#define LARGE_HEADER_SIZE 64u

static inline uint32_t block_header(const void *p) {
  return ((const uint32_t *)p)[-1];
}

static inline void block_set_header(void *p, uint32_t h) {
  ((uint32_t *)p)[-1] = h;
}

/* Is h the header word of a debug block (live or freed)? Its kind bits are clear and its high
 * half is FastMM5's DebugBlockFlags. */
static inline int block_header_is_debug(uint32_t h) {
  return (h & BLOCK_KINDS) == 0 && ((h >> DEBUG_WORD_FLAGS_SHIFT) | 1u) == DEBUG_WORD_FREED;
}

/* The header of the block `span_offset` bytes into its span (at least SMALL_SPAN_HEADER_SIZE). */
static inline uint32_t small_header_make(unsigned class_index, unsigned slot_size,
                                         unsigned span_offset) {
  return BLOCK_FLAG_SMALL | ((uint32_t)class_index << SMALL_CLASS_SHIFT) |
         ((uint32_t)(slot_size / SMALL_SLOT_UNIT) << SMALL_SLOT_SHIFT) |
         ((uint32_t)((span_offset - SMALL_SPAN_HEADER_SIZE) / SMALL_SPAN_OFFSET_UNIT)
          << SMALL_SPAN_OFFSET_SHIFT);
}

static inline unsigned small_header_class(uint32_t h) {
  return (h >> SMALL_CLASS_SHIFT) & SMALL_CLASS_MASK;
}

static inline uint32_t small_header_slot_size(uint32_t h) {
  return ((h >> SMALL_SLOT_SHIFT) & SMALL_SLOT_MASK) * SMALL_SLOT_UNIT;
}

static inline uint32_t small_header_usable(uint32_t h) {
  return small_header_slot_size(h) - BLOCK_HEADER_SIZE;
}

/* Bytes from the span's first block to the block: a multiple of the slot in a real block. */
static inline uint32_t small_header_slot_offset(uint32_t h) {
  return (h >> SMALL_SPAN_OFFSET_SHIFT) * SMALL_SPAN_OFFSET_UNIT;
}

/* Bytes from the span header to the block. */
static inline uint32_t small_header_span_offset(uint32_t h) {
  return small_header_slot_offset(h) + SMALL_SPAN_HEADER_SIZE;
}

#endif
