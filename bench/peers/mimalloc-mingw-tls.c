/* SPDX-License-Identifier: MIT */
/* Built beside a mimalloc source whose Windows TLS callbacks are placed for MSVC only
 * (bench/peers/build.sh decides, bench/peers/README.md says why). Such a mimalloc puts its two
 * callbacks in arrays it means for the sections .CRT$XLB and .CRT$XLY with #pragma const_seg /
 * data_seg, which GCC ignores: the arrays land in ordinary data, the loader never calls them,
 * and mimalloc never learns that the process attached or that a thread ended. This file puts a
 * callback of its own in each of those sections, which calls mimalloc's, and refers to
 * _tls_used so that the linker keeps the CRT's TLS directory that lists them. */
#include <windows.h>

extern const PIMAGE_TLS_CALLBACK _mi_tls_callback_pre[];
extern const PIMAGE_TLS_CALLBACK _mi_tls_callback_post[];
extern const IMAGE_TLS_DIRECTORY _tls_used;

static void NTAPI peer_tls_pre(PVOID module, DWORD reason, PVOID reserved) {
  _mi_tls_callback_pre[0](module, reason, reserved);
}

static void NTAPI peer_tls_post(PVOID module, DWORD reason, PVOID reserved) {
  _mi_tls_callback_post[0](module, reason, reserved);
}

__attribute__((used)) static const void *const peer_tls_directory = &_tls_used;
__attribute__((used, section(".CRT$XLB"))) static const PIMAGE_TLS_CALLBACK peer_tls_pre_entry =
    peer_tls_pre;
__attribute__((used, section(".CRT$XLY"))) static const PIMAGE_TLS_CALLBACK peer_tls_post_entry =
    peer_tls_post;
