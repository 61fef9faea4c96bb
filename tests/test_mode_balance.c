/* SPDX-License-Identifier: MIT */
/* Unbalanced exits: a mode's nesting counter never goes below zero (fastmm.h, "Debug mode"), so
 * a library that leaves a mode it never entered cannot turn that mode off for the program's
 * later Enter. For debug mode and both erase modes: three exits, then one enter leaves the mode
 * on; its exit turns it off; the nesting still counts (two enters need two exits). */
#include "test_util.h"

#include "fastmm.h"

typedef struct mode_switch {
  const char *name;
  void (*enter)(void);
  void (*leave)(void);
  int (*active)(void);
} mode_switch;

static void debug_enter(void) {
  fastmm_enter_debug_mode();
}
static void debug_leave(void) {
  fastmm_exit_debug_mode();
}

static void check_mode(const mode_switch *m) {
  CHECK_MSG(m->active() == 0, "%s on at the start", m->name);
  for (int i = 0; i < 3; i++)
    m->leave();
  CHECK_MSG(m->active() == 0, "%s on after three exits", m->name);
  m->enter();
  CHECK_MSG(m->active() == 1, "%s off after three exits and one enter", m->name);
  /* The mode works: a block made now is what the mode makes. */
  unsigned char *p = (unsigned char *)fastmm_getmem(40);
  CHECK(p != NULL);
  CHECK(fastmm_freemem(p) == FASTMM_OK);
  m->leave();
  CHECK_MSG(m->active() == 0, "%s still on after its exit", m->name);
  m->enter();
  m->enter();
  m->leave();
  CHECK_MSG(m->active() == 1, "%s off after two enters and one exit", m->name);
  m->leave();
  CHECK_MSG(m->active() == 0, "%s on after two enters and two exits", m->name);
}

int main(void) {
  const mode_switch modes[] = {
      {"debug mode", debug_enter, debug_leave, fastmm_debug_mode_active},
      {"erase freed", fastmm_begin_erase_freed_block_content, fastmm_end_erase_freed_block_content,
       fastmm_erase_freed_block_content_active},
      {"erase allocated", fastmm_begin_erase_allocated_block_content,
       fastmm_end_erase_allocated_block_content, fastmm_erase_allocated_block_content_active},
  };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    check_mode(&modes[i]);
  CHECK_EQ(fastmm_get_debug_event_count(FASTMM_EVENT_INVALID_POINTER), 0);
  CHECK_EQ(fastmm_check_heap(), 0);
  return tu_finish("test_mode_balance");
}
