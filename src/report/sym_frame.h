/* SPDX-License-Identifier: MIT */
/* One stack frame's names, as a symbol reader found them for a module-relative address. The
 * strings belong to the reader's table and live as long as it; "" where unknown. */
#ifndef FASTMM_REPORT_SYM_FRAME_H
#define FASTMM_REPORT_SYM_FRAME_H

typedef struct sym_frame {
  const char *file;    /* the source file, as the debug information names it: "Unit1.pas" */
  const char *unit;    /* the Pascal unit, or the C file's name without its extension */
  const char *routine; /* "TForm1.Button1Click", "main"; nested routines as the format has them */
  unsigned line;       /* 0 where unknown */
} sym_frame;

#endif
