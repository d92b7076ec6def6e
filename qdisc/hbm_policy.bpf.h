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
					   enum hbm_drop_reason reason)
{
	if (dr && reason < HBM_DROP_MAX)
		__sync_fetch_and_add(&dr->drops[reason], 1);
}

/*
 * Charge a packet to the device's virtual queue and give HBM's verdict on
 * it, with the departure the clock gives it and what it cost the clock
 * (@charge, given back if it is purged before it leaves). A
 * dropped packet's slot is given back at once. @delay is the virtual
 * queue's delay, judged against HBM's thresholds as it is: the allowance
 * for the shaper's lateness widens the idle credit only (thresholds raised
 * by it kept a standing queue as long as the lateness, bench/README.md).
 */
static __always_inline enum hbm_verdict
hbm_charge(struct hbm_dev_rate *dr, const struct hbm_config *cfg,
	   const struct hbm_pkt *pkt, __u64 now, __u64 *charge,
	   __u64 *departure, __s64 *delay)
{
	enum hbm_verdict v;
	__u64 allow;
	__s64 delta;
	int guarded;
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

		allow = hbm_late_allowance(cfg->burst_ns, dr->late_ns,
					   cfg->flags);
		delta = hbm_vq_charge(&vq, now, pkt->len, cfg->rate_bps,
				      cfg->burst_ns + allow, departure);
		*charge = vq.time - *departure;
		*delay = delta;
		v = hbm_decide(cfg, pkt, delta, rnd, &guarded);
		if (v == HBM_DROP)
			hbm_vq_refund(&vq, pkt->len, cfg->rate_bps);
		dr->vq_time = vq.time;
		dr->vq_rem = vq.rem;
	}
	dr->delta_ns = delta;
	if (v != HBM_PASS)
		dr->marks++;
	if (v == HBM_CN)
		dr->cn++;
	if (v == HBM_MARK && pkt->thin && !pkt->ecn)
		dr->cn_spared++;
	if (guarded)
		dr->guard_saves++;
	bpf_spin_unlock(&dr->lock);
	return v;
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
