// SPDX-License-Identifier: GPL-2.0
/*
 * A libvirt domain -> the QEMU process that runs it, through libvirt's C
 * API: the domain by name, UUID or ID; running; of type kvm; on this host.
 * QEMU's PID comes from its vCPU threads (query-cpus-fast through the
 * monitor pass-through: thread IDs -> Tgid), else from libvirt's pid file.
 * The connection stays open for the domain's events (watch.c).
 */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static void quiet_errors(void *ctx, virErrorPtr e)
{
	/* Every failure is reported once, by the caller, in its own words. */
}

static const char *last_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

/* qemu+ssh://host/system names another host; qemu:///system this one. */
static void check_local(const char *uri)
{
	const char *p = strstr(uri, "://");

	if (p && p[3] && p[3] != '/' && strncmp(p + 3, "localhost", 9))
		die("--connect %s names another host: run svmtraced on the host that runs the "
		    "VM",
		    uri);
}

static virDomainPtr find(virConnectPtr conn, const char *uri, const char *domain)
{
	virDomainPtr d = virDomainLookupByName(conn, domain);
	char *end;
	long id;

	if (!d && strlen(domain) == 36)
		d = virDomainLookupByUUIDString(conn, domain);
	if (!d && isdigit((unsigned char)domain[0])) {
		id = strtol(domain, &end, 10);
		if (!*end && id >= 0 && id <= INT32_MAX)
			d = virDomainLookupByID(conn, (int)id);
	}
	if (!d)
		die("domain '%s' not found on %s (by name, UUID or ID): see virsh -c %s list "
		    "--all",
		    domain, uri, uri);
	return d;
}

static const char *state_name(int state)
{
	switch (state) {
	case VIR_DOMAIN_RUNNING:
		return "running";
	case VIR_DOMAIN_BLOCKED:
		return "blocked";
	case VIR_DOMAIN_PAUSED:
		return "paused";
	case VIR_DOMAIN_SHUTDOWN:
		return "shutting down";
	case VIR_DOMAIN_SHUTOFF:
		return "shut off";
	case VIR_DOMAIN_CRASHED:
		return "crashed";
	case VIR_DOMAIN_PMSUSPENDED:
		return "suspended";
	default:
		return "unknown";
	}
}

/* The type attribute of <domain type='...'>. */
static void domain_type(virDomainPtr d, const char *name, char *type, size_t size)
{
	char *xml = virDomainGetXMLDesc(d, 0);
	const char *p, *q;

	if (!xml)
		die("domain '%s': cannot read its XML: %s", name, last_error());
	p = strstr(xml, "<domain");
	p = p ? strstr(p, "type=") : NULL;
	if (!p || (p[5] != '\'' && p[5] != '"') || !(q = strchr(p + 6, p[5])))
		die("domain '%s': its XML has no <domain type=...>", name);
	snprintf(type, size, "%.*s", (int)(q - p - 6), p + 6);
	free(xml);
}

static pid_t tgid_of(long tid)
{
	char path[64], line[256];
	long tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return (pid_t)tgid;
}

/* QEMU's PID from its first vCPU thread, 0 if the monitor did not say. */
static pid_t pid_from_monitor(virDomainPtr d)
{
	json_object *root, *ret, *cpu, *tid;
	char *reply = NULL;
	pid_t pid = 0;

	if (virDomainQemuMonitorCommand(d, "{\"execute\":\"query-cpus-fast\"}", &reply, 0) < 0)
		return 0;
	root = json_tokener_parse(reply);
	free(reply);
	if (root && json_object_object_get_ex(root, "return", &ret) &&
	    json_object_is_type(ret, json_type_array) && json_object_array_length(ret) > 0) {
		cpu = json_object_array_get_idx(ret, 0);
		if (json_object_object_get_ex(cpu, "thread-id", &tid))
			pid = tgid_of((long)json_object_get_int64(tid));
	}
	json_object_put(root);
	return pid;
}

static pid_t pid_from_file(const char *name)
{
	char path[512];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

void domain_lookup(const char *uri, const char *domain, struct vm_info *out)
{
	virConnectPtr conn;
	virDomainPtr d;
	char type[32];
	int state, reason;

	memset(out, 0, sizeof(*out));
	if (!uri)
		uri = getenv("LIBVIRT_DEFAULT_URI");
	if (!uri || !*uri)
		uri = "qemu:///system";
	check_local(uri);
	virSetErrorFunc(NULL, quiet_errors);
	domain_watch_prepare();
	conn = virConnectOpen(uri);
	if (!conn)
		die("cannot connect to libvirt at %s: %s (is libvirtd running? choose another "
		    "with --connect, or use --vmm-pid)",
		    uri, last_error());
	d = find(conn, uri, domain);
	snprintf(out->name, sizeof(out->name), "%s", virDomainGetName(d));
	if (virDomainGetUUIDString(d, out->uuid))
		out->uuid[0] = '\0';
	if (virDomainGetState(d, &state, &reason, 0) < 0)
		die("domain '%s': cannot read its state: %s", out->name, last_error());
	domain_type(d, out->name, type, sizeof(type));
	if (strcmp(type, "kvm"))
		die("domain '%s' is of type '%s', not KVM: svmtrace traces KVM guests "
		    "(<domain type='kvm'>)",
		    out->name, type);
	if (state != VIR_DOMAIN_RUNNING && state != VIR_DOMAIN_PAUSED)
		die("domain '%s' is not running (%s): start it first (virsh -c %s start %s)",
		    out->name, state_name(state), uri, out->name);
	out->vmm_pid = pid_from_monitor(d);
	if (!out->vmm_pid)
		out->vmm_pid = pid_from_file(out->name);
	if (!out->vmm_pid)
		die("domain '%s': libvirt did not tell QEMU's PID (no query-cpus-fast answer, "
		    "no /run/libvirt/qemu/%s.pid): use --vmm-pid",
		    out->name, out->name);
	domain_watch(conn, d);
}
