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

/* QEMU is gone (the pidfd said so first): give libvirt up to 10 s to say
 * why (it notices the same end through QEMU's monitor socket; a busy host
 * made it take more than 2 s in the lab). */
const char *domain_watch_settle(const char *fallback)
{
	const char *why;
	int i;

	for (i = 0; i < 200; i++) {
		why = domain_watch_reason(NULL);
		if (why)
			return why;
		usleep(50000);
	}
	return fallback;
}
