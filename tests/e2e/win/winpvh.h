/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Windows-layout guest as QEMU boots it through libvirt
 * (vm-configs/lab-win.xml): svmtrace-e2e-winpvh adds the boot stub
 * (pvhboot.S) and a copy of low memory to the image and writes an ELF with
 * a PVH entry note.  QEMU loads every segment at its physical address
 * before SeaBIOS runs; SeaBIOS then uses low memory, so the stub first puts
 * the image's low pages back from the copy.  The image leaves 1-16 MiB
 * free (winlayout.h), which is where all of this goes.
 */
#ifndef E2E_WIN_PVH_H
#define E2E_WIN_PVH_H

#define WIN_PVH_STUB_PA	 0x800000 /* pvhboot.S, linked here, one page */
#define WIN_PVH_STUB_MAX 0x1000
#define WIN_PVH_PML4_PA	 0x801000 /* the stub's page tables: */
#define WIN_PVH_PDPT_PA	 0x802000 /* Windows' kernel half plus an */
#define WIN_PVH_PD_PA	 0x803000 /* identity map of the first GiB */
#define WIN_PVH_LOW_PA	 0x810000 /* copy of guest-physical [0, WIN_PVH_LOW_SIZE) */
#define WIN_PVH_LOW_SIZE 0x10000
#define WIN_PVH_END	 (WIN_PVH_LOW_PA + WIN_PVH_LOW_SIZE)

#endif /* E2E_WIN_PVH_H */
