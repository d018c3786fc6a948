/* SPDX-License-Identifier: GPL-2.0 */
/* svmtrace-vmi: what every subcommand gets, and the subcommands. */
#ifndef SVMTRACE_VMI_CMD_H
#define SVMTRACE_VMI_CMD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <svmtrace/vmi.h>

/* Exit statuses (svmtrace-vmi(1), EXIT STATUS). */
#define EXIT_USAGE	  2
#define EXIT_NOT_RESIDENT 3

struct vmi_cmd {
	const char *memory;   /* --memory FILE, or "live VM" */
	const char *profiles; /* --profiles DIR|FILE */
	bool json;	      /* --json */
	struct svmtrace_vmi_mem *mem;
};

/*
 * A /dev/svmtrace controller attached to the VM of VMM process @pid (its
 * one KVM VM), for a live memory source; dies with the reason.
 */
int vmi_cmd_attach(pid_t pid);

/* Open the session for --memory with --profiles; dies with the reason. */
struct svmtrace_vmi *vmi_cmd_session(struct vmi_cmd *c);

/* Parse a PID argument (dies naming it). */
uint64_t vmi_cmd_pid(const char *arg);

/* "0x%016llx" as a JSON string (JSON numbers cannot hold every u64). */
json_object *vmi_json_hex(uint64_t v);

/* The kernel and profile in JSON. */
json_object *vmi_json_kernel(const struct svmtrace_vmi *vmi);

/* Print @obj pretty, then drop it. */
void vmi_json_print(json_object *obj);

int cmd_ps(struct vmi_cmd *c, int argc, char **argv);
int cmd_resolve(struct vmi_cmd *c, int argc, char **argv);
int cmd_modules(struct vmi_cmd *c, int argc, char **argv);
int cmd_kernel(struct vmi_cmd *c, int argc, char **argv);
int cmd_threads(struct vmi_cmd *c, int argc, char **argv);

#endif
