/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's policy, HBM's part of the packet path: the device's
 * configuration, what the sender is (TCP or not, its packets in flight and
 * ECN), its own departure time, the charge to the device's virtual queue
 * with the verdict it gives (pass, mark, CN, drop), the refund of a packet
 * freed before it left, and the release lateness that the allowance
 * follows. The arithmetic itself is include/hbm_edt.h's, host-tested.
 */
#ifndef HBM_POLICY_BPF_H
#define HBM_POLICY_BPF_H

#include "hbm_state.bpf.h"

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
		cfg->quantum = hbm_defaults.quantum;
		cfg->initial_quantum = hbm_defaults.initial_quantum;
		/* No entry, no classes (which the loader keeps in it). */
		cfg->class_levels = 0;
		cfg->__pad = 0;
	}
	/* The loader validates; a hand-edited map must not divide by zero. */
	if (cfg->rate_bps < HBM_MIN_RATE_BPS)
		cfg->rate_bps = HBM_MIN_RATE_BPS;
	/* ... nor queue more than the purge can free. */
	if (cfg->limit > HBM_MAX_LIMIT)
		cfg->limit = HBM_MAX_LIMIT;
}

/*
 * What the ECN marker reads of @cfg without a lookup, kept in the device's
 * rate state. (The marker still looks the configuration up where it may
 * mark: the loader finds hbm_config through the marker program when the
 * map's pin is gone, to take the ECN flag off as the marker goes.)
 */
static __always_inline void hbm_config_mirror(struct hbm_dev_rate *dr,
					      const struct hbm_config *cfg)
{
	if (dr->class_levels != cfg->class_levels)
		WRITE_ONCE(dr->class_levels, cfg->class_levels);
}

/*
 * How long an instance uses its copy of the configuration: a `bpf-hbm
 * set` (or any write of hbm_config) takes effect within this, and a packet
 * is spared a hash lookup and a copy.
 */
#define HBM_CFG_TTL_NS		(1000 * 1000ULL)

/* The device's configuration for a packet of @inst at @now. */
static __always_inline const struct hbm_config *
hbm_inst_config(struct hbm_inst *inst, struct hbm_dev_rate *dr,
		struct hbm_dev_key *dev, __u64 now)
{
	if (!inst->cfg_at || now - inst->cfg_at >= HBM_CFG_TTL_NS) {
		hbm_config_of(dev, &inst->cfg);
		hbm_config_mirror(dr, &inst->cfg);
		inst->cfg_at = now;
	}
	return &inst->cfg;
}

/*
 * What HBM needs to know about the sender: a TCP packet of a local full
 * socket carries its packets in flight (for the 2-packet guard), the bytes
 * it has written and not yet had acknowledged (whether it is thin) and its
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
	pkt->unacked = tp->write_seq - tp->snd_una;
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
					   struct hbm_dev_rate *dr, __u64 now)
{
	__u64 t = skb->tstamp, off;

	if (!t)
		return 0;
	switch (skb->tstamp_type) {
	case SKB_CLOCK_MONOTONIC:
		return t;
	case SKB_CLOCK_TAI:
		__sync_fetch_and_add(&dr->tstamp_tai, 1);
		off = bpf_ktime_get_tai_ns() - now;
		return t > off ? t - off : 0;
	default:
		__sync_fetch_and_add(&dr->tstamp_realtime, 1);
		return 0;
	}
}

static __always_inline void hbm_count_drop(struct hbm_dev_rate *dr,
					   struct hbm_class_rate *cr,
					   enum hbm_drop_reason reason)
{
	if (reason >= HBM_DROP_MAX)
		return;
	if (dr)
		__sync_fetch_and_add(&dr->drops[reason], 1);
	if (cr)
		__sync_fetch_and_add(&cr->drops[reason], 1);
}

/*
 * How far up a socket's cgroup tree the class walk goes: a cgroup deeper
 * than this below the one a socket is in is not looked at.
 */
#define HBM_CLASS_WALK		64

/*
 * The class of @skb's socket on a device whose classes sit at the cgroup
 * levels in @levels: its cgroup's, or the nearest ancestor's that has
 * one. Only full sockets have a cgroup (a request or timewait socket's
 * packets, like forwarded ones, have no class). A socket keeps the cgroup
 * it was created in, as bpf_skb_cgroup_id() reads it. The walk looks up
 * only the levels that have classes and stops above the shallowest; a
 * configuration found without its rate state (a class being added or
 * deleted) is passed over.
 */
static __always_inline void hbm_class_find(struct sk_buff *skb,
					   const struct hbm_dev_key *dev,
					   __u32 levels, struct hbm_cls *cls)
{
	struct hbm_class_key key = { dev->ifindex, dev->netns };
	struct sock *sk = skb->sk;
	struct cgroup_subsys_state *css;
	struct hbm_class_rate *cr;
	struct cgroup *cg;
	__u8 state;
	int i, lvl;

	if (!sk)
		return;
	state = sk->__sk_common.skc_state;
	if (state == TCP_TIME_WAIT || state == TCP_NEW_SYN_RECV)
		return;
	cg = sk->sk_cgrp_data.cgroup;
	for (i = 0; i < HBM_CLASS_WALK; i++) {
		if (!cg)
			return;
		lvl = cg->level;
		if (lvl < 0)
			return;
		if (lvl <= HBM_CLASS_MAX_LEVEL) {
			if (levels & (1U << lvl)) {
				key.cgroup = cg->kn->id;
				cls->cc = bpf_map_lookup_elem(&hbm_class_configs,
							      &key);
				cr = cls->cc ?
				     bpf_map_lookup_elem(&hbm_class_rates, &key) :
				     NULL;
				if (cr) {
					cls->cr = cr;
					cls->id = key.cgroup;
					return;
				}
			}
			if (!(levels & ((1U << lvl) - 1)))
				return;		/* no class above */
		}
		css = cg->self.parent;
		cg = css ? css->cgroup : NULL;
	}
}

/*
 * HBM's counters of a verdict, the same for the device (hbm_dev_rate) and
 * a class (hbm_class_rate), which name them alike; under the level's lock.
 */
#define HBM_COUNT_VERDICT(r, v, pkt, guarded)				\
	do {								\
		if ((v) != HBM_PASS)					\
			(r)->marks++;					\
		if ((v) == HBM_CN)					\
			(r)->cn++;					\
		if ((v) == HBM_MARK && (pkt)->thin && !(pkt)->ecn)	\
			(r)->cn_spared++;				\
		if (guarded)						\
			(r)->guard_saves++;				\
	} while (0)

/*
 * Charge a packet to the device's virtual queue and give HBM's verdict on
 * it, with the departure the clock gives it and what it cost the clock
 * (@charge, given back if it is purged before it leaves). A
 * dropped packet's slot is given back at once. @delay is the virtual
 * queue's delay less what its class holds it anyway (@held, 0 without a
 * class), judged against HBM's thresholds as it is: the allowance
 * for the shaper's lateness widens the idle credit only (thresholds raised
 * by it kept a standing queue as long as the lateness, bench/README.md).
 */
static __always_inline enum hbm_verdict
hbm_charge(struct hbm_dev_rate *dr, const struct hbm_config *cfg,
	   const struct hbm_pkt *pkt, __u64 now, __s64 held, __u64 *charge,
	   __u64 *departure, __s64 *delay)
{
	struct hbm_judged j;
	enum hbm_verdict v;
	__u32 rnd;

	/*
	 * The CN roll needs a random number only over the mark threshold,
	 * and no helper may run under the lock: the clock read unlocked
	 * (exact under a root qdisc; mq children may race for it) says
	 * whether to draw one. A packet a race takes over the threshold
	 * rolls on the clock's low bits instead.
	 */
	if ((__s64)(READ_ONCE(dr->vq_time) - now) > (__s64)cfg->mark_ns)
		rnd = bpf_get_prandom_u32();
	else
		rnd = (__u32)now;

	bpf_spin_lock(&dr->lock);
	{
		struct hbm_vq vq = { dr->vq_time, dr->vq_rem };
		__u64 burst = cfg->burst_ns +
			      hbm_late_allowance(cfg->burst_ns, dr->late_ns,
						 cfg->flags);

		v = hbm_vq_judge(&vq, cfg, pkt, now, burst, held, rnd, &j);
		dr->vq_time = vq.time;
		dr->vq_rem = vq.rem;
	}
	dr->delta_ns = j.delta;
	HBM_COUNT_VERDICT(dr, v, pkt, j.guarded);
	bpf_spin_unlock(&dr->lock);
	*departure = j.departure;
	*charge = j.charge;
	*delay = j.delta - held;
	return v;
}

/*
 * The class's part of the charge: its virtual queue at its rate and burst
 * (widened by the device's lateness allowance, which is the same shaper's
 * lateness), and its verdict from its delay against its thresholds. A
 * packet the class drops is given back at once and not charged to the
 * device; @reason says why it was dropped.
 */
static __always_inline enum hbm_verdict
hbm_class_charge(struct hbm_class_rate *cr, const struct hbm_class_config *cc,
		 const struct hbm_config *dev, __u64 late_ns,
		 const struct hbm_pkt *pkt, __u64 now, __u64 *charge,
		 __u64 *departure, __s64 *delay, enum hbm_drop_reason *reason)
{
	struct hbm_config cfg;
	struct hbm_judged j;
	enum hbm_verdict v;
	__u64 burst;
	__u32 rnd;

	hbm_class_cfg(&cfg, dev, cc);
	if ((__s64)(READ_ONCE(cr->vq_time) - now) > (__s64)cfg.mark_ns)
		rnd = bpf_get_prandom_u32();
	else
		rnd = (__u32)now;
	burst = cfg.burst_ns + hbm_late_allowance(cfg.burst_ns, late_ns,
						  cfg.flags);

	bpf_spin_lock(&cr->lock);
	{
		struct hbm_vq vq = { cr->vq_time, cr->vq_rem };

		v = hbm_vq_judge(&vq, &cfg, pkt, now, burst, 0, rnd, &j);
		cr->vq_time = vq.time;
		cr->vq_rem = vq.rem;
	}
	cr->delta_ns = j.delta;
	HBM_COUNT_VERDICT(cr, v, pkt, j.guarded);
	bpf_spin_unlock(&cr->lock);
	*departure = j.departure;
	*charge = j.charge;
	*delay = j.delta;
	if (v == HBM_DROP)
		*reason = hbm_drop_reason(&cfg, pkt, j.delta);
	return v;
}

/* Give a class's clock back what a packet cost it. */
static __always_inline void hbm_class_refund(struct hbm_class_rate *cr,
					     __u64 charge_ns)
{
	bpf_spin_lock(&cr->lock);
	cr->vq_time -= charge_ns;
	bpf_spin_unlock(&cr->lock);
}

/*
 * Charge a packet to its class, if it has one, then to the device: it
 * departs at the later of the two clocks, and gets the more severe of the
 * two verdicts. A packet dropped at either level is given back to both.
 * The class's charge goes in the skb (hbm_cb) for the purge.
 *
 * The device's clock is charged at enqueue, so it runs ahead of now by
 * what the classes hold as well as by what the device itself must delay
 * (at most a drop threshold's worth of each class's rate: HBM's signals
 * bound each queue). The device's delay a classified packet is judged by
 * is what the device adds to its class's delay (hbm_class_held): a
 * class filling its own rate under an idle device is no congestion of the
 * device, and must get no device signals.
 */
static __always_inline enum hbm_verdict
hbm_charge_all(struct hbm_dev_rate *dr, const struct hbm_config *cfg,
	       const struct hbm_cls *cls, const struct hbm_pkt *pkt,
	       struct sk_buff *skb, __u64 now, __u64 *charge,
	       __u64 *departure, enum hbm_drop_reason *reason)
{
	enum hbm_verdict vc = HBM_PASS, v;
	__u64 cdep = 0, ccharge = 0;
	__s64 delay, cdelay = 0;

	if (cls->cr) {
		vc = hbm_class_charge(cls->cr, cls->cc, cfg,
				      READ_ONCE(dr->late_ns), pkt, now,
				      &ccharge, &cdep, &cdelay, reason);
		if (vc == HBM_DROP)
			return HBM_DROP;
	}
	v = hbm_charge(dr, cfg, pkt, now, hbm_class_held(cdelay), charge,
		       departure, &delay);
	if (v == HBM_DROP) {
		*reason = hbm_drop_reason(cfg, pkt, delay);
		if (cls->cr)
			hbm_class_refund(cls->cr, ccharge);
		return HBM_DROP;
	}
	if (cdep > *departure)
		*departure = cdep;
	hbm_cb(skb)->cls_charge = ccharge;
	return hbm_verdict_worst(v, vc);
}

/*
 * A queued packet of a class (hbm_cb) leaving: counted as sent by its
 * class, or, freed unsent (@sent false), its charge given back.
 */
static __always_inline void hbm_class_unqueue(const struct hbm_inst_key *ik,
					      struct sk_buff *skb, __u32 len,
					      bool sent)
{
	struct hbm_cb *cb = hbm_cb(skb);
	struct hbm_class_rate *cr;
	struct hbm_class_key key;

	if (!cb->cls)
		return;
	key.ifindex = ik->ifindex;
	key.netns = ik->netns;
	key.cgroup = cb->cls;
	cr = bpf_map_lookup_elem(&hbm_class_rates, &key);
	if (!cr)
		return;		/* deleted while the packet waited */
	if (sent) {
		__sync_fetch_and_add(&cr->packets, 1);
		__sync_fetch_and_add(&cr->bytes, len);
	} else {
		hbm_class_refund(cr, cb->cls_charge);
	}
}

/*
 * A packet freed before it left gives its slot back, as a dropped one
 * does: otherwise a reset (link down) with a deep backlog would leave the
 * device's clock that far ahead, and every packet after it would wait. It
 * gives back what it was charged, at the rate of its enqueue: a `set
 * --rate` since then must not leave the clock wrong by the difference.
 */
static __always_inline void hbm_dev_rate_refund(struct hbm_dev_rate *dr,
					     __u64 charge_ns)
{
	bpf_spin_lock(&dr->lock);
	dr->vq_time -= charge_ns;
	bpf_spin_unlock(&dr->lock);
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
static __always_inline void hbm_late_record(struct hbm_dev_rate *dr, __u64 late,
					    __u64 now)
{
	__u32 b = hbm_late_bucket(late);

	if (b < HBM_LATE_BUCKETS)
		__sync_fetch_and_add(&dr->late_hist[b], 1);
	__sync_fetch_and_add(&dr->late_sum_ns, late);
	dr->late_ns = hbm_late_track(dr->late_ns, late, now - dr->late_at);
	dr->late_at = now;
}

#endif /* HBM_POLICY_BPF_H */
