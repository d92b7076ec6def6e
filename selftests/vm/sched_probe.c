// SPDX-License-Identifier: GPL-2.0
/*
 * sched_probe: UDP flows whose order of service the scheduler tests read.
 *
 *   sched_probe send -d ADDR -p PORT -S SPORT [-c COUNT] [-s SIZE]
 *                    [-A TXTIME_NS [-i STEP_NS] [-j] [-r]] [-W START_NS]
 *                    [-g GAP_NS] [-B SNDBUF]
 *	One flow (source port SPORT): COUNT datagrams of SIZE payload bytes.
 *	With -A each carries an SO_TXTIME departure on CLOCK_MONOTONIC:
 *	TXTIME_NS plus i * STEP_NS for the i-th datagram, or with -j plus
 *	((i * 37) % COUNT) * STEP_NS, out of order within the flow; with -r
 *	TXTIME_NS is relative to each datagram's send. -W waits
 *	until CLOCK_MONOTONIC reaches START_NS before the first send, -g
 *	GAP_NS between sends. Each datagram carries its flow, sequence
 *	number, send time and departure time. Prints "sent N".
 *
 *   sched_probe recv -p PORT -c COUNT [-T TIMEOUT_MS]
 *	One line per datagram, in arrival order: "RX SPORT SEQ SENT TXTIME
 *	LEN", times in ns on CLOCK_MONOTONIC. RX is the kernel's receive
 *	stamp (SO_TIMESTAMPNS, CLOCK_REALTIME) moved to CLOCK_MONOTONIC by
 *	the two clocks' offset, read at start; TXTIME is 0 for none. Stops
 *	after COUNT datagrams or TIMEOUT_MS (default 3000) without one.
 *
 *   sched_probe sniff -i IFNAME -p PORT -c COUNT [-T TIMEOUT_MS]
 *	The same lines for the datagrams to PORT that IFNAME transmits, in
 *	the order it transmits them (a packet socket sees each as the
 *	device takes it from the qdisc), RX being the moment it did: the
 *	qdisc's order of service and release times, which a receiver's
 *	backlog would blur.
 *
 *   sched_probe now
 *	Print CLOCK_MONOTONIC in ns (to compute TXTIME_NS and START_NS).
 *
 * Both ends run in network namespaces of one VM: the same clocks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define HBM_PROBE_MAGIC	0x68626d73	/* "hbms" */

struct hbm_probe_hdr {
	uint32_t magic;
	uint32_t seq;
	uint64_t sent_ns;
	uint64_t txtime_ns;
};

static int hbm_usage(void)
{
	fprintf(stderr,
		"usage: sched_probe send -d ADDR -p PORT -S SPORT [-c COUNT] [-s SIZE] [-A TXTIME_NS [-i STEP_NS] [-j] [-r]] [-W START_NS] [-g GAP_NS] [-B SNDBUF]\n"
		"       sched_probe recv -p PORT -c COUNT [-T TIMEOUT_MS]\n"
		"       sched_probe sniff -i IFNAME -p PORT -c COUNT [-T TIMEOUT_MS]\n"
		"       sched_probe now\n");
	return 2;
}

static void hbm_sleep_until(uint64_t at_ns)
{
	struct timespec ts = {
		.tv_sec = at_ns / 1000000000ULL,
		.tv_nsec = at_ns % 1000000000ULL,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* The datagram's departure: -A's base, stepped in or out of order. */
static uint64_t hbm_txtime_of(uint64_t base, uint64_t step, long i,
			      long count, int jumble)
{
	if (!base)
		return 0;
	return base + (uint64_t)(jumble ? (i * 37) % count : i) * step;
}

static int hbm_send(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct sockaddr_in src = { .sin_family = AF_INET };
	uint64_t base = 0, step = 0, start = 0, gap = 0;
	long count = 1, size = 1000, sndbuf = 0, sent = 0, i;
	static char buf[65536];
	int fd, opt, jumble = 0, rel = 0;

	while ((opt = getopt(argc, argv, "d:p:S:c:s:A:i:jrW:g:B:")) != -1) {
		switch (opt) {
		case 'd':
			if (inet_pton(AF_INET, optarg, &dst.sin_addr) != 1)
				return hbm_usage();
			break;
		case 'p':
			dst.sin_port = htons(atoi(optarg));
			break;
		case 'S':
			src.sin_port = htons(atoi(optarg));
			break;
		case 'c':
			count = atol(optarg);
			break;
		case 's':
			size = atol(optarg);
			break;
		case 'A':
			base = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			step = strtoull(optarg, NULL, 0);
			break;
		case 'j':
			jumble = 1;
			break;
		case 'r':
			rel = 1;
			break;
		case 'W':
			start = strtoull(optarg, NULL, 0);
			break;
		case 'g':
			gap = strtoull(optarg, NULL, 0);
			break;
		case 'B':
			sndbuf = atol(optarg);
			break;
		default:
			return hbm_usage();
		}
	}
	if (!dst.sin_port || !src.sin_port || count < 1 ||
	    size < (long)sizeof(struct hbm_probe_hdr) ||
	    size > (long)sizeof(buf))
		return hbm_usage();

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src))) {
		perror("sched_probe: couldn't bind the source port");
		return 1;
	}
	if (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
				 sizeof(sndbuf))) {
		perror("sched_probe: couldn't set SO_SNDBUFFORCE");
		return 1;
	}
	if (base) {
		struct sock_txtime st = { .clockid = CLOCK_MONOTONIC };

		if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st))) {
			perror("sched_probe: couldn't set SO_TXTIME");
			return 1;
		}
	}
	if (start)
		hbm_sleep_until(start);

	for (i = 0; i < count; i++) {
		char control[HBM_TXTIME_CONTROL] = {};
		struct hbm_probe_hdr *h = (struct hbm_probe_hdr *)buf;
		struct iovec iov = { buf, size };
		struct msghdr msg = {
			.msg_name = &dst, .msg_namelen = sizeof(dst),
			.msg_iov = &iov, .msg_iovlen = 1,
		};

		if (i && gap)
			hbm_sleep_until(hbm_now_ns(CLOCK_MONOTONIC) + gap);
		h->magic = HBM_PROBE_MAGIC;
		h->seq = i;
		h->sent_ns = hbm_now_ns(CLOCK_MONOTONIC);
		h->txtime_ns = hbm_txtime_of(base, step, i, count, jumble);
		if (h->txtime_ns && rel)
			h->txtime_ns += h->sent_ns;
		if (h->txtime_ns)
			hbm_msg_txtime(&msg, control, h->txtime_ns);
		if (sendmsg(fd, &msg, 0) >= 0)
			sent++;
		else
			perror("sched_probe: couldn't send");
	}
	printf("sent %ld\n", sent);
	close(fd);
	return sent == count ? 0 : 1;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few brackets. */
static int64_t hbm_rt_offset(void)
{
	int64_t best = 0, off;
	uint64_t a, rt, b, span = UINT64_MAX;
	int k;

	for (k = 0; k < 16; k++) {
		a = hbm_now_ns(CLOCK_MONOTONIC);
		rt = hbm_now_ns(CLOCK_REALTIME);
		b = hbm_now_ns(CLOCK_MONOTONIC);
		off = (int64_t)(rt - (a + (b - a) / 2));
		if (b - a < span) {
			span = b - a;
			best = off;
		}
	}
	return best;
}

/*
 * A probe datagram as a packet socket sees it leave: an IPv4 packet to
 * UDP @port. Sets *@sport and returns the payload, or NULL.
 */
static const char *hbm_sniffed(const char *pkt, ssize_t n, uint16_t port,
			       uint16_t *sport, ssize_t *len)
{
	const struct iphdr *ip = (const struct iphdr *)pkt;
	const struct udphdr *uh;
	size_t hl;

	if (n < (ssize_t)sizeof(*ip) || ip->version != 4 ||
	    ip->protocol != IPPROTO_UDP)
		return NULL;
	hl = ip->ihl * 4;
	if (n < (ssize_t)(hl + sizeof(*uh)))
		return NULL;
	uh = (const struct udphdr *)(pkt + hl);
	if (ntohs(uh->dest) != port)
		return NULL;
	*sport = ntohs(uh->source);
	*len = n - hl - sizeof(*uh);
	return pkt + hl + sizeof(*uh);
}

/*
 * Print a line per probe datagram on @fd until @count or @timeout ms
 * without one: a UDP socket's (@port 0), or a packet socket's, whose
 * outgoing packets to UDP @port are read.
 */
static int hbm_collect(int fd, uint16_t port, long count, long timeout)
{
	static char buf[65536];
	int64_t off = hbm_rt_offset();
	long got = 0;

	fprintf(stderr, "ready\n");
	while (got < count) {
		char control[CMSG_SPACE(sizeof(struct timespec))];
		struct sockaddr_storage from;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct hbm_probe_hdr h;
		const char *data = buf;
		uint16_t sport;
		uint64_t at;
		ssize_t n;

		if (poll(&p, 1, timeout) <= 0)
			break;
		n = recvmsg(fd, &msg, 0);
		if (n < 0)
			break;
		if (port) {
			struct sockaddr_ll *ll = (struct sockaddr_ll *)&from;

			if (ll->sll_pkttype != PACKET_OUTGOING ||
			    ll->sll_protocol != htons(ETH_P_IP))
				continue;
			data = hbm_sniffed(buf, n, port, &sport, &n);
			if (!data)
				continue;
		} else {
			sport = ntohs(((struct sockaddr_in *)&from)->sin_port);
		}
		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, data, sizeof(h));
		if (h.magic != HBM_PROBE_MAGIC)
			continue;
		at = hbm_msg_stamp(&msg);
		printf("%llu %u %u %llu %llu %zd\n",
		       (unsigned long long)(at - off), sport, h.seq,
		       (unsigned long long)h.sent_ns,
		       (unsigned long long)h.txtime_ns, n);
		got++;
	}
	fflush(stdout);
	close(fd);
	return 0;
}

static int hbm_recv(int argc, char **argv, bool sniff)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
	};
	long count = 1, timeout = 3000;
	int fd, opt, on = 1, buf = 32 << 20;
	uint16_t port = 0;

	while ((opt = getopt(argc, argv, "i:p:c:T:")) != -1) {
		switch (opt) {
		case 'i':
			ll.sll_ifindex = if_nametoindex(optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'c':
			count = atol(optarg);
			break;
		case 'T':
			timeout = atol(optarg);
			break;
		default:
			return hbm_usage();
		}
	}
	if (!port || (sniff && !ll.sll_ifindex))
		return hbm_usage();
	if (sniff) {
		/* Only ETH_P_ALL taps see what a device transmits. */
		fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
		if (fd < 0 || bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
			perror("sched_probe: couldn't bind a packet socket");
			return 1;
		}
	} else {
		addr.sin_port = htons(port);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
			perror("sched_probe: couldn't bind");
			return 1;
		}
		port = 0;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf))) {
		perror("sched_probe: couldn't set SO_TIMESTAMPNS, SO_RCVBUFFORCE");
		return 1;
	}
	return hbm_collect(fd, port, count, timeout);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return hbm_usage();
	if (!strcmp(argv[1], "send"))
		return hbm_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return hbm_recv(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "sniff"))
		return hbm_recv(argc - 1, argv + 1, true);
	if (!strcmp(argv[1], "now")) {
		printf("%llu\n",
		       (unsigned long long)hbm_now_ns(CLOCK_MONOTONIC));
		return 0;
	}
	return hbm_usage();
}
