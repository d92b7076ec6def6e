/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's scheduler: how accepted packets wait and leave. Each flow
 * holds its packets in an rbtree ordered by departure time; each instance
 * holds its backlogged flows in an rbtree keyed by their head's departure,
 * so that dequeue looks at one node and either sends its head or sets the
 * watchdog for exactly its time (or earlier, for a GC pass).
 *
 * A packet that is due when it arrives at an instance holding nothing
 * takes the fast path instead: it waits in the instance's one-packet slot,
 * ahead of every flow, and needs no flow and no node (sch_fq's fast path,
 * which sends such packets from an internal flow). Nothing queued can be
 * owed the link before it; its departure is kept all the same, for the
 * rare one that an mq sibling's charge made a little later than due.
 *
 * The interface the struct_ops use: hbm_sched_fast_ok, hbm_sched_fast_add,
 * hbm_sched_fast_take, hbm_sched_add, hbm_sched_take, hbm_sched_wait,
 * hbm_sched_quiet, hbm_sent and hbm_purge.
 */
#ifndef HBM_SCHED_BPF_H
#define HBM_SCHED_BPF_H

#include "hbm_policy.bpf.h"
#include "hbm_flows.bpf.h"

/*
 * Whether a packet may take the fast path: the instance holds nothing (no
 * backlogged flow, an empty slot) and the packet is due, its own stamp and
 * the device's clock (read unlocked: mq children race for it, so its
 * departure may turn out a little later, which dequeue honours) at or
 * before @now.
 */
static __always_inline bool hbm_sched_fast_ok(struct hbm_inst *inst,
					      struct hbm_dev_rate *dr,
					      __u64 tstamp, __u64 now)
{
	return !inst->info.flows && !inst->fast_qlen && tstamp <= now &&
	       READ_ONCE(dr->vq_time) <= now;
}

/*
 * Put @skb in the fast slot (hbm_sched_fast_ok said it is empty). Returns
 * what the slot held before: NULL, unless the slot and its count disagree.
 */
static __always_inline struct sk_buff *
hbm_sched_fast_add(struct hbm_inst *inst, struct sk_buff *skb,
		   __u64 departure, __u64 charge)
{
	inst->fast_departure = departure;
	inst->fast_charge = charge;
	inst->fast_qlen = 1;
	return bpf_kptr_xchg(&inst->fast, skb);
}

/* Take the fast slot's packet, or NULL. */
static __always_inline struct sk_buff *hbm_sched_fast_take(struct hbm_inst *inst)
{
	inst->fast_qlen = 0;
	return bpf_kptr_xchg(&inst->fast, NULL);
}

/*
 * Queue @skbn (its skb and departure set) in @flow; a flow that just
 * became backlogged joins the instance's tree, keyed by its head.
 */
static __always_inline void hbm_sched_add(struct hbm_inst *inst,
					  struct hbm_flow *flow,
					  struct hbm_skb_node *skbn)
{
	struct bpf_rb_node *n;
	struct hbm_flow *ref;
	__u64 head = 0;

	bpf_spin_lock(&flow->lock);
	hbm_rbtree_add(&flow->queue, &skbn->node, hbm_skb_less);
	n = bpf_rbtree_first(&flow->queue);
	if (n)
		head = container_of(n, struct hbm_skb_node, node)->departure;
	bpf_spin_unlock(&flow->lock);

	if (flow->qlen++ == 0) {
		flow->head = head;
		ref = hbm_refcount_acquire(flow);
		if (ref) {
			bpf_spin_lock(&inst->lock);
			hbm_rbtree_add(&inst->flows, &ref->rb, hbm_flow_less);
			bpf_spin_unlock(&inst->lock);
			inst->info.flows++;
		}
	}
}

/*
 * Take the head packet of @flow, a due flow just taken out of the
 * instance's tree (with the tree's reference): the flow goes back into the
 * tree keyed by its next packet, or, emptied, stays in its slot, idle.
 * Returns the packet's skb, NULL only if the flow was empty.
 */
static __always_inline struct sk_buff *hbm_sched_take(struct hbm_inst *inst,
						      struct hbm_flow *flow,
						      __u64 now)
{
	struct hbm_skb_node *skbn;
	struct sk_buff *skb = NULL;
	struct bpf_rb_node *n, *next;

	bpf_spin_lock(&flow->lock);
	n = bpf_rbtree_first(&flow->queue);
	if (n)
		n = bpf_rbtree_remove(&flow->queue, n);
	next = bpf_rbtree_first(&flow->queue);
	if (next)
		flow->head = container_of(next, struct hbm_skb_node,
					  node)->departure;
	bpf_spin_unlock(&flow->lock);

	if (n) {
		skbn = container_of(n, struct hbm_skb_node, node);
		skb = bpf_kptr_xchg(&skbn->skb, skb);
		hbm_obj_drop(skbn);
	}
	if (flow->qlen)
		flow->qlen--;

	if (next) {
		bpf_spin_lock(&inst->lock);
		hbm_rbtree_add(&inst->flows, &flow->rb, hbm_flow_less);
		bpf_spin_unlock(&inst->lock);
	} else {
		/* Emptied: it stays in its slot, idle, with the tree's ref. */
		inst->info.flows--;
		if (hbm_is_overflow(flow->hash))
			hbm_obj_drop(flow);
		else
			hbm_flow_idle(inst, flow, now);
	}
	return skb;
}

/*
 * The earliest head departs at @at, later than @now: set the watchdog for
 * it, or for the GC's next pass if that comes first (never delaying the
 * packet by the pass's slack).
 */
static __always_inline void hbm_sched_wait(struct Qdisc *sch,
					   struct hbm_inst *inst,
					   struct hbm_inst_key *ik, __u64 now,
					   __u64 at)
{
	__u64 gc;

	inst->gc_armed = 0;	/* the watchdog is the packet's now */
	inst->armed_at = at;
	gc = hbm_gc_tick(inst, ik, now);
	if (gc && gc < at)
		bpf_qdisc_watchdog_schedule(sch, gc,
					    hbm_gc_slack(gc, now, at - gc));
	else
		bpf_qdisc_watchdog_schedule(sch, at, hbm_timer_slack_ns);
}

/* Nothing waits: the watchdog is the GC's. */
static __always_inline void hbm_sched_quiet(struct Qdisc *sch,
					    struct hbm_inst *inst,
					    struct hbm_inst_key *ik, __u64 now)
{
	__u64 gc = hbm_gc_tick(inst, ik, now);

	if (gc && inst->gc_armed != gc) {
		inst->gc_armed = gc;	/* spare the kfunc per packet */
		bpf_qdisc_watchdog_schedule(sch, gc,
					    hbm_gc_slack(gc, now, -1ULL));
	}
}

/* Account for @skb leaving now: counters, and a lateness sample. */
static __always_inline void hbm_sent(struct Qdisc *sch, struct hbm_inst *inst,
				     struct hbm_inst_key *ik,
				     struct sk_buff *skb, __u64 now)
{
	__u32 len = hbm_pkt_len(skb);
	struct hbm_dev_rate *dr;
	__u64 armed;

	sch->q.qlen--;
	sch->qstats.backlog -= len;
	inst->info.qlen--;
	inst->info.backlog -= len;
	bpf_qdisc_bstats_update(sch, skb);
	dr = bpf_map_lookup_elem(&hbm_dev_rates, ik);
	if (!dr)
		return;
	__sync_fetch_and_add(&dr->packets, 1);
	__sync_fetch_and_add(&dr->bytes, len);
	/* The first packet since the watchdog was set for it. */
	armed = inst->armed_at;
	if (armed && now >= armed) {
		inst->armed_at = 0;
		hbm_late_record(dr, now - armed);
	}
}

/* Take the earliest flow out of the instance's tree, or NULL. */
static __always_inline struct bpf_rb_node *hbm_inst_pop(struct hbm_inst *inst)
{
	struct bpf_rb_node *n;

	bpf_spin_lock(&inst->lock);
	n = bpf_rbtree_first(&inst->flows);
	if (n)
		n = bpf_rbtree_remove(&inst->flows, n);
	bpf_spin_unlock(&inst->lock);
	return n;
}

/* Take the earliest packet out of a flow's queue, or NULL. */
static __always_inline struct bpf_rb_node *hbm_flow_pop(struct hbm_flow *flow)
{
	struct bpf_rb_node *n;

	bpf_spin_lock(&flow->lock);
	n = bpf_rbtree_first(&flow->queue);
	if (n)
		n = bpf_rbtree_remove(&flow->queue, n);
	bpf_spin_unlock(&flow->lock);
	return n;
}

/* Free every packet and flow of an instance; returns packets freed. */
static __always_inline __u32 hbm_purge(struct hbm_inst *inst,
				       struct hbm_inst_key *ik)
{
	struct hbm_skb_node *skbn;
	struct hbm_flow_key fk;
	struct hbm_dev_rate *dr;
	struct bpf_rb_node *n;
	struct hbm_flow *flow;
	struct sk_buff *skb;
	__u32 freed = 0;
	__u64 charge;
	int i, j;

	fk.inst = *ik;
	dr = bpf_map_lookup_elem(&hbm_dev_rates, ik);
	charge = inst->fast_charge;
	skb = hbm_sched_fast_take(inst);
	if (skb) {
		if (dr)
			hbm_dev_rate_refund(dr, charge);
		bpf_kfree_skb(skb);
		freed++;
	}
	bpf_for(i, 0, HBM_DRAIN_MAX) {
		n = hbm_inst_pop(inst);
		if (!n)
			break;
		flow = container_of(n, struct hbm_flow, rb);
		bpf_for(j, 0, HBM_DRAIN_MAX) {
			n = hbm_flow_pop(flow);
			if (!n)
				break;
			skbn = container_of(n, struct hbm_skb_node, node);
			skb = bpf_kptr_xchg(&skbn->skb, NULL);
			charge = skbn->charge_ns;
			hbm_obj_drop(skbn);
			if (skb) {
				if (dr)
					hbm_dev_rate_refund(dr, charge);
				bpf_kfree_skb(skb);
				freed++;
			}
		}
		/* The overflow flow keeps its slot: it must count empty. */
		flow->qlen = 0;
		fk.hash = flow->hash;
		hbm_obj_drop(flow);
		if (!hbm_is_overflow(fk.hash))
			hbm_slot_free(&fk);
	}
	/*
	 * Then the idle flows, all empty now (a slot freed above is simply
	 * not found).
	 */
	bpf_for(i, 0, HBM_DRAIN_MAX) {
		flow = hbm_idle_pop(inst);
		if (!flow)
			break;
		hbm_idle_release(&fk, flow);
	}
	inst->info.qlen = 0;
	inst->info.flows = 0;
	inst->info.idle_flows = 0;
	inst->info.backlog = 0;
	inst->gc_armed = 0;
	inst->armed_at = 0;
	return freed;
}

#endif /* HBM_SCHED_BPF_H */
