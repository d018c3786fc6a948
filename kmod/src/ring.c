// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace per-vCPU rings: single producer (the vCPU, under vt->lock; the
 * inline fast paths are in svmtrace.h),
 * single consumer (userspace, through an mmap'ed fd).  The kernel keeps its
 * own head and counters and only ever reads the consumer's tail from the
 * shared page, clamped, so a hostile consumer can lose its own data but not
 * corrupt the kernel.
 */
#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "svmtrace.h"

static void ring_free(struct kref *ref)
{
	struct svmtrace_ring *ring = container_of(ref, struct svmtrace_ring, ref);

	vfree(ring->hdr);
	kfree(ring);
}

void svmtrace_ring_put(struct svmtrace_ring *ring)
{
	if (ring)
		kref_put(&ring->ref, ring_free);
}

/*
 * @flags: SVMTRACE_RING_F_XSTATE for slots of struct svmtrace_slot_xstate
 * (SVMTRACE_TARGET_F_XSTATE), SVMTRACE_RING_F_MEM for slots that end with
 * struct svmtrace_slot_mem (SVMTRACE_TARGET_F_MEM).
 */
struct svmtrace_ring *svmtrace_ring_create(u32 vcpu, u32 capacity, u32 wake_batch, u32 flags)
{
	struct svmtrace_ring *ring;

	/* A memory cgroup may refuse: the caller says so (ENOMEM, a log line). */
	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ring)
		return NULL;
	ring->slot_size = svmtrace_ring_slot_bytes(flags);
	ring->flags = flags;
	ring->mem_offset = flags & SVMTRACE_RING_F_MEM ? svmtrace_ring_mem_offset(flags) : 0;
	ring->size = SVMTRACE_RING_HEADER_SIZE + (size_t)capacity * ring->slot_size;
	/* Charged to the controller's memcg: a ring is up to 768 MiB. */
	ring->hdr = __vmalloc(ring->size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!ring->hdr) {
		kfree(ring);
		return NULL;
	}
	kref_init(&ring->ref);
	init_waitqueue_head(&ring->consumer_wq);
	init_waitqueue_head(&ring->producer_wq);
	ring->slots = (u8 *)ring->hdr + SVMTRACE_RING_HEADER_SIZE;
	ring->capacity = capacity;
	ring->vcpu = vcpu;

	ring->hdr->magic = SVMTRACE_RING_MAGIC;
	ring->hdr->abi_version = SVMTRACE_ABI_VERSION;
	ring->hdr->slot_size = ring->slot_size;
	ring->hdr->flags = flags;
	ring->hdr->capacity = capacity;
	ring->hdr->vcpu = vcpu;
	ring->hdr->data_offset = SVMTRACE_RING_HEADER_SIZE;
	ring->hdr->wake_batch = wake_batch;
	return ring;
}

/* Copy a whole slot of this ring's size (its tails too). */
void svmtrace_ring_copy(struct svmtrace_ring *ring, struct svmtrace_slot *dst,
			const struct svmtrace_slot *src)
{
	memcpy(dst, src, ring->slot_size);
}

/* Slots the consumer has not released yet, whatever it wrote into tail. */
static u64 ring_used(struct svmtrace_ring *ring)
{
	/* Pairs with the consumer's release of tail: its reads are done. */
	u64 tail = smp_load_acquire(&ring->hdr->tail);
	u64 used = ring->head - tail;

	return used > ring->capacity ? ring->capacity : used;
}

bool svmtrace_ring_has_room(struct svmtrace_ring *ring)
{
	return ring_used(ring) < ring->capacity - 1;
}

/*
 * svmtrace_ring_reserve() past the room the tail read last left: read it
 * again.  The consumer only ever frees slots, so room found now stays
 * (a hostile consumer that moves tail back loses its own data).
 */
struct svmtrace_slot *svmtrace_ring_reserve_slow(struct svmtrace_ring *ring, bool last_slot)
{
	u64 limit = last_slot ? ring->capacity : ring->capacity - 1;
	u64 used;

	if (READ_ONCE(ring->closed))
		return NULL;
	used = ring_used(ring);
	ring->room_end = ring->head + (used < ring->capacity - 1 ? ring->capacity - 1 - used : 0);
	if (used >= limit)
		return NULL;
	return svmtrace_ring_slot(ring, ring->head);
}

static u32 ring_wake_batch(struct svmtrace_ring *ring)
{
	u32 batch = READ_ONCE(ring->hdr->wake_batch);

	return clamp_t(u32, batch, 1, ring->capacity / 2);
}

/*
 * Whether a consumer may have to be woken: once per batch, at every session
 * boundary (@now) and when the ring is half full.
 */
static bool ring_wake_due(struct svmtrace_ring *ring, bool now)
{
	return now || ring->head - ring->last_wake >= ring_wake_batch(ring) ||
	       ring_used(ring) >= ring->capacity / 2;
}

/*
 * Wake the consumer if it sleeps in poll().  The next batch counts from
 * here either way: a consumer that was awake now sees these slots when it
 * polls (ring_poll() finds head != tail and does not sleep), so asking
 * again at every slot until it sleeps would only cost the vCPU.
 */
static void ring_wake_consumer(struct svmtrace_ring *ring)
{
	ring->last_wake = ring->head;
	if (!wq_has_sleeper(&ring->consumer_wq))
		return;
	ring->wakeups++;
	WRITE_ONCE(ring->hdr->wakeups, ring->wakeups);
	wake_up_interruptible(&ring->consumer_wq);
}

/*
 * The first head whose publish may find a wakeup due: the batch runs out,
 * or the ring is half full with the tail as it is now (the consumer only
 * frees slots, so that head comes no earlier).  A publish below it is one
 * that ring_wake_due() would answer no, with no gap to mark.  The batch
 * is the consumer's as read now: a change takes effect from the next test.
 */
static void ring_quiet_update(struct svmtrace_ring *ring)
{
	u64 used = ring_used(ring), half = ring->capacity / 2;
	u64 half_at = ring->head + (used < half ? half - used : 0);

	ring->quiet_until = min(ring->last_wake + ring_wake_batch(ring), half_at) - 1;
}

/*
 * svmtrace_ring_publish() of a session boundary, of the slot after lost
 * ones, or of one that may be due a wakeup.
 */
void svmtrace_ring_publish_slow(struct svmtrace_ring *ring, u16 kind)
{
	struct svmtrace_slot *slot;

	if (unlikely(ring->pending_drops)) {
		slot = svmtrace_ring_slot(ring, ring->head);
		slot->flags |= SVMTRACE_SLOT_F_GAP;
		slot->dropped = ring->pending_drops;
		ring->pending_drops = 0;
	}
	ring->produced++;
	WRITE_ONCE(ring->hdr->produced, ring->produced);
	/* The slot's bytes are visible before the consumer sees head move. */
	smp_store_release(&ring->hdr->head, ++ring->head);
	if (ring_wake_due(ring, kind != SVMTRACE_SLOT_INSTRUCTION))
		ring_wake_consumer(ring);
	ring_quiet_update(ring);
}

/* Count a step the ring had no room for; the next slot carries the gap. */
void svmtrace_ring_drop(struct svmtrace_ring *ring)
{
	ring->produced++;
	ring->dropped++;
	ring->pending_drops++;
	ring->quiet_until = 0;		/* the next slot carries the gap */
	WRITE_ONCE(ring->hdr->produced, ring->produced);
	WRITE_ONCE(ring->hdr->dropped, ring->dropped);
	ring_wake_consumer(ring);
}

/* No slot will follow: tell the consumer and release a waiting vCPU. */
void svmtrace_ring_close(struct svmtrace_ring *ring)
{
	ring->room_end = 0;		/* reserve looks at closed */
	WRITE_ONCE(ring->closed, true);
	/* Every published slot is visible to a consumer that sees closed. */
	smp_store_release(&ring->hdr->closed, 1);
	wake_up_all(&ring->producer_wq);
	wake_up_interruptible_all(&ring->consumer_wq);
}

static __poll_t ring_poll(struct file *file, poll_table *wait)
{
	struct svmtrace_ring *ring = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &ring->consumer_wq, wait);
	/*
	 * The consumer stored tail before this call; the waiting producer
	 * stored producer_waiting before it re-checks tail (ring_wait).  One
	 * of the two sees the other.
	 */
	smp_mb();
	if (READ_ONCE(ring->producer_waiting) && svmtrace_ring_has_room(ring))
		wake_up(&ring->producer_wq);
	/* Pairs with svmtrace_ring_publish(). */
	if (smp_load_acquire(&ring->hdr->head) != READ_ONCE(ring->hdr->tail))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(ring->closed))
		mask |= EPOLLIN | EPOLLHUP;
	return mask;
}

static int ring_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct svmtrace_ring *ring = file->private_data;
	unsigned long off;
	int r;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_ALIGN(ring->size))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;	/* a private copy would never see the producer */
	svmtrace_vma_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		r = vm_insert_page(vma, vma->vm_start + off,
				   vmalloc_to_page((void *)ring->hdr + off));
		if (r)
			return r;
	}
	return 0;
}

/* The consumer is gone: a vCPU blocked on this ring must not wait for it. */
static int ring_release(struct inode *inode, struct file *file)
{
	struct svmtrace_ring *ring = file->private_data;

	WRITE_ONCE(ring->consumer_gone, true);
	wake_up_all(&ring->producer_wq);
	svmtrace_ring_put(ring);
	return 0;
}

static const struct file_operations ring_fops = {
	.owner = THIS_MODULE,
	.poll = ring_poll,
	.mmap = ring_mmap,
	.release = ring_release,
	.llseek = noop_llseek,
};

/* The file of the ring's one consumer; it holds a reference. */
struct file *svmtrace_ring_file(struct svmtrace_ring *ring)
{
	struct file *file;

	if (ring->fd_taken)
		return ERR_PTR(-EBUSY);
	kref_get(&ring->ref);
	file = anon_inode_getfile("svmtrace-ring", &ring_fops, ring, O_RDWR);
	if (IS_ERR(file)) {
		svmtrace_ring_put(ring);
		return file;
	}
	ring->fd_taken = true;
	return file;
}
