// SPDX-License-Identifier: GPL-2.0
/*
 * The tenant benchmark's htb arrangement (bench/tenants.sh): a tc
 * classifier, attached direct-action under htb's root, that puts a
 * packet in the htb class of its socket's cgroup, the way an operator
 * would classify tenants for htb today. The cgroup-to-class table is the
 * hash map hbm_cg_classes (cgroup id -> the minor of an htb classid: the
 * 16 bits of tc_classid; the filter's classid gives the major), filled by
 * the bench with bpftool. Only the socket's own cgroup is looked up (the bench's
 * tenants are leaf cgroups), where bpf_hbm's classes also cover
 * descendants. A packet of no listed cgroup goes to htb's default class.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

#define TC_ACT_UNSPEC	(-1)
#define TC_ACT_OK	0

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, __u32);
	__uint(max_entries, 64);
} hbm_cg_classes SEC(".maps");

SEC("tc")
int hbm_cg_classify(struct __sk_buff *skb)
{
	__u64 id = bpf_skb_cgroup_id(skb);
	__u32 *classid;

	classid = bpf_map_lookup_elem(&hbm_cg_classes, &id);
	if (!classid)
		return TC_ACT_UNSPEC;	/* htb's default class */
	skb->tc_classid = *classid;
	return TC_ACT_OK;
}
