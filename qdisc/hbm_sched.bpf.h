/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's scheduler: how accepted packets wait and leave. Each flow
 * holds its packets in an rbtree ordered by departure time. When a packet
 * leaves and which flow sends it are separate questions, as in sch_fq:
 * no packet leaves before its departure, and among the flows whose head is
 * due the order is deficit round robin. A backlogged flow waits in one of
 * three places of its instance: the new list (it was idle), the old list
 * (it has been sending), or the throttled tree, keyed by its head's
 * departure, when dequeue found its head not yet due. Dequeue moves due
 * flows from the tree to the old list, serves new flows before old ones,
 * each for as many bytes as its credit allows (a quantum per round, an
 * initial quantum when it is new), and when no flow is due sets the
 * watchdog for the tree's first head (or earlier, for a GC pass).
 *
 * How this differs from sch_fq: the departure is HBM's (the device's
 * virtual clock, or the sender's later stamp), not a per-flow pacing
 * rate; a packet stamped earlier than its flow's head waits for that head
 * only while the flow is throttled; and dequeue visits at most
 * HBM_DRR_VISITS flows before it hands the CPU back and comes back on the
 * watchdog at once (BPF loops are bounded), where sch_fq would loop until
 * some flow's credit is positive.
 *
 * A packet that is due when it arrives at an instance holding nothing
 * takes the fast path instead: it waits in the instance's one-packet slot,
 * ahead of every flow, and needs no flow and no node (sch_fq's fast path,
 * which sends such packets from an internal flow). Nothing queued can be
 * owed the link before it; its departure is kept all the same, for the
 * rare one that an mq sibling's charge made a little later than due.
 *
 * The interface the struct_ops use: hbm_sched_fast_ok, hbm_sched_fast_add,
 * hbm_sched_fast_take, hbm_node_get, hbm_node_put, hbm_sched_quanta,
 * hbm_sched_add, hbm_unthrottle, hbm_sched_next, hbm_sched_wait,
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

/* A node for a packet to queue: a spare one, else a new one, or NULL. */
static __always_inline struct hbm_skb_node *hbm_node_get(struct hbm_inst *inst)
{
	struct hbm_skb_node *n;
	int i;

	if (!inst->spares)
		return hbm_obj_new(struct hbm_skb_node);
#pragma unroll
	for (i = 0; i < HBM_SPARE_NODES; i++) {
		n = bpf_kptr_xchg(&inst->spare[i], NULL);
		if (n) {
			inst->spares--;
			return n;
		}
	}
	inst->spares = 0;	/* the count and the slots disagree: never */
	return hbm_obj_new(struct hbm_skb_node);
}

/*
 * Keep the node of a packet that left (or was dropped), its skb taken,
 * for a later packet; freed when the spares are full. Each slot it is
 * swapped into passes on what it held, so it lands in the first empty one.
 */
static __always_inline void hbm_node_put(struct hbm_inst *inst,
					 struct hbm_skb_node *n)
{
	int i;

	if (inst->spares < HBM_SPARE_NODES) {
#pragma unroll
		for (i = 0; i < HBM_SPARE_NODES; i++) {
			n = bpf_kptr_xchg(&inst->spare[i], n);
			if (!n) {
				inst->spares++;
				return;
			}
		}
	}
	hbm_obj_drop(n);
}

/* How long a flow must have been idle to come back with a full quantum. */
#define HBM_REFILL_DELAY_NS	(40 * 1000 * 1000ULL)	/* sch_fq's 40 ms */
/* Flows moved from the throttled tree to the old list per dequeue. */
#define HBM_UNTHROTTLE_MAX	64
/* Flows one dequeue looks at before it gives the CPU back (see below). */
#define HBM_DRR_VISITS		256

/*
 * The instance's quanta for this packet's flow, from the configuration or,
 * where that says auto, from the device as sch_fq takes them: its MTU
 * plus link-layer header, twice for a round and ten times for a new flow.
 */
static __always_inline void hbm_sched_quanta(struct hbm_inst *inst,
					     const struct hbm_config *cfg,
					     struct Qdisc *sch)
{
	struct net_device *dev;
	__u32 mtu = 0;

	if (!cfg->quantum || !cfg->initial_quantum) {
		dev = sch->dev_queue->dev;
		mtu = dev->mtu + dev->hard_header_len;
	}
	inst->quantum = cfg->quantum ?: HBM_DEF_QUANTUM_MTUS * mtu;
	inst->initial_quantum = cfg->initial_quantum ?:
				HBM_DEF_INITIAL_QUANTUM_MTUS * mtu;
	if (!inst->quantum)	/* a device without an MTU: never stall */
		inst->quantum = 1;
}

/*
 * Queue @skbn (its skb and departure set) in @flow. A detached flow joins
 * the new list, with a full quantum if it was idle for long (sch_fq); a
 * flow that waits in a list has its head refreshed, one in the throttled
 * tree keeps the key it is sorted by (a packet stamped earlier than the
 * head waits for it there, as in sch_fq).
 */
static __always_inline void hbm_sched_add(struct hbm_inst *inst,
					  struct hbm_flow *flow,
					  struct hbm_skb_node *skbn, __u64 now)
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

	flow->qlen++;
	if (flow->sched != HBM_SCHED_THROTTLED)
		flow->head = head;
	if (flow->sched != HBM_SCHED_DETACHED)
		return;
	if (flow->idle_since && now - flow->idle_since > HBM_REFILL_DELAY_NS &&
	    flow->credit < (__s32)inst->quantum)
		flow->credit = inst->quantum;
	ref = hbm_refcount_acquire(flow);
	if (!ref)
		return;
	flow->sched = HBM_SCHED_NEW;
	bpf_spin_lock(&inst->lock);
	hbm_list_push_back(&inst->new_flows, &ref->sched_node);
	bpf_spin_unlock(&inst->lock);
	inst->info.flows++;
}

/* A flow that is empty leaves the schedule: idle, or, overflow, let go. */
static __always_inline void hbm_sched_detach(struct hbm_inst *inst,
					     struct hbm_flow *flow, __u64 now)
{
	flow->sched = HBM_SCHED_DETACHED;
	if (inst->info.flows)
		inst->info.flows--;
	if (hbm_is_overflow(flow->hash))
		hbm_obj_drop(flow);
	else
		hbm_flow_idle(inst, flow, now);
}

/*
 * The throttled tree's first head, kept beside it (under its lock) so that
 * dequeue knows without the lock whether any flow is due to leave it.
 */
static __always_inline void hbm_throttled_first_update(struct hbm_inst *inst)
{
	struct bpf_rb_node *n = bpf_rbtree_first(&inst->throttled);

	inst->throttled_first = n ? container_of(n, struct hbm_flow, rb)->head :
				    0;
}

/* Put @flow at the back of the old list, counted (under inst->lock). */
static __always_inline void hbm_old_push_back(struct hbm_inst *inst,
					      struct hbm_flow *flow)
{
	flow->sched = HBM_SCHED_OLD;
	hbm_list_push_back(&inst->old_flows, &flow->sched_node);
	inst->old_count++;
}

/* Move flows whose head is due from the throttled tree to the old list. */
static __always_inline void hbm_unthrottle(struct hbm_inst *inst, __u64 now)
{
	struct bpf_rb_node *n;
	int i;

	bpf_for(i, 0, HBM_UNTHROTTLE_MAX) {
		bpf_spin_lock(&inst->lock);
		n = bpf_rbtree_first(&inst->throttled);
		if (!n || container_of(n, struct hbm_flow, rb)->head > now) {
			hbm_throttled_first_update(inst);
			bpf_spin_unlock(&inst->lock);
			return;
		}
		n = bpf_rbtree_remove(&inst->throttled, n);
		if (!n) {
			hbm_throttled_first_update(inst);
			bpf_spin_unlock(&inst->lock);
			return;
		}
		hbm_old_push_back(inst, container_of(n, struct hbm_flow, rb));
		hbm_throttled_first_update(inst);
		bpf_spin_unlock(&inst->lock);
	}
}

/*
 * Take @flow's head packet (it is due; the flow came off the @from_new
 * list with that list's reference) and put the flow back: at the front of
 * its list while it has packets, so it keeps its turn while its credit
 * lasts; emptied, a new flow passes once through the old list before it
 * is detached (sch_fq: else a flow sending a packet at a time would stay
 * new and starve the old ones). Returns the skb, NULL if the flow was
 * empty after all.
 */
static __always_inline struct sk_buff *hbm_sched_take(struct hbm_inst *inst,
						      struct hbm_flow *flow,
						      bool from_new, __u64 now)
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
		hbm_node_put(inst, skbn);
	}
	if (flow->qlen)
		flow->qlen--;
	if (skb)
		flow->credit -= hbm_pkt_len(skb);

	if (!flow->qlen && (!from_new || !inst->old_count)) {
		hbm_sched_detach(inst, flow, now);
		return skb;
	}
	bpf_spin_lock(&inst->lock);
	if (!flow->qlen) {
		hbm_old_push_back(inst, flow);
	} else if (from_new) {
		hbm_list_push_front(&inst->new_flows, &flow->sched_node);
	} else {
		hbm_list_push_front(&inst->old_flows, &flow->sched_node);
		inst->old_count++;
	}
	bpf_spin_unlock(&inst->lock);
	return skb;
}

/*
 * The next packet to send, by deficit round robin among the flows whose
 * head is due (sch_fq's order): new flows first, then old ones; a flow
 * whose credit ran out gets a quantum more and goes to the back of the
 * old list; one whose head is not due goes to the throttled tree; an
 * emptied one is detached. Every packet still leaves no earlier than its
 * departure. Returns the skb, or NULL with *@more set when the visits
 * ran out with flows still listed (deficits of many TSO packets against
 * a small quantum): the caller comes back at once rather than loop here.
 */
static __always_inline struct sk_buff *hbm_sched_next(struct hbm_inst *inst,
						      __u64 now, bool *more)
{
	struct bpf_list_node *ln;
	struct hbm_flow *flow;
	struct sk_buff *skb;
	bool from_new;
	int i;

	*more = false;
	bpf_for(i, 0, HBM_DRR_VISITS) {
		bpf_spin_lock(&inst->lock);
		from_new = true;
		ln = bpf_list_pop_front(&inst->new_flows);
		if (!ln) {
			from_new = false;
			ln = bpf_list_pop_front(&inst->old_flows);
			if (!ln) {
				bpf_spin_unlock(&inst->lock);
				return NULL;
			}
			if (inst->old_count)
				inst->old_count--;
		}
		flow = container_of(ln, struct hbm_flow, sched_node);
		if (!flow->qlen) {
			/* An emptied new flow's pass through the old list. */
			bpf_spin_unlock(&inst->lock);
			hbm_sched_detach(inst, flow, now);
			continue;
		}
		if (flow->credit <= 0) {
			/*
			 * Alone in the lists, a flow's rounds follow each other:
			 * take them at once rather than a visit each (a 64 KB
			 * TSO packet is 22 rounds of a 3028-byte quantum).
			 */
			if (!from_new && !inst->old_count)
				flow->credit += (__u32)(-flow->credit) /
						inst->quantum * inst->quantum;
			flow->credit += inst->quantum;
			hbm_old_push_back(inst, flow);
			bpf_spin_unlock(&inst->lock);
			continue;
		}
		if (flow->head > now) {
			flow->sched = HBM_SCHED_THROTTLED;
			hbm_rbtree_add(&inst->throttled, &flow->rb,
				       hbm_flow_less);
			hbm_throttled_first_update(inst);
			bpf_spin_unlock(&inst->lock);
			continue;
		}
		bpf_spin_unlock(&inst->lock);
		skb = hbm_sched_take(inst, flow, from_new, now);
		if (skb)
			return skb;
	}
	*more = true;
	return NULL;
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
	inst->info.packets++;
	inst->info.bytes += len;
	hbm_class_unqueue(ik, skb, len, true);
	/* The first packet since the watchdog was set for it. */
	armed = inst->armed_at;
	if (armed && now >= armed) {
		inst->armed_at = 0;
		dr = bpf_map_lookup_elem(&hbm_dev_rates, ik);
		if (dr)
			hbm_late_record(dr, now - armed, now);
	}
}

/* Take a flow out of the schedule (tree or lists) for the purge, or NULL. */
static __always_inline struct hbm_flow *hbm_sched_pop(struct hbm_inst *inst)
{
	struct bpf_list_node *ln;
	struct bpf_rb_node *n;

	bpf_spin_lock(&inst->lock);
	n = bpf_rbtree_first(&inst->throttled);
	if (n) {
		n = bpf_rbtree_remove(&inst->throttled, n);
		bpf_spin_unlock(&inst->lock);
		return n ? container_of(n, struct hbm_flow, rb) : NULL;
	}
	ln = bpf_list_pop_front(&inst->new_flows);
	if (!ln)
		ln = bpf_list_pop_front(&inst->old_flows);
	bpf_spin_unlock(&inst->lock);
	if (!ln)
		return NULL;
	/* Not before the test: the verifier wants no arithmetic on NULL. */
	barrier_var(ln);
	return container_of(ln, struct hbm_flow, sched_node);
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

/*
 * A purged packet: its charge given back to the device's clock (the charge
 * it was given, whatever the rate now) and to its class's, then freed.
 */
static __always_inline void hbm_purge_skb(struct hbm_dev_rate *dr,
					  const struct hbm_inst_key *ik,
					  struct sk_buff *skb, __u64 charge)
{
	if (dr)
		hbm_dev_rate_refund(dr, charge);
	hbm_class_unqueue(ik, skb, 0, false);
	bpf_kfree_skb(skb);
}

/*
 * Free every packet and flow of an instance; returns packets freed. A
 * function of its own: inlined, its frame and hbm_inst_release's (a zeroed
 * hbm_inst) would pass the 512 bytes of stack hbm_destroy has for both.
 */
static __noinline __u32 hbm_purge(struct hbm_inst *inst,
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
		hbm_purge_skb(dr, ik, skb, charge);
		freed++;
	}
	bpf_for(i, 0, HBM_DRAIN_MAX) {
		flow = hbm_sched_pop(inst);
		if (!flow)
			break;
		bpf_for(j, 0, HBM_DRAIN_MAX) {
			n = hbm_flow_pop(flow);
			if (!n)
				break;
			skbn = container_of(n, struct hbm_skb_node, node);
			skb = bpf_kptr_xchg(&skbn->skb, NULL);
			charge = skbn->charge_ns;
			hbm_obj_drop(skbn);
			if (skb) {
				hbm_purge_skb(dr, ik, skb, charge);
				freed++;
			}
		}
		/* The overflow flow keeps its slot: it must count empty. */
		flow->qlen = 0;
		flow->sched = HBM_SCHED_DETACHED;
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
	inst->old_count = 0;
	inst->throttled_first = 0;
	inst->gc_armed = 0;
	inst->armed_at = 0;
	return freed;
}

#endif /* HBM_SCHED_BPF_H */
