// SPDX-License-Identifier: GPL-2.0
/*
 * flood: small UDP packets as fast as one CPU sends them, spread over many
 * flows, to measure what a qdisc costs per packet.
 *
 *   flood -s SRC -d DST [-f FLOWS] [-l LEN] [-t SECONDS]
 *
 * Sends IPv4/UDP datagrams of LEN bytes of payload (default 18: 64-byte
 * frames) from SRC to DST's discard port for SECONDS, the flows told apart
 * by their source port (FLOWS of them, round robin). One raw socket writes
 * them all: it is unconnected, so qdiscs that tell flows by socket (fq)
 * fall back to the packet's hash, as every other arrangement does.
 * Prints "sent=N pps=N".
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
	unsigned long long sent = 0;
	int flows = 1, len = 18, secs = 3, opt, fd, i, n;
	unsigned int next = 0;
	double start, end;

	while ((opt = getopt(argc, argv, "s:d:f:l:t:")) != -1) {
		switch (opt) {
		case 's': inet_pton(AF_INET, optarg, &src); break;
		case 'd': inet_pton(AF_INET, optarg, &dst.sin_addr); break;
		case 'f': flows = atoi(optarg); break;
		case 'l': len = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!src.s_addr || !dst.sin_addr.s_addr || flows < 1 ||
	    flows > 40000 || len < 0 || len > FLOOD_MAX_LEN || secs < 1)
		goto usage;

	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "flood: couldn't open a raw socket: %s\n",
			strerror(errno));
		return 1;
	}
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
		udp->dest = htons(9);
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
	while (flood_now() < end) {
		for (i = 0; i < FLOOD_BATCH; i++) {
			struct iphdr *ip = (struct iphdr *)pkt[i];
			struct udphdr *udp = (struct udphdr *)(ip + 1);

			/*
			 * The kernel fills in the IP checksum; the UDP one is
			 * left 0 (none), as IPv4 allows.
			 */
			udp->source = htons(FLOOD_PORT + next);
			next = (next + 1) % flows;
		}
		n = sendmmsg(fd, msgs, FLOOD_BATCH, 0);
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
		"usage: flood -s SRC -d DST [-f FLOWS] [-l LEN] [-t SECONDS]\n");
	return 2;
}
