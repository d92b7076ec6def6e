/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel objects bpf-hbm manages, above the pins: the BPF object
 * (bpf.c), the ECN markers on tcx egress (marker.c), and qdiscs through
 * rtnetlink (netlink.c).
 */
#ifndef HBM_OBJECTS_H
#define HBM_OBJECTS_H

#include "pins.h"

/* bpf.c: the BPF object's lifecycle */
int hbm_bpf_load(__u64 flow_idle_ns, __u64 rate_bps, bool *fresh);
int hbm_bpf_unload(void);
/*
 * The loaded bpf_hbm's load-time defaults, what a device without a
 * configuration gets (load --rate sets their rate). On failure, the
 * compiled ones (hbm_config_default()) and a negative errno.
 */
int hbm_bpf_defaults(struct hbm_config *cfg);

/* marker.c: the ECN marker on a device's tcx egress hook */
void hbm_marker_path(char *buf, size_t len, const struct hbm_dev_key *key);
bool hbm_marker_name(const char *name);
int hbm_marker_check(const struct hbm_dev_key *key, bool *present);
bool hbm_marker_seen(const struct hbm_dev_key *key);
int hbm_marker_attach(const struct hbm_dev_key *key, bool *created);
int hbm_marker_detach(const struct hbm_dev_key *key, bool *removed);
int hbm_markers_sweep(bool all);

/* netlink.c: rtnetlink through libmnl */
struct hbm_nl {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
	int err;		/* errno of the last NLMSG_ERROR */
	char extack[256];	/* its extended ack message, or "" */
	void *cb_data;
	char *buf;		/* receive buffer */
};

struct hbm_qdisc {
	__u32 parent;
	__u32 handle;
	char kind[16];		/* TCA_KIND: IFNAMSIZ, as the kernel sizes it */
	void *opts;		/* TCA_OPTIONS' payload, as dumped */
	__u16 opts_len;
};

struct hbm_qdiscs {
	struct hbm_qdisc *q;
	int n;
};

int hbm_nl_open(struct hbm_nl *nl);
void hbm_nl_close(struct hbm_nl *nl);
int hbm_nl_qdisc_new(struct hbm_nl *nl, int ifindex, __u32 parent,
		     __u32 handle, const char *kind, __u16 flags);
int hbm_nl_qdisc_create(struct hbm_nl *nl, int ifindex, const struct hbm_qdisc *q,
			__u16 flags);
int hbm_nl_qdisc_del(struct hbm_nl *nl, int ifindex, __u32 parent,
		     __u32 handle, const char *kind);
/*
 * Link events (apply --watch): hbm_nl_link_open() subscribes a socket to
 * RTMGRP_LINK; hbm_nl_link_read() reads what is queued on it without
 * waiting (poll hbm_nl_fd() for more) and calls @fn for each RTM_NEWLINK
 * with a name and each RTM_DELLINK. It returns 0 once nothing is left, or
 * -ENOBUFS where the kernel dropped events (the socket overran: what
 * happened meanwhile is lost), or another -errno, the reason set.
 * hbm_nl_link_parse() is its parser of one datagram (pure, for tests).
 */
struct hbm_link_ev {
	bool del;		/* RTM_DELLINK */
	int ifindex;
	char name[16];		/* IFNAMSIZ; "" when a DELLINK lacks it */
};

typedef void (*hbm_link_fn)(const struct hbm_link_ev *ev, void *ctx);

int hbm_nl_link_open(struct hbm_nl *nl);
int hbm_nl_fd(const struct hbm_nl *nl);
int hbm_nl_link_read(struct hbm_nl *nl, hbm_link_fn fn, void *ctx);
int hbm_nl_link_parse(const void *buf, size_t len, hbm_link_fn fn, void *ctx);
int hbm_nl_qdisc_dump(struct hbm_nl *nl, int ifindex, struct hbm_qdiscs *qs);
void hbm_qdiscs_free(struct hbm_qdiscs *qs);

/*
 * A device's root qdisc. bpf_hbm is attached to a device when its root
 * qdisc is bpf_hbm, or when its root is mq with bpf_hbm children (one per
 * tx queue).
 */
struct hbm_root {
	struct hbm_qdisc q;	/* the root qdisc, if any */
	bool present;
	bool attached;		/* bpf_hbm root, or mq root with bpf_hbm */
	int children;		/* mq's children */
};

const struct hbm_qdisc *hbm_root_in(const struct hbm_qdiscs *qs);
bool hbm_child_of(const struct hbm_qdisc *q, __u32 handle);
int hbm_root_get(struct hbm_nl *nl, int ifindex, struct hbm_root *r,
		 struct hbm_qdiscs *all);
int hbm_nl_num_tx_queues(struct hbm_nl *nl, int ifindex);
int hbm_tx_queues(struct hbm_nl *nl, const char *dev, int ifindex);

/*
 * @dev's link speed in Mb/s, as `ethtool DEV` gives it (SIOCETHTOOL's
 * ETHTOOL_GLINKSETTINGS, which answers for this network namespace, as
 * the name does; sysfs may be another's): 0 on success, *@mbps then
 * possibly HBM_SPEED_UNKNOWN (no carrier); a negative errno where the
 * driver reports none (-EOPNOTSUPP: dummy, ...), the reason set.
 */
int hbm_link_speed(const char *dev, __u32 *mbps);

#endif /* HBM_OBJECTS_H */
