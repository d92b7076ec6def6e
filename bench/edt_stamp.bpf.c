// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's "fq+edt" arrangement: HBM-EDT as first published, a tc
 * egress program that stamps each packet's departure time from the
 * device's virtual queue and leaves the waiting to sch_fq. It runs the same
 * arithmetic as bpf_hbm (include/hbm_edt.h) so the comparison is of where
 * the policy runs, not of two policies. Differences it cannot avoid: tc
 * programs have no NET_XMIT_CN to give the sender (packets over mark are
 * CE-marked when ECT, else only counted), and the queueing is fq's.
 *
 * One virtual queue for the whole program: attach it to one device. The
 * rate and thresholds are in the array map hbm_stamp_state, whose layout
 * bench/hbm_stamp.h gives (bench/stamp_config writes it).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hbm_stamp.h"

char _license[] SEC("license") = "GPL";

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct hbm_stamp_state);
	__uint(max_entries, 1);
} hbm_stamp_state SEC(".maps");

SEC("tc")
int hbm_edt_stamp(struct __sk_buff *skb)
{
	struct hbm_pkt pkt = { .len = skb->wire_len ?: skb->len };
	struct hbm_stamp_state *st;
	struct hbm_config cfg;
	struct bpf_sock *sk;
	struct bpf_tcp_sock *tp;
	enum hbm_verdict v;
	__u64 now, departure;
	__u32 key = 0, rnd;
	__s64 delta;
	int guarded;

	st = bpf_map_lookup_elem(&hbm_stamp_state, &key);
	if (!st || !st->cfg.rate_bps)
		return TC_ACT_OK;
	cfg = st->cfg;

	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (sk && sk->protocol == 6) {
		tp = bpf_tcp_sock(sk);
		if (tp) {
			pkt.is_tcp = 1;
			pkt.packets_out = tp->packets_out;
			/* ECT data packets get CE below instead of CN. */
			pkt.ecn = tp->ecn_flags & 1;
		}
	}
	rnd = bpf_get_prandom_u32();
	now = bpf_ktime_get_ns();

	bpf_spin_lock(&st->lock);
	delta = hbm_vq_charge(&st->vq, now, pkt.len, cfg.rate_bps,
			      cfg.burst_ns, &departure);
	v = hbm_decide(&cfg, &pkt, delta, rnd, &guarded);
	if (v == HBM_DROP)
		hbm_vq_refund(&st->vq, pkt.len, cfg.rate_bps);
	bpf_spin_unlock(&st->lock);

	if (v == HBM_DROP) {
		__sync_fetch_and_add(&st->drops, 1);
		return TC_ACT_SHOT;
	}
	if (v != HBM_PASS && bpf_skb_ecn_set_ce(skb))
		__sync_fetch_and_add(&st->ce, 1);
	if (departure > skb->tstamp)
		skb->tstamp = departure;
	__sync_fetch_and_add(&st->packets, 1);
	return TC_ACT_OK;
}
