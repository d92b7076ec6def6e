/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HBM-EDT arithmetic, shared by the BPF qdisc and the host unit tests.
 *
 * Pure functions on fixed-width integers: no helpers, no maps, no floating
 * point, always inlined (the qdisc calls them under a bpf_spin_lock, where
 * BPF-to-BPF calls are not allowed).
 */
#ifndef HBM_EDT_H
#define HBM_EDT_H

#include "hbm.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * Longest packet the clock accounts for. len * 8e9 must fit in 64 bits next
 * to a remainder below the rate: 2^30 * 8e9 + 4e11 < 2^64. A GSO packet is
 * at most 512 KB (BIG TCP), far below.
 */
#define HBM_MAX_PKT_LEN		(1U << 30)

/* A virtual queue: when the next packet may leave, with sub-ns remainder. */
struct hbm_vq {
	__u64 time;
	__u64 rem;
};

enum hbm_verdict {
	HBM_PASS,		/* under the mark threshold */
	HBM_MARK,		/* over mark: counted, ECN-capable or lucky */
	HBM_CN,			/* over mark: tell the local TCP sender (CWR) */
	HBM_DROP,		/* over drop, or non-TCP over mark */
};

struct hbm_pkt {
	__u32 len;		/* qdisc_pkt_len */
	__u32 packets_out;	/* TCP packets in flight, if is_tcp */
	__u32 unacked;		/* TCP bytes written, not yet acknowledged */
	__u8 is_tcp;		/* a TCP packet of a local full socket */
	__u8 ecn;		/* ECN-capable and a CE marker runs */
	__u8 thin;		/* a TCP sender whose unacked bytes fit in an
				 * initial quantum (hbm_is_thin) */
};

/*
 * Charge one packet of @len bytes to the virtual queue at @rate_bps.
 * Returns the queue's delay before the charge (HBM's delta: how far the
 * virtual clock runs ahead of @now) and stores the packet's departure time.
 * An idle queue keeps at most @burst_ns of credit, which bounds bursts.
 */
static __always_inline __s64 hbm_vq_charge(struct hbm_vq *vq, __u64 now,
					   __u32 len, __u64 rate_bps,
					   __u64 burst_ns, __u64 *departure)
{
	__s64 delta = (__s64)(vq->time - now);
	__u64 num;

	if (delta < -(__s64)burst_ns) {
		vq->time = now - burst_ns;
		vq->rem = 0;
		delta = -(__s64)burst_ns;
	}
	*departure = vq->time;
	if (len > HBM_MAX_PKT_LEN)
		len = HBM_MAX_PKT_LEN;
	num = (__u64)len * 8 * HBM_NSEC_PER_SEC + vq->rem;
	vq->time += num / rate_bps;
	vq->rem = num % rate_bps;
	return delta;
}

/*
 * The allowance for the shaper's own lateness, in ns: how far the release
 * lateness the qdisc observes (@late_ns, its envelope: see hbm_late_track)
 * exceeds the burst credit HBM already gives, up to HBM_LATE_CREDIT_MAX_NS.
 *
 * A packet released late kept the link idle for that long, and the senders
 * behind it (TCP small queues, their ACK clock) come back late and then all
 * at once. Charged as HBM charges a sender, that lateness would be lost rate
 * (the idle credit forgets it) and the burst that follows would queue over
 * the thresholds (CN and drops for a queue the shaper made). So the idle
 * credit is burst + allowance: the burst after a late release finds the
 * clock behind now by what the release lost. The thresholds are not raised:
 * a queue that persists is the senders', and raising them by the lateness
 * kept one standing (bench/README.md). On a host whose timers fire within
 * the burst the allowance is 0 and this is HBM exactly; under a
 * hypervisor's jitter it follows the jitter.
 */
static __always_inline __u64 hbm_late_allowance(__u64 burst_ns, __u64 late_ns,
						__u32 flags)
{
	if (flags & HBM_F_FIXED_BURST)
		return 0;
	if (late_ns > HBM_LATE_CREDIT_MAX_NS)
		late_ns = HBM_LATE_CREDIT_MAX_NS;
	return late_ns > burst_ns ? late_ns - burst_ns : 0;
}

/*
 * How long the lateness envelope remembers a stall: it decays towards
 * smaller samples by the fraction of this time that passed since the last
 * sample, about 1/e of the gap per HBM_LATE_MEMORY_NS.
 */
#define HBM_LATE_MEMORY_NS	(1000 * 1000 * 1000ULL)

/*
 * Follow the release lateness with an envelope: it jumps up to a larger
 * sample at once and decays towards smaller ones with time (@dt_ns since
 * the previous sample), so it sits near the largest lateness of the last
 * HBM_LATE_MEMORY_NS whatever the packet rate: a stall must be covered
 * the next time it recurs, and under a hypervisor stalls recur every few
 * hundred milliseconds. Samples are taken up to the memory (a second's
 * stall is no shaping to allow for), which keeps the product below 2^60.
 */
static __always_inline __u64 hbm_late_track(__u64 env_ns, __u64 sample_ns,
					    __u64 dt_ns)
{
	if (sample_ns > HBM_LATE_MEMORY_NS)
		sample_ns = HBM_LATE_MEMORY_NS;
	if (env_ns > HBM_LATE_MEMORY_NS)
		env_ns = HBM_LATE_MEMORY_NS;
	if (sample_ns >= env_ns || dt_ns >= HBM_LATE_MEMORY_NS)
		return sample_ns;
	return env_ns - (env_ns - sample_ns) * dt_ns / HBM_LATE_MEMORY_NS;
}

/* The late_hist bucket of a lateness (see HBM_LATE_BUCKETS). */
static __always_inline __u32 hbm_late_bucket(__u64 late_ns)
{
	__u64 us = late_ns / HBM_NSEC_PER_USEC;
	__u32 b = 0;

	if (us >= 1ULL << 32) {
		b += 32;
		us >>= 32;
	}
	if (us >= 1ULL << 16) {
		b += 16;
		us >>= 16;
	}
	if (us >= 1ULL << 8) {
		b += 8;
		us >>= 8;
	}
	if (us >= 1ULL << 4) {
		b += 4;
		us >>= 4;
	}
	if (us >= 1ULL << 2) {
		b += 2;
		us >>= 2;
	}
	if (us >= 2) {
		b += 1;
		us >>= 1;
	}
	b += us;	/* 1 + floor(log2(us)) for us >= 1; 0 for 0 */
	return b < HBM_LATE_BUCKETS ? b : HBM_LATE_BUCKETS - 1;
}

/* Give a dropped packet's slot back: the exact inverse of hbm_vq_charge. */
static __always_inline void hbm_vq_refund(struct hbm_vq *vq, __u32 len,
					  __u64 rate_bps)
{
	__u64 num, ns, frac;

	if (len > HBM_MAX_PKT_LEN)
		len = HBM_MAX_PKT_LEN;
	num = (__u64)len * 8 * HBM_NSEC_PER_SEC;
	ns = num / rate_bps;
	frac = num % rate_bps;
	if (vq->rem < frac) {
		vq->rem += rate_bps;
		ns++;
	}
	vq->rem -= frac;
	vq->time -= ns;
}

/* Drop threshold for a packet: larger packets go first (HBM). */
static __always_inline __u64 hbm_drop_thresh(const struct hbm_config *cfg,
					     __u32 len)
{
	return len > cfg->large_pkt ? cfg->drop_large_ns : cfg->drop_ns;
}

/*
 * Whether a non-ECN TCP packet over the mark threshold gets NET_XMIT_CN:
 * with probability rising linearly from 0 at mark to 1 at the drop
 * threshold. @rnd is uniform over 32 bits.
 */
static __always_inline int hbm_cn_roll(__s64 delta, __u64 mark_ns,
				       __u64 drop_ns, __u32 rnd)
{
	__u64 span, over;

	if (delta <= (__s64)mark_ns)
		return 0;
	if (drop_ns <= mark_ns || delta >= (__s64)drop_ns)
		return 1;
	span = drop_ns - mark_ns;
	over = (__u64)delta - mark_ns;
	/*
	 * rnd * span and over * 2^32 must fit in 64 bits: thresholds up to the
	 * loader's 1 h make span up to 2^42 ns. Scale both below 2^32 (over <
	 * span); the ratio keeps 31 bits or more, far below any rnd's weight.
	 */
	if (span >> 48) {
		span >>= 16;
		over >>= 16;
	}
	if (span >> 40) {
		span >>= 8;
		over >>= 8;
	}
	if (span >> 36) {
		span >>= 4;
		over >>= 4;
	}
	if (span >> 34) {
		span >>= 2;
		over >>= 2;
	}
	/* Below 2^34 now: at most two more halvings. */
	if (span >> 32) {
		span >>= 1;
		over >>= 1;
	}
	if (span >> 32) {
		span >>= 1;
		over >>= 1;
	}
	/* P(rnd * span < over * 2^32) = over / span, no modulo bias. */
	return (__u64)rnd * span < (over << 32) ? 1 : 0;
}

/*
 * Whether a TCP sender is thin: everything it has written and not had
 * acknowledged (in flight and still to send), this packet's bytes among
 * them, fits in @quantum, an initial quantum. Such a sender (an RPC, a
 * request, an interactive burst) cannot be what keeps the queue up, and a
 * CN would only halve its window and stretch its next burst over more
 * round trips, while the bulk senders that do keep the queue up still get
 * CN. This is sch_fq's precedence for new flows carried over to HBM's
 * signal. The sender's own count is used, not the qdisc's: a paced bulk
 * flow empties its queue in the qdisc between packets all the time.
 */
static __always_inline int hbm_is_thin(const struct hbm_pkt *pkt,
				       __u32 quantum)
{
	return pkt->is_tcp && pkt->unacked <= quantum;
}

/*
 * HBM's decision for one packet given its virtual-queue delay. Sets
 * *guarded when the 2-packet guard turned a drop into a CN.
 *
 * A thin sender's packet between mark and drop is marked but gets no CN
 * (hbm_is_thin). Over the drop threshold it is dropped like any other.
 */
static __always_inline enum hbm_verdict
hbm_decide(const struct hbm_config *cfg, const struct hbm_pkt *pkt,
	   __s64 delta, __u32 rnd, int *guarded)
{
	__u64 drop = hbm_drop_thresh(cfg, pkt->len);
	enum hbm_verdict v;

	*guarded = 0;
	if (delta <= (__s64)cfg->mark_ns)
		return HBM_PASS;
	if (delta > (__s64)drop)
		v = HBM_DROP;
	else if (!pkt->is_tcp)
		v = HBM_DROP;
	else if (pkt->ecn || pkt->thin)
		v = HBM_MARK;
	else if (hbm_cn_roll(delta, cfg->mark_ns, drop, rnd))
		v = HBM_CN;
	else
		v = HBM_MARK;

	/* Every TCP flow keeps 2 packets in flight: signal, don't drop. */
	if (v == HBM_DROP && pkt->is_tcp && pkt->packets_out <= 1) {
		*guarded = 1;
		v = HBM_CN;
	}
	if (v == HBM_CN && (cfg->flags & HBM_F_NO_CN))
		v = HBM_MARK;
	return v;
}

/* What hbm_vq_judge() tells of a packet besides its verdict. */
struct hbm_judged {
	__u64 departure;	/* when it may leave */
	__u64 charge;		/* what it moved the clock (0 if dropped) */
	__s64 delta;		/* the queue's delay before it (HBM's delta) */
	int guarded;		/* the 2-packet guard turned a drop into CN */
};

/*
 * One packet through one virtual queue, as the qdisc runs it under that
 * queue's lock, for the device and for a class alike: charged at the
 * level's rate with @burst_ns of idle credit, judged by the queue's delay
 * less @held (what the packet's class holds it anyway; 0 for a class),
 * and its slot given back at once if the verdict is a drop, so that a
 * dropped packet costs the clock nothing.
 */
static __always_inline enum hbm_verdict
hbm_vq_judge(struct hbm_vq *vq, const struct hbm_config *cfg,
	     const struct hbm_pkt *pkt, __u64 now, __u64 burst_ns, __s64 held,
	     __u32 rnd, struct hbm_judged *j)
{
	enum hbm_verdict v;

	j->delta = hbm_vq_charge(vq, now, pkt->len, cfg->rate_bps, burst_ns,
				 &j->departure);
	v = hbm_decide(cfg, pkt, j->delta - held, rnd, &j->guarded);
	if (v == HBM_DROP)
		hbm_vq_refund(vq, pkt->len, cfg->rate_bps);
	j->charge = v == HBM_DROP ? 0 : vq->time - j->departure;
	return v;
}

/*
 * Why a dropped packet was dropped, from the delay it was judged by: over
 * the drop threshold (any TCP drop is: under it TCP gets CN or a mark),
 * else a non-TCP packet over the mark threshold.
 */
static __always_inline enum hbm_drop_reason
hbm_drop_reason(const struct hbm_config *cfg, const struct hbm_pkt *pkt,
		__s64 delay)
{
	return pkt->is_tcp || delay > (__s64)hbm_drop_thresh(cfg, pkt->len) ?
	       HBM_DROP_THRESH : HBM_DROP_NONTCP;
}

/*
 * A packet of a class is judged at two levels, each delay against its own
 * level's thresholds (hbm_decide), and gets the more severe verdict: a
 * class over its drop threshold drops even below the device's, and a full
 * device signals a class that is within its own rate.
 */
static __always_inline enum hbm_verdict hbm_verdict_worst(enum hbm_verdict a,
							  enum hbm_verdict b)
{
	return a > b ? a : b;
}

/*
 * The configuration a class's delay is judged by: the class's rate and
 * thresholds, the device's packet size limit and flags.
 */
static __always_inline void hbm_class_cfg(struct hbm_config *out,
					  const struct hbm_config *dev,
					  const struct hbm_class_config *cc)
{
	*out = *dev;
	out->rate_bps = cc->rate_bps < HBM_MIN_RATE_BPS ? HBM_MIN_RATE_BPS :
							 cc->rate_bps;
	out->burst_ns = cc->burst_ns;
	out->mark_ns = cc->mark_ns;
	out->drop_ns = cc->drop_ns;
	out->drop_large_ns = cc->drop_large_ns;
}

/*
 * How long a packet's class holds it anyway (its class's delay @cdelta,
 * when positive): the device's delay that the packet is judged by is what
 * the device adds beyond it, device delta - hbm_class_held(class delta).
 */
static __always_inline __s64 hbm_class_held(__s64 cdelta)
{
	return cdelta > 0 ? cdelta : 0;
}

/* Whether @tstamp lies beyond the horizon, tolerating a zero tstamp. */
static __always_inline int hbm_beyond_horizon(__u64 tstamp, __u64 now,
					      __u64 horizon_ns)
{
	return tstamp > now && tstamp - now > horizon_ns;
}

#endif /* HBM_EDT_H */
