/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf_hbm's ECN marker, a tc program beside the qdisc (it is no part of
 * the struct_ops): the loader attaches it at tcx egress of each device
 * with bpf_hbm and ECN on.
 */
#ifndef HBM_CE_BPF_H
#define HBM_CE_BPF_H

#include <bpf/bpf_endian.h>
#include "hbm_policy.bpf.h"

#define HBM_ETH_P_IP		0x0800
#define HBM_ETH_P_IPV6		0x86DD
#define HBM_ECN_MASK		3

/*
 * Whether the packet is IPv4 or IPv6 with an ECN codepoint (ECT(0),
 * ECT(1) or CE): what bpf_skb_ecn_set_ce() acts on, from the header it
 * reads (the network header, by skb->protocol). Read first, so that a
 * packet the marker cannot mark costs it one byte and nothing else.
 */
static __always_inline bool hbm_ecn_capable(struct __sk_buff *ctx)
{
	__u8 b[2];

	switch (ctx->protocol) {
	case bpf_htons(HBM_ETH_P_IP):	/* the TOS byte's low bits */
		if (bpf_skb_load_bytes_relative(ctx, 1, b, 1,
						BPF_HDR_START_NET))
			return false;
		return b[0] & HBM_ECN_MASK;
	case bpf_htons(HBM_ETH_P_IPV6):	/* traffic class, across bytes 0-1 */
		if (bpf_skb_load_bytes_relative(ctx, 0, b, 2,
						BPF_HDR_START_NET))
			return false;
		return (b[1] >> 4) & HBM_ECN_MASK;
	}
	return false;
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
int hbm_ce(struct __sk_buff *ctx)
{
	struct sk_buff *skb = bpf_cast_to_kern_ctx(ctx);
	struct hbm_cls cls = {};
	struct hbm_dev_key dev;
	struct hbm_config cfg;
	struct hbm_dev_rate *dr;
	__s64 delta, cdelta;
	bool ce = false;
	__u64 now;

	if (!hbm_ecn_capable(ctx))
		return TCX_NEXT;
	dev.ifindex = ctx->ifindex;
	dev.netns = skb->dev->nd_net.net->ns.inum;
	dr = bpf_map_lookup_elem(&hbm_dev_rates, &dev);
	if (!dr)
		return TCX_NEXT;
	/*
	 * A clock not ahead of now is no queue, below any mark threshold:
	 * on a device without classes the configuration need not be looked
	 * up (the common case below the rate).
	 */
	now = bpf_ktime_get_ns();
	delta = (__s64)(READ_ONCE(dr->vq_time) - now);
	if (delta <= 0 && !READ_ONCE(dr->class_levels))
		return TCX_NEXT;
	hbm_config_of(&dev, &cfg);
	if (!(cfg.flags & HBM_F_ECN))
		return TCX_NEXT;
	/* A class's delay, and the device's beyond it, as the qdisc's. */
	if (cfg.class_levels)
		hbm_class_find(skb, &dev, cfg.class_levels, &cls);
	if (cls.cr) {
		cdelta = (__s64)(READ_ONCE(cls.cr->vq_time) - now);
		ce = cdelta > (__s64)cls.cc->mark_ns;
		delta -= hbm_class_held(cdelta);
	}
	ce = ce || delta > (__s64)cfg.mark_ns;
	if (ce && bpf_skb_ecn_set_ce(ctx)) {
		__sync_fetch_and_add(&dr->ce, 1);
		if (cls.cr)
			__sync_fetch_and_add(&cls.cr->ce, 1);
	}
	return TCX_NEXT;
}

#endif /* HBM_CE_BPF_H */
