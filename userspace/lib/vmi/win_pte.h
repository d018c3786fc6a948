/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Windows' view of not-present x64 PTEs (bit positions from the profile):
 *   transition   Transition=1, Prototype=0: the page is still in RAM on the
 *                standby or modified list, at PageFrameNumber;
 *   prototype    Prototype=1: ProtoAddress is the VA of a prototype PTE in
 *                a section's segment, which is valid, in transition, or
 *                refers to the file (subsection) or the VAD;
 *   page file    PageFileHigh != 0: paged out;
 *   otherwise    demand-zero / never touched.
 */
#ifndef SVMTRACE_VMI_WIN_PTE_H
#define SVMTRACE_VMI_WIN_PTE_H

#include "lib/vmi/win_session.h"
#include "lib/vmi/x86_walk.h"

/* A decoder for x86_translate() bound to @vmi (prototype PTEs are followed). */
struct x86_decoder win_pte_decoder(const struct svmtrace_vmi *vmi);

#endif
