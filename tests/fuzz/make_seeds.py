#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hand-made seeds of fuzz_heap's corpus (tests/fuzz/corpus/seed-*).

The encoding is fuzz_heap.c's: an opcode byte (op % 23 picks the operation; 19 with the top bit
set is the forged header, without it flush and check; op // 23 % 4 picks the entry point of the
operations that take any: the C exports, Delphi's record, its bound form, Free Pascal's record;
op // 23 % 3 that of the Pascal operations 10-12: Delphi, bound Delphi, Free Pascal), a slot
byte, then the operation's arguments; a size is a selector byte (selector % 10: 0-1 a boundary-table
index, 2 a 16-bit small size, 3 a 24-bit medium size, 4 a 24-bit large size, 5 the usable
size plus a signed byte, 6 the small in-place downsize edge, 7 half the usable size, 8 growth,
9 a tiny size). The corpus also holds inputs libFuzzer found (merged with -merge=1); this
script only rewrites the seed-* files.

    python3 tests/fuzz/make_seeds.py
"""
import os
import random

GET, GET_ANY, ALLOC, FREE, FREE_ANY, REALLOC, LARGE, PENDING, REALLOC0, FILL = range(10)
DGET, DREALLOC, DFREE, NEG, HUGE, INTERIOR, STALE, FOREIGN, LIMIT, CHECK = (
    10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
DEBUG, ERASE, LEAK = 20, 21, 22
FORGED = 19 + 23 * 5  # 134: op % 23 == 19 with the top bit set


def boundary(i):
    return bytes([0, i & 0xFF])


def small(n):
    return bytes([2, n & 0xFF, (n >> 8) & 0xFF])


def medium(n):
    return bytes([3, n & 0xFF, (n >> 8) & 0xFF, (n >> 16) & 0xFF])


def large(n):
    return bytes([4, n & 0xFF, (n >> 8) & 0xFF, (n >> 16) & 0xFF])


def around(delta, scale=0):
    return bytes([5 | (scale << 4), delta & 0xFF])


def small_edge(k):
    return bytes([6 | (k << 4)])


def half_edge(k):
    return bytes([7 | (k << 4)])


def grow(extra=0):
    return bytes([8 | (extra << 4)])


def op(code, slot, *args):
    return bytes([code, slot]) + b"".join(args)


def opcode(code, entry, ways, bit=0, on=False):
    """The first opcode byte for operation `code` through entry point `entry` of `ways` (4:
    0 C, 1 Delphi, 2 bound Delphi, 3 Free Pascal; 3 for the Pascal operations 10-12: 0 Delphi,
    1 bound Delphi, 2 Free Pascal) with `bit` set or clear (0x40 AllocMem, 0x80 freed twice)."""
    for b in range(256):
        if b % 23 == code and b // 23 % ways == entry and bool(b & bit) == on:
            return b
    raise ValueError((code, entry, ways, bit, on))


def via(code, entry, bit=0, on=False):
    return opcode(code, entry, 4, bit, on)


def pascal(code, record, bit=0, on=False):
    return opcode(code, record, 3, bit, on)


seeds = {}

# Every boundary size allocated, resized to another boundary, its usable bytes used, freed.
s = b""
for i in range(0, 200):
    s += op(GET, i % 48, boundary(i))
    s += op(FILL, i % 48)
    s += op(REALLOC, i % 48, boundary(i * 7 + 3))
    if i % 3 == 0:
        s += op(FREE, i % 48)
s += op(CHECK, 0)
seeds["boundaries"] = s

# A string being appended to: small growth through every class into medium and large.
s = op(GET, 1, small(1))
for i in range(40):
    s += op(REALLOC, 1, grow(i % 16)) + op(FILL, 1)
s += op(REALLOC, 1, boundary(3)) + op(CHECK, 0)
seeds["append"] = s

# Downsizes at the in-place edges, small, medium and large.
s = b""
for n, slot in ((2000, 2), (300, 3), (40000, 4), (400000, 5), (1500000, 6)):
    s += op(GET, slot, medium(n) if n < 524272 else large(n)) + op(FILL, slot)
    for k in range(3):
        s += op(REALLOC, slot, small_edge(k)) + op(REALLOC, slot, half_edge(k))
        s += op(REALLOC, slot, around(-7, 3)) + op(REALLOC, slot, around(9, 2))
s += op(CHECK, 0)
seeds["downsize-edges"] = s

# Memory usage limit: mappings fail while it is set, GetMem and ReallocMem return NULL and
# leave blocks intact; then it is lifted and the manager works again.
s = op(GET, 7, medium(100000)) + op(GET, 8, small(100)) + op(GET, 9, large(800000))
s += op(LIMIT, 0, bytes([200]))
for i in range(6):
    s += op(GET, 10 + i, large(900000 + i * 70000))
    s += op(REALLOC, 7, medium(300000 + i * 30000))
    s += op(REALLOC, 9, large(2000000 + i * 100000))
    s += op(GET, 20 + i, medium(200000))
s += op(LIMIT, 0, bytes([0]))
s += op(REALLOC, 9, large(3000000)) + op(GET, 30, large(1000000)) + op(CHECK, 0)
seeds["memory-limit"] = s

# Hostile pointers: interior, stale after free and after a moving realloc, foreign, and
# impossible and negative sizes.
s = b""
for slot, size in ((11, small(24)), (12, small(2000)), (13, medium(3000)), (14, medium(200000)),
                   (15, large(700000))):
    s += op(GET, slot, size) + op(FILL, slot)
    for k in range(4):
        s += op(INTERIOR, slot, bytes([16 * k + 1, 0, 0, k]))
    s += op(NEG, slot, bytes([slot])) + op(HUGE, slot, bytes([slot]))
s += op(FREE, 11) + op(FREE, 13) + op(FREE, 15)
s += op(REALLOC, 12, large(600000)) + op(REALLOC, 14, small(10))
for k in range(8):
    s += op(STALE, 0, bytes([k])) + op(FOREIGN, 0, bytes([(k * 37) & 0xFF, k]))
s += op(CHECK, 0)
seeds["hostile"] = s

# Small headers forged inside live blocks of every kind (the validation contract): the block's own
# span, class and slot named from inside it; a live block's header copied; that block's span
# named from here; raw bits with the kind SMALL; in and out of debug mode.
s = b""
blocks = ((0, small(40)), (1, small(300)), (2, small(1000)), (3, small(2500)), (4, medium(5000)),
          (5, medium(100000)), (6, large(600000)))
for slot, size in blocks:
    s += op(GET, slot, size) + op(FILL, slot)
for rnd in range(3):
    for slot, _ in blocks:
        for how in range(4):
            other = (slot + how + 1) % len(blocks)
            s += op(FORGED, slot, bytes([how + 4 * rnd, other, (7 * how + rnd) & 0xFF, rnd, 0,
                                         (slot * 29 + how) & 0xFF, 0x21 * how, 0x5A]))
    if rnd == 1:
        s += op(DEBUG, 0, bytes([2]))
        for slot, size in blocks:
            s += op(GET, 10 + slot, size) + op(FILL, 10 + slot)
            s += op(FORGED, 10 + slot, bytes([0, slot, 1, 0, 0, 0, 0, 0]))
s += op(DEBUG, 0, bytes([0])) + op(CHECK, 0)
seeds["forged-headers"] = s

# The Delphi record: GetMem, AllocMem, ReallocMem, FreeMem, with negative sizes in between.
s = b""
for i in range(24):
    s += op(pascal(DGET, 0, 0x40, i % 2 == 1), i, boundary(i * 5))
    s += op(DREALLOC, i, boundary(i * 11 + 1))
    s += op(NEG, i, bytes([i]))
    if i % 2:
        s += op(DFREE, i)
s += op(REALLOC0, 3) + op(via(REALLOC0, 1), 5) + op(CHECK, 0)
seeds["delphi"] = s

# Many small blocks of one class freed out of order: span free lists, thread-cache flushes.
s = b""
for i in range(48):
    s += op(GET, i, small(48))
for i in range(0, 48, 2):
    s += op(FREE, i)
s += op(CHECK, 0)
for i in range(0, 48, 2):
    s += op(ALLOC, i, small(48))
for i in range(48):
    s += op(FREE, (i * 7) % 48)
s += op(CHECK, 0)
seeds["small-churn"] = s

# Medium blocks freed so that neighbours merge, then grown in place into the freed space.
s = b""
for i in range(16):
    s += op(GET, i, medium(5000 + 100 * i))
for i in range(1, 16, 2):
    s += op(FREE, i)
for i in range(0, 16, 2):
    s += op(REALLOC, i, around(100, 15))
s += op(CHECK, 0)
seeds["medium-merge"] = s

# Debug mode: debug blocks beside ordinary ones, resized and freed in both modes, double frees
# and stale pointers of quarantined blocks; the erase modes.
s = op(GET, 0, small(40)) + op(GET, 1, medium(9000)) + op(FILL, 0)
s += op(DEBUG, 0, bytes([4]))
for i in range(2, 12):
    s += op(GET, i, boundary(i * 13)) + op(FILL, i)
s += op(REALLOC, 0, small(80)) + op(REALLOC, 2, medium(4000)) + op(FREE, 1) + op(FREE, 3)
s += op(STALE, 0, bytes([0])) + op(STALE, 0, bytes([1])) + op(INTERIOR, 4, bytes([33, 0, 0, 1]))
s += op(GET, 12, small(0)) + op(CHECK, 0)
s += op(DEBUG, 0, bytes([0]))  # off: the quarantine is freed
s += op(REALLOC, 4, large(600000)) + op(FREE, 5) + op(STALE, 0, bytes([2])) + op(CHECK, 0)
s += op(ERASE, 0, bytes([1])) + op(ERASE, 0, bytes([0]))
for i in range(6, 12):
    s += op(GET, 20 + i, boundary(i * 5)) + op(ALLOC, 30 + i, small(i * 300))
    s += op(FREE, i) + op(FREE, 20 + i)
s += op(ERASE, 0, bytes([1])) + op(ERASE, 0, bytes([0])) + op(CHECK, 0)
seeds["debug-mode"] = s

# Every entry point: blocks made, resized, measured and freed through the C exports, Delphi's
# record, its bound form and Free Pascal's (FreeMem and FreeMemSize by the block's seed), each
# block freed through another one than made it; ReallocMem to 0 and of nil through each.
s = b""
for e in range(4):
    for i in range(8):
        slot = 8 * e + i
        s += op(via(GET_ANY, e, 0x40, i % 2 == 1), slot, boundary(e * 40 + i * 9))
        s += op(via(REALLOC0, (e + 1) % 4) if i == 7 else pascal(DREALLOC, e % 3), slot,
                boundary(i * 31 + e))
    for i in range(0, 8, 2):
        s += op(via(FREE_ANY, (e + i // 2) % 4), 8 * e + i)
    for r in range(3):
        s += op(pascal(DGET, r), 40 + r, small(100 + r)) + op(pascal(DFREE, (r + 1) % 3), 40 + r)
        s += op(pascal(DREALLOC, r), 44 + r, medium(3000 + r))  # ReallocMem(nil)
s += op(CHECK, 0)
seeds["entry-points"] = s

# Bad pointers through every entry: double frees at once (FREE_ANY with the top bit), stale,
# interior and foreign pointers, in and out of debug mode.
s = b""
for rnd in range(2):
    for i, size in enumerate((small(24), small(900), medium(5000), medium(300000), large(800000))):
        s += op(GET, i, size) + op(FILL, i)
        s += op(INTERIOR, i, bytes([17 + i, 0, 0, 1]))
        s += op(via(FREE_ANY, i % 4, 0x80, True), i)  # freed, then again through every entry
        s += op(STALE, 0, bytes([i])) + op(FOREIGN, 0, bytes([i * 41 & 0xFF, i]))
    s += op(DEBUG, 0, bytes([4 + rnd * 2]))
s += op(DEBUG, 0, bytes([0])) + op(CHECK, 0)
seeds["bad-pointers"] = s

# Large blocks grown and shrunk in place by random amounts (LARGE's how byte: bit 6 shrinks,
# how % 6 scales the amount), through every entry, one of them while debug mode is on.
s = b""
for e in range(4):
    for k in range(6):
        s += op(via(LARGE, e), 20 + e, bytes([k | (0x40 if k == 4 else 0), 0x10 * k + 3, k]))
        if k == 2:
            s += op(FILL, 20 + e)
    if e == 2:
        s += op(DEBUG, 0, bytes([0]))
s += op(DEBUG, 0, bytes([0])) + op(CHECK, 0)
seeds["large-growth"] = s

# Modes nested up to three deep and left while blocks live (debug mode through the export and
# through fastmm_get_memory_manager_debug's record; both erase modes); pending frees processed,
# free memory released and an idle pass, with the quarantine full and empty.
s = b""
for i in range(6):
    s += op(GET, i, boundary(i * 17)) + op(FILL, i)
for k in (1, 3, 1):  # deeper: enter, through the record, enter
    s += op(DEBUG, 0, bytes([k])) + op(GET, 10 + k, small(64 * k)) + op(FREE, 10 + k)
s += op(ERASE, 0, bytes([3])) + op(ERASE, 0, bytes([3])) + op(ERASE, 0, bytes([2]))
for i in range(6):
    s += op(FREE, i) + op(GET, i, boundary(i * 23)) + op(PENDING, 0, bytes([i % 3]))
for k in range(3):
    s += op(DEBUG, 0, bytes([0])) + op(PENDING, 0, bytes([k])) + op(ERASE, 0, bytes([k % 2]))
s += op(CHECK, 0)
seeds["modes-nested"] = s

# Out of memory through the Pascal records: under a memory limit, Free Pascal's GetMem,
# AllocMem and ReAllocMem report 203 (heap_error) or give nil (ReturnNilIfGrowHeapFails, the
# limit byte's parity), the blocks kept.
s = op(GET, 1, large(700000)) + op(pascal(DGET, 2), 2, medium(300000))
for k in (200, 201):
    s += op(LIMIT, 0, bytes([k]))
    for i in range(4):
        s += op(pascal(DGET, 2, 0x40, i % 2 == 1), 10 + i, large(1500000 + i * 300000))
        s += op(pascal(DREALLOC, 2), 2, large(2500000 + i * 100000))
        s += op(pascal(DREALLOC, 1), 1, large(3000000 + i * 100000))
        s += op(HUGE, 2, bytes([i]))
    s += op(LIMIT, 0, bytes([0]))
s += op(CHECK, 0)
seeds["pascal-out-of-memory"] = s

# A large block freed, the free memory released (given back to the OS), then its stale pointer
# through every entry: the bound records must report it as ours (FUZZ_UNREADABLE_IS_OURS);
# and again with a medium block whose span goes back.
s = op(GET, 0, large(3000000)) + op(FILL, 0) + op(FREE, 0) + op(PENDING, 0, bytes([1]))
s += op(STALE, 0, bytes([0])) + op(GET, 1, medium(200000)) + op(FREE, 1)
s += op(PENDING, 0, bytes([1])) + op(STALE, 0, bytes([1])) + op(CHECK, 0)
seeds["stale-released"] = s

rng = random.Random(7)
for k in range(4):
    seeds["random-%d" % k] = bytes(rng.randrange(256) for _ in range(600))

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "corpus")
os.makedirs(corpus, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(corpus, "seed-" + name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), corpus))
