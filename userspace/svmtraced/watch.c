// SPDX-License-Identifier: GPL-2.0
/*
 * The domain's end, from libvirt's events.  A reset (the guest rebooted, or
 * virsh reset) leaves QEMU and its VM running, so nothing else would tell
 * the daemon: the rebooted guest would be traced again from its next run of
 * the entry page.  A shutdown, destroy or crash ends QEMU, which the VMM's
 * pidfd sees too, but only libvirt can say which it was.  Either ends the
 * capture with that reason; the kernel detaches as after any stop, so the
 * VM keeps running unarmed.
 *
 * libvirt's default event loop runs in a thread of its own; the capture
 * loop asks domain_watch_reason() on every turn (at least every 100 ms).
 */
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static const char *reason;
static virDomainPtr watched; /* the domain whose end is awaited */

static void set_reason(const char *why)
{
	const char *none = NULL;

	/* The first event wins: a reset followed by a destroy was a reset. */
	__atomic_compare_exchange_n(&reason, &none, why, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void on_reboot(virConnectPtr conn, virDomainPtr d, void *opaque)
{
	set_reason("domain reset (guest reboot or virsh reset)");
}

static void on_lifecycle(virConnectPtr conn, virDomainPtr d, int event, int detail, void *opaque)
{
	switch (event) {
	case VIR_DOMAIN_EVENT_SHUTDOWN:
		/* A host-side shutdown (virsh destroy signals QEMU) is followed
		 * by the STOPPED event that says which it was. */
		if (detail == VIR_DOMAIN_EVENT_SHUTDOWN_GUEST)
			set_reason("domain shutting down (the guest powers off)");
		break;
	case VIR_DOMAIN_EVENT_CRASHED:
		set_reason("guest crashed");
		break;
	case VIR_DOMAIN_EVENT_STOPPED:
		switch (detail) {
		case VIR_DOMAIN_EVENT_STOPPED_DESTROYED:
			set_reason("domain destroyed (virsh destroy)");
			break;
		case VIR_DOMAIN_EVENT_STOPPED_FAILED:
		case VIR_DOMAIN_EVENT_STOPPED_CRASHED:
			set_reason("QEMU died (crashed or killed)");
			break;
		default:
			set_reason("domain shut down");
			break;
		}
		break;
	}
}

static void *event_loop(void *arg)
{
	while (virEventRunDefaultImpl() == 0)
		;
	return NULL;
}

void domain_watch_prepare(void)
{
	if (virEventRegisterDefaultImpl() < 0)
		die("libvirt: cannot set up its event loop");
}

void domain_watch(virConnectPtr conn, virDomainPtr d)
{
	pthread_t t;

	watched = d;
	if (virConnectDomainEventRegisterAny(conn, d, VIR_DOMAIN_EVENT_ID_REBOOT,
					     VIR_DOMAIN_EVENT_CALLBACK(on_reboot), NULL,
					     NULL) < 0 ||
	    virConnectDomainEventRegisterAny(conn, d, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					     VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), NULL,
					     NULL) < 0)
		die("libvirt: cannot watch domain '%s' for reboot and shutdown: %s",
		    virDomainGetName(d), virGetLastErrorMessage());
	if (pthread_create(&t, NULL, event_loop, NULL) || pthread_detach(t))
		die("cannot start the libvirt event thread");
}

const char *domain_watch_reason(void *ctx)
{
	return __atomic_load_n(&reason, __ATOMIC_ACQUIRE);
}

/* Why a domain libvirt reports shut off ended, or NULL while it runs on. */
static const char *shutoff_reason(void)
{
	int state, why;

	if (virDomainGetState(watched, &state, &why, 0) < 0)
		/* A transient domain is gone once shut off; its event says why. */
		return virGetLastErrorCode() == VIR_ERR_NO_DOMAIN
			       ? NULL
			       : "VMM exited (libvirt cannot say why: it does not answer)";
	if (state != VIR_DOMAIN_SHUTOFF && state != VIR_DOMAIN_CRASHED)
		return NULL;
	switch (why) {
	case VIR_DOMAIN_SHUTOFF_SHUTDOWN:
		return "domain shutting down (the guest powers off)";
	case VIR_DOMAIN_SHUTOFF_DESTROYED:
		return "domain destroyed (virsh destroy)";
	case VIR_DOMAIN_SHUTOFF_CRASHED:
	case VIR_DOMAIN_SHUTOFF_FAILED:
		return "QEMU died (crashed or killed)";
	default:
		return state == VIR_DOMAIN_CRASHED ? "guest crashed" : "domain shut down";
	}
}

/*
 * QEMU is gone (the pidfd said so first).  libvirt notices the same end
 * through QEMU's monitor socket and says why, as an event or as the
 * domain's shut-off reason, whichever comes first.  That took more than 10 s
 * on a loaded lab host, so wait up to a minute: libvirt does change the
 * state once it has seen QEMU go, and a libvirtd that no longer answers ends
 * the wait at once.
 */
const char *domain_watch_settle(const char *fallback)
{
	const char *why;
	int i;

	for (i = 0; i < 600; i++) {
		why = domain_watch_reason(NULL);
		if (!why && i % 10 == 9)
			why = shutoff_reason();
		if (why)
			return why;
		usleep(100000);
	}
	return fallback;
}
