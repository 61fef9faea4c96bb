/* SPDX-License-Identifier: MIT */
/* What exit_check_dll.c and test_exit_check.c share: the exit codes the DLL's
 * DLL_PROCESS_DETACH ends the process with once fastmm_check_heap has returned. */
#ifndef FASTMM_EXIT_CHECK_H
#define FASTMM_EXIT_CHECK_H
#define EXIT_CHECK_OK 0x5A  /* 0 or FASTMM_CHECK_HEAP_LOCKED */
#define EXIT_CHECK_BAD 0x5B /* any other result */
#endif
