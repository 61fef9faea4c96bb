/* Copying and zeroing without the CRT where Delphi's register rules matter (copy.c says why). */
#ifndef FASTMM_COPY_H
#define FASTMM_COPY_H

#include <stddef.h>

void fmm_copy(void *dst, const void *src, size_t n);
void fmm_zero(void *dst, size_t n);

#endif
