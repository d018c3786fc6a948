// SPDX-License-Identifier: GPL-2.0
/* The text `svmtraced status` prints, from the kernel's counts and ours. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "svmtraced/svmtraced.h"

struct out {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= o->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static const char *state_name(const struct svmtrace_capture_status *st)
{
	uint32_t i;

	if (st->state == SVMTRACE_STATE_PAUSED)
		return "paused";
	if (st->state != SVMTRACE_STATE_ARMED)
		return "idle";
	for (i = 0; i < st->nr_vcpus && i < SVMTRACE_MAX_STATUS_VCPUS; i++)
		if (st->vcpus[i].flags & SVMTRACE_VCPU_F_SESSION)
			return "recording";
	return "armed";
}

static void target_lines(struct out *o, const struct target_info *t)
{
	unsigned int i;

	for (i = 0; t && i < t->nr_procs; i++) {
		const struct svmtrace_vmi_entry *e = &t->procs[i].entry;
		uint64_t size = t->procs[i].nr_modules ? t->procs[i].modules[0].size : 0;

		put(o, "target: pid=%llu name=%s image=0x%llx", (unsigned long long)e->process.pid,
		    e->process.name, (unsigned long long)e->image_base);
		if (size)
			put(o, "-0x%llx", (unsigned long long)(e->image_base + size));
		put(o, " entry=0x%llx gate=0x%llx cr3=0x%llx user_cr3=0x%llx\n",
		    (unsigned long long)e->entry_va, (unsigned long long)e->entry_page,
		    (unsigned long long)e->process.dtb, (unsigned long long)e->process.user_dtb);
	}
}

void status_format(const struct status_view *v, char *buf, size_t size)
{
	struct out o = { .buf = buf, .size = size };
	struct svmtrace_capture_status st;
	const struct capture *cap = v->cap;
	double dt;
	uint32_t i;

	buf[0] = '\0';
	put(&o, "svmtraced pid %d\n", (int)getpid());
	if (!cap || v->ctl < 0 || ioctl(v->ctl, SVMTRACE_STATUS, &st)) {
		put(&o, "state: idle\nphase: %s\n", v->phase ? v->phase : "starting");
		target_lines(&o, v->target);
		return;
	}
	put(&o, "state: %s\n", state_name(&st));
	target_lines(&o, v->target);
	put(&o, "gates: %u open: %u watching: %u cr3: %u\n", st.nr_gates, st.nr_open_gates,
	    st.nr_watching, st.nr_cr3);
	put(&o, "npf_exits: %llu\n", (unsigned long long)st.total.npf_exits);
	put(&o, "steps: %llu (single-step exits %llu, emulated %llu) sessions: %llu\n",
	    (unsigned long long)(st.total.db_exits + st.total.emulated_steps),
	    (unsigned long long)st.total.db_exits, (unsigned long long)st.total.emulated_steps,
	    (unsigned long long)st.total.sessions);
	dt = now_seconds() - cap->started;
	for (i = 0; i < cap->nr; i++) {
		const struct vcpu_stream *s = &cap->streams[i];
		struct svmtrace_ring_counts c;

		svmtrace_ring_counts(&s->ring, &c);
		put(&o, "vcpu%u: written=%llu dropped=%llu discarded=%llu rate=%.0f/s\n", i,
		    (unsigned long long)s->written, (unsigned long long)c.dropped,
		    (unsigned long long)s->discarded, dt > 0 ? s->written / dt : 0.0);
	}
	put(&o, "bytes_on_disk: %llu\n", (unsigned long long)capture_file_bytes(cap));
	put(&o, "out: %s\n", cap->out_dir);
}
