/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's flow table (map hbm_flows, shared by all instances) and its
 * garbage collector. A packet's flow is checked out of its slot for the
 * enqueue and back in after it (hbm_flow_checkout, hbm_flow_checkin: no
 * reference is taken or dropped, the slot's is moved); an emptied
 * flow stays in its slot, idle, listed oldest first on its instance's idle
 * list, until the GC frees it: two per new flow, and a pass on the
 * watchdog whether or not packets wait (hbm_gc_tick).
 */
#ifndef HBM_FLOWS_BPF_H
#define HBM_FLOWS_BPF_H

#include "hbm_state.bpf.h"

/*
 * Free a flow table slot. Its flow must be taken out first: a hash map
 * element deleted with a kptr still in it was seen (7.2, 7.3) to come back
 * from the next insert with that stale pointer in place.
 */
static __always_inline void hbm_slot_free(struct hbm_flow_key *fk)
{
	struct hbm_flow_slot *slot = bpf_map_lookup_elem(&hbm_flows, fk);
	struct hbm_flow *flow;

	if (!slot)
		return;
	flow = bpf_kptr_xchg(&slot->flow, NULL);
	if (flow)
		hbm_obj_drop(flow);
	if (!hbm_is_overflow(fk->hash))
		bpf_map_delete_elem(&hbm_flows, fk);
}

/*
 * An empty flow becomes idle: counted, stamped and, unless it still is,
 * listed for the GC. Takes a reference to the flow (the list's, or dropped).
 */
static __always_inline void hbm_flow_idle(struct hbm_inst *inst,
					  struct hbm_flow *flow, __u64 now)
{
	flow->idle_since = now;
	inst->info.idle_flows++;
	if (flow->listed) {
		hbm_obj_drop(flow);
		return;
	}
	flow->listed = 1;
	bpf_spin_lock(&inst->lock);
	hbm_list_push_back(&inst->idle, &flow->idle_node);
	bpf_spin_unlock(&inst->lock);
}

/*
 * Whether a flow is idle: empty and detached. An emptied new flow passes
 * through the old list once (hbm_sched_next), empty but not idle.
 */
static __always_inline bool hbm_flow_is_idle(struct hbm_flow *flow)
{
	return flow->qlen == 0 && flow->sched == HBM_SCHED_DETACHED;
}

/* Put a flow back in its table slot; one left idle is counted so. */
static __always_inline void hbm_flow_checkin(struct hbm_inst *inst,
					     struct hbm_flow_slot *slot,
					     struct hbm_flow *flow,
					     struct hbm_flow_key *fk, __u64 now)
{
	struct hbm_flow *ref;

	if (hbm_flow_is_idle(flow) && !hbm_is_overflow(fk->hash)) {
		ref = hbm_refcount_acquire(flow);
		if (ref)
			hbm_flow_idle(inst, ref, now);
	}
	flow = bpf_kptr_xchg(&slot->flow, flow);
	if (flow)
		hbm_obj_drop(flow);
}

/* Take the instance's first listed flow off its idle list, or NULL. */
static __always_inline struct hbm_flow *hbm_idle_pop(struct hbm_inst *inst)
{
	struct bpf_list_node *n;

	bpf_spin_lock(&inst->lock);
	n = bpf_list_pop_front(&inst->idle);
	bpf_spin_unlock(&inst->lock);
	return n ? container_of(n, struct hbm_flow, idle_node) : NULL;
}

/*
 * Let go of a flow taken off the idle list: the list's reference, and its
 * table slot too unless it has packets again. Returns whether it was freed.
 */
static __always_inline bool hbm_idle_release(struct hbm_flow_key *fk,
					     struct hbm_flow *flow)
{
	bool busy = !hbm_flow_is_idle(flow);

	flow->listed = 0;
	fk->hash = flow->hash;
	hbm_obj_drop(flow);
	if (!busy)
		hbm_slot_free(fk);
	return !busy;
}

/*
 * Free up to @budget flows idle for over hbm_flow_idle_ns from the head of
 * the instance's idle list. A listed flow that got packets again is
 * unlisted (it is listed anew when it empties); one that emptied again
 * since it was listed goes back to the tail, and the pass ends there.
 * Returns whether the budget ran out first (more may be due).
 */
static __always_inline bool hbm_flow_gc(struct hbm_inst *inst,
					struct hbm_inst_key *ik, __u64 now,
					int budget)
{
	struct hbm_flow_key fk;
	struct hbm_flow *flow;
	int i;

	fk.inst = *ik;
	bpf_for(i, 0, budget) {
		flow = hbm_idle_pop(inst);
		if (!flow)
			return false;
		if (hbm_flow_is_idle(flow) &&
		    now - flow->idle_since < hbm_flow_idle_ns) {
			bpf_spin_lock(&inst->lock);
			hbm_list_push_back(&inst->idle, &flow->idle_node);
			bpf_spin_unlock(&inst->lock);
			return false;
		}
		if (hbm_idle_release(&fk, flow) && inst->info.idle_flows)
			inst->info.idle_flows--;
	}
	return true;
}

/*
 * Collect idle flows on the watchdog too: an instance that creates no
 * flows runs no GC on that path, and whether it is quiet or stays
 * backlogged (one packet stamped seconds out is enough) it would keep its
 * idle flows in the table all instances share. A pass frees up to
 * HBM_GC_QUIET_BUDGET flows idle for over hbm_flow_idle_ns; passes follow
 * each other HBM_GC_QUIET_STEP_NS apart while they find more, else half an
 * idle time apart. Returns when the next pass is due, or 0 for none.
 */
static __always_inline __u64 hbm_gc_tick(struct hbm_inst *inst,
					 struct hbm_inst_key *ik, __u64 now)
{
	bool more;

	if (!inst->info.idle_flows)
		return 0;
	if (now >= inst->gc_next) {
		more = hbm_flow_gc(inst, ik, now, HBM_GC_QUIET_BUDGET);
		inst->gc_next = now + (more ? HBM_GC_QUIET_STEP_NS :
					      HBM_GC_PERIOD_NS);
		if (!inst->info.idle_flows)
			return 0;
	}
	return inst->gc_next;
}

/*
 * Slack for a GC pass: one half an idle time away may wait for other
 * timers, but never past @limit ns (the head packet's departure).
 */
static __always_inline __u64 hbm_gc_slack(__u64 at, __u64 now, __u64 limit)
{
	__u64 slack = at - now > HBM_GC_QUIET_STEP_NS ? HBM_GC_SLACK_NS :
							 HBM_GC_QUIET_STEP_NS;

	return slack < limit ? slack : limit;
}

/* A new flow, or NULL (the allocator's failure, or an injected one). */
static __always_inline struct hbm_flow *hbm_flow_alloc(void)
{
	struct hbm_flow *flow = hbm_obj_new(struct hbm_flow);

	if (flow && hbm_fault_flow_alloc &&
	    ++hbm_flow_allocs % hbm_fault_flow_alloc == 0) {
		hbm_obj_drop(flow);
		return NULL;
	}
	return flow;
}

/*
 * The packet's flow (@fk: its instance and hash), taken out of its table
 * slot, which *@slotp names for hbm_flow_checkin: the one it has, or a new
 * one. When the table is full the packet joins the instance's overflow
 * flow (@fk->hash says so). NULL when no flow can be had; no slot is left
 * behind then.
 */
static __always_inline struct hbm_flow *
hbm_flow_checkout(struct hbm_inst *inst, struct hbm_flow_key *fk, __u64 now,
		  struct hbm_flow_slot **slotp)
{
	struct hbm_flow_slot *slot;
	struct hbm_flow *flow;

	slot = bpf_map_lookup_elem(&hbm_flows, fk);
	if (!slot) {
		struct hbm_flow_slot empty = {};

		hbm_flow_gc(inst, &fk->inst, now, HBM_GC_BUDGET);
		if (!bpf_map_update_elem(&hbm_flows, fk, &empty, BPF_NOEXIST))
			slot = bpf_map_lookup_elem(&hbm_flows, fk);
		if (!slot) {
			fk->hash = HBM_OVERFLOW_HASH;
			slot = bpf_map_lookup_elem(&hbm_flows, fk);
			if (!slot)
				return NULL;
		}
	}
	*slotp = slot;
	flow = bpf_kptr_xchg(&slot->flow, NULL);
	if (flow) {
		/* An idle flow in use again (its put counts it idle anew). */
		if (hbm_flow_is_idle(flow) && !hbm_is_overflow(fk->hash) &&
		    inst->info.idle_flows)
			inst->info.idle_flows--;
		return flow;
	}
	flow = hbm_flow_alloc();
	if (!flow) {
		/*
		 * A slot without a flow is on no list: neither the GC nor
		 * the purge would ever free it.
		 */
		if (!hbm_is_overflow(fk->hash))
			bpf_map_delete_elem(&hbm_flows, fk);
		return NULL;
	}
	/*
	 * Not zeroed here: bpf_obj_new() initialises the special fields
	 * (nodes, lock, refcount). Without these stores, the tests after
	 * test_overflow (which purges 65k flows of one packet each) stranded
	 * packets: qlen > 0, no flow in the instance's tree, as a stale qlen
	 * would do.
	 */
	flow->qlen = 0;
	flow->head = 0;
	flow->hash = fk->hash;
	flow->idle_since = 0;
	flow->listed = 0;
	flow->sched = HBM_SCHED_DETACHED;
	flow->credit = inst->initial_quantum;
	return flow;
}

#endif /* HBM_FLOWS_BPF_H */
