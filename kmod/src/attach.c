// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace VM registry.  A struct svmtrace_vm is created when a controller
 * first attaches to a VM and lives until KVM destroys that VM, because a
 * vCPU may still carry a TF we set after the controller left (a paused VM
 * takes its next step much later).  While it is registered, the hooks find
 * it by its struct kvm; the static key svmtrace_live counts registered VMs,
 * so with none the hooks cost a NOP.
 */
#include <linux/hashtable.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "hooks.h"
#include "svmtrace.h"

DEFINE_STATIC_KEY_FALSE(svmtrace_live);
EXPORT_SYMBOL_GPL(svmtrace_live);
DEFINE_STATIC_KEY_FALSE(svmtrace_exit_watch);
EXPORT_SYMBOL_GPL(svmtrace_exit_watch);

static DEFINE_MUTEX(svmtrace_lock);
DEFINE_HASHTABLE(svmtrace_registry, SVMTRACE_REGISTRY_BITS);
static LIST_HEAD(svmtrace_all);

static void vm_register(struct svmtrace_vm *vm)
{
	lockdep_assert_held(&svmtrace_lock);
	if (vm->registered)
		return;
	static_branch_inc(&svmtrace_live);
	hash_add_rcu(svmtrace_registry, &vm->node, (unsigned long)vm->kvm);
	vm->registered = true;
}

static void vm_unregister(struct svmtrace_vm *vm)
{
	lockdep_assert_held(&svmtrace_lock);
	if (!vm->registered)
		return;
	hash_del_rcu(&vm->node);
	vm->registered = false;
	static_branch_dec(&svmtrace_live);
}

static struct svmtrace_vm *vm_find_any(struct kvm *kvm)
{
	struct svmtrace_vm *vm;

	list_for_each_entry(vm, &svmtrace_all, all)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

/*
 * The tracer of @kvm for a new controller: -EBUSY while another controller
 * holds it.  The caller holds a reference on @kvm.
 */
struct svmtrace_vm *svmtrace_vm_get(struct kvm *kvm)
{
	struct svmtrace_vm *vm;

	mutex_lock(&svmtrace_lock);
	vm = vm_find_any(kvm);
	if (vm && vm->controlled) {
		vm = ERR_PTR(-EBUSY);
		goto out;
	}
	if (!vm) {
		vm = kvzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
		if (!vm) {
			vm = ERR_PTR(-ENOMEM);
			goto out;
		}
		vm->kvm = kvm;
		mutex_init(&vm->lock);
		mutex_init(&vm->watch.lock);
		spin_lock_init(&vm->park_lock);
		init_waitqueue_head(&vm->ask_wq);
		init_waitqueue_head(&vm->ctl_wq);
		svmtrace_time_init(vm);
		list_add(&vm->all, &svmtrace_all);
	}
	vm->controlled = true;
	vm->state = SVMTRACE_STATE_ATTACHED;
	vm_register(vm);
out:
	mutex_unlock(&svmtrace_lock);
	return vm;
}

/*
 * The controller left.  A VM that was never armed leaves the registry; one
 * that was stays in it until KVM destroys it, because a vCPU may still have
 * our TF set (a paused VM takes its next step much later): that step's #DB
 * is taken back instead of reaching the guest.
 */
void svmtrace_vm_release(struct svmtrace_vm *vm)
{
	mutex_lock(&svmtrace_lock);
	vm->controlled = false;
	vm->state = SVMTRACE_STATE_DETACHED;
	if (!vm->was_armed)
		vm_unregister(vm);
	mutex_unlock(&svmtrace_lock);
}

/*
 * kvm_arch_flush_shadow_all(): KVM tears down the VM's MMU because the
 * VMM's address space went away (the MMU notifier's release: the VMM
 * exited or was killed) or because the VM is destroyed.  No vCPU of it runs
 * again: KVM_RUN needs the VMM's mm.  An attached controller holds a
 * reference on the VM, so KVM cannot destroy it (nor its vCPUs) before the
 * controller detaches; this is where an armed capture learns that its
 * vCPUs are gone: every open session ends with SVMTRACE_END_VCPU_GONE and
 * every ring closes, so the consumer drains what is left and stops.
 * Context: process (the task that dropped the mm's last user, usually the
 * VMM's last exiting thread), kvm->srcu held, may sleep.
 */
void __svmtrace_vm_gone(struct kvm *kvm)
{
	struct svmtrace_vm *vm;

	mutex_lock(&svmtrace_lock);
	vm = vm_find_any(kvm);
	mutex_unlock(&svmtrace_lock);
	/* @vm lives until svmtrace_vm_destroy(), which comes after this. */
	if (!vm)
		return;
	mutex_lock(&vm->lock);
	if (rcu_access_pointer(vm->armed))
		svmtrace_sessions_stop(vm, SVMTRACE_END_VCPU_GONE);
	mutex_unlock(&vm->lock);
}

static void vm_free(struct svmtrace_vm *vm)
{
	u32 i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		svmtrace_ring_put(vm->vcpus[i]->ring);
		kfree(vm->vcpus[i]);
	}
	mem_cgroup_put(vm->memcg);
	kvfree(vm);
}

/*
 * KVM destroys the VM: no vCPU runs and no controller holds it (an attached
 * controller holds a reference on the kvm), so the state can go.
 */
void svmtrace_vm_destroy(struct kvm *kvm)
{
	struct svmtrace_vm *vm;

	/*
	 * Nothing was ever attached: the common case costs no lock.  An object
	 * for @kvm was added by an attach that held a reference on @kvm, so it
	 * is visible here, before the last reference went.
	 */
	if (list_empty(&svmtrace_all))
		return;
	mutex_lock(&svmtrace_lock);
	vm = vm_find_any(kvm);
	if (vm) {
		vm_unregister(vm);
		list_del(&vm->all);
	}
	mutex_unlock(&svmtrace_lock);
	if (!vm)
		return;
	synchronize_rcu();
	vm_free(vm);
}

int svmtrace_init(void)
{
	return svmtrace_control_init();
}

void svmtrace_exit(void)
{
	svmtrace_control_exit();
}
