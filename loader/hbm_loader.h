/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the bpf-hbm loader.
 *
 * Functions that can fail return 0 or a negative errno and leave a one-line
 * description in hbm_reason(); the command that called them prints it as
 * "bpf-hbm: couldn't <verb> <object>: <reason>" (hbm_fail()). Commands
 * (hbm_cmd_*) print their own errors and return an exit status.
 */
#ifndef HBM_LOADER_H
#define HBM_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "hbm.h"
#include "config.h"

#define HBM_PROG		"bpf-hbm"
#define HBM_VERSION		"0.1"
#define HBM_KIND		"bpf_hbm"
#define HBM_BPFFS		"/sys/fs/bpf"
#define HBM_PIN_DIR		HBM_BPFFS "/bpf_hbm"	/* see hbm_pin_dir() */
#define HBM_MARK_PROG		"hbm_mark"	/* the ECN marker's pin */

/* Exit status: success, runtime failure, usage error. */
enum {
	HBM_EXIT_OK = 0,
	HBM_EXIT_FAIL = 1,
	HBM_EXIT_USAGE = 2,
};

/* util.c */
int hbm_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *hbm_reason(void);
void hbm_fail(const char *verb, const char *obj);
void hbm_error(const char *verb, const char *obj, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hbm_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hbm_set_verbose(bool verbose);
const char *hbm_perm_hint(int err);
int hbm_own_netns(__u32 *netns);
void hbm_dev_label(char *buf, size_t len, const struct hbm_dev_key *key,
		   __u32 own_netns);

/* bpf.c: the BPF object's lifecycle and its pinned maps */
enum hbm_state {
	HBM_ABSENT,	/* nothing pinned */
	HBM_STALE,	/* pins, but no valid struct_ops link among them */
	HBM_BROKEN,	/* a valid link, but a map pin is missing */
	HBM_LOADED,
};

struct hbm_maps {
	int config;
	int classes;
	int instances;
	__u32 inst_value_size;	/* struct hbm_inst_info and the BPF side's */
};

#define HBM_MAPS_INIT { .config = -1, .classes = -1, .instances = -1 }

const char *hbm_pin_dir(void);
int hbm_bpf_state(enum hbm_state *state);
int hbm_bpf_load(bool *fresh);
int hbm_bpf_unload(void);
int hbm_maps_open(struct hbm_maps *maps);
void hbm_maps_close(struct hbm_maps *maps);
int hbm_class_keys(int classes_fd, struct hbm_dev_key **keys, int *n);
int hbm_cmd_load(__u64 flow_idle_ns);
int hbm_cmd_unload(bool force);

/* marker.c: the ECN marker on a device's tcx egress hook */
void hbm_marker_path(char *buf, size_t len, const struct hbm_dev_key *key);
bool hbm_marker_name(const char *name);
int hbm_marker_present(const struct hbm_dev_key *key, bool *present);
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
	char kind[16];
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
int hbm_nl_qdisc_put(struct hbm_nl *nl, int ifindex, const struct hbm_qdisc *q,
		     __u16 flags);
int hbm_nl_qdisc_del(struct hbm_nl *nl, int ifindex, __u32 parent,
		     __u32 handle, const char *kind);
int hbm_nl_qdisc_dump(struct hbm_nl *nl, int ifindex, struct hbm_qdiscs *qs);
void hbm_qdiscs_free(struct hbm_qdiscs *qs);
int hbm_nl_num_tx_queues(struct hbm_nl *nl, int ifindex);
int hbm_tx_queues(struct hbm_nl *nl, const char *dev, int ifindex);

/* device.c: attach, set, detach */
enum hbm_parent {
	HBM_PARENT_AUTO,
	HBM_PARENT_ROOT,
	HBM_PARENT_MQ,
};

/* --ecn: not given, on, off */
enum hbm_ecn {
	HBM_ECN_KEEP,
	HBM_ECN_ON,
	HBM_ECN_OFF,
};

struct hbm_attach_args {
	const char *dev;
	struct hbm_opts opts;
	enum hbm_parent parent;
	enum hbm_ecn ecn;	/* attach: KEEP means on */
	bool replace;
};

int hbm_dev_detach(struct hbm_nl *nl, int ifindex, const struct hbm_maps *maps,
		   bool *attached);
int hbm_cmd_attach(const struct hbm_attach_args *args);
int hbm_cmd_set(const char *dev, const struct hbm_opts *opts,
		enum hbm_ecn ecn);
int hbm_cmd_detach(const char *dev);

/* show.c */
struct hbm_show_args {
	const char *dev;	/* or NULL: every device */
	bool json;
	unsigned int watch;	/* seconds, 0: once */
};

int hbm_cmd_show(const struct hbm_show_args *args);

#endif /* HBM_LOADER_H */
