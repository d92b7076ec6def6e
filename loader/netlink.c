// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink through libmnl: create, replace and delete qdiscs, dump a
 * device's qdiscs and find its root (bpf_hbm attached or not), count its
 * tx queues. Errors carry the kernel's extended
 * ack message when it sent one.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "objects.h"

#define HBM_NL_BUFSZ	MNL_SOCKET_DUMP_SIZE

/* A socket for requests; with @groups, subscribed to those (RTMGRP_*). */
static int hbm_nl_open_groups(struct hbm_nl *nl, unsigned int groups)
{
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->buf = malloc(HBM_NL_BUFSZ);
	if (!nl->buf)
		return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
	nl->sk = mnl_socket_open(NETLINK_ROUTE);
	if (!nl->sk) {
		err = hbm_set_reason(-errno, "couldn't open a netlink socket: %s",
				     strerror(errno));
		goto err;
	}
	/* Best effort: without them errors just lack the kernel's message. */
	mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl->sk, groups, MNL_SOCKET_AUTOPID) < 0) {
		err = hbm_set_reason(-errno, "couldn't bind a netlink socket: %s",
				     strerror(errno));
		goto err;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = time(NULL);
	return 0;
err:
	hbm_nl_close(nl);
	return err;
}

int hbm_nl_open(struct hbm_nl *nl)
{
	return hbm_nl_open_groups(nl, 0);
}

void hbm_nl_close(struct hbm_nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->buf);
	nl->sk = NULL;
	nl->buf = NULL;
}

/*
 * The errno of an error sent as -errno. INT_MIN, which no errno is, has
 * no negation in an int (undefined behaviour): a protocol error.
 */
static int hbm_nl_errno(int err)
{
	if (err == INT_MIN)
		return EPROTO;
	return err < 0 ? -err : err;
}

/* NLMSG_ERROR: an ack (error 0) ends the exchange; an error is kept. */
static int hbm_nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct hbm_nl *nl = data;
	const struct nlattr *attr;
	unsigned int off;
	size_t len;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		nl->err = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;
	nl->err = hbm_nl_errno(e->error);
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return MNL_CB_ERROR;
	/* The TLVs follow the request's header, or all of it if not capped. */
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	if (mnl_nlmsg_size(off) > nlh->nlmsg_len)
		return MNL_CB_ERROR;
	mnl_attr_for_each(attr, nlh, off) {
		if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			continue;
		snprintf(nl->extack, sizeof(nl->extack), "%s",
			 mnl_attr_get_str(attr));
		/* The kernel's messages often end with a full stop. */
		len = strlen(nl->extack);
		while (len && (nl->extack[len - 1] == '.' ||
			       nl->extack[len - 1] == '\n'))
			nl->extack[--len] = '\0';
	}
	return MNL_CB_ERROR;
}

/* NLMSG_DONE of a dump; it carries an error if the dump failed. */
static int hbm_nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hbm_nl *nl = data;
	int err = 0;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(int)))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err < 0) {
		nl->err = hbm_nl_errno(err);
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

/*
 * Send @nlh and process the answer: messages go to @cb with nl->cb_data,
 * until an ack, NLMSG_DONE or an error. Returns 0 or -errno, with the
 * reason (strerror and the kernel's message) in hbm_reason().
 */
static int hbm_nl_talk(struct hbm_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		       void *data)
{
	static const mnl_cb_t ctl[] = {
		[NLMSG_ERROR] = hbm_nl_error_cb,
		[NLMSG_DONE] = hbm_nl_done_cb,
	};
	unsigned int seq;
	ssize_t len;
	int ret, err;

	nl->err = 0;
	nl->extack[0] = '\0';
	nl->cb_data = data;
	seq = ++nl->seq;
	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return hbm_set_reason(-errno, "netlink: %s", strerror(errno));
	errno = 0;
	do {
		len = mnl_socket_recvfrom(nl->sk, nl->buf, HBM_NL_BUFSZ);
		if (len < 0)
			return hbm_set_reason(-errno, "netlink: %s", strerror(errno));
		ret = mnl_cb_run2(nl->buf, len, seq, nl->portid, cb, nl, ctl,
				  MNL_ARRAY_SIZE(ctl));
	} while (ret == MNL_CB_OK);
	if (ret == MNL_CB_STOP)
		return 0;

	err = nl->err ? nl->err : errno ? errno : EPROTO;
	if (nl->extack[0])
		return hbm_set_reason(-err, "%s (kernel: %s)", strerror(err),
				      nl->extack);
	return hbm_set_reason(-err, "%s%s", strerror(err),
			      err == EPERM ? " (need CAP_NET_ADMIN)" : "");
}

static struct nlmsghdr *hbm_nl_tcmsg(char *buf, __u16 type, __u16 flags,
				     int ifindex, __u32 parent, __u32 handle)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	return nlh;
}

/*
 * RTM_NEWQDISC of @q: its kind, handle and parent, and its options if it
 * has any. @flags are NLM_F_CREATE and NLM_F_EXCL or NLM_F_REPLACE. A
 * qdisc from a dump is created again as it was: qdiscs accept the options
 * they dump back as their configuration, as `tc qdisc add` sent them.
 */
int hbm_nl_qdisc_create(struct hbm_nl *nl, int ifindex, const struct hbm_qdisc *q,
			__u16 flags)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = hbm_nl_tcmsg(buf, RTM_NEWQDISC, NLM_F_ACK | flags, ifindex,
			   q->parent, q->handle);
	mnl_attr_put_strz(nlh, TCA_KIND, q->kind);
	if (q->opts &&
	    !mnl_attr_put_check(nlh, sizeof(buf), TCA_OPTIONS, q->opts_len,
				q->opts))
		return hbm_set_reason(-EMSGSIZE, "%s's options don't fit a message",
				      q->kind);
	return hbm_nl_talk(nl, nlh, NULL, NULL);
}

/* The same with a kind and no options. */
int hbm_nl_qdisc_new(struct hbm_nl *nl, int ifindex, __u32 parent,
		     __u32 handle, const char *kind, __u16 flags)
{
	struct hbm_qdisc q = { .parent = parent, .handle = handle };

	snprintf(q.kind, sizeof(q.kind), "%s", kind);
	return hbm_nl_qdisc_create(nl, ifindex, &q, flags);
}

/*
 * RTM_DELQDISC of the qdisc at @parent; the kernel refuses if its handle
 * is not @handle or (when given) its kind not @kind, so a qdisc someone
 * else put there meanwhile is never deleted.
 */
int hbm_nl_qdisc_del(struct hbm_nl *nl, int ifindex, __u32 parent,
		     __u32 handle, const char *kind)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = hbm_nl_tcmsg(buf, RTM_DELQDISC, NLM_F_ACK, ifindex, parent,
			   handle);
	if (kind)
		mnl_attr_put_strz(nlh, TCA_KIND, kind);
	return hbm_nl_talk(nl, nlh, NULL, NULL);
}

struct hbm_dump_ctx {
	int ifindex;
	struct hbm_qdiscs *qs;
	int cap;
};

static int hbm_qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hbm_nl *nl = data;
	struct hbm_dump_ctx *ctx = nl->cb_data;
	const struct tcmsg *tcm;
	const struct nlattr *attr;
	struct hbm_qdisc *q;

	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*tcm)))
		return MNL_CB_OK;
	tcm = mnl_nlmsg_get_payload(nlh);
	if (tcm->tcm_ifindex != ctx->ifindex)
		return MNL_CB_OK;
	if (ctx->qs->n == ctx->cap) {
		int cap = ctx->cap ? 2 * ctx->cap : 16;

		q = realloc(ctx->qs->q, cap * sizeof(*q));
		if (!q) {
			nl->err = ENOMEM;
			return MNL_CB_ERROR;
		}
		ctx->qs->q = q;
		ctx->cap = cap;
	}
	q = &ctx->qs->q[ctx->qs->n++];
	memset(q, 0, sizeof(*q));
	q->parent = tcm->tcm_parent;
	q->handle = tcm->tcm_handle;
	mnl_attr_for_each(attr, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(attr) == TCA_KIND &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(q->kind, sizeof(q->kind), "%s",
				 mnl_attr_get_str(attr));
		if (mnl_attr_get_type(attr) == TCA_OPTIONS && !q->opts) {
			q->opts_len = mnl_attr_get_payload_len(attr);
			q->opts = malloc(q->opts_len ? q->opts_len : 1);
			if (!q->opts) {
				nl->err = ENOMEM;
				return MNL_CB_ERROR;
			}
			memcpy(q->opts, mnl_attr_get_payload(attr),
			       q->opts_len);
		}
	}
	return MNL_CB_OK;
}

/* The qdiscs of @ifindex that tc shows (root, ingress, mq's children...). */
int hbm_nl_qdisc_dump(struct hbm_nl *nl, int ifindex, struct hbm_qdiscs *qs)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct hbm_dump_ctx ctx = { .ifindex = ifindex, .qs = qs };
	struct nlmsghdr *nlh;
	int err;

	qs->q = NULL;
	qs->n = 0;
	nlh = hbm_nl_tcmsg(buf, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0);
	err = hbm_nl_talk(nl, nlh, hbm_qdisc_cb, &ctx);
	if (err)
		hbm_qdiscs_free(qs);
	return err;
}

void hbm_qdiscs_free(struct hbm_qdiscs *qs)
{
	int i;

	for (i = 0; i < qs->n; i++)
		free(qs->q[i].opts);
	free(qs->q);
	qs->q = NULL;
	qs->n = 0;
}

/* The root qdisc in a dump, or NULL. */
const struct hbm_qdisc *hbm_root_in(const struct hbm_qdiscs *qs)
{
	int i;

	for (i = 0; i < qs->n; i++)
		if (qs->q[i].parent == TC_H_ROOT)
			return &qs->q[i];
	return NULL;
}

/* Whether @q is a child qdisc of the qdisc with @handle (mq's, per queue). */
bool hbm_child_of(const struct hbm_qdisc *q, __u32 handle)
{
	return q->parent != TC_H_ROOT && q->parent != TC_H_INGRESS &&
	       TC_H_MAJ(q->parent) == TC_H_MAJ(handle);
}

static void hbm_root_of(const struct hbm_qdiscs *qs, struct hbm_root *r)
{
	const struct hbm_qdisc *q = hbm_root_in(qs);
	int i;

	memset(r, 0, sizeof(*r));
	if (!q)
		return;
	r->q = *q;
	r->q.opts = NULL;	/* @qs owns them */
	r->q.opts_len = 0;
	r->present = true;
	if (!strcmp(r->q.kind, HBM_KIND)) {
		r->attached = true;
		return;
	}
	if (strcmp(r->q.kind, "mq"))
		return;
	for (i = 0; i < qs->n; i++) {
		q = &qs->q[i];
		if (!hbm_child_of(q, r->q.handle))
			continue;
		r->children++;
		if (!strcmp(q->kind, HBM_KIND))
			r->attached = true;
	}
}

/* The device's root qdisc; its whole dump in @all, if not NULL. */
int hbm_root_get(struct hbm_nl *nl, int ifindex, struct hbm_root *r,
		 struct hbm_qdiscs *all)
{
	struct hbm_qdiscs qs;
	int err;

	err = hbm_nl_qdisc_dump(nl, ifindex, &qs);
	if (err)
		return err;
	hbm_root_of(&qs, r);
	if (all)
		*all = qs;
	else
		hbm_qdiscs_free(&qs);
	return 0;
}

static int hbm_link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hbm_nl *nl = data;
	int *txq = nl->cb_data;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg)) {
		if (mnl_attr_get_type(attr) == IFLA_NUM_TX_QUEUES &&
		    mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
			*txq = mnl_attr_get_u32(attr);
	}
	return MNL_CB_OK;
}

/* The device's allocated tx queues (IFLA_NUM_TX_QUEUES). */
int hbm_nl_num_tx_queues(struct hbm_nl *nl, int ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	int txq = 0, err;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	err = hbm_nl_talk(nl, nlh, hbm_link_cb, &txq);
	if (err)
		return err;
	return txq > 0 ? txq : 1;
}

/*
 * The device's tx queues in use (real_num_tx_queues): the tx-N entries in
 * sysfs, when that sysfs shows this device (it may belong to another
 * network namespace); else the allocated count from rtnetlink.
 */
int hbm_tx_queues(struct hbm_nl *nl, const char *dev, int ifindex)
{
	char path[128];
	struct dirent *e;
	int n = 0, idx = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", dev);
	f = fopen(path, "r");
	if (!f)
		goto netlink;
	if (fscanf(f, "%d", &idx) != 1)
		idx = 0;
	fclose(f);
	if (idx != ifindex)
		goto netlink;
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", dev);
	d = opendir(path);
	if (!d)
		goto netlink;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "tx-", 3);
	closedir(d);
	if (n > 0)
		return n;
netlink:
	return hbm_nl_num_tx_queues(nl, ifindex);
}

/*
 * ETHTOOL_GLINKSETTINGS takes a handshake: asked with no mask words, the
 * kernel answers how many it has (negated), and only then the settings.
 */
int hbm_link_speed(const char *dev, __u32 *mbps)
{
	/* The settings, then 3 masks of up to 127 words (an s8 counts them). */
	__u64 buf[(sizeof(struct ethtool_link_settings) + 3 * 127 * 4) / 8 + 1];
	struct ethtool_link_settings *req = (void *)buf;
	struct ifreq ifr = {};
	int fd, err = 0, i;

	if (strlen(dev) >= sizeof(ifr.ifr_name))
		return hbm_set_reason(-ENODEV, "%s", strerror(ENODEV));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hbm_set_reason(-errno, "socket: %s", strerror(errno));
	memcpy(ifr.ifr_name, dev, strlen(dev) + 1);
	ifr.ifr_data = (void *)buf;
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 2; i++) {
		req->cmd = ETHTOOL_GLINKSETTINGS;
		if (ioctl(fd, SIOCETHTOOL, &ifr)) {
			err = -errno;
			break;
		}
		if (req->cmd != ETHTOOL_GLINKSETTINGS ||
		    req->link_mode_masks_nwords >= 0) {
			if (i)
				break;	/* the answer to the real request */
			err = -EPROTO;
			break;
		}
		/* The handshake's answer: ask again with its word count. */
		req->link_mode_masks_nwords = -req->link_mode_masks_nwords;
	}
	close(fd);
	if (!err && i == 2)
		err = -EPROTO;	/* the kernel kept asking for a handshake */
	if (err)
		return hbm_set_reason(err, "couldn't read %s's link settings: %s",
				      dev, strerror(-err));
	*mbps = req->speed;
	return 0;
}

/*
 * Link events (apply --watch): a socket subscribed to RTMGRP_LINK, with a
 * receive buffer of 1 MiB asked for (the kernel caps it at rmem_max; an
 * overrun is ENOBUFS, which the watcher answers with a full apply).
 */
int hbm_nl_link_open(struct hbm_nl *nl)
{
	int sz = 1 << 20, err;

	err = hbm_nl_open_groups(nl, RTMGRP_LINK);
	if (err)
		return err;
	setsockopt(mnl_socket_get_fd(nl->sk), SOL_SOCKET, SO_RCVBUF, &sz,
		   sizeof(sz));
	return 0;
}

int hbm_nl_fd(const struct hbm_nl *nl)
{
	return mnl_socket_get_fd(nl->sk);
}

struct hbm_link_parse {
	hbm_link_fn fn;
	void *ctx;
};

static int hbm_link_ev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct hbm_link_parse *p = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *attr;
	struct hbm_link_ev ev = {};

	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return MNL_CB_OK;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	ev.del = nlh->nlmsg_type == RTM_DELLINK;
	ev.ifindex = ifi->ifi_index;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(attr) != IFLA_IFNAME ||
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			continue;
		snprintf(ev.name, sizeof(ev.name), "%s", mnl_attr_get_str(attr));
	}
	/* Without its name, a NEWLINK tells nothing a file could name. */
	if (ev.ifindex > 0 && (ev.del || ev.name[0]))
		p->fn(&ev, p->ctx);
	return MNL_CB_OK;
}

int hbm_nl_link_parse(const void *buf, size_t len, hbm_link_fn fn, void *ctx)
{
	struct hbm_link_parse p = { .fn = fn, .ctx = ctx };

	/* Notifications: sequence 0 and the kernel's port, not checked. */
	if (mnl_cb_run(buf, len, 0, 0, hbm_link_ev_cb, &p) == MNL_CB_ERROR)
		return hbm_set_reason(-EBADMSG, "netlink: a malformed link event");
	return 0;
}

int hbm_nl_link_read(struct hbm_nl *nl, hbm_link_fn fn, void *ctx)
{
	ssize_t len;
	int err;

	for (;;) {
		len = recv(hbm_nl_fd(nl), nl->buf, HBM_NL_BUFSZ, MSG_DONTWAIT);
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (len < 0)
			return hbm_set_reason(-errno, "netlink: %s",
					      strerror(errno));
		if (!len)
			return 0;
		err = hbm_nl_link_parse(nl->buf, len, fn, ctx);
		if (err)
			return err;
	}
}
