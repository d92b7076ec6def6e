/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF-side helpers for bpf_hbm: the graph (rbtree, list) kfunc wrappers
 * and the qdisc cb accessors. The kfunc prototypes themselves come from
 * vmlinux.h.
 */
#ifndef HBM_GRAPH_BPF_H
#define HBM_GRAPH_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* A graph root's element type, recorded in BTF for the verifier. */
#define __contains(name, node) \
	__attribute__((btf_decl_tag("contains:" #name ":" #node)))

#define hbm_obj_new(type) \
	((type *)bpf_obj_new_impl(bpf_core_type_id_local(type), NULL))
#define hbm_obj_drop(p) bpf_obj_drop_impl(p, NULL)
#define hbm_refcount_acquire(p) \
	((typeof(p))bpf_refcount_acquire_impl(p, NULL))
#define hbm_rbtree_add(root, node, less) \
	bpf_rbtree_add_impl(root, node, less, NULL, 0)
#define hbm_list_push_back(head, node) \
	bpf_list_push_back_impl(head, node, NULL, 0)
#define hbm_list_push_front(head, node) \
	bpf_list_push_front_impl(head, node, NULL, 0)

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((void *)(ptr) - __builtin_offsetof(type, member)))
#endif

#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

#define NET_XMIT_SUCCESS	0x00
#define NET_XMIT_DROP		0x01
#define NET_XMIT_CN		0x02

#define TC_H_ROOT		0xFFFFFFFFU

static __always_inline struct qdisc_skb_cb *hbm_skb_cb(struct sk_buff *skb)
{
	return (struct qdisc_skb_cb *)skb->cb;
}

static __always_inline __u32 hbm_pkt_len(struct sk_buff *skb)
{
	return hbm_skb_cb(skb)->pkt_len;
}

#endif /* HBM_GRAPH_BPF_H */
