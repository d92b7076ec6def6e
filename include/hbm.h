/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm ABI: what the BPF qdisc and the bpf-hbm loader share.
 *
 * Fixed-width types only; included by qdisc/bpf_hbm.bpf.c (after vmlinux.h)
 * and by userspace (after <linux/types.h>). Changing a struct here changes
 * the pinned maps' layout: bump HBM_ABI_VERSION so a loader never reads
 * maps of another layout.
 */
#ifndef HBM_H
#define HBM_H

#ifndef __bpf__
#include <linux/types.h>
#include <linux/bpf.h>		/* struct bpf_spin_lock */
#endif

#define HBM_ABI_VERSION		10

#define HBM_NSEC_PER_USEC	1000ULL
#define HBM_NSEC_PER_SEC	1000000000ULL

/* Defaults follow HBM (rate, thresholds) and sch_fq (limits, horizon). */
#define HBM_DEF_RATE_BPS	1000000000ULL		/* 1 Gbit/s */
#define HBM_DEF_BURST_NS	(100 * HBM_NSEC_PER_USEC)
#define HBM_DEF_MARK_NS		(50 * HBM_NSEC_PER_USEC)
#define HBM_DEF_DROP_NS		(500 * HBM_NSEC_PER_USEC)
#define HBM_DEF_DROP_LARGE_NS	(480 * HBM_NSEC_PER_USEC)
#define HBM_DEF_LARGE_PKT	120			/* bytes */
#define HBM_DEF_HORIZON_NS	(10 * HBM_NSEC_PER_SEC)
#define HBM_DEF_LIMIT		10000
#define HBM_DEF_FLOW_LIMIT	100
#define HBM_DEF_SLACK_NS	(10 * HBM_NSEC_PER_USEC)
/* How long an emptied flow stays cached before the GC may free it. */
#define HBM_DEF_FLOW_IDLE_NS	(1 * HBM_NSEC_PER_SEC)
#define HBM_MIN_FLOW_IDLE_NS	(HBM_NSEC_PER_SEC / 1000)
#define HBM_MAX_FLOW_IDLE_NS	(3600 * HBM_NSEC_PER_SEC)

/*
 * Most packets one instance may queue: the purge (reset, destroy) frees
 * that many in bounded loops, so the loader refuses a larger --limit.
 */
#define HBM_MAX_LIMIT		(1U << 23)

/*
 * Deficit round robin among due flows (sch_fq's): a flow sends while its
 * credit lasts, then gets `quantum` bytes more and goes to the back; a new
 * flow starts with `initial_quantum`. 0 takes them from the device as
 * sch_fq does: 2 and 10 times its MTU plus link-layer header (3028 and
 * 15140 bytes on Ethernet).
 */
#define HBM_QUANTUM_AUTO	0
#define HBM_DEF_QUANTUM_MTUS	2
#define HBM_DEF_INITIAL_QUANTUM_MTUS	10
#define HBM_MAX_QUANTUM		(1U << 20)

#define HBM_MIN_RATE_BPS	1000000ULL		/* 1 Mbit/s */
#define HBM_MAX_RATE_BPS	400000000000ULL		/* 400 Gbit/s */

/* Sizes of the maps; the flow table is shared by all instances. */
#define HBM_MAX_DEVS		256
#define HBM_MAX_INSTANCES	1024
#define HBM_MAX_FLOWS		65536
/* Per-cgroup classes, of all devices together. */
#define HBM_MAX_CLASSES		4096
/*
 * The deepest cgroup level a class may sit at (the cgroup2 root is level
 * 0): hbm_config.class_levels has a bit per level.
 */
#define HBM_CLASS_MAX_LEVEL	31

/* hbm_config.flags */
#define HBM_F_ECN		(1U << 0) /* a CE marker runs at tc egress */
#define HBM_F_NO_CN		(1U << 1) /* never return NET_XMIT_CN */
#define HBM_F_FIXED_BURST	(1U << 2) /* no credit for release lateness */
/*
 * The loader's alone, the qdisc ignores it: attach wrote this entry and has
 * not finished (its qdiscs or marker may be missing). It is set with the
 * first write and cleared with the last, so an attach killed in between
 * leaves a mark that the next attach of the device completes.
 */
#define HBM_F_ATTACHING		(1U << 3)
#define HBM_F_ALL		(HBM_F_ECN | HBM_F_NO_CN | HBM_F_FIXED_BURST | \
				 HBM_F_ATTACHING)

/*
 * Release lateness: how long after the departure time the watchdog was set
 * for a packet actually left (timer, softirq and scheduling delay). Counted in
 * HBM_LATE_BUCKETS power-of-two buckets of microseconds: bucket 0 is under
 * 1 us, bucket b in [2^(b-1), 2^b) us, the last one everything above.
 * The allowance for it (hbm_late_allowance) stops at HBM_LATE_CREDIT_MAX_NS:
 * a host that releases packets later than that is not shaping at any rate,
 * and a larger credit would let a sender's bursts grow with it.
 */
#define HBM_LATE_BUCKETS	16
#define HBM_LATE_CREDIT_MAX_NS	(4 * 1000 * HBM_NSEC_PER_USEC)

/*
 * A device, as the qdisc sees it: ifindex is only unique within a network
 * namespace, so the namespace's inode number (stat /proc/self/ns/net)
 * completes it.
 */
struct hbm_dev_key {
	__u32 ifindex;
	__u32 netns;
};

/* Live configuration of a device's rate (map hbm_config). */
struct hbm_config {
	__u64 rate_bps;		/* bits per second, L2 bytes as qdisc_pkt_len */
	__u64 burst_ns;		/* credit an idle device may accumulate */
	__u64 mark_ns;		/* virtual-queue delay above which we mark */
	__u64 drop_ns;		/* ... above which we drop */
	__u64 drop_large_ns;	/* ... for packets longer than large_pkt */
	__u64 horizon_ns;	/* drop packets timestamped further out */
	__u32 limit;		/* packets queued per qdisc instance */
	__u32 flow_limit;	/* packets queued per flow */
	__u32 large_pkt;	/* bytes */
	__u32 flags;		/* HBM_F_* */
	__u32 quantum;		/* DRR bytes per round, or HBM_QUANTUM_AUTO */
	__u32 initial_quantum;	/* a new flow's credit, or HBM_QUANTUM_AUTO */
	/*
	 * Bit L set: the device has a class at cgroup level L (the loader
	 * keeps it, from hbm_class_configs). 0, the common case, spares the
	 * qdisc every class lookup; otherwise a packet's cgroup and its
	 * ancestors are looked up at these levels only, deepest first.
	 */
	__u32 class_levels;
	__u32 __pad;
};

/* The configuration of a device nobody configured. */
#define HBM_CONFIG_DEFAULT {					\
	.rate_bps = HBM_DEF_RATE_BPS,				\
	.burst_ns = HBM_DEF_BURST_NS,				\
	.mark_ns = HBM_DEF_MARK_NS,				\
	.drop_ns = HBM_DEF_DROP_NS,				\
	.drop_large_ns = HBM_DEF_DROP_LARGE_NS,			\
	.horizon_ns = HBM_DEF_HORIZON_NS,			\
	.limit = HBM_DEF_LIMIT,					\
	.flow_limit = HBM_DEF_FLOW_LIMIT,			\
	.large_pkt = HBM_DEF_LARGE_PKT,				\
	.quantum = HBM_QUANTUM_AUTO,				\
	.initial_quantum = HBM_QUANTUM_AUTO,			\
}

enum hbm_drop_reason {
	HBM_DROP_THRESH,	/* virtual-queue delay over the drop threshold */
	HBM_DROP_NONTCP,	/* non-TCP packet over the mark threshold */
	HBM_DROP_HORIZON,	/* tstamp beyond the horizon */
	HBM_DROP_LIMIT,		/* instance queue full */
	HBM_DROP_FLOW_LIMIT,	/* flow queue full */
	HBM_DROP_NOMEM,		/* could not allocate a queue node */
	HBM_DROP_MAX,
};

/*
 * A device's rate state (map hbm_dev_rates): the HBM virtual queue shared by
 * every bpf_hbm instance on the device (all mq children) and its counters.
 * The virtual clock advances by exactly len * 8e9 / rate ns per packet; the
 * sub-nanosecond remainder is carried in vq_rem so no rate loses accuracy.
 */
struct hbm_dev_rate {
	struct bpf_spin_lock lock;
	__u32 instances;	/* bpf_hbm qdiscs using this state */
	__u64 vq_time;		/* virtual clock, ns (CLOCK_MONOTONIC) */
	__u64 vq_rem;		/* remainder, in units of 1 / rate_bps ns */
	__s64 delta_ns;		/* virtual-queue delay of the last packet */
	/*
	 * enqueued, packets, bytes, delayed and fastpath count what destroyed
	 * instances did; live instances count in their hbm_inst_info.
	 */
	__u64 enqueued;		/* packets accepted */
	__u64 packets;		/* packets sent (dequeued) */
	__u64 bytes;		/* bytes sent, qdisc_pkt_len */
	__u64 marks;		/* packets over the mark threshold */
	__u64 cn;		/* NET_XMIT_CN returned to the sender */
	__u64 ce;		/* CE marks set by the tc egress marker */
	__u64 guard_saves;	/* TCP drops spared by the 2-packet guard */
	__u64 delayed;		/* packets that had to wait for departure */
	__u64 drops[HBM_DROP_MAX];
	__u64 late_ns;		/* release lateness envelope */
	__u64 late_sum_ns;	/* lateness summed over late_hist's samples */
	__u64 late_hist[HBM_LATE_BUCKETS];
	__u64 tstamp_tai;	/* departure stamps on CLOCK_TAI, converted */
	__u64 tstamp_realtime;	/* ... on CLOCK_REALTIME, not honoured */
	__u64 fastpath;		/* due on arrival into an empty instance */
	__u64 late_at;		/* when late_ns took its last sample */
	__u64 cn_spared;	/* marks of thin flows, which get no CN */
	/*
	 * hbm_config.class_levels as the qdisc last read it (hbm_inst_config):
	 * the ECN marker reads it here, to look the configuration up only
	 * when it may be needed (a device with classes, or a queue over now).
	 */
	__u32 class_levels;
	__u32 __pad;
};

/* One qdisc instance: the root, or one mq child (map hbm_instances). */
struct hbm_inst_key {
	__u32 ifindex;
	__u32 netns;
	__u32 parent;		/* TC_H_ROOT, or mq's major:queue */
	__u32 handle;
};

/*
 * The head of an instance's map value (map hbm_instances, an array: the
 * qdisc keeps its slot's index in its Qdisc, so a packet finds its
 * instance without a hash lookup); the BPF side follows it with the
 * instance's lock and tree of flows. A slot is in use while in_use is 1,
 * and then key says whose it is.
 */
struct hbm_inst_info {
	struct hbm_inst_key key;
	__u32 in_use;
	__u32 qlen;		/* packets queued */
	__u64 backlog;		/* bytes queued */
	__u32 flows;		/* backlogged flows */
	__u32 idle_flows;	/* emptied flows still in the flow table */
	/*
	 * The per-packet counters of the device (hbm_dev_rate's of the same
	 * names) counted here while the instance lives, under its qdisc's
	 * lock instead of an atomic on the shared rate state: show adds
	 * them up, and destroy folds them into the rate state.
	 */
	__u64 enqueued;
	__u64 packets;
	__u64 bytes;
	__u64 delayed;
	__u64 fastpath;
};

/*
 * A per-cgroup rate class of a device (maps hbm_class_configs and
 * hbm_class_rates): sockets in the cgroup, and in its descendants that
 * have no class of their own, are charged to the class's virtual queue as
 * well as to the device's. cgroup is the cgroup v2 id, which is the inode
 * number of its directory (64 bits with the kernfs generation in the high
 * half, so a recycled id is never another cgroup's).
 */
struct hbm_class_key {
	__u32 ifindex;
	__u32 netns;
	__u64 cgroup;
};

/* A class's live configuration; the device's gives the rest. */
struct hbm_class_config {
	__u64 rate_bps;
	__u64 burst_ns;
	__u64 mark_ns;
	__u64 drop_ns;
	__u64 drop_large_ns;
	__u32 level;		/* the cgroup's depth below the cgroup2 root */
	__u32 __pad;
};

/*
 * A class's virtual queue and counters, as the device's (hbm_dev_rate):
 * each level counts its own signals (a packet over both levels' mark
 * thresholds is a mark of each); ce and drops count every packet of the
 * class marked CE or dropped, at either level.
 */
struct hbm_class_rate {
	struct bpf_spin_lock lock;
	__u32 __pad;
	__u64 vq_time;
	__u64 vq_rem;
	__s64 delta_ns;
	__u64 enqueued;
	__u64 packets;
	__u64 bytes;
	__u64 marks;
	__u64 cn;
	__u64 ce;
	__u64 guard_saves;
	__u64 cn_spared;
	__u64 delayed;
	__u64 drops[HBM_DROP_MAX];
};

#endif /* HBM_H */
