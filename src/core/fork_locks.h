/* SPDX-License-Identifier: MIT */
/* The manager's locks held across fork(): the child of a fork made while other threads were in
 * the manager (holding an arena's lock, half way through a span's lists) gets a heap no thread is
 * changing, and its only thread can allocate and free. */
#ifndef FASTMM_FORK_LOCKS_H
#define FASTMM_FORK_LOCKS_H

/* Registers the hooks with the OS layer (prim_on_fork): before a fork the forking thread takes
 * every lock of the core, outermost first as the allocation paths nest them (the start-up, a
 * pass giving memory back, the small managers of each arena and the aligned ones, the medium
 * arenas, the large blocks, the expected-leak registry, the thread caches' registry, the page
 * map); after it, parent and child release them. The heap's start-up calls it once. */
void fork_locks_init(void);

#endif
