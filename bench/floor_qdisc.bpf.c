// SPDX-License-Identifier: GPL-2.0
/*
 * The cost bench's floor: close to the least a BPF qdisc can do per packet,
 * to tell what bpf_hbm's own work costs from what any BPF qdisc pays (the
 * struct_ops trampolines around enqueue and each dequeue, the kptr
 * exchanges that move an skb in and out of a map).
 *
 * A tail-drop FIFO of HBM_FLOOR_RING skbs in a ring of array-map slots,
 * found by index (the verifier inlines an array lookup), with no flow
 * table, no clock and no lock of its own: enqueue and dequeue run under
 * the qdisc's lock, which is also what serializes the ring's indices. It
 * shapes nothing and schedules nothing, unlike sch_fq or bpf_hbm; it keeps
 * only the counts a qdisc must (qlen, backlog, bstats, drops).
 *
 * Its limit: one instance on the whole host (the indices are global);
 * init refuses a second. Registered by bench/arrange.sh ("floor") with
 * `bpftool struct_ops register`, then `tc qdisc add dev X root hbm_floor`.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define HBM_FLOOR_RING	1024	/* a power of 2: the index is masked */
#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01
#define EBUSY			16

struct hbm_floor_slot {
	struct sk_buff __kptr *skb;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hbm_floor_slot);
	__uint(max_entries, HBM_FLOOR_RING);
} hbm_floor_ring SEC(".maps");

/* Next slot to take, next slot to fill. */
__u32 hbm_floor_head, hbm_floor_tail;
/*
 * The one instance, 0 while there is none: its namespace's cookie and its
 * ifindex and handle (an ifindex, and an explicit handle, recur in other
 * namespaces).
 */
__u64 hbm_floor_owner, hbm_floor_owner_net;

static __always_inline __u64 hbm_floor_id(struct Qdisc *sch)
{
	return (__u64)sch->dev_queue->dev->ifindex << 32 | sch->handle;
}

static __always_inline bool hbm_floor_owns(struct Qdisc *sch)
{
	struct net *net = sch->dev_queue->dev->nd_net.net;

	return hbm_floor_owner == hbm_floor_id(sch) &&
	       hbm_floor_owner_net == net->net_cookie;
}

static __always_inline struct hbm_floor_slot *hbm_floor_slot(__u32 i)
{
	__u32 key = i & (HBM_FLOOR_RING - 1);

	return bpf_map_lookup_elem(&hbm_floor_ring, &key);
}

SEC("struct_ops")
int BPF_PROG(hbm_floor_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	__u32 i = hbm_floor_tail, len = skb->len;
	struct hbm_floor_slot *s;

	if (i - hbm_floor_head >= HBM_FLOOR_RING)
		goto drop;
	s = hbm_floor_slot(i);
	if (!s)
		goto drop;
	skb = bpf_kptr_xchg(&s->skb, skb);
	if (skb)	/* the slot held one: never (tail - head < RING) */
		goto drop;
	hbm_floor_tail = i + 1;
	sch->q.qlen++;
	sch->qstats.backlog += len;
	return NET_XMIT_SUCCESS;
drop:
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

SEC("struct_ops")
struct sk_buff *BPF_PROG(hbm_floor_dequeue, struct Qdisc *sch)
{
	__u32 i = hbm_floor_head;
	struct hbm_floor_slot *s;
	struct sk_buff *skb;

	if (i == hbm_floor_tail)
		return NULL;
	s = hbm_floor_slot(i);
	if (!s)
		return NULL;
	skb = bpf_kptr_xchg(&s->skb, NULL);
	hbm_floor_head = i + 1;
	if (!skb)
		return NULL;
	sch->q.qlen--;
	sch->qstats.backlog -= skb->len;
	bpf_qdisc_bstats_update(sch, skb);
	return skb;
}

/* Free what the ring holds: reset and destroy. */
static __always_inline void hbm_floor_purge(struct Qdisc *sch)
{
	struct hbm_floor_slot *s;
	struct sk_buff *skb;
	__u32 n;

	for (n = 0; n < HBM_FLOOR_RING; n++) {
		s = hbm_floor_slot(n);
		if (!s)
			continue;
		skb = bpf_kptr_xchg(&s->skb, NULL);
		if (skb)
			bpf_kfree_skb(skb);
	}
	hbm_floor_head = hbm_floor_tail = 0;
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

SEC("struct_ops")
void BPF_PROG(hbm_floor_reset, struct Qdisc *sch)
{
	if (hbm_floor_owns(sch))
		hbm_floor_purge(sch);
}

SEC("struct_ops")
int BPF_PROG(hbm_floor_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	if (__sync_val_compare_and_swap(&hbm_floor_owner, 0,
					hbm_floor_id(sch)))
		return -EBUSY;
	hbm_floor_owner_net = sch->dev_queue->dev->nd_net.net->net_cookie;
	return 0;
}

SEC("struct_ops")
void BPF_PROG(hbm_floor_destroy, struct Qdisc *sch)
{
	/* Also called after a failed init: not the owner's to purge. */
	if (!hbm_floor_owns(sch))
		return;
	hbm_floor_purge(sch);
	hbm_floor_owner_net = 0;
	hbm_floor_owner = 0;
}

SEC(".struct_ops.link")
struct Qdisc_ops hbm_floor = {
	.enqueue = (void *)hbm_floor_enqueue,
	.dequeue = (void *)hbm_floor_dequeue,
	.reset = (void *)hbm_floor_reset,
	.init = (void *)hbm_floor_init,
	.destroy = (void *)hbm_floor_destroy,
	.id = "hbm_floor",
};
