// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: loader/netlink.c's parsing of rtnetlink answers: qdisc
 * dumps (hbm_root_get(), hbm_nl_qdisc_dump()), link dumps
 * (hbm_nl_num_tx_queues()), acks, errors with extended acks and the end
 * of a dump; and each datagram as a link notification (apply --watch's
 * hbm_nl_link_parse()).
 *
 * libmnl's mnl_socket_sendto() and mnl_socket_recvfrom() are replaced
 * here (the executable's definitions win over libmnl's): what the loader
 * sends is kept, what it receives comes from the input, so the loader's
 * own exchange (sequence numbers, callbacks, error paths) runs over it.
 * The input's first byte picks the call and how the rest is read:
 *  bit 0 clear: datagrams built with libmnl from the input's bytes (qdisc
 *     and link messages with their attributes, errors with TLVs, the
 *     dump's end, other types), so the fuzzer gets past the headers;
 *  bit 0 set: raw bytes, cut into two datagrams.
 * Each datagram is also parsed alone from a buffer of its exact size,
 * where ASan sees any read past its end; the loader's own receive buffer
 * is larger.
 *
 * Oracles, each an abort(): a dumped qdisc, written back as the loader
 * writes qdiscs (hbm_nl_qdisc_create()'s message), parses to the same
 * parent, handle, kind and options; the root found is the dump's root and
 * owns no options; a device has at least one tx queue; an error has a
 * reason; a link event names a device (ifindex > 0), its name is
 * terminated, and a NEWLINK's is not empty.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The callbacks under test are static: include them. */
#include "netlink.c"

#define IFINDEX		7
#define PORTID		4242
#define SEQ0		1000	/* nl.seq before a call: it sends SEQ0 + 1 */
#define MAX_DGRAMS	4
#define DGRAM_SZ	8192

static void check(int ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_netlink: %s\n", what);
	abort();
}

/* The fake socket. */
static struct {
	char sent[DGRAM_SZ];
	size_t sent_len;
	const char *rx[MAX_DGRAMS];
	size_t rx_len[MAX_DGRAMS];
	int n_rx, next_rx;
	bool ack;		/* answer every request with an ack */
} sock;

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *req,
			  size_t siz)
{
	check(siz <= sizeof(sock.sent), "request larger than a page");
	memcpy(sock.sent, req, siz);
	sock.sent_len = siz;
	return siz;
}

ssize_t mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf,
			    size_t siz)
{
	const struct nlmsghdr *req = (const void *)sock.sent;
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	int i;

	if (sock.ack) {
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = NLMSG_ERROR;
		nlh->nlmsg_flags = NLM_F_CAPPED;
		nlh->nlmsg_seq = req->nlmsg_seq;
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
		e->error = 0;
		e->msg = *req;
		return nlh->nlmsg_len;
	}
	/* Where the kernel would make it wait, the input has ended. */
	if (sock.next_rx == sock.n_rx) {
		errno = EAGAIN;
		return -1;
	}
	i = sock.next_rx++;
	/* As libmnl: a datagram cut short by the buffer is an error. */
	if (sock.rx_len[i] > siz) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, sock.rx[i], sock.rx_len[i]);
	return sock.rx_len[i];
}

/* The input, read from the front; 0 once it is used up. */
struct src {
	const uint8_t *p;
	size_t n;
};

static uint32_t take(struct src *s, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes-- && s->n) {
		v = v << 8 | *s->p++;
		s->n--;
	}
	return v;
}

/* Up to @max bytes of the input into @dst; returns how many. */
static size_t take_bytes(struct src *s, void *dst, size_t max)
{
	size_t n = take(s, 1) % (max + 1);

	if (n > s->n)
		n = s->n;
	memcpy(dst, s->p, n);
	s->p += n;
	s->n -= n;
	return n;
}

static const char *const kinds[] = {
	"bpf_hbm", "mq", "fq", "fq_codel", "pfifo_fast", "noqueue", "htb",
	"ingress", "",
};

static uint32_t pick_handle(struct src *s)
{
	switch (take(s, 1) % 5) {
	case 0: return TC_H_ROOT;
	case 1: return TC_H_INGRESS;
	case 2: return TC_H_MAKE(0x80000000U, 0);	/* mq's, as dumped */
	case 3: return TC_H_MAKE(take(s, 2) << 16, take(s, 2));
	default: return take(s, 4);
	}
}

/* Attributes of a message, from the input; @room: bytes left. */
static void put_attrs(struct src *s, struct nlmsghdr *nlh, size_t room,
		      bool qdisc)
{
	char val[96];
	int n = take(s, 1) % 6;
	size_t len;
	uint16_t type;

	while (n-- > 0 && s->n) {
		switch (take(s, 1) % 5) {
		case 0:
			type = qdisc ? TCA_KIND : IFLA_NUM_TX_QUEUES;
			break;
		case 1:
			type = qdisc ? TCA_OPTIONS : IFLA_IFNAME;
			break;
		case 2:		/* a string of the dictionary */
			if (qdisc) {
				const char *k = kinds[take(s, 1) %
					(sizeof(kinds) / sizeof(kinds[0]))];

				if (!mnl_attr_put_strz_check(nlh, room, TCA_KIND, k))
					return;
				continue;
			}
			if (!mnl_attr_put_u32_check(nlh, room,
						    IFLA_NUM_TX_QUEUES,
						    take(s, 1) % 65))
				return;
			continue;
		case 3:		/* nested attributes */
			type = take(s, 2);
			len = take_bytes(s, val, sizeof(val));
			{
				struct nlattr *nest;

				nest = mnl_attr_nest_start_check(nlh, room,
								 qdisc ? TCA_OPTIONS : type);
				if (!nest)
					return;
				if (!mnl_attr_put_check(nlh, room, type, len, val))
					return;
				mnl_attr_nest_end(nlh, nest);
			}
			continue;
		default:
			type = take(s, 2);
			break;
		}
		len = take_bytes(s, val, sizeof(val));
		if (!mnl_attr_put_check(nlh, room, type, len, val))
			return;
	}
}

/* One message at @at (@room bytes); returns its length, 0 if none. */
static size_t put_msg(struct src *s, char *at, size_t room)
{
	static const uint16_t flag_bits[] = {
		NLM_F_MULTI, NLM_F_ACK_TLVS, NLM_F_CAPPED, NLM_F_DUMP_INTR,
	};
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	struct tcmsg *tcm;
	struct ifinfomsg *ifi;
	unsigned int i, f, how;
	char payload[64];
	size_t len;
	int err;

	if (room < 512)
		return 0;
	nlh = mnl_nlmsg_put_header(at);
	f = take(s, 1);
	for (i = 0; i < sizeof(flag_bits) / sizeof(flag_bits[0]); i++)
		if (f & (1U << i))
			nlh->nlmsg_flags |= flag_bits[i];
	how = f >> 4;
	/* The sequence number and port the kernel writes, mostly. */
	nlh->nlmsg_seq = how & 1 ? take(s, 4) : how & 2 ? 0 : SEQ0 + 1;
	nlh->nlmsg_pid = how & 4 ? take(s, 4) : PORTID;

	switch (take(s, 1) % 6) {
	case 0:
		nlh->nlmsg_type = RTM_NEWQDISC;
		tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
		tcm->tcm_ifindex = take(s, 1) & 1 ? (int)take(s, 4) : IFINDEX;
		tcm->tcm_parent = pick_handle(s);
		tcm->tcm_handle = pick_handle(s);
		put_attrs(s, nlh, room - 64, true);
		break;
	case 1:
		nlh->nlmsg_type = RTM_NEWLINK;
		ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_index = IFINDEX;
		put_attrs(s, nlh, room - 64, false);
		break;
	case 2:
		nlh->nlmsg_type = NLMSG_DONE;
		switch (take(s, 1) % 3) {
		case 0:
			break;		/* no error code at all */
		case 1:
			err = 0;
			memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(err)),
			       &err, sizeof(err));
			break;
		default:
			err = -(int)take(s, 1);
			memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(err)),
			       &err, sizeof(err));
			break;
		}
		break;
	case 3:
		nlh->nlmsg_type = NLMSG_ERROR;
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
		e->error = take(s, 1) % 3 ? -(int)take(s, 1) : 0;
		/* The request's header, and its payload when not capped. */
		e->msg.nlmsg_type = RTM_GETQDISC;
		e->msg.nlmsg_seq = SEQ0 + 1;
		len = 0;
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
			len = take_bytes(s, payload, sizeof(payload));
			memcpy(mnl_nlmsg_put_extra_header(nlh, MNL_ALIGN(len)),
			       payload, len);
		}
		e->msg.nlmsg_len = take(s, 1) & 1 ? take(s, 4) :
				   sizeof(e->msg) + len;
		if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
			len = take_bytes(s, payload, sizeof(payload));
			mnl_attr_put_check(nlh, room - 64,
					   take(s, 1) & 1 ? take(s, 2) :
							    NLMSGERR_ATTR_MSG,
					   len, payload);
			mnl_attr_put_strz_check(nlh, room - 64,
						NLMSGERR_ATTR_MSG,
						"Exclusivity flag on, cannot modify.\n");
		}
		break;
	case 4:
		nlh->nlmsg_type = take(s, 2);
		len = take_bytes(s, payload, sizeof(payload));
		memcpy(mnl_nlmsg_put_extra_header(nlh, MNL_ALIGN(len)), payload,
		       len);
		break;
	default:	/* bytes as they come, not even a header */
		memset(at, 0, 64);
		/* The next message starts aligned, as netlink's do. */
		return MNL_ALIGN(take_bytes(s, at, 64));
	}
	/* Now and then a length that lies. */
	if (take(s, 1) == 0xff)
		nlh->nlmsg_len = take(s, 2) % (nlh->nlmsg_len + 64);
	return MNL_ALIGN(nlh->nlmsg_len) <= room ? MNL_ALIGN(nlh->nlmsg_len) :
						   room;
}

static char dgrams[MAX_DGRAMS][DGRAM_SZ];

static void build(struct src *s)
{
	size_t len, n;
	int d;

	for (d = 0; d < MAX_DGRAMS && s->n; d++) {
		memset(dgrams[d], 0, DGRAM_SZ);
		len = 0;
		n = take(s, 1) % 9;
		while (n-- && s->n)
			len += put_msg(s, dgrams[d] + len, DGRAM_SZ - len);
		sock.rx[d] = dgrams[d];
		sock.rx_len[d] = len;
	}
	sock.n_rx = d;
}

static void raw(const uint8_t *data, size_t size)
{
	size_t cut;

	if (!size)
		return;
	cut = data[0] % size;
	sock.rx[0] = (const char *)data + 1;
	sock.rx_len[0] = cut;
	sock.rx[1] = (const char *)data + 1 + cut;
	sock.rx_len[1] = size - 1 - cut;
	sock.n_rx = 2;
}

/*
 * libmnl 1.0.5's mnl_nlmsg_ok() compares nlmsg_len to the bytes left as
 * an int: a length of 2^31 or more passes, and mnl_cb_run() walks off the
 * buffer. The kernel never writes one (its messages fit their datagram):
 * a datagram is cut before such a header, so that the fuzzer looks at the
 * loader rather than at that.
 */
static size_t kernel_len(const char *p, size_t len)
{
	size_t off = 0;
	uint32_t l;

	while (len - off >= sizeof(struct nlmsghdr)) {
		memcpy(&l, p + off, sizeof(l));
		if (l > INT32_MAX)
			return off;
		/* Past here libmnl stops by itself. */
		if (l < sizeof(struct nlmsghdr) || MNL_ALIGN(l) >= len - off)
			break;
		off += MNL_ALIGN(l);
	}
	return len;
}

static void nl_init(struct hbm_nl *nl)
{
	memset(nl, 0, sizeof(*nl));
	/* Never dereferenced: the socket calls are the fakes above. */
	nl->sk = (struct mnl_socket *)&sock;
	nl->portid = PORTID;
	nl->seq = SEQ0;
	nl->buf = malloc(HBM_NL_BUFSZ);
	check(nl->buf != NULL, "out of memory");
}

static void nl_fini(struct hbm_nl *nl)
{
	/* The fake socket is no libmnl socket to close. */
	nl->sk = NULL;
	hbm_nl_close(nl);
}

static const mnl_cb_t ctl[] = {
	[NLMSG_ERROR] = hbm_nl_error_cb,
	[NLMSG_DONE] = hbm_nl_done_cb,
};

/* A link event (apply --watch's): a device, and a NEWLINK names it. */
static void link_ev_check(const struct hbm_link_ev *ev, void *ctx)
{
	check(ev->ifindex > 0, "a link event without a device");
	check(memchr(ev->name, '\0', sizeof(ev->name)) != NULL,
	      "a link event's name not terminated");
	check(ev->del || ev->name[0], "a NEWLINK without a name");
}

/* Each datagram alone, from a buffer of its own size, through each parser. */
static void parse_exact(void)
{
	struct hbm_qdiscs qs = {};
	struct hbm_dump_ctx ctx = { .ifindex = IFINDEX, .qs = &qs };
	struct hbm_nl nl;
	size_t len;
	char *buf;
	int i, txq = 0;

	nl_init(&nl);
	for (i = 0; i < sock.n_rx; i++) {
		len = sock.rx_len[i];
		buf = malloc(len ? len : 1);
		check(buf != NULL, "out of memory");
		memcpy(buf, sock.rx[i], len);
		nl.cb_data = &ctx;
		mnl_cb_run2(buf, len, SEQ0 + 1, PORTID, hbm_qdisc_cb, &nl, ctl,
			    MNL_ARRAY_SIZE(ctl));
		nl.cb_data = &txq;
		mnl_cb_run2(buf, len, SEQ0 + 1, PORTID, hbm_link_cb, &nl, ctl,
			    MNL_ARRAY_SIZE(ctl));
		/* As a notification: apply --watch's parser. */
		hbm_nl_link_parse(buf, len, link_ev_check, NULL);
		free(buf);
	}
	hbm_qdiscs_free(&qs);
	nl_fini(&nl);
}

static bool same_qdisc(const struct hbm_qdisc *a, const struct hbm_qdisc *b)
{
	return a->parent == b->parent && a->handle == b->handle &&
	       !strcmp(a->kind, b->kind) && !a->opts == !b->opts &&
	       a->opts_len == b->opts_len &&
	       (!a->opts || !memcmp(a->opts, b->opts, a->opts_len));
}

/* @q, written back as the loader writes a qdisc, reads as itself. */
static void qdisc_round_trip(struct hbm_nl *nl, const struct hbm_qdisc *q)
{
	struct hbm_qdiscs again = {};
	struct hbm_dump_ctx ctx = { .ifindex = IFINDEX, .qs = &again };
	struct hbm_nl nl2 = { .cb_data = &ctx };
	int err;

	sock.ack = true;
	err = hbm_nl_qdisc_create(nl, IFINDEX, q, NLM_F_CREATE | NLM_F_EXCL);
	sock.ack = false;
	/* Options up to 64 KiB are dumped; a request holds a page or less. */
	if (err == -EMSGSIZE && q->opts_len + 64 > MNL_SOCKET_BUFFER_SIZE)
		return;
	check(!err, "writing a dumped qdisc failed");
	check(mnl_cb_run(sock.sent, sock.sent_len, 0, 0, hbm_qdisc_cb,
			 &nl2) >= 0, "the loader's own message does not parse");
	check(again.n == 1, "the loader's message is not one qdisc");
	check(same_qdisc(q, &again.q[0]), "qdisc differs after writing");
	hbm_qdiscs_free(&again);
}

static void check_root(const struct hbm_root *r, const struct hbm_qdiscs *all)
{
	const struct hbm_qdisc *root = hbm_root_in(all);

	check(r->present == !!root, "root present but not found, or back");
	check(!r->attached || r->present, "attached without a root");
	check(r->children <= all->n, "more children than qdiscs");
	check(!r->q.opts && !r->q.opts_len, "the root owns options");
	if (root)
		check(r->q.parent == TC_H_ROOT && r->q.handle == root->handle &&
		      !strcmp(r->q.kind, root->kind), "another root");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hbm_qdiscs all = {};
	struct hbm_root r;
	struct hbm_nl nl;
	struct src s;
	int i, err;

	if (!size)
		return 0;
	memset(&sock, 0, sizeof(sock));
	if (data[0] & 1) {
		raw(data + 1, size - 1);
	} else {
		s = (struct src){ .p = data + 1, .n = size - 1 };
		build(&s);
	}
	/* Netlink's datagrams are whole 4-byte words. */
	for (i = 0; i < sock.n_rx; i++)
		sock.rx_len[i] = kernel_len(sock.rx[i], sock.rx_len[i] & ~3UL);
	parse_exact();

	nl_init(&nl);
	switch (data[0] >> 1 & 3) {
	case 0:
		err = hbm_root_get(&nl, IFINDEX, &r, &all);
		if (err)
			break;
		check_root(&r, &all);
		for (i = 0; i < all.n; i++) {
			nl.seq = SEQ0;
			qdisc_round_trip(&nl, &all.q[i]);
		}
		hbm_qdiscs_free(&all);
		break;
	case 1:
		err = hbm_nl_num_tx_queues(&nl, IFINDEX);
		check(err != 0, "no tx queues");
		if (err > 0)
			err = 0;
		break;
	case 2:
		err = hbm_nl_qdisc_del(&nl, IFINDEX, TC_H_ROOT, 0x10000,
				       HBM_KIND);
		break;
	default:
		err = hbm_nl_qdisc_new(&nl, IFINDEX, TC_H_ROOT, 0x10000,
				       HBM_KIND, NLM_F_CREATE | NLM_F_EXCL);
		break;
	}
	if (err)
		check(hbm_reason()[0] != '\0', "an error without a reason");
	nl_fini(&nl);
	return 0;
}
