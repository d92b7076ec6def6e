// SPDX-License-Identifier: GPL-2.0
/*
 * flood: small UDP packets as fast as one CPU sends them, spread over many
 * flows, to measure what a qdisc costs per packet.
 *
 *   flood -s SRC -d DST [-f FLOWS] [-o FIRST] [-l LEN] [-t SECONDS] [-c COUNT]
 *
 * Sends IPv4/UDP datagrams of LEN bytes of payload (default 18: 64-byte
 * frames) from SRC to DST for SECONDS (or COUNT packets with -c), the
 * flows told apart by their ports (FLOWS of them, round robin: source ports
 * 20000-59999, then the next destination port from 9 up; -o starts at
 * flow FIRST instead of 0, for a set of flows apart from an earlier
 * run's). One raw socket writes them all: it is unconnected, so qdiscs
 * that tell flows by socket (fq) fall back to the packet's hash, as every
 * other arrangement does.
 * Its send buffer is made large enough that a qdisc holding many packets
 * does not stall it. Prints "sent=N pps=N".
 */
#define _GNU_SOURCE	/* sendmmsg */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOD_BATCH	64
#define FLOOD_PORT	20000	/* first source port */
#define FLOOD_PORTS	40000	/* source ports per destination port */
#define FLOOD_MAX_FLOWS	1000000
#define FLOOD_MAX_LEN	1400

static double flood_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char pkt[FLOOD_BATCH][sizeof(struct iphdr) +
				     sizeof(struct udphdr) + FLOOD_MAX_LEN];
	struct mmsghdr msgs[FLOOD_BATCH];
	struct iovec iov[FLOOD_BATCH];
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct in_addr src = {};
	unsigned long long sent = 0, count = 0;
	int sndbuf = 1 << 30;
	int flows = 1, first = 0, len = 18, secs = 3, opt, fd, i, n;
	unsigned int next = 0, f;
	double start, end;

	while ((opt = getopt(argc, argv, "s:d:f:o:l:t:c:")) != -1) {
		switch (opt) {
		case 's': inet_pton(AF_INET, optarg, &src); break;
		case 'd': inet_pton(AF_INET, optarg, &dst.sin_addr); break;
		case 'f': flows = atoi(optarg); break;
		case 'o': first = atoi(optarg); break;
		case 'l': len = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'c': count = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!src.s_addr || !dst.sin_addr.s_addr || flows < 1 ||
	    flows > FLOOD_MAX_FLOWS || first < 0 ||
	    first > FLOOD_MAX_FLOWS - flows || len < 0 ||
	    len > FLOOD_MAX_LEN || secs < 1)
		goto usage;

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "flood: couldn't open a raw socket: %s\n",
			strerror(errno));
		return 1;
	}
	/* Best effort: without it the flood is only slower to queue. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	for (i = 0; i < FLOOD_BATCH; i++) {
		struct iphdr *ip = (struct iphdr *)pkt[i];
		struct udphdr *udp = (struct udphdr *)(ip + 1);

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*udp) + len);
		ip->saddr = src.s_addr;
		ip->daddr = dst.sin_addr.s_addr;
		udp->len = htons(sizeof(*udp) + len);
		iov[i].iov_base = pkt[i];
		iov[i].iov_len = sizeof(*ip) + sizeof(*udp) + len;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_name = &dst;
		msgs[i].msg_hdr.msg_namelen = sizeof(dst);
	}

	start = flood_now();
	end = start + secs;
	while (count ? sent < count : flood_now() < end) {
		n = FLOOD_BATCH;
		if (count && count - sent < FLOOD_BATCH)
			n = count - sent;
		for (i = 0; i < n; i++) {
			struct iphdr *ip = (struct iphdr *)pkt[i];
			struct udphdr *udp = (struct udphdr *)(ip + 1);

			/*
			 * The kernel fills in the IP checksum; the UDP one is
			 * left 0 (none), as IPv4 allows.
			 */
			f = first + next;
			udp->source = htons(FLOOD_PORT + f % FLOOD_PORTS);
			udp->dest = htons(9 + f / FLOOD_PORTS);
			next = (next + 1) % flows;
		}
		n = sendmmsg(fd, msgs, n, 0);
		if (n < 0) {
			/* A full qdisc pushes back: count only what went. */
			if (errno == ENOBUFS || errno == EAGAIN)
				continue;
			fprintf(stderr, "flood: couldn't send: %s\n",
				strerror(errno));
			return 1;
		}
		sent += n;
	}
	printf("sent=%llu pps=%.0f\n", sent, sent / (flood_now() - start));
	return 0;
usage:
	fprintf(stderr,
		"usage: flood -s SRC -d DST [-f FLOWS] [-o FIRST] [-l LEN] [-t SECONDS] [-c COUNT]\n");
	return 2;
}
