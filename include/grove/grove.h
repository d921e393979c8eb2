/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The library as a whole: what a program using it calls once. */
#ifndef GROVE_GROVE_H
#define GROVE_GROVE_H

/*
 * Readies the process for grove's short commands, once, before anything else: the heap keeps
 * what is freed for reuse instead of giving its top back (and faulting it in again), and the
 * 256 KiB nearly every command uses (opening the log, the options) is populated in a few calls
 * (a page fault costs 10-20 syscalls on a VM with shadow page tables); the scan reserves more,
 * sized to its request. Optional: grove works without it, a little slower.
 */
void grove_process_start(void);

#endif
