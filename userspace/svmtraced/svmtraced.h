/* SPDX-License-Identifier: GPL-2.0 */
/*
 * svmtraced internals, one concern per file:
 *
 *   options.c   the command line
 *   host.c      refusals about this host: SVM, /dev/svmtrace, module version
 *   domain.c    a libvirt domain -> its QEMU process
 *   target.c    live introspection: the target's CR3 values and entry page
 *   asks.c      the kernel's asks about new threads: which process, traced?
 *   threads.c   which thread each record is (GS base -> TEB -> ETHREAD)
 *   meta.c      capture.json
 *   codemap.c   code.bin and modules that appear while tracing
 *   statusd.c   the status socket a running daemon answers on
 *   client.c    `svmtraced status` and `svmtraced stop`
 *   main.c      the order of it all
 */
#ifndef SVMTRACED_H
#define SVMTRACED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <svmtrace/abi.h>
#include <svmtrace/vmi.h>

#include "common/capture.h"

#define SVMTRACED_SOCKET_DIR "/run/svmtrace"
#define SVMTRACED_PROFILES   "/var/lib/svmtrace/profiles"
#define SVMTRACED_MAX_NAMED  (SVMTRACE_MAX_CR3 / 2)	   /* --name: two DTBs each, at arm */
#define SVMTRACED_MAX_PROCS  (SVMTRACE_MAX_TARGET_CR3 / 2) /* with those that join (--follow) */

enum from_mode { FROM_ENTRY, FROM_NEXT, FROM_FIRST };

struct daemon_options {
	/* which VM */
	const char *connect; /* libvirt URI, NULL = LIBVIRT_DEFAULT_URI or qemu:///system */
	const char *domain;  /* name, UUID or ID */
	pid_t vmm_pid;	     /* instead of a domain */
	int vm_fd;	     /* in the VMM, -1 = its only VM */

	/* which process */
	uint64_t pid;	       /* 0 = not given */
	const char *name;      /* --name IMAGE */
	const char *wait_name; /* --wait-name IMAGE */
	bool newest;	       /* with --name: only the newest */
	bool follow;	       /* --follow: the processes the target creates, recursively */
	unsigned int max_procs; /* --max-processes: traced at most, joined ones included */
	enum from_mode from;
	double resolve_timeout; /* seconds to wait for a non-resident entry page */
	const char *profiles;

	/* how to capture */
	const char *out_dir; /* NULL = a new directory named after domain, PID and time */
	struct svmtrace_target target;
	struct capture_limits lim;
	bool quiet;
	bool no_code; /* --no-code: no code.bin, no late modules */
	bool audit;	    /* --audit: the BPF exit audit (userspace/audit) */
	const char *socket; /* status socket path, NULL = /run/svmtrace/svmtraced-PID.sock */
};

/* options.c: parse or die with a message naming the argument. */
void options_parse(int argc, char **argv, struct daemon_options *o);
extern const char options_usage[];

/* host.c */
void host_check_svm(void);
/* Open /dev/svmtrace and check its version; dies with what to do. */
int host_open_control(void);
/* The version check alone (tests call it with made-up answers). */
const char *host_version_problem(const struct svmtrace_version *v, const char *release, char *buf,
				 size_t size);

/* domain.c */
struct vm_info {
	char name[256];
	char uuid[40]; /* empty when unknown (--vmm-pid) */
	pid_t vmm_pid;
};
/* Also watches the domain (watch.c): its connection stays open. */
void domain_lookup(const char *uri, const char *domain, struct vm_info *out);

/* watch.c: the domain's reset, shutdown, destroy or crash, from libvirt's
 * events.  prepare before the connection opens, watch once the domain is
 * found; the reason is NULL until one of them happened. */
struct _virConnect;
struct _virDomain;
void domain_watch_prepare(void);
void domain_watch(struct _virConnect *conn, struct _virDomain *d);
const char *domain_watch_reason(void *ctx);
/* After "VMM exited": libvirt's reason if it comes within 10 s, else fallback. */
const char *domain_watch_settle(const char *fallback);

/* target.c */
/* What the daemon knows of one module beyond the loader entry. */
struct module_extra {
	struct svmtrace_vmi_export *exports; /* at first sight */
	size_t nr_exports;
	char exports_error[512]; /* why there are none ("" when it has) */
	bool later;		 /* appeared while tracing, at ... */
	uint64_t first_sequence; /* ... this sequence */
};

struct target_proc {
	struct svmtrace_vmi_entry entry; /* process, image base, entry VA and page */
	bool watch_entry;		 /* entry page not resident: gated by a kernel watch */
	bool first;		/* --from first: traced from its threads' first instruction */
	bool followed;		/* --follow: joined as a child of a traced process */
	char command_line[512]; /* "" when unreadable */
	/* Its modules (target_modules()), and those that appeared while tracing */
	struct svmtrace_vmi_module *modules;
	size_t nr_modules;
	struct svmtrace_vmi_image_id *module_ids; /* size_of_image 0: headers not resident */
	struct module_extra *module_extra;
	char modules_error[512]; /* why there is no module list */
};

/* code.bin as svmtraced wrote it, for capture.json. */
struct code_stats {
	bool enabled;
	uint64_t pages;	       /* distinct page VAs entered */
	uint64_t versions;     /* page versions written (first + changed) */
	uint64_t changed;      /* versions after the first */
	uint64_t rechecks;     /* re-reads to look for changed bytes */
	uint64_t unreadable;   /* pages that could not be translated or read */
	uint64_t module_walks; /* loader list re-walks (a page outside every module) */
	uint64_t modules_added;
	double seconds; /* spent reading pages and walking modules */
	char error[640];
};

/* A process svmtraced wanted to trace but could not (capture.json "lost"). */
struct lost_proc {
	uint64_t pid;
	char name[SVMTRACE_VMI_NAME_MAX + 1];
	char reason[160];
};

/* A thread the records ran in (threads.c), by its TEB under a CR3. */
struct thread_seen {
	uint64_t teb, cr3;
	uint64_t first_sequence;
	uint64_t pid, tid; /* 0: not found (error says why) */
	uint64_t start_address, win32_start_address;
	char process[SVMTRACE_VMI_NAME_MAX + 1];
	char error[sizeof(((struct svmtrace_error *)0)->message)];
};

/* From @first_sequence on, @vcpu's user-mode records are the thread with @teb. */
struct thread_switch {
	uint32_t vcpu;
	uint64_t first_sequence;
	uint64_t teb;
};

struct target_info {
	const struct svmtrace_vmi_kernel *kernel;
	const char *profile;
	/* --from first and --wait-name: where threads begin (first_rip) */
	bool has_thread_start;
	struct svmtrace_vmi_thread_start thread_start;
	/* --wait-name: the processes that were there when svmtraced started */
	struct svmtrace_vmi_process *before;
	size_t nr_before;
	bool waiting; /* --wait-name: no process of that name found yet */
	struct lost_proc *lost;
	size_t nr_lost;
	/* The kernel's asks (asks.c): threads held at their first instruction,
	 * the processes that joined there, the time spent deciding, and whether
	 * the kernel was told to ask no more. */
	struct ask_stats {
		uint64_t held, joined;
		double seconds;
		bool ended;
	} asks;
	struct thread_seen *threads; /* threads.c */
	size_t nr_threads;
	struct thread_switch *switches;
	size_t nr_switches;
	struct target_proc procs[SVMTRACED_MAX_PROCS];
	unsigned int nr_procs;
	struct code_stats code;
	double resolve_seconds;
};

struct statusd;
/* A walk of the running guest's lists is tried this often, 20 ms apart,
 * while it fails in a way another look may not (target_transient(): a list
 * the guest is changing, a page paged in meanwhile). */
#define TARGET_WALK_TRIES 5
#define TARGET_WALK_PAUSE_US 20000
bool target_transient(int rc);
struct svmtrace_vmi *target_open(int ctl, const struct daemon_options *o,
				 struct svmtrace_vmi_mem **mem);
/* The same over a live source opened elsewhere (tests: the live driver over an image). */
struct svmtrace_vmi *target_open_mem(struct svmtrace_vmi_mem *mem, const struct daemon_options *o);
/* Find and resolve the target; polls status requests while it waits. */
void target_resolve(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
		    const struct daemon_options *o, struct statusd *sd, struct target_info *t);
/* The module list of a process (after arm or join: it takes time). */
void target_modules(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, struct target_proc *p);
/* How a process's gate is shown: its page (0x...), "watch" (not resident) or
 * "first" (no gate: --from first). */
#define TARGET_GATE_TEXT 24
void target_gate_text(const struct target_proc *p, char buf[TARGET_GATE_TEXT]);
/* Fill the kernel target (CR3s, gates) from @t and the options. */
void target_fill(const struct target_info *t, const struct daemon_options *o,
		 struct svmtrace_target *kt);
/* The process whose DTB or user DTB is @cr3 (bits 51:12), read twice alike; false if none. */
/* The index in t->procs of the process with DTB @cr3 (bits 51:12), -1 when none. */
int target_proc_index(const struct target_info *t, uint64_t cr3);
bool target_process_of_cr3(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem, uint64_t cr3,
			   struct svmtrace_vmi_process *out);
/* Resolve @pid for tracing as the options say (an entry page, watched or not; first). */
void target_resolve_pid(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
			const struct daemon_options *o, struct statusd *sd, uint64_t pid,
			struct target_proc *out);
/* EPROCESS.ImageFileName keeps the first 15 characters. */
bool target_name_matches(const char *want, const char *have);
/* The gate that starts @p's trace (id @id): false when it has none. */
bool target_gate(const struct target_proc *p, uint32_t id, struct svmtrace_gate *g);

/* asks.c: the control fd is readable: decide every held thread; a stop reason or NULL. */
struct ask_ctx {
	struct svmtrace_vmi *vmi;
	struct svmtrace_vmi_mem *mem;
	const struct daemon_options *opt;
	struct target_info *t;
	struct statusd *sd;
	void (*found)(void *found_ctx, unsigned int proc); /* a process joined the target */
	void *found_ctx;
};
const char *asks_serve(struct capture *cap, struct ask_ctx *a);

/* codemap.c: code.bin and late modules, fed by every drained slot. */
struct codemap;
struct codemap *codemap_open(const char *out_dir, struct svmtrace_vmi *vmi,
			     struct svmtrace_vmi_mem *mem, struct target_info *t);
void codemap_observe(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots, size_t n,
		     size_t stride);
/* Close code.bin (the stats stay in t->code). */
void codemap_close(struct codemap *cm);
/* threads.c: which thread each drained slot is. */
struct thread_map;
struct thread_map *threads_open(struct svmtrace_vmi *vmi, struct svmtrace_vmi_mem *mem,
				struct target_info *t);
void threads_observe(void *ctx, uint32_t vcpu, const struct svmtrace_slot *slots, size_t n,
		     size_t stride);
void threads_close(struct thread_map *m);

/* Exports of module @i of @p (fills p->module_extra[i]). */
void target_module_exports(struct svmtrace_vmi *vmi, struct target_proc *p, size_t i);

/* meta.c */
struct audit_line;
struct meta_counts {
	uint32_t vcpu;
	uint64_t written, dropped, produced, discarded;
};

struct meta {
	const struct vm_info *vm;
	const struct daemon_options *opt;
	const struct target_info *target;
	const struct meta_counts *counts;
	uint32_t nr_counts;
	const char *state;	/* "recording" while running, "ended" at the end */
	const char *end_reason; /* NULL while running */
	double started, ended;	/* wall clock (time(2)) */
	/* --audit: one balance per vCPU once ended (NULL otherwise), and its verdict. */
	const struct audit_line *audit;
	bool audit_ok;
	uint64_t syscalls_unrecorded; /* the kernel's parks_evicted, once ended */
};
/* Write @dir/capture.json atomically (tmp + rename); false with a warning. */
bool meta_write(const char *dir, const struct meta *m);

/* statusd.c */
struct status_view {
	const struct capture *cap; /* NULL before arm */
	int ctl;
	const struct target_info *target;
	const char *phase; /* "resolving", "waiting", ... before arm */
};

struct statusd *statusd_open(const char *path);
int statusd_fd(const struct statusd *sd);
/* Answer one pending request; true when it asked to stop. */
bool statusd_serve(struct statusd *sd, const struct status_view *v);
void statusd_close(struct statusd *sd);
/* Sleep up to @ms while serving requests; true when a stop was asked. */
bool statusd_wait(struct statusd *sd, const struct status_view *v, int ms);
/* The text a status request gets. */
void status_format(const struct status_view *v, char *buf, size_t size);

/* client.c: `svmtraced status|stop [--socket PATH]` */
int client_main(int argc, char **argv);

#endif
