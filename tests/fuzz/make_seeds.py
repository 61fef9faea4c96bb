#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hand-made seeds of fuzz_heap's corpus (tests/fuzz/corpus/seed-*).

The encoding is fuzz_heap.c's: an opcode byte (op % 23 picks the operation; 19 with the top bit
set is the forged header, without it flush and check), a slot byte, then
the operation's arguments; a size is a selector byte (selector % 10: 0-1 a boundary-table
index, 2 a 16-bit small size, 3 a 24-bit medium size, 4 a 24-bit large size, 5 the usable
size plus a signed byte, 6 the small in-place downsize edge, 7 half the usable size, 8 growth,
9 a tiny size). The corpus also holds inputs libFuzzer found (merged with -merge=1); this
script only rewrites the seed-* files.

    python3 tests/fuzz/make_seeds.py
"""
import os
import random

GET, ALLOC, FREE, REALLOC, REALLOC0, FILL = 0, 2, 3, 5, 8, 9
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
    s += op(DGET | (0x40 if i % 2 else 0), i, boundary(i * 5))
    s += op(DREALLOC, i, boundary(i * 11 + 1))
    s += op(NEG, i, bytes([i]))
    if i % 2:
        s += op(DFREE, i)
s += op(REALLOC0, 3) + op(REALLOC0 | 0x80, 5) + op(CHECK, 0)
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
