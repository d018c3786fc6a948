// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/svmtrace: the control interface.  Every open file is one controller
 * (root only) that attaches to one VM and drives its capture through the
 * ioctls of include/svmtrace/abi.h.  Every field is validated here; the
 * hooks trust what this file accepted.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/memcontrol.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <generated/utsrelease.h>

#include "hooks.h"
#include "irq.h"
#include "svm/svm.h"
#include "svmtrace.h"

/* One controller; lock serializes its ioctls (one controller per VM). */
struct svmtrace_ctl {
	struct mutex lock;
	struct svmtrace_vm *vm;		/* NULL until attached */
	struct kvm *kvm;		/* referenced while attached */
};

static bool is_armed(struct svmtrace_vm *vm)
{
	return vm->state == SVMTRACE_STATE_ARMED || vm->state == SVMTRACE_STATE_PAUSED;
}

static int ctl_attach(struct svmtrace_ctl *ctl, void __user *arg)
{
	struct svmtrace_attach a;
	struct svmtrace_vm *vm;
	struct kvm *kvm;
	struct fd f;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.reserved)
		return -EINVAL;
	if (ctl->vm)
		return -EISCONN;
	f = fdget(a.vm_fd);
	if (!svmtrace_fd_file(f))
		return -EBADF;
	if (!file_is_kvm(svmtrace_fd_file(f))) {
		fdput(f);
		return -EMEDIUMTYPE;
	}
	kvm = svmtrace_fd_file(f)->private_data;
	kvm_get_kvm(kvm);
	fdput(f);
	vm = svmtrace_vm_get(kvm);
	if (IS_ERR(vm)) {
		kvm_put_kvm(kvm);
		return PTR_ERR(vm);
	}
	ctl->vm = vm;
	ctl->kvm = kvm;
	return 0;
}

static int check_gates(struct kvm *kvm, const struct svmtrace_target *t)
{
	u32 i, j;
	int r;

	for (i = 0; i < t->nr_gates; i++) {
		for (j = 0; j < i; j++)
			if (svmtrace_gates_clash(&t->gates[j], &t->gates[i]))
				return -EINVAL;
		r = svmtrace_gate_check(kvm, &t->gates[i]);
		if (r == -EINVAL)
			return r;
	}
	/* A page outside guest memory (ENXIO) only once every gate is well formed. */
	for (i = 0; i < t->nr_gates; i++) {
		r = svmtrace_gate_check(kvm, &t->gates[i]);
		if (r)
			return r;
	}
	return 0;
}

/* FIRST and ASK name where threads begin: a canonical user address; else none. */
static bool first_rip_valid(const struct svmtrace_target *t)
{
	if (!(t->flags & (SVMTRACE_TARGET_F_FIRST | SVMTRACE_TARGET_F_ASK)))
		return !t->first_rip;
	return t->first_rip && t->first_rip < BIT_ULL(47) &&
	       !(t->flags & SVMTRACE_TARGET_F_ADOPT_CR3);
}

/* The costs of virtual time: in range with HIDE_TIME (0 takes the default), else all 0. */
static int check_time_costs(const struct svmtrace_target *t)
{
	const struct svmtrace_time_costs *c = &t->time;

	if (!(t->flags & SVMTRACE_TARGET_F_HIDE_TIME))
		return c->insn_x256 || c->tsc_read || c->exit || c->reserved ? -EINVAL : 0;
	if (c->insn_x256 > SVMTRACE_TIME_MAX_INSN_X256 || c->tsc_read > SVMTRACE_TIME_MAX_TSC_READ ||
	    c->exit > SVMTRACE_TIME_MAX_EXIT || c->reserved)
		return -EINVAL;
	return 0;
}

static int check_target(struct kvm *kvm, const struct svmtrace_target *t)
{
	u32 i;

	bool adopt = t->flags & SVMTRACE_TARGET_F_ADOPT_CR3;
	bool ask = t->flags & SVMTRACE_TARGET_F_ASK;
	bool gateless = t->flags & (SVMTRACE_TARGET_F_FROM_NEXT | SVMTRACE_TARGET_F_FIRST |
				    SVMTRACE_TARGET_F_ASK);

	if (t->flags & ~(SVMTRACE_TARGET_F_KERNEL | SVMTRACE_TARGET_F_FROM_NEXT |
			 SVMTRACE_TARGET_F_XSTATE | SVMTRACE_TARGET_F_ADOPT_CR3 |
			 SVMTRACE_TARGET_F_FIRST | SVMTRACE_TARGET_F_ASK |
			 SVMTRACE_TARGET_F_HIDE_TIME | SVMTRACE_TARGET_F_MEM) || t->reserved ||
	    !first_rip_valid(t))
		return -EINVAL;
	if (check_time_costs(t))
		return -EINVAL;
	if (t->policy != SVMTRACE_POLICY_DROP && t->policy != SVMTRACE_POLICY_BLOCK)
		return -EINVAL;
	/* Adopting: no CR3 given, and a gate (not a watched one) to adopt it from. */
	if (adopt && (t->nr_cr3 || !t->nr_gates))
		return -EINVAL;
	for (i = 0; adopt && i < t->nr_gates; i++)
		if (t->gates[i].flags & SVMTRACE_GATE_F_WATCH)
			return -EINVAL;
	if ((!adopt && !ask && !t->nr_cr3) || t->nr_cr3 > SVMTRACE_MAX_CR3 ||
	    (!t->nr_gates && !gateless) ||
	    t->nr_gates > SVMTRACE_MAX_GATES || t->nr_ranges > SVMTRACE_MAX_RANGES)
		return -EINVAL;
	if (t->ring_slots && (!is_power_of_2(t->ring_slots) ||
			      t->ring_slots < SVMTRACE_MIN_RING_SLOTS ||
			      t->ring_slots > SVMTRACE_MAX_RING_SLOTS))
		return -EINVAL;
	/* Four times the bytes per slot: the same 768 MiB at most per vCPU. */
	if ((t->flags & SVMTRACE_TARGET_F_XSTATE) && t->ring_slots > SVMTRACE_MAX_XSTATE_RING_SLOTS)
		return -EINVAL;
	/* Eight to eleven times the bytes per slot: at most 528 MiB per vCPU. */
	if ((t->flags & SVMTRACE_TARGET_F_MEM) &&
	    (t->ring_slots ?: SVMTRACE_DEFAULT_RING_SLOTS) > SVMTRACE_MAX_MEM_RING_SLOTS)
		return -EINVAL;
	if (t->wake_batch > (t->ring_slots ?: SVMTRACE_DEFAULT_RING_SLOTS) / 2)
		return -EINVAL;
	for (i = 0; i < t->nr_cr3; i++)
		if (!(t->cr3[i] & SVMTRACE_CR3_MASK))
			return -EINVAL;
	for (i = 0; i < t->nr_ranges; i++)
		if (t->ranges[i].start >= t->ranges[i].end)
			return -EINVAL;
	return check_gates(kvm, t);
}

static int ctl_set_target(struct svmtrace_ctl *ctl, void __user *arg)
{
	struct svmtrace_vm *vm = ctl->vm;
	struct svmtrace_target *t;
	int r;

	if (is_armed(vm))
		return -EBUSY;
	t = memdup_user(arg, sizeof(*t));
	if (IS_ERR(t))
		return PTR_ERR(t);
	r = check_target(ctl->kvm, t);
	if (!r) {
		if (!t->ring_slots)
			t->ring_slots = SVMTRACE_DEFAULT_RING_SLOTS;
		if (!t->wake_batch)
			t->wake_batch = t->ring_slots / 16;
		if (t->flags & SVMTRACE_TARGET_F_HIDE_TIME) {
			t->time.insn_x256 = t->time.insn_x256 ?: SVMTRACE_TIME_INSN_X256;
			t->time.tsc_read = t->time.tsc_read ?: SVMTRACE_TIME_TSC_READ;
			t->time.exit = t->time.exit ?: SVMTRACE_TIME_EXIT;
		}
		if (t->flags & SVMTRACE_TARGET_F_ADOPT_CR3) {
			/* cr3[0] holds no address space until a gate fetch adopts one (gate.c) */
			t->nr_cr3 = 1;
			svmtrace_adopt_reset(t);
		}
		vm->target = *t;
		vm->nr_set_gates = t->nr_gates;
		vm->state = SVMTRACE_STATE_TARGETED;
	}
	kfree(t);
	return r;
}

/* The SVMTRACE_RING_F_* of the rings of target @t. */
static u32 ring_flags(const struct svmtrace_target *t)
{
	return (t->flags & SVMTRACE_TARGET_F_XSTATE ? SVMTRACE_RING_F_XSTATE : 0) |
	       (t->flags & SVMTRACE_TARGET_F_MEM ? SVMTRACE_RING_F_MEM : 0);
}

/*
 * Tracer state for vCPUs [nr_vcpus, nr) of KVM's; with @rings (armed) each
 * gets its ring before the hooks can find it.  vm->lock is held.
 */
static int add_vcpus(struct svmtrace_vm *vm, struct kvm *kvm, u32 nr, bool rings)
{
	struct svmtrace_vcpu *vt;
	u32 i;

	lockdep_assert_held(&vm->lock);
	for (i = vm->nr_vcpus; i < nr; i++) {
		vt = kzalloc(sizeof(*vt), GFP_KERNEL_ACCOUNT);
		if (!vt)
			return -ENOMEM;
		mutex_init(&vt->lock);
		vt->vm = vm;
		vt->index = i;
		vt->vcpu_id = kvm_get_vcpu(kvm, i)->vcpu_id;
		if (rings) {
			vt->ring = svmtrace_ring_create(i, vm->target.ring_slots,
							vm->target.wake_batch,
							ring_flags(&vm->target));
			if (!vt->ring) {
				kfree(vt);
				return -ENOMEM;
			}
		}
		vm->vcpus[i] = vt;
		/* Pairs with svmtrace_vcpu_of(): publish vcpus[i] first. */
		smp_store_release(&vm->nr_vcpus, i + 1);
	}
	return 0;
}

/*
 * KVM created a vCPU (kvm_arch_vcpu_postcreate(): the VMM's
 * KVM_CREATE_VCPU, process context, under the new vCPU's mutex, so before
 * its first KVM_RUN).  While a capture is armed it is traced like the
 * others from its first instruction, and the consumer finds its ring
 * through SVMTRACE_STATUS (nr_vcpus grew) and SVMTRACE_GET_RING.  Its
 * state and ring are charged to the controller's memory cgroup, as the
 * others' were at arm, not to the VMM's, which runs this.  When that
 * allocation fails the vCPU runs untraced: the log says so, and the gates
 * open for it (gate.c) rather than stop it.  Otherwise the next arm adds
 * it.
 */
void __svmtrace_vcpu_created(struct kvm_vcpu *vcpu)
{
	struct mem_cgroup *old;
	struct svmtrace_vm *vm;
	int r = 0;

	rcu_read_lock();
	vm = svmtrace_vm_lookup(vcpu->kvm);
	rcu_read_unlock();
	/* A registered @vm lives until KVM destroys the VM, after this. */
	if (!vm)
		return;
	mutex_lock(&vm->lock);
	if (rcu_access_pointer(vm->armed)) {
		old = set_active_memcg(vm->memcg);
		r = add_vcpus(vm, vcpu->kvm, vcpu->vcpu_idx + 1, true);
		set_active_memcg(old);
	}
	mutex_unlock(&vm->lock);
	if (r)
		pr_err_ratelimited("svmtrace: vCPU %u created while armed is not traced (%d)\n",
				   vcpu->vcpu_idx, r);
}

/* Fresh rings for every vCPU; the previous capture's rings live on in fds. */
static int replace_rings(struct svmtrace_vm *vm)
{
	struct svmtrace_ring *ring, *old;
	struct svmtrace_vcpu *vt;
	u32 i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		ring = svmtrace_ring_create(i, vm->target.ring_slots, vm->target.wake_batch,
					    ring_flags(&vm->target));
		if (!ring)
			return -ENOMEM;
		vt = vm->vcpus[i];
		mutex_lock(&vt->lock);
		old = vt->ring;
		vt->ring = ring;
		memset(&vt->stats, 0, sizeof(vt->stats));
		mutex_unlock(&vt->lock);
		svmtrace_ring_put(old);
	}
	return 0;
}

/*
 * What the tracer cannot step: SEV guests (hide.c would read and write
 * encrypted memory; SEV-ES and SNP state is not even readable), a guest
 * whose NMIs vNMI delivers (no IRET exit: our TF would stay in the NMI
 * frame; kvm_amd's vnmi, compat.h), and a guest that runs guests of its own
 * (VBS/Hyper-V in Windows): their GPAs, RFLAGS and CR3 belong to the nested
 * guest.  An L1 that enables SVM later is not stepped while in guest mode
 * (step.c).
 */
static int check_vcpus(struct kvm *kvm)
{
	struct kvm_vcpu *vcpu;
	unsigned long i;

	if (!atomic_read(&kvm->online_vcpus))
		return -ENODEV;
	if (sev_guest(kvm))
		return -EOPNOTSUPP;
	if (svmtrace_vnmi_active())
		return -ENOPROTOOPT;
	kvm_for_each_vcpu(i, vcpu, kvm) {
		if (vcpu->arch.guest_state_protected)
			return -EOPNOTSUPP;
		if ((READ_ONCE(vcpu->arch.efer) & EFER_SVME) || is_guest_mode(vcpu))
			return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * What the host must give the tracer: nested paging -- a gate is an NPT
 * entry without execute permission; under shadow paging (kvm_amd npt=0) no
 * gate ever opens and a fetch of a gate page loops in the shadow MMU's
 * fault path -- and interrupts that KVM injects: with AVIC (kvm_amd
 * avic=1) the CPU delivers them into the guest itself, past the injection
 * hooks that keep the tracer's TF out of their frames (frames.c), and
 * whether AVIC is inhibited for a VM changes at run time.
 */
static int check_host(struct kvm *kvm)
{
	if (!tdp_enabled)
		return -ENXIO;
	if (enable_apicv && irqchip_in_kernel(kvm))
		return -EBUSY;
	return 0;
}

static int ctl_arm(struct svmtrace_ctl *ctl)
{
	struct svmtrace_vm *vm = ctl->vm;
	int r;

	if (is_armed(vm))
		return -EALREADY;
	if (vm->state != SVMTRACE_STATE_TARGETED)
		return -ENOENT;
	r = check_host(ctl->kvm);
	if (!r)
		r = check_vcpus(ctl->kvm);
	if (r)
		return r;
	mutex_lock(&vm->lock);
	r = add_vcpus(vm, ctl->kvm, atomic_read(&ctl->kvm->online_vcpus), false);
	if (!r)
		r = replace_rings(vm);
	if (r) {
		mutex_unlock(&vm->lock);
		return r;
	}
	vm->was_armed = true;
	mem_cgroup_put(vm->memcg);
	vm->memcg = get_mem_cgroup_from_mm(current->mm);
	bitmap_zero(vm->gate_open, SVMTRACE_MAX_GATES);
	svmtrace_adopt_reset(&vm->target);
	svmtrace_time_arm(vm);
	/* What decisions added to the last capture is gone (first.c). */
	vm->target.nr_gates = vm->nr_set_gates;
	vm->nr_added = 0;
	vm->asks_ended = false;
	vm->parks_evicted = 0;
	vm->paused = false;
	vm->state = SVMTRACE_STATE_ARMED;
	static_branch_inc(&svmtrace_exit_watch);
	svmtrace_watches_arm(vm);
	rcu_assign_pointer(vm->armed, &vm->target);
	mutex_unlock(&vm->lock);
	/*
	 * No vCPU runs guest code from here on without the capture's
	 * intercepts.  So every vCPU has left the guest (and enters it again
	 * with the target's returns to user mode intercepted -- a thread's
	 * first instruction included, first.c) before the first walk of the
	 * watched gates: a page mapped after it is walked at such a return
	 * (watch.c).
	 */
	svmtrace_intercepts_sync(vm);
	svmtrace_gates_zap(vm, &vm->target);
	if (svmtrace_watches_pending(vm))
		svmtrace_watches_start(vm);
	return 0;
}

static int ctl_stop(struct svmtrace_ctl *ctl)
{
	struct svmtrace_vm *vm = ctl->vm;

	if (!is_armed(vm))
		return -ESRCH;
	mutex_lock(&vm->lock);
	rcu_assign_pointer(vm->armed, NULL);
	static_branch_dec(&svmtrace_exit_watch);
	synchronize_rcu();
	svmtrace_sessions_stop(vm, SVMTRACE_END_STOP);
	svmtrace_asks_release(vm);
	mutex_unlock(&vm->lock);
	svmtrace_watches_stop(vm);	/* no watched gate gets a page behind the zap */
	bitmap_zero(vm->gate_open, SVMTRACE_MAX_GATES);
	svmtrace_gates_zap(vm, &vm->target);
	WRITE_ONCE(vm->paused, false);
	vm->state = SVMTRACE_STATE_TARGETED;
	return 0;
}

static int ctl_pause(struct svmtrace_ctl *ctl, bool pause)
{
	struct svmtrace_vm *vm = ctl->vm;

	if (!is_armed(vm))
		return -ESRCH;
	if (vm->paused == pause)
		return -EALREADY;
	WRITE_ONCE(vm->paused, pause);
	vm->state = pause ? SVMTRACE_STATE_PAUSED : SVMTRACE_STATE_ARMED;
	return 0;
}

static void add_counters(struct svmtrace_counters *sum, const struct svmtrace_counters *c)
{
	sum->npf_exits += c->npf_exits;
	sum->db_exits += c->db_exits;
	sum->emulated_steps += c->emulated_steps;
	sum->records += c->records;
	sum->drops += c->drops;
	sum->bytes += c->bytes;
	sum->sessions += c->sessions;
	sum->session_ends += c->session_ends;
	sum->db_foreign += c->db_foreign;
	sum->steps_unrecorded += c->steps_unrecorded;
	sum->stepless_ends += c->stepless_ends;
}

static int ctl_status(struct svmtrace_ctl *ctl, void __user *arg)
{
	struct svmtrace_vm *vm = ctl->vm;
	struct svmtrace_vcpu_status *vs;
	struct svmtrace_capture_status *st;
	struct svmtrace_vcpu *vt;
	u32 i;
	int r = 0;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->state = vm->state;
	if (vm->state >= SVMTRACE_STATE_TARGETED) {
		st->flags = vm->target.flags;
		if (READ_ONCE(vm->asks_ended))
			st->flags &= ~SVMTRACE_TARGET_F_ASK;
		st->policy = vm->target.policy;
		st->nr_gates = vm->target.nr_gates;
		st->nr_cr3 = svmtrace_nr_cr3(&vm->target);
	}
	st->nr_open_gates = bitmap_weight(vm->gate_open, SVMTRACE_MAX_GATES);
	st->nr_watching = is_armed(vm) ? svmtrace_watches_pending(vm) : 0;
	st->nr_asking = is_armed(vm) ? svmtrace_nr_asking(vm) : 0;
	st->parks_evicted = READ_ONCE(vm->parks_evicted);
	st->sequence = atomic64_read(&vm->seq);
	/* vCPUs created while armed may be added meanwhile (vm->lock). */
	st->nr_vcpus = smp_load_acquire(&vm->nr_vcpus);
	for (i = 0; i < st->nr_vcpus; i++) {
		vt = vm->vcpus[i];
		mutex_lock(&vt->lock);
		if (i < SVMTRACE_MAX_STATUS_VCPUS) {
			vs = &st->vcpus[i];
			vs->vcpu = i;
			vs->vcpu_id = vt->vcpu_id;
			vs->flags = (vt->session != SVMTRACE_SESSION_NONE ? SVMTRACE_VCPU_F_SESSION : 0) |
				    (vt->slot == SVMTRACE_SLOT_WAITING ? SVMTRACE_VCPU_F_WAITING : 0);
			vs->counters = vt->stats;
		}
		add_counters(&st->total, &vt->stats);
		mutex_unlock(&vt->lock);
	}
	if (copy_to_user(arg, st, sizeof(*st)))
		r = -EFAULT;
	kfree(st);
	return r;
}

/* The fd is installed last, once nothing can fail: no fd leaks to the caller. */
static int ctl_get_ring(struct svmtrace_ctl *ctl, void __user *arg)
{
	struct svmtrace_vm *vm = ctl->vm;
	struct svmtrace_ring_request req;
	struct svmtrace_vcpu *vt;
	struct file *file;
	u32 nr;
	int fd;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	nr = smp_load_acquire(&vm->nr_vcpus);
	if (!nr)
		return -ESRCH;	/* never armed: no rings yet */
	if (req.vcpu >= nr)
		return -EINVAL;
	vt = vm->vcpus[req.vcpu];
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	mutex_lock(&vt->lock);
	file = vt->ring ? svmtrace_ring_file(vt->ring) : ERR_PTR(-ESRCH);
	if (!IS_ERR(file))
		req.mmap_size = PAGE_ALIGN(vt->ring->size);
	mutex_unlock(&vt->lock);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	req.fd = fd;
	if (copy_to_user(arg, &req, sizeof(req))) {
		fput(file);	/* the ring's consumer is gone: it cannot be taken again */
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, file);
	return 0;
}

static void ctl_detach(struct svmtrace_ctl *ctl)
{
	struct svmtrace_vm *vm = ctl->vm;
	struct svmtrace_ring *ring;
	u32 i;

	if (is_armed(vm))
		ctl_stop(ctl);
	for (i = 0; i < vm->nr_vcpus; i++) {
		mutex_lock(&vm->vcpus[i]->lock);
		ring = vm->vcpus[i]->ring;
		vm->vcpus[i]->ring = NULL;
		mutex_unlock(&vm->vcpus[i]->lock);
		svmtrace_ring_put(ring);
	}
	svmtrace_vm_release(vm);
	kvm_put_kvm(ctl->kvm);
	ctl->vm = NULL;
	ctl->kvm = NULL;
}

static long ctl_dispatch(struct svmtrace_ctl *ctl, unsigned int cmd, void __user *arg)
{
	switch (cmd) {
	case SVMTRACE_SET_TARGET:
		return ctl_set_target(ctl, arg);
	case SVMTRACE_ARM:
		return ctl_arm(ctl);
	case SVMTRACE_STOP:
		return ctl_stop(ctl);
	case SVMTRACE_PAUSE:
		return ctl_pause(ctl, true);
	case SVMTRACE_RESUME:
		return ctl_pause(ctl, false);
	case SVMTRACE_STATUS:
		return ctl_status(ctl, arg);
	case SVMTRACE_GET_RING:
		return ctl_get_ring(ctl, arg);
	case SVMTRACE_DETACH:
		ctl_detach(ctl);
		return 0;
	case SVMTRACE_READ_GPA:
		return svmtrace_read_gpa(ctl->kvm, arg);
	case SVMTRACE_GET_VCPU_STATE:
		return svmtrace_get_vcpu_state(ctl->kvm, arg);
	case SVMTRACE_ASKS:
		return is_armed(ctl->vm) ? svmtrace_asks_get(ctl->vm, arg) : -ESRCH;
	case SVMTRACE_DECIDE:
		return is_armed(ctl->vm) ? svmtrace_decide(ctl->vm, arg) : -ESRCH;
	case SVMTRACE_END_ASKS:
		return svmtrace_end_asks(ctl->vm);
	}
	return -ENOTTY;
}

static long ctl_version(void __user *arg)
{
	struct svmtrace_version v = { .abi_version = SVMTRACE_ABI_VERSION };

	strscpy(v.release, UTS_RELEASE, sizeof(v.release));
	return copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct svmtrace_ctl *ctl = file->private_data;
	long r;

	if (cmd == SVMTRACE_VERSION)
		return ctl_version((void __user *)arg);
	mutex_lock(&ctl->lock);
	if (cmd == SVMTRACE_ATTACH)
		r = ctl_attach(ctl, (void __user *)arg);
	else if (!ctl->vm)
		r = -ENOTCONN;
	else
		r = ctl_dispatch(ctl, cmd, (void __user *)arg);
	mutex_unlock(&ctl->lock);
	return r;
}

/* Readable while a vCPU of the armed capture waits for SVMTRACE_DECIDE. */
static __poll_t ctl_poll(struct file *file, poll_table *wait)
{
	struct svmtrace_ctl *ctl = file->private_data;
	__poll_t mask = 0;

	mutex_lock(&ctl->lock);
	if (!ctl->vm) {
		mask = EPOLLERR;
	} else {
		poll_wait(file, &ctl->vm->ctl_wq, wait);
		if (is_armed(ctl->vm) && svmtrace_nr_asking(ctl->vm))
			mask = EPOLLIN | EPOLLRDNORM;
	}
	mutex_unlock(&ctl->lock);
	return mask;
}

static int ctl_open(struct inode *inode, struct file *file)
{
	struct svmtrace_ctl *ctl;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ctl = kzalloc(sizeof(*ctl), GFP_KERNEL_ACCOUNT);
	if (!ctl)
		return -ENOMEM;
	mutex_init(&ctl->lock);
	file->private_data = ctl;
	return 0;
}

static int ctl_release(struct inode *inode, struct file *file)
{
	struct svmtrace_ctl *ctl = file->private_data;

	if (ctl->vm)
		ctl_detach(ctl);
	kfree(ctl);
	return 0;
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.open = ctl_open,
	.release = ctl_release,
	.unlocked_ioctl = ctl_ioctl,
	.poll = ctl_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice ctl_device = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "svmtrace",
	.fops = &ctl_fops,
	.mode = 0600,	/* root only; open() also wants CAP_SYS_ADMIN */
};

int svmtrace_control_init(void)
{
	return misc_register(&ctl_device);
}

void svmtrace_control_exit(void)
{
	misc_deregister(&ctl_device);
}
