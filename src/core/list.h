/* SPDX-License-Identifier: MIT */
/* An intrusive doubly linked list: the node sits inside what it links (a span, a free block,
 * a thread cache, a debug header, a large block's header), so linking costs no allocation. A
 * list is a sentinel node, circular: an empty list's sentinel points at itself, and insertion
 * and removal have no special case for the ends (no test, no branch). */
#ifndef FASTMM_LIST_H
#define FASTMM_LIST_H

#include <stddef.h>

typedef struct list_node {
  struct list_node *next;
  struct list_node *prev;
} list_node;

/* A sentinel's initializer for a list defined statically: LIST_INIT(name). */
#define LIST_INIT(name)                                                                            \
  { &(name), &(name) }

/* The struct that holds `node` as its member `member`. */
#define list_entry(node, type, member) ((type *)((char *)(node)-offsetof(type, member)))

static inline void list_init(list_node *list) {
  list->next = list;
  list->prev = list;
}

static inline int list_empty(const list_node *list) {
  return list->next == list;
}

/* The first node, or NULL when the list is empty. */
static inline list_node *list_first(const list_node *list) {
  return list->next != list ? list->next : NULL;
}

/* Inserts n after `at`: at the front when `at` is the sentinel. */
static inline void list_insert_after(list_node *at, list_node *n) {
  n->prev = at;
  n->next = at->next;
  at->next->prev = n;
  at->next = n;
}

/* Inserts n before `at`: at the back when `at` is the sentinel. */
static inline void list_insert_before(list_node *at, list_node *n) {
  list_insert_after(at->prev, n);
}

static inline void list_remove(list_node *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
}

#endif
