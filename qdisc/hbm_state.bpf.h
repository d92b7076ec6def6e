/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's state: constants and load-time rodata, the objects a queued
 * packet lives in (an hbm_skb_node in its flow's rbtree; an hbm_flow in its
 * instance's tree while backlogged, on its idle list once emptied; the
 * hbm_inst), and the maps that hold them. Part of bpf_hbm.bpf.c, which
 * includes every part into one translation unit (BPF has no linker for
 * static inline code across objects).
 */
#ifndef HBM_STATE_BPF_H
#define HBM_STATE_BPF_H

#include "hbm_graph.bpf.h"
#include "hbm_edt.h"

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

static __always_inline bool hbm_is_overflow(__u64 hash)
{
	return hash == HBM_OVERFLOW_HASH;
}

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
/*
 * Otherwise a pass every half idle time, so a flow is freed within one and
 * a half idle times of emptying; such a pass may wait an eighth of an idle
 * time for other timers (timer slack).
 */
#define HBM_GC_PERIOD_NS	(hbm_flow_idle_ns / 2)
#define HBM_GC_SLACK_NS		(hbm_flow_idle_ns / 8)

/*
 * Nodes an instance keeps from the packets that left, for the next ones to
 * queue (hbm_node_get, hbm_node_put), rather than free each and allocate
 * the next: in bench-conform's setup under TCG, a node took 2.9-4.9 us
 * from bpf_obj_new() and 0.6-0.8 us with four spares (an instrumented
 * build, its clock reads included).
 */
#define HBM_SPARE_NODES		4

struct hbm_skb_node {
	__u64 departure;
	__u64 charge_ns;		/* what it cost the virtual clock */
	struct sk_buff __kptr *skb;
	struct bpf_rb_node node;
};

/*
 * Where a backlogged flow waits its turn (hbm_flow.sched): sch_fq's new
 * and old lists, for flows whose head is due or not yet looked at, and
 * its throttled tree, keyed by the head's departure, for flows whose head
 * is not due. A detached flow is in none of them: empty, and idle.
 */
enum hbm_flow_sched {
	HBM_SCHED_DETACHED,
	HBM_SCHED_NEW,
	HBM_SCHED_OLD,
	HBM_SCHED_THROTTLED,
};

struct hbm_flow {
	struct bpf_rb_node rb;		/* in hbm_inst.throttled */
	struct bpf_list_node sched_node; /* in hbm_inst.new_flows or old_flows */
	struct bpf_list_node idle_node;	/* in hbm_inst.idle while listed */
	__u64 head;			/* departure of the head (rb's key) */
	__u64 hash;
	__u64 idle_since;		/* when it last emptied, or 0: never */
	__u32 qlen;
	__u32 listed;			/* idle_node is in hbm_inst.idle */
	/*
	 * credit is stored with sched (never both zero) so that the
	 * compiler cannot merge the zeroing of sched into the lock's word.
	 */
	__s32 credit;			/* DRR: bytes it may still send */
	__u32 sched;			/* enum hbm_flow_sched */
	struct bpf_spin_lock lock;
	struct bpf_rb_root queue __contains(hbm_skb_node, node);
	struct bpf_refcount ref;	/* held by the table, tree and lists */
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
	struct hbm_inst_info info;	/* info.flows: flows not detached */
	struct bpf_spin_lock lock;	/* for the trees and lists below */
	struct bpf_rb_root throttled __contains(hbm_flow, rb);
	struct bpf_list_head new_flows __contains(hbm_flow, sched_node);
	struct bpf_list_head old_flows __contains(hbm_flow, sched_node);
	struct bpf_list_head idle __contains(hbm_flow, idle_node);
	__u64 gc_next;			/* the next pass while quiet */
	__u64 gc_armed;			/* gc_next the watchdog is set for */
	__u64 armed_at;			/* the departure it is set for, or 0 */
	__u64 throttled_first;		/* throttled's first head, 0: empty */
	__u32 old_count;		/* flows in old_flows */
	__u32 quantum;			/* DRR, in bytes: the configuration's, */
	__u32 initial_quantum;		/* or the device's (hbm_sched_quanta) */
	/*
	 * The fast path: a packet that arrived due while the instance held
	 * nothing waits here, ahead of every flow, without a flow or a node
	 * (sch_fq's internal flow, one packet deep).
	 */
	struct sk_buff __kptr *fast;
	__u64 fast_departure;
	__u64 fast_charge;		/* what it cost the virtual clock */
	__u32 fast_qlen;		/* 0 or 1 */
	__u32 spares;			/* nodes in spare[] */
	struct hbm_skb_node __kptr *spare[HBM_SPARE_NODES];
	/*
	 * The device's configuration as of cfg_at (hbm_inst_config): a copy,
	 * so that a packet looks it up once a millisecond, not once each.
	 */
	__u64 cfg_at;
	struct hbm_config cfg;
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
	__type(value, struct hbm_dev_rate);
	__uint(max_entries, HBM_MAX_DEVS);
} hbm_dev_rates SEC(".maps");

/*
 * Instances by slot: a BPF qdisc has no private data, but the one field of
 * its Qdisc it may write that the kernel does not read for it, limit,
 * holds its slot's index (hbm_init), so each enqueue and dequeue finds its
 * instance with an array index (inlined by the verifier) rather than
 * a hash of its key (about 100 ns a lookup under TCG, bench/README.md).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
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

/*
 * Per-cgroup classes: their configuration (written by the loader) and
 * their virtual queues and counters (created zeroed by the loader, kept
 * by the qdisc), keyed alike.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_class_key);
	__type(value, struct hbm_class_config);
	__uint(max_entries, HBM_MAX_CLASSES);
} hbm_class_configs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct hbm_class_key);
	__type(value, struct hbm_class_rate);
	__uint(max_entries, HBM_MAX_CLASSES);
} hbm_class_rates SEC(".maps");

/*
 * What the qdisc keeps in a queued skb's qdisc_skb_cb data (20 bytes,
 * the qdisc's own): its class, 0 for none, and what it cost the class's
 * clock, so that dequeue counts it and the purge gives the charge back
 * without a node field or a lookup for unclassified packets.
 */
struct hbm_cb {
	__u64 cls;
	__u64 cls_charge;
};

static __always_inline struct hbm_cb *hbm_cb(struct sk_buff *skb)
{
	return (struct hbm_cb *)((struct qdisc_skb_cb *)skb->cb)->data;
}

/* A packet's class, found by hbm_class_find; cr NULL for none. */
struct hbm_cls {
	struct hbm_class_rate *cr;
	struct hbm_class_config *cc;
	__u64 id;
};

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

/* sch->limit before hbm_init claimed a slot, or after it failed to. */
#define HBM_NO_SLOT		0xffffffffU

/* @sch's instance: its slot (sch->limit, set by hbm_init). */
static __always_inline struct hbm_inst *hbm_inst_of(struct Qdisc *sch)
{
	__u32 slot = sch->limit;

	return bpf_map_lookup_elem(&hbm_instances, &slot);
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

#endif /* HBM_STATE_BPF_H */
