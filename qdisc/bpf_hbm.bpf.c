// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_hbm: a BPF qdisc that shapes a device's egress the way HBM (Host
 * Bandwidth Manager) does with Earliest Departure Time, inside one qdisc.
 *
 * Every packet is charged to the device's virtual queue (a clock advancing
 * by len / rate per packet, with at most `burst` of idle credit), which
 * gives it a departure time; a sender's own timestamp (TCP pacing,
 * SO_TXTIME) is honoured when later. Packets wait in per-flow rbtrees
 * ordered by departure time; among the flows whose head is due, dequeue
 * serves new flows first and the others by deficit round robin, as sch_fq
 * does, and a flow whose head is not due waits in a tree keyed by that
 * head, for which the watchdog is armed.
 *
 * How far the virtual clock runs ahead of now (the delay the packet would
 * see in a real queue) drives HBM's congestion signals: over `mark` a
 * packet is counted as marked and a non-ECN TCP sender gets NET_XMIT_CN
 * (which puts it in CWR) with probability rising linearly to 1 at `drop`;
 * over `drop` (480 us for packets over 120 bytes, 500 us otherwise) the
 * packet is dropped and its slot given back, unless it belongs to a TCP
 * flow with fewer than 2 packets in flight, which gets CN instead. Non-TCP
 * packets are dropped over `mark`, as in HBM.
 *
 * Per-cgroup classes (HBM's unit of control): a packet whose socket's
 * cgroup, or its nearest ancestor with one, has a class on the device is
 * charged to the class's virtual queue too, at the class's rate; it
 * departs at the later of the two clocks, and each level's delay is
 * judged against its own thresholds, the more severe verdict winning
 * (hbm_charge_all, hbm_policy.bpf.h). A device without classes looks
 * none up.
 *
 * The shaper's own lateness is not charged to the senders: dequeue measures
 * how late the first packet after each watchdog time left, and what the
 * envelope of that lateness (the largest of about the last second)
 * exceeds `burst` by (0 on a host whose timers keep time, a millisecond or
 * more under a hypervisor's jitter) is added to the idle credit
 * (hbm_late_allowance in hbm_edt.h). The thresholds stay HBM's.
 * `--late-credit off` gives HBM's fixed burst.
 *
 * Differences from sch_fq, whose EDT machinery this mirrors:
 *  - the departure comes from one virtual clock per device (HBM), not
 *    from each flow's pacing rate; sch_fq's new/old lists and throttled
 *    tree order the flows (hbm_sched.bpf.h says where it differs).
 *  - an emptied flow stays in the flow table, idle, so that a flow whose
 *    queue drains between packets (the common case below the rate) does
 *    not allocate and free its flow for every packet (a third of the
 *    qdisc's BPF time per packet, bench/profile.sh). Each instance lists
 *    its idle flows oldest first; whenever a packet needs a new flow, the
 *    garbage collector frees up to two that have been idle for over
 *    hbm_flow_idle_ns (1 s, `bpf-hbm load --flow-idle`), so freeing
 *    keeps pace with creating; and the watchdog runs the GC too, queued
 *    or not, for an instance that creates no flows. When the table is
 *    full anyway, a packet joins the instance's overflow flow instead of
 *    being dropped.
 *
 * BPF qdiscs have no private data: each instance claims a slot of the
 * array hbm_instances at init and keeps the slot's index in sch->limit
 * (a field no BPF qdisc otherwise needs), so the packet path finds its
 * state by index, not by a hash lookup; the slot records the instance's
 * (ifindex, netns, parent, handle) for show. mq children keep their own
 * queues, while the device's rate state (struct hbm_dev_rate: virtual
 * queue, counters) and its configuration are keyed by (ifindex, netns)
 * and shared by all children of a device.
 *
 * The packet path, and where each step lives:
 *  hbm_enqueue (here): the instance, rate state and configuration; the
 *    class, on a device with classes (hbm_class_find, hbm_policy.bpf.h);
 *    the limit and the horizon (hbm_tstamp_of); then either the fast
 *    path, for a packet due at an instance holding nothing
 *    (hbm_enqueue_fast: the charge and HBM's verdict, hbm_charge_all in
 *    hbm_policy.bpf.h; the slot, hbm_sched_fast_add in hbm_sched.bpf.h),
 *    or its flow (hbm_enqueue_flow: hbm_flow_checkout, hbm_flows.bpf.h;
 *    hbm_charge_all; the packet queued in its flow, hbm_sched_add).
 *  hbm_dequeue (here): the fast slot's packet, else due flows moved out
 *    of the throttled tree (hbm_unthrottle) and the next flow by deficit
 *    round robin (hbm_sched_next); its head sent (hbm_sent) or the
 *    watchdog set (hbm_sched_wait, hbm_sched_quiet), all in
 *    hbm_sched.bpf.h.
 *  hbm_reset, hbm_destroy (here): hbm_purge (hbm_sched.bpf.h).
 *  hbm_state.bpf.h holds the objects and maps; hbm_ce.bpf.h the tcx ECN
 *  marker; include/hbm_edt.h the arithmetic, shared with the host tests.
 *
 * Use: `bpf-hbm load` (or `bpftool struct_ops register bpf_hbm.bpf.o`),
 * then `tc qdisc add dev eth0 root bpf_hbm`; configure with `bpf-hbm set`.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hbm_state.bpf.h"
#include "hbm_policy.bpf.h"
#include "hbm_flows.bpf.h"
#include "hbm_sched.bpf.h"
#include "hbm_ce.bpf.h"

char _license[] SEC("license") = "GPL";

/* A packet accepted: the qdisc's and the instance's counts. */
static __always_inline void hbm_count_accepted(struct Qdisc *sch,
					       struct hbm_inst *inst,
					       const struct hbm_cls *cls,
					       __u32 len, bool delayed)
{
	if (delayed) {
		inst->info.delayed++;
		sch->qstats.overlimits++;
	}
	if (cls->cr) {
		__sync_fetch_and_add(&cls->cr->enqueued, 1);
		if (delayed)
			__sync_fetch_and_add(&cls->cr->delayed, 1);
	}
	inst->info.enqueued++;
	sch->qstats.backlog += len;
	sch->q.qlen++;
	inst->info.qlen++;
	inst->info.backlog += len;
}

/* Drop @skb, counted under @reason (@dr, @cr may be NULL). */
static __always_inline int hbm_drop(struct Qdisc *sch, struct hbm_dev_rate *dr,
				    struct hbm_class_rate *cr,
				    struct sk_buff *skb,
				    struct bpf_sk_buff_ptr *to_free,
				    enum hbm_drop_reason reason)
{
	hbm_count_drop(dr, cr, reason);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

/* The fast path (hbm_sched_fast_ok said so): charged, then the slot. */
static __always_inline int
hbm_enqueue_fast(struct Qdisc *sch, struct hbm_inst *inst,
		 struct hbm_dev_rate *dr, const struct hbm_config *cfg,
		 const struct hbm_cls *cls, const struct hbm_pkt *pkt,
		 struct sk_buff *skb, struct bpf_sk_buff_ptr *to_free,
		 __u64 now, __u64 tstamp)
{
	enum hbm_drop_reason reason;
	__u64 departure, charge;
	enum hbm_verdict v;

	v = hbm_charge_all(dr, cfg, cls, pkt, skb, now, &charge, &departure,
			   &reason);
	if (v == HBM_DROP)
		return hbm_drop(sch, dr, cls->cr, skb, to_free, reason);
	if (tstamp > departure)
		departure = tstamp;
	hbm_count_accepted(sch, inst, cls, pkt->len, departure > now);
	inst->info.fastpath++;
	skb = hbm_sched_fast_add(inst, skb, departure, charge);
	if (skb)	/* the slot held one after all: never */
		bpf_qdisc_skb_drop(skb, to_free);
	return v == HBM_CN ? NET_XMIT_CN : NET_XMIT_SUCCESS;
}

/*
 * The packet in its flow: the flow checked out of the table (or a new
 * one), the flow limit, a node for the skb, the charge, the node queued.
 */
static __always_inline int
hbm_enqueue_flow(struct Qdisc *sch, struct hbm_inst *inst,
		 struct hbm_dev_rate *dr, const struct hbm_config *cfg,
		 const struct hbm_cls *cls, struct hbm_pkt *pkt,
		 struct sk_buff *skb, struct bpf_sk_buff_ptr *to_free,
		 struct hbm_flow_key *fk, __u64 now, __u64 tstamp)
{
	struct hbm_class_rate *cr = cls->cr;
	enum hbm_drop_reason reason;
	struct hbm_flow_slot *slot;
	struct hbm_skb_node *skbn;
	__u64 departure, charge;
	struct hbm_flow *flow;
	enum hbm_verdict v;

	fk->hash = bpf_skb_get_hash(skb);
	hbm_sched_quanta(inst, cfg, sch);
	flow = hbm_flow_checkout(inst, fk, now, &slot);
	if (!flow)
		return hbm_drop(sch, dr, cr, skb, to_free, HBM_DROP_NOMEM);
	if (!hbm_is_overflow(fk->hash) && flow->qlen >= cfg->flow_limit) {
		hbm_flow_checkin(inst, slot, flow, fk, now);
		return hbm_drop(sch, dr, cr, skb, to_free, HBM_DROP_FLOW_LIMIT);
	}
	skbn = hbm_node_get(inst);
	if (!skbn) {
		hbm_flow_checkin(inst, slot, flow, fk, now);
		return hbm_drop(sch, dr, cr, skb, to_free, HBM_DROP_NOMEM);
	}

	pkt->thin = hbm_is_thin(pkt, inst->initial_quantum);
	v = hbm_charge_all(dr, cfg, cls, pkt, skb, now, &charge, &departure,
			   &reason);
	if (v == HBM_DROP) {
		hbm_node_put(inst, skbn);
		hbm_flow_checkin(inst, slot, flow, fk, now);
		return hbm_drop(sch, dr, cr, skb, to_free, reason);
	}

	/* Never before the sender's own departure time. */
	if (tstamp > departure)
		departure = tstamp;
	hbm_count_accepted(sch, inst, cls, pkt->len, departure > now);

	skbn->departure = departure;
	skbn->charge_ns = charge;
	skb = bpf_kptr_xchg(&skbn->skb, skb);
	if (skb)	/* the node was new: never */
		bpf_qdisc_skb_drop(skb, to_free);
	hbm_sched_add(inst, flow, skbn, now);
	hbm_flow_checkin(inst, slot, flow, fk, now);
	return v == HBM_CN ? NET_XMIT_CN : NET_XMIT_SUCCESS;
}

SEC("struct_ops")
int BPF_PROG(hbm_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	const struct hbm_config *cfg;
	struct hbm_cls cls = {};
	struct hbm_pkt pkt = {};
	struct hbm_dev_rate *dr;
	struct hbm_flow_key fk;
	struct hbm_inst *inst;
	__u64 now, tstamp;

	inst = hbm_inst_of(sch);
	if (!inst)
		return hbm_drop(sch, NULL, NULL, skb, to_free, HBM_DROP_NOMEM);
	fk.inst = inst->info.key;
	dr = bpf_map_lookup_elem(&hbm_dev_rates, &fk.inst);
	if (!dr)
		return hbm_drop(sch, dr, NULL, skb, to_free, HBM_DROP_NOMEM);
	now = bpf_ktime_get_ns();
	cfg = hbm_inst_config(inst, dr, (struct hbm_dev_key *)&fk.inst, now);
	if (cfg->class_levels)
		hbm_class_find(skb, (struct hbm_dev_key *)&fk.inst,
			       cfg->class_levels, &cls);
	hbm_cb(skb)->cls = cls.id;
	if (sch->q.qlen >= cfg->limit)
		return hbm_drop(sch, dr, cls.cr, skb, to_free, HBM_DROP_LIMIT);

	tstamp = hbm_tstamp_of(skb, dr, now);
	if (hbm_beyond_horizon(tstamp, now, cfg->horizon_ns))
		return hbm_drop(sch, dr, cls.cr, skb, to_free,
				HBM_DROP_HORIZON);

	pkt.len = hbm_pkt_len(skb);
	hbm_sender_of(skb, &pkt, cfg->flags);
	if (hbm_sched_fast_ok(inst, dr, tstamp, now) &&
	    (!cls.cr || READ_ONCE(cls.cr->vq_time) <= now))
		return hbm_enqueue_fast(sch, inst, dr, cfg, &cls, &pkt, skb,
					to_free, now, tstamp);
	return hbm_enqueue_flow(sch, inst, dr, cfg, &cls, &pkt, skb, to_free,
				&fk, now, tstamp);
}

SEC("struct_ops")
struct sk_buff *BPF_PROG(hbm_dequeue, struct Qdisc *sch)
{
	struct hbm_inst_key ik;
	struct hbm_inst *inst;
	struct sk_buff *skb;
	__u64 now, at;
	bool more;

	inst = hbm_inst_of(sch);
	if (!inst)
		return NULL;
	/*
	 * Every qdisc run ends on a dequeue that finds nothing, once a packet
	 * where packets leave as they come: with no idle flow for the GC
	 * either, it needs not even the clock.
	 */
	if (!inst->fast_qlen && !inst->info.flows && !inst->info.idle_flows)
		return NULL;

	ik = inst->info.key;
	now = bpf_ktime_get_ns();
	if (inst->fast_qlen) {
		/* Nothing queued before it: the earliest packet there is. */
		at = inst->fast_departure;
		if (at > now) {
			hbm_sched_wait(sch, inst, &ik, now, at);
			return NULL;
		}
		skb = hbm_sched_fast_take(inst);
		if (skb) {
			hbm_sent(sch, inst, &ik, skb, now);
			return skb;
		}
	}
	if (!inst->info.flows) {
		hbm_sched_quiet(sch, inst, &ik, now);
		return NULL;
	}
	if (inst->throttled_first && inst->throttled_first <= now)
		hbm_unthrottle(inst, now);
	skb = hbm_sched_next(inst, now, &more);
	if (skb) {
		hbm_sent(sch, inst, &ik, skb, now);
		return skb;
	}
	if (more) {
		/* Out of visits with flows listed: come back at once. */
		inst->gc_armed = 0;
		bpf_qdisc_watchdog_schedule(sch, now, hbm_timer_slack_ns);
		return NULL;
	}
	at = inst->throttled_first;
	if (at)
		hbm_sched_wait(sch, inst, &ik, now, at);
	else
		hbm_sched_quiet(sch, inst, &ik, now);
	return NULL;
}

SEC("struct_ops")
void BPF_PROG(hbm_reset, struct Qdisc *sch)
{
	struct hbm_inst_key ik;
	struct hbm_inst *inst;

	inst = hbm_inst_of(sch);
	if (inst) {
		ik = inst->info.key;
		hbm_purge(inst, &ik);
	}
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

/*
 * Claim a free slot of hbm_instances for the instance @ik and zero it
 * (which frees whatever an earlier user left in it), from a stack of its
 * own, as the rate state below: both values at once would not fit in
 * hbm_init's 512 bytes. Returns the slot, or HBM_NO_SLOT when all are in
 * use. Qdiscs are created under the RTNL; the compare-and-swap keeps a
 * slot one instance's whatever calls init.
 */
static __noinline __u32 hbm_inst_create(struct hbm_inst_key *ik)
{
	struct hbm_inst inst0 = {};
	struct hbm_inst *inst;
	__u32 i, slot;

	bpf_for(i, 0, HBM_MAX_INSTANCES) {
		slot = i;
		inst = bpf_map_lookup_elem(&hbm_instances, &slot);
		if (!inst)
			break;
		if (inst->info.in_use ||
		    __sync_val_compare_and_swap(&inst->info.in_use, 0, 1))
			continue;
		inst0.info.key = *ik;
		inst0.info.in_use = 1;
		if (bpf_map_update_elem(&hbm_instances, &slot, &inst0, BPF_ANY)) {
			inst->info.in_use = 0;
			break;
		}
		return slot;
	}
	return HBM_NO_SLOT;
}

/*
 * Give @slot back, zeroed: the counters folded into the rate state
 * already, and the trees and lists emptied by the purge (anything left in
 * them is freed by the update).
 */
static __noinline void hbm_inst_release(__u32 slot)
{
	struct hbm_inst inst0 = {};

	bpf_map_update_elem(&hbm_instances, &slot, &inst0, BPF_ANY);
}

static __noinline int hbm_dev_rate_create(struct hbm_inst_key *ik)
{
	struct hbm_dev_rate zero = {};

	return bpf_map_update_elem(&hbm_dev_rates, ik, &zero, BPF_NOEXIST);
}

SEC("struct_ops")
int BPF_PROG(hbm_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	struct hbm_flow_slot empty = {};
	struct hbm_flow_key fk;
	struct hbm_dev_rate *dr;
	struct hbm_config cfg;
	__u32 slot;

	/*
	 * The kernel calls destroy after a failed init: undo what was done
	 * here so destroy, finding no slot, does nothing.
	 */
	sch->limit = HBM_NO_SLOT;
	hbm_inst_key_of(sch, &fk.inst);
	hbm_config_of((struct hbm_dev_key *)&fk.inst, &cfg);
	slot = hbm_inst_create(&fk.inst);
	if (slot == HBM_NO_SLOT)
		return -ENOMEM;
	fk.hash = HBM_OVERFLOW_HASH;
	if (bpf_map_update_elem(&hbm_flows, &fk, &empty, BPF_NOEXIST))
		goto undo_inst;

	/* The first instance on a device creates its rate state. */
	hbm_dev_rate_create(&fk.inst);
	dr = bpf_map_lookup_elem(&hbm_dev_rates, &fk.inst);
	if (!dr)
		goto undo_flow;
	__sync_fetch_and_add(&dr->instances, 1);
	hbm_config_mirror(dr, &cfg);	/* the marker's, before a packet */
	sch->limit = slot;
	return 0;

undo_flow:
	bpf_map_delete_elem(&hbm_flows, &fk);
undo_inst:
	hbm_inst_release(slot);
	return -ENOMEM;
}

/* Add an instance's per-packet counts to its device's, as it goes. */
static __always_inline void hbm_fold_counts(struct hbm_dev_rate *dr,
					    const struct hbm_inst_info *info)
{
	__sync_fetch_and_add(&dr->enqueued, info->enqueued);
	__sync_fetch_and_add(&dr->packets, info->packets);
	__sync_fetch_and_add(&dr->bytes, info->bytes);
	__sync_fetch_and_add(&dr->delayed, info->delayed);
	__sync_fetch_and_add(&dr->fastpath, info->fastpath);
}

/* Delete a class of the device @dev, whichever map @key was found in. */
static long hbm_class_forget(struct bpf_map *map, struct hbm_class_key *key,
			     void *value, struct hbm_dev_key *dev)
{
	if (key->ifindex == dev->ifindex && key->netns == dev->netns) {
		bpf_map_delete_elem(&hbm_class_configs, key);
		bpf_map_delete_elem(&hbm_class_rates, key);
	}
	return 0;
}

/*
 * A device going away takes its classes along, as its configuration: a
 * namespace's inode number is reused, and a device of the same ifindex in
 * a namespace that got it must not inherit them. Rare (the last instance
 * of an unregistering device), so a walk of each map will do.
 */
static __noinline void hbm_classes_forget(struct hbm_dev_key *dev)
{
	struct hbm_dev_key d = *dev;

	bpf_for_each_map_elem(&hbm_class_configs, hbm_class_forget, &d, 0);
	bpf_for_each_map_elem(&hbm_class_rates, hbm_class_forget, &d, 0);
}

SEC("struct_ops")
void BPF_PROG(hbm_destroy, struct Qdisc *sch)
{
	struct hbm_flow_key fk;
	struct hbm_dev_rate *dr;
	struct hbm_inst *inst;
	__u32 slot;

	slot = sch->limit;
	inst = bpf_map_lookup_elem(&hbm_instances, &slot);
	if (!inst)
		return;		/* init failed before claiming a slot */
	fk.inst = inst->info.key;
	hbm_purge(inst, &fk.inst);
	fk.hash = HBM_OVERFLOW_HASH;
	hbm_slot_free(&fk);
	bpf_map_delete_elem(&hbm_flows, &fk);
	dr = bpf_map_lookup_elem(&hbm_dev_rates, &fk.inst);
	if (dr)		/* the instance's counts outlive it */
		hbm_fold_counts(dr, &inst->info);
	hbm_inst_release(slot);

	/*
	 * The last instance on a device takes the rate state with it. The
	 * configuration stays for the next `tc qdisc add`, unless the device
	 * itself is going away: its ifindex, and its namespace's inode number,
	 * may name another device later, which must not inherit it.
	 */
	if (dr && __sync_fetch_and_sub(&dr->instances, 1) == 1) {
		bpf_map_delete_elem(&hbm_dev_rates, &fk.inst);
		if (sch->dev_queue->dev->reg_state != NETREG_REGISTERED) {
			bpf_map_delete_elem(&hbm_config, &fk.inst);
			hbm_classes_forget((struct hbm_dev_key *)&fk.inst);
		}
	}
}

SEC(".struct_ops.link")
struct Qdisc_ops hbm = {
	.enqueue = (void *)hbm_enqueue,
	.dequeue = (void *)hbm_dequeue,
	.reset = (void *)hbm_reset,
	.init = (void *)hbm_init,
	.destroy = (void *)hbm_destroy,
	.id = "bpf_hbm",
};
