/* SPDX-License-Identifier: MIT */
/* Which Delphi or Free Pascal class an object block belongs to (delphi_class.c), read through
 * the VMT its first pointer names. The one place that knows the VMT's layout: the event log's
 * text and the Pascal unit's reports ask here. */
#ifndef FASTMM_DELPHI_CLASS_H
#define FASTMM_DELPHI_CLASS_H

#include <stddef.h>

#include "fastmm.h"

/* Room for any class name and its 0 (a ShortString holds 255 characters). */
#define DELPHI_CLASS_NAME_MAX 256

/* If `vmt` is a class's VMT whose instances fit in `user_size` bytes: 1, its name in out (at
 * most size - 1 characters and a 0) and its instance size in *instance_size (when not NULL);
 * else 0. Everything is read only after the OS says it can be. */
int delphi_class_of_vmt(const void *vmt, size_t user_size, char *out, size_t size,
                        size_t *instance_size);
/* The class of the object at p, which holds `size` bytes (SIZE_MAX when not known): the VMT its
 * first pointer names, with the name in out (out may be NULL), else NULL and "" in out. p is
 * read only after the OS says it can be. */
const void *delphi_class_of_object(const void *p, size_t size, char *out, size_t out_size);
/* The class of an event's block: for a freed block the class that last used it (FastMM5's
 * PreviouslyUsedByClass), else the VMT its first pointer names. 0 when the event has no
 * trusted header or the block is no object. */
int delphi_class_of_event(const fastmm_debug_event *e, char *out, size_t size);
/* Non-zero when the event's block was freed (its trusted header says so). */
int debug_event_freed(const fastmm_debug_event *e);

#endif
