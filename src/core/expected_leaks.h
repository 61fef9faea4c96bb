/* SPDX-License-Identifier: MIT */
/* Blocks registered as expected leaks (Delphi's RegisterExpectedMemoryLeak, FastMM5's three
 * kinds): by pointer, counted; by class (its VMT, with the instance size) and by size, each with
 * a count. The one registry for the C API and the Pascal unit, and the one matching rule. */
#ifndef FASTMM_EXPECTED_LEAKS_H
#define FASTMM_EXPECTED_LEAKS_H

#include <stddef.h>

#include "fastmm.h"
#include "linkage.h"

/* By pointer. add_once: 1 when added, 0 when already there or out of memory (the C API's
 * rule). add: any pointer, a second registration counted (FastMM5's rule); 0 when out of
 * memory. remove: 1 when it was there (one count off, the last one removes it). */
int expected_leaks_add_once(const void *p);
int expected_leaks_add(const void *p);
int expected_leaks_remove(const void *p);
int expected_leaks_contains(const void *p);

/* By class (vmt not NULL, instance_size its instances' size) or by size (vmt NULL): `delta`
 * added to the count of (vmt, size), FastMM5's AdjustLeakEntry: 0 when delta is 0, when it would
 * take the count below zero, when a negative delta finds no registration, or when out of room;
 * a count that reaches 0 removes the registration. */
int expected_leaks_adjust(const void *vmt, size_t instance_size, ptrdiff_t size, int delta);

/* Copies up to `capacity` registrations to out (pointers first, then classes and sizes, each in
 * the registry's order); returns how many there are. */
size_t expected_leaks_list(fastmm_expected_leak *out, size_t capacity);

/* FastMM5's matching of leaked blocks (UpdateExpectedLeakList): match_begin takes a copy of the
 * class and size counts; each match of a block of `usable` bytes whose first pointer is
 * `first` is an expected leak when the block is registered by pointer, else when `first` is a
 * registered class whose instance fits, else when the closest registered size it holds has a
 * count left, and takes one off the copy's count. One matching at a time (the caller's). */
void expected_leaks_match_begin(void);
int expected_leaks_match(const void *block, size_t usable, const void *first);

/* The expected-leak registry's lock, which fork() holds too (fork_locks.c). */
struct fmm_lock;
extern FMM_HIDDEN struct fmm_lock expected_leaks_lock;

#endif
