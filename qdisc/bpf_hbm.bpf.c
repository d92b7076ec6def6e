// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_hbm: a BPF qdisc that shapes a device's egress the way HBM (Host
 * Bandwidth Manager) does with Earliest Departure Time, inside one qdisc.
 *
 * Every packet is charged to the device's virtual queue (a clock advancing
 * by len / rate per packet, with at most `burst` of idle credit), which
 * gives it a departure time; a sender's own timestamp (TCP pacing,
 * SO_TXTIME) is honoured when later. Packets wait in per-flow rbtrees
 * ordered by departure time; the instance keeps its backlogged flows in an
 * rbtree keyed by their head's departure, so dequeue looks at one node and
 * either sends or arms the watchdog for exactly that time.
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
 * The shaper's own lateness is not charged to the senders: dequeue measures
 * how late the first packet after each watchdog time left, and what the
 * envelope of that lateness exceeds `burst` by (0 on a host whose timers
 * keep time, about a millisecond under a hypervisor's jitter) is added to
 * the idle credit and subtracted from the delay judged against the
 * thresholds (hbm_late_allowance in hbm_edt.h). `--late-credit off` gives
 * HBM's fixed values.
 *
 * Differences from sch_fq, whose EDT machinery this mirrors:
 *  - a flow is scheduled by its head's departure time when it becomes
 *    backlogged and after each dequeue. A packet that arrives with an
 *    earlier departure than the current head waits for that head, as in
 *    fq's throttled flows.
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
 * BPF qdiscs have no private data: each instance's state is keyed by
 * (ifindex, netns, parent, handle), so mq children keep their own queues,
 * while the rate class (virtual queue, counters) and the configuration are
 * keyed by (ifindex, netns) and shared by all children of a device.
 *
 * Use: `bpf-hbm load` (or `bpftool struct_ops register bpf_hbm.bpf.o`),
 * then `tc qdisc add dev eth0 root bpf_hbm`; configure with `bpf-hbm set`.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hbm_graph.bpf.h"
#include "hbm_edt.h"

char _license[] SEC("license") = "GPL";

#define ENOMEM			12
#define AF_INET			2
#define AF_INET6		10
#define IPPROTO_TCP		6
#define TCP_ECN_OK		1	/* RFC 3168 ECN; TCP_ECN_MODE_RFC3168 since 6.18 */
#define TCP_ECN_MODE_ACCECN	16	/* AccECN (6.18+; unused bit before) */
#define TCP_TIME_WAIT		6
#define TCP_NEW_SYN_RECV	12
#define SOCK_STREAM		1

/* Flow hashes are 32-bit: this one names each instance's overflow flow. */
#define HBM_OVERFLOW_HASH	(1ULL << 32)

/* Upper bound for the loops that drain a queue: no limit is above it. */
#define HBM_DRAIN_MAX		HBM_MAX_LIMIT

/* Load-time constants: the defaults an unconfigured device gets. */
const volatile struct hbm_config hbm_defaults = HBM_CONFIG_DEFAULT;
const volatile __u64 hbm_timer_slack_ns = HBM_DEF_SLACK_NS;
const volatile __u64 hbm_flow_idle_ns = HBM_DEF_FLOW_IDLE_NS;

/*
 * Fault injection for the tests: every hbm_fault_flow_alloc-th allocation
 * of a flow fails (the loader sets it from BPF_HBM_FAULT_FLOW_ALLOC). At
 * 0, its default, the verifier removes the check as dead code.
 */
const volatile __u32 hbm_fault_flow_alloc;
__u32 hbm_flow_allocs;

/*
 * Idle flows the garbage collector may free per flow created, and per pass
 * on the watchdog; passes follow each other this closely while they find
 * old flows.
 */
#define HBM_GC_BUDGET		2
#define HBM_GC_QUIET_BUDGET	64
#define HBM_GC_QUIET_STEP_NS	(1000 * 1000ULL)

struct hbm_skb_node {
	__u64 departure;
	__u64 charge_ns;		/* what it cost the virtual clock */
	struct sk_buff __kptr *skb;
	struct bpf_rb_node node;
};

struct hbm_flow {
	struct bpf_rb_node rb;		/* in hbm_inst.flows while backlogged */
	struct bpf_list_node idle_node;	/* in hbm_inst.idle while listed */
	__u64 head;			/* rb's key: departure of the head */
	__u64 hash;
	__u64 idle_since;		/* when it last emptied */
	__u32 qlen;
	__u32 listed;			/* idle_node is in hbm_inst.idle */
	struct bpf_spin_lock lock;
	struct bpf_rb_root queue __contains(hbm_skb_node, node);
	struct bpf_refcount ref;	/* held by the table, tree and list */
};

struct hbm_flow_key {
	struct hbm_inst_key inst;
	__u64 hash;
};

struct hbm_flow_slot {
	struct hbm_flow __kptr *flow;
};

/*
 * A flow is listed in idle when it empties, and stays listed if it fills
 * and empties again: the GC, finding it busy or refreshed, unlists it or
 * moves it to the tail. Only the GC and the purge take flows off the list.
 */
struct hbm_inst {
	struct hbm_inst_info info;
	struct bpf_spin_lock lock;	/* for flows and idle */
	struct bpf_rb_root flows __contains(hbm_flow, rb);
	struct bpf_list_head idle __contains(hbm_flow, idle_node);
	__u64 gc_next;			/* the next pass while quiet */
	__u64 gc_armed;			/* gc_next the watchdog is set for */
	__u64 armed_at;			/* the departure it is set for, or 0 */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_dev_key);
	__type(value, struct hbm_config);
	__uint(max_entries, HBM_MAX_DEVS);
} hbm_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_dev_key);
	__type(value, struct hbm_class);
	__uint(max_entries, HBM_MAX_DEVS);
} hbm_classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_inst_key);
	__type(value, struct hbm_inst);
	__uint(max_entries, HBM_MAX_INSTANCES);
} hbm_instances SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_flow_key);
	__type(value, struct hbm_flow_slot);
	__uint(max_entries, HBM_MAX_FLOWS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} hbm_flows SEC(".maps");

static bool hbm_skb_less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct hbm_skb_node *na = container_of(a, struct hbm_skb_node, node);
	struct hbm_skb_node *nb = container_of(b, struct hbm_skb_node, node);

	return na->departure < nb->departure;
}

static bool hbm_flow_less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct hbm_flow *fa = container_of(a, struct hbm_flow, rb);
	struct hbm_flow *fb = container_of(b, struct hbm_flow, rb);

	return fa->head < fb->head;
}

static __always_inline void hbm_inst_key_of(struct Qdisc *sch,
					    struct hbm_inst_key *key)
{
	struct net_device *dev = sch->dev_queue->dev;

	key->ifindex = dev->ifindex;
	key->netns = dev->nd_net.net->ns.inum;
	key->parent = sch->parent;
	key->handle = sch->handle;
}

/* The device's configuration, or the load-time defaults. */
static __always_inline void hbm_config_of(struct hbm_dev_key *dev,
					  struct hbm_config *cfg)
{
	struct hbm_config *c = bpf_map_lookup_elem(&hbm_config, dev);

	if (c) {
		*cfg = *c;
	} else {
		cfg->rate_bps = hbm_defaults.rate_bps;
		cfg->burst_ns = hbm_defaults.burst_ns;
		cfg->mark_ns = hbm_defaults.mark_ns;
		cfg->drop_ns = hbm_defaults.drop_ns;
		cfg->drop_large_ns = hbm_defaults.drop_large_ns;
		cfg->horizon_ns = hbm_defaults.horizon_ns;
		cfg->limit = hbm_defaults.limit;
		cfg->flow_limit = hbm_defaults.flow_limit;
		cfg->large_pkt = hbm_defaults.large_pkt;
		cfg->flags = hbm_defaults.flags;
	}
	/* The loader validates; a hand-edited map must not divide by zero. */
	if (cfg->rate_bps < HBM_MIN_RATE_BPS)
		cfg->rate_bps = HBM_MIN_RATE_BPS;
	/* ... nor queue more than the purge can free. */
	if (cfg->limit > HBM_MAX_LIMIT)
		cfg->limit = HBM_MAX_LIMIT;
}

/*
 * What HBM needs to know about the sender: a TCP packet of a local full
 * socket carries its packets in flight (for the 2-packet guard) and its
 * ECN state. Forwarded packets, request/timewait sockets and raw sockets
 * of protocol IPPROTO_TCP (not a tcp_sock) count as non-TCP senders that
 * cannot be told to slow down.
 */
static __always_inline void hbm_sender_of(struct sk_buff *skb,
					  struct hbm_pkt *pkt, __u32 flags)
{
	struct sock *sk = skb->sk;
	struct tcp_sock *tp;
	__u8 state;

	if (!sk)
		return;
	if (sk->__sk_common.skc_family != AF_INET &&
	    sk->__sk_common.skc_family != AF_INET6)
		return;
	state = sk->__sk_common.skc_state;
	if (sk->sk_protocol != IPPROTO_TCP || state == TCP_TIME_WAIT ||
	    state == TCP_NEW_SYN_RECV || sk->sk_type != SOCK_STREAM)
		return;
	tp = bpf_core_cast(sk, struct tcp_sock);
	pkt->is_tcp = 1;
	pkt->packets_out = tp->packets_out;
	pkt->ecn = (flags & HBM_F_ECN) &&
		   (tp->ecn_flags & (TCP_ECN_OK | TCP_ECN_MODE_ACCECN));
}

/*
 * The sender's departure time on the qdisc's clock (CLOCK_MONOTONIC), or
 * 0 for none. SO_TXTIME may stamp a packet on CLOCK_TAI, converted here
 * with the two clocks' offset read now, or on CLOCK_REALTIME, which BPF
 * cannot read: such a stamp is not honoured (the packet is paced by the
 * rate alone). Both are counted. sch_fq reads every stamp as monotonic,
 * so it drops TAI and realtime stamps as beyond its horizon.
 */
static __always_inline __u64 hbm_tstamp_of(struct sk_buff *skb,
					   struct hbm_class *cls, __u64 now)
{
	__u64 t = skb->tstamp, off;

	if (!t)
		return 0;
	switch (skb->tstamp_type) {
	case SKB_CLOCK_MONOTONIC:
		return t;
	case SKB_CLOCK_TAI:
		__sync_fetch_and_add(&cls->tstamp_tai, 1);
		off = bpf_ktime_get_tai_ns() - now;
		return t > off ? t - off : 0;
	default:
		__sync_fetch_and_add(&cls->tstamp_realtime, 1);
		return 0;
	}
}

static __always_inline void hbm_count_drop(struct hbm_class *cls,
					   enum hbm_drop_reason reason)
{
	if (cls && reason < HBM_DROP_MAX)
		__sync_fetch_and_add(&cls->drops[reason], 1);
}

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
	if (fk->hash != HBM_OVERFLOW_HASH)
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

/* Put a flow back in its table slot; one left empty becomes idle. */
static __always_inline void hbm_flow_put(struct hbm_inst *inst,
					 struct hbm_flow_slot *slot,
					 struct hbm_flow *flow,
					 struct hbm_flow_key *fk, __u64 now)
{
	struct hbm_flow *ref;

	if (flow->qlen == 0 && fk->hash != HBM_OVERFLOW_HASH) {
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
	bool busy = flow->qlen;

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
		if (flow->qlen == 0 && now - flow->idle_since < hbm_flow_idle_ns) {
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
					      hbm_flow_idle_ns / 2);
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
	__u64 slack = at - now > HBM_GC_QUIET_STEP_NS ? hbm_flow_idle_ns / 8 :
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

SEC("struct_ops")
int BPF_PROG(hbm_enqueue, struct sk_buff *skb, struct Qdisc *sch,
	     struct bpf_sk_buff_ptr *to_free)
{
	enum hbm_drop_reason reason = HBM_DROP_NOMEM;
	struct hbm_class *cls = NULL;
	struct hbm_flow_slot *slot;
	struct hbm_flow *flow, *ref;
	struct hbm_skb_node *skbn;
	struct hbm_pkt pkt = {};
	struct hbm_flow_key fk;
	struct hbm_config cfg;
	struct hbm_inst *inst;
	struct bpf_rb_node *n;
	__u64 now, departure, head = 0, tstamp, allow;
	enum hbm_verdict v;
	__s64 delta, judged;
	int guarded;
	__u32 rnd;

	hbm_inst_key_of(sch, &fk.inst);
	inst = bpf_map_lookup_elem(&hbm_instances, &fk.inst);
	cls = bpf_map_lookup_elem(&hbm_classes, &fk.inst);
	if (!inst || !cls)
		goto drop;
	hbm_config_of((struct hbm_dev_key *)&fk.inst, &cfg);

	reason = HBM_DROP_LIMIT;
	if (sch->q.qlen >= cfg.limit)
		goto drop;

	now = bpf_ktime_get_ns();
	tstamp = hbm_tstamp_of(skb, cls, now);
	reason = HBM_DROP_HORIZON;
	if (hbm_beyond_horizon(tstamp, now, cfg.horizon_ns))
		goto drop;

	/* Find the packet's flow; a full table sends it to the overflow. */
	reason = HBM_DROP_NOMEM;
	fk.hash = bpf_skb_get_hash(skb);
	slot = bpf_map_lookup_elem(&hbm_flows, &fk);
	if (!slot) {
		struct hbm_flow_slot empty = {};

		hbm_flow_gc(inst, &fk.inst, now, HBM_GC_BUDGET);
		if (!bpf_map_update_elem(&hbm_flows, &fk, &empty, BPF_NOEXIST))
			slot = bpf_map_lookup_elem(&hbm_flows, &fk);
		if (!slot) {
			fk.hash = HBM_OVERFLOW_HASH;
			slot = bpf_map_lookup_elem(&hbm_flows, &fk);
			if (!slot)
				goto drop;
		}
	}
	flow = bpf_kptr_xchg(&slot->flow, NULL);
	if (!flow) {
		flow = hbm_flow_alloc();
		if (!flow) {
			/*
			 * A slot without a flow is on no list: neither the GC
			 * nor the purge would ever free it.
			 */
			if (fk.hash != HBM_OVERFLOW_HASH)
				bpf_map_delete_elem(&hbm_flows, &fk);
			goto drop;
		}
		/*
		 * Not zeroed here: bpf_obj_new() initialises the special
		 * fields (nodes, lock, refcount). Without these stores, the
		 * tests after test_overflow (which purges 65k flows of one
		 * packet each) stranded packets: qlen > 0, no flow in the
		 * instance's tree, as a stale qlen would do.
		 */
		flow->qlen = 0;
		flow->head = 0;
		flow->hash = fk.hash;
		flow->idle_since = 0;
		flow->listed = 0;
	} else if (flow->qlen == 0 && fk.hash != HBM_OVERFLOW_HASH) {
		/* An idle flow in use again (its put counts it idle anew). */
		if (inst->info.idle_flows)
			inst->info.idle_flows--;
	}
	if (fk.hash != HBM_OVERFLOW_HASH && flow->qlen >= cfg.flow_limit) {
		hbm_flow_put(inst, slot, flow, &fk, now);
		reason = HBM_DROP_FLOW_LIMIT;
		goto drop;
	}
	skbn = hbm_obj_new(struct hbm_skb_node);
	if (!skbn) {
		hbm_flow_put(inst, slot, flow, &fk, now);
		goto drop;
	}

	pkt.len = hbm_pkt_len(skb);
	hbm_sender_of(skb, &pkt, cfg.flags);
	rnd = bpf_get_prandom_u32();

	bpf_spin_lock(&cls->lock);
	{
		struct hbm_vq vq = { cls->vq_time, cls->vq_rem };

		allow = hbm_late_allowance(cfg.burst_ns, cls->late_ns,
					   cfg.flags);
		delta = hbm_vq_charge(&vq, now, pkt.len, cfg.rate_bps,
				      cfg.burst_ns + allow, &departure);
		skbn->charge_ns = vq.time - departure;
		judged = delta - (__s64)allow;
		v = hbm_decide(&cfg, &pkt, judged, rnd, &guarded);
		if (v == HBM_DROP)
			hbm_vq_refund(&vq, pkt.len, cfg.rate_bps);
		cls->vq_time = vq.time;
		cls->vq_rem = vq.rem;
	}
	cls->delta_ns = delta;
	if (v != HBM_PASS)
		cls->marks++;
	if (v == HBM_CN)
		cls->cn++;
	if (guarded)
		cls->guard_saves++;
	bpf_spin_unlock(&cls->lock);

	if (v == HBM_DROP) {
		hbm_obj_drop(skbn);
		hbm_flow_put(inst, slot, flow, &fk, now);
		reason = pkt.is_tcp || judged > (__s64)hbm_drop_thresh(&cfg, pkt.len) ?
			 HBM_DROP_THRESH : HBM_DROP_NONTCP;
		goto drop;
	}

	/* Never before the sender's own departure time. */
	if (tstamp > departure)
		departure = tstamp;
	if (departure > now) {
		__sync_fetch_and_add(&cls->delayed, 1);
		sch->qstats.overlimits++;
	}
	__sync_fetch_and_add(&cls->enqueued, 1);
	sch->qstats.backlog += pkt.len;
	sch->q.qlen++;

	skbn->departure = departure;
	skb = bpf_kptr_xchg(&skbn->skb, skb);
	if (skb)	/* the node was new: never */
		bpf_qdisc_skb_drop(skb, to_free);

	bpf_spin_lock(&flow->lock);
	hbm_rbtree_add(&flow->queue, &skbn->node, hbm_skb_less);
	n = bpf_rbtree_first(&flow->queue);
	if (n)
		head = container_of(n, struct hbm_skb_node, node)->departure;
	bpf_spin_unlock(&flow->lock);

	/* A flow that just became backlogged joins the instance's tree. */
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
	inst->info.qlen++;
	inst->info.backlog += pkt.len;
	hbm_flow_put(inst, slot, flow, &fk, now);

	return v == HBM_CN ? NET_XMIT_CN : NET_XMIT_SUCCESS;

drop:
	hbm_count_drop(cls, reason);
	sch->qstats.drops++;
	bpf_qdisc_skb_drop(skb, to_free);
	return NET_XMIT_DROP;
}

/*
 * The watchdog was set for a departure time, and the first packet to leave
 * after it left @late ns later (timer, softirq and scheduling delay; a
 * packet that queued behind others that were due is not a sample, or a
 * large burst would read as lateness and grow the allowance that let it
 * through): count it, and feed the envelope that the allowance for the
 * shaper's own lateness follows (hbm_late_allowance). Children of one mq
 * may race on the envelope; a lost update only delays it by a sample.
 */
static __always_inline void hbm_late_record(struct hbm_class *cls, __u64 late)
{
	__u32 b = hbm_late_bucket(late);

	if (b < HBM_LATE_BUCKETS)
		__sync_fetch_and_add(&cls->late_hist[b], 1);
	__sync_fetch_and_add(&cls->late_sum_ns, late);
	cls->late_ns = hbm_late_track(cls->late_ns, late);
}

SEC("struct_ops")
struct sk_buff *BPF_PROG(hbm_dequeue, struct Qdisc *sch)
{
	struct hbm_skb_node *skbn;
	struct sk_buff *skb = NULL;
	struct bpf_rb_node *n, *next;
	struct hbm_flow_key fk;
	struct hbm_class *cls;
	struct hbm_inst *inst;
	struct hbm_flow *flow;
	__u64 now, at, armed, gc;
	__u32 len;

	hbm_inst_key_of(sch, &fk.inst);
	inst = bpf_map_lookup_elem(&hbm_instances, &fk.inst);
	if (!inst)
		return NULL;

	now = bpf_ktime_get_ns();
	bpf_spin_lock(&inst->lock);
	n = bpf_rbtree_first(&inst->flows);
	if (!n) {
		bpf_spin_unlock(&inst->lock);
		/* Nothing waits: the watchdog is the GC's. */
		gc = hbm_gc_tick(inst, &fk.inst, now);
		if (gc && inst->gc_armed != gc) {
			inst->gc_armed = gc;	/* spare the kfunc per packet */
			bpf_qdisc_watchdog_schedule(sch, gc,
						    hbm_gc_slack(gc, now, -1ULL));
		}
		return NULL;
	}
	at = container_of(n, struct hbm_flow, rb)->head;
	if (at > now) {
		bpf_spin_unlock(&inst->lock);
		inst->gc_armed = 0;	/* the watchdog is the packet's now */
		inst->armed_at = at;
		gc = hbm_gc_tick(inst, &fk.inst, now);
		if (gc && gc < at)
			bpf_qdisc_watchdog_schedule(sch, gc,
						    hbm_gc_slack(gc, now, at - gc));
		else
			bpf_qdisc_watchdog_schedule(sch, at, hbm_timer_slack_ns);
		return NULL;
	}
	n = bpf_rbtree_remove(&inst->flows, n);
	bpf_spin_unlock(&inst->lock);
	if (!n)
		goto rearm;
	flow = container_of(n, struct hbm_flow, rb);

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
		if (flow->hash == HBM_OVERFLOW_HASH)
			hbm_obj_drop(flow);
		else
			hbm_flow_idle(inst, flow, now);
	}
	if (!skb)
		goto rearm;

	len = hbm_pkt_len(skb);
	sch->q.qlen--;
	sch->qstats.backlog -= len;
	inst->info.qlen--;
	inst->info.backlog -= len;
	bpf_qdisc_bstats_update(sch, skb);
	cls = bpf_map_lookup_elem(&hbm_classes, &fk.inst);
	if (cls) {
		__sync_fetch_and_add(&cls->packets, 1);
		__sync_fetch_and_add(&cls->bytes, len);
		/* The first packet since the watchdog was set for it. */
		armed = inst->armed_at;
		if (armed && now >= armed) {
			inst->armed_at = 0;
			hbm_late_record(cls, now - armed);
		}
	}
	return skb;

rearm:
	/* Unreachable with a consistent tree; never leave packets stranded. */
	inst->gc_armed = 0;
	bpf_qdisc_watchdog_schedule(sch, now, hbm_timer_slack_ns);
	return NULL;
}

/*
 * A packet freed before it left gives its slot back, as a dropped one
 * does: otherwise a reset (link down) with a deep backlog would leave the
 * device's clock that far ahead, and every packet after it would wait. It
 * gives back what it was charged, at the rate of its enqueue: a `set
 * --rate` since then must not leave the clock wrong by the difference.
 */
static __always_inline void hbm_class_refund(struct hbm_class *cls,
					     __u64 charge_ns)
{
	bpf_spin_lock(&cls->lock);
	cls->vq_time -= charge_ns;
	bpf_spin_unlock(&cls->lock);
}

/* Free every packet and flow of an instance; returns packets freed. */
static __always_inline __u32 hbm_purge(struct hbm_inst *inst,
				       struct hbm_inst_key *ik)
{
	struct hbm_skb_node *skbn;
	struct hbm_flow_key fk;
	struct hbm_class *cls;
	struct bpf_rb_node *n;
	struct hbm_flow *flow;
	struct sk_buff *skb;
	__u32 freed = 0;
	__u64 charge;
	int i, j;

	fk.inst = *ik;
	cls = bpf_map_lookup_elem(&hbm_classes, ik);
	bpf_for(i, 0, HBM_DRAIN_MAX) {
		bpf_spin_lock(&inst->lock);
		n = bpf_rbtree_first(&inst->flows);
		if (n)
			n = bpf_rbtree_remove(&inst->flows, n);
		bpf_spin_unlock(&inst->lock);
		if (!n)
			break;
		flow = container_of(n, struct hbm_flow, rb);
		bpf_for(j, 0, HBM_DRAIN_MAX) {
			bpf_spin_lock(&flow->lock);
			n = bpf_rbtree_first(&flow->queue);
			if (n)
				n = bpf_rbtree_remove(&flow->queue, n);
			bpf_spin_unlock(&flow->lock);
			if (!n)
				break;
			skbn = container_of(n, struct hbm_skb_node, node);
			skb = bpf_kptr_xchg(&skbn->skb, NULL);
			charge = skbn->charge_ns;
			hbm_obj_drop(skbn);
			if (skb) {
				if (cls)
					hbm_class_refund(cls, charge);
				bpf_kfree_skb(skb);
				freed++;
			}
		}
		/* The overflow flow keeps its slot: it must count empty. */
		flow->qlen = 0;
		fk.hash = flow->hash;
		hbm_obj_drop(flow);
		if (fk.hash != HBM_OVERFLOW_HASH)
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

SEC("struct_ops")
void BPF_PROG(hbm_reset, struct Qdisc *sch)
{
	struct hbm_inst_key ik;
	struct hbm_inst *inst;

	hbm_inst_key_of(sch, &ik);
	inst = bpf_map_lookup_elem(&hbm_instances, &ik);
	if (inst)
		hbm_purge(inst, &ik);
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

SEC("struct_ops")
int BPF_PROG(hbm_init, struct Qdisc *sch, struct nlattr *opt,
	     struct netlink_ext_ack *extack)
{
	struct hbm_flow_slot empty = {};
	struct hbm_class zero = {};
	struct hbm_flow_key fk;
	struct hbm_inst inst0 = {};
	struct hbm_class *cls;
	struct hbm_config cfg;

	hbm_inst_key_of(sch, &fk.inst);
	hbm_config_of((struct hbm_dev_key *)&fk.inst, &cfg);
	sch->limit = cfg.limit;

	/*
	 * The kernel calls destroy after a failed init: undo what was done
	 * here so destroy, finding no instance, does nothing.
	 */
	if (bpf_map_update_elem(&hbm_instances, &fk.inst, &inst0, BPF_NOEXIST))
		return -ENOMEM;
	fk.hash = HBM_OVERFLOW_HASH;
	if (bpf_map_update_elem(&hbm_flows, &fk, &empty, BPF_NOEXIST))
		goto undo_inst;

	/* The first instance on a device creates its rate class. */
	bpf_map_update_elem(&hbm_classes, &fk.inst, &zero, BPF_NOEXIST);
	cls = bpf_map_lookup_elem(&hbm_classes, &fk.inst);
	if (!cls)
		goto undo_flow;
	__sync_fetch_and_add(&cls->instances, 1);
	return 0;

undo_flow:
	bpf_map_delete_elem(&hbm_flows, &fk);
undo_inst:
	bpf_map_delete_elem(&hbm_instances, &fk.inst);
	return -ENOMEM;
}

SEC("struct_ops")
void BPF_PROG(hbm_destroy, struct Qdisc *sch)
{
	struct hbm_flow_key fk;
	struct hbm_class *cls;
	struct hbm_inst *inst;

	hbm_inst_key_of(sch, &fk.inst);
	inst = bpf_map_lookup_elem(&hbm_instances, &fk.inst);
	if (!inst)
		return;		/* init failed before creating it */
	hbm_purge(inst, &fk.inst);
	fk.hash = HBM_OVERFLOW_HASH;
	hbm_slot_free(&fk);
	bpf_map_delete_elem(&hbm_flows, &fk);
	bpf_map_delete_elem(&hbm_instances, &fk.inst);

	/*
	 * The last instance on a device takes the rate class with it. The
	 * configuration stays for the next `tc qdisc add`, unless the device
	 * itself is going away: its ifindex, and its namespace's inode number,
	 * may name another device later, which must not inherit it.
	 */
	cls = bpf_map_lookup_elem(&hbm_classes, &fk.inst);
	if (cls && __sync_fetch_and_sub(&cls->instances, 1) == 1) {
		bpf_map_delete_elem(&hbm_classes, &fk.inst);
		if (sch->dev_queue->dev->reg_state != NETREG_REGISTERED)
			bpf_map_delete_elem(&hbm_config, &fk.inst);
	}
}

/*
 * The ECN marker, attached at tc egress (tcx) of a device with bpf_hbm:
 * a BPF qdisc cannot write packet bytes, so CE is set here, just before
 * the qdisc's enqueue, from the same virtual queue the qdisc is about to
 * charge. The delay predicted here is the one the qdisc computes for the
 * packet, so a packet marked here is dropped there only if the queue really
 * ran past the drop threshold. bpf_skb_ecn_set_ce() leaves non-ECT packets
 * alone; they keep the qdisc's CN/drop treatment. Never drops, and passes
 * every packet on to the next program on the hook.
 */
SEC("tc")
int hbm_mark(struct __sk_buff *ctx)
{
	struct sk_buff *skb = bpf_cast_to_kern_ctx(ctx);
	struct hbm_dev_key dev;
	struct hbm_config cfg;
	struct hbm_class *cls;
	__s64 delta;

	dev.ifindex = ctx->ifindex;
	dev.netns = skb->dev->nd_net.net->ns.inum;
	cls = bpf_map_lookup_elem(&hbm_classes, &dev);
	if (!cls)
		return TCX_NEXT;
	hbm_config_of(&dev, &cfg);
	if (!(cfg.flags & HBM_F_ECN))
		return TCX_NEXT;
	delta = (__s64)(READ_ONCE(cls->vq_time) - bpf_ktime_get_ns()) -
		(__s64)hbm_late_allowance(cfg.burst_ns, READ_ONCE(cls->late_ns),
					  cfg.flags);
	if (delta > (__s64)cfg.mark_ns && bpf_skb_ecn_set_ce(ctx))
		__sync_fetch_and_add(&cls->ce, 1);
	return TCX_NEXT;
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
