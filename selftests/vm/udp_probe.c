// SPDX-License-Identifier: GPL-2.0
/*
 * udp_probe: the UDP traffic the VM tests need and iperf3 cannot make.
 *
 *   udp_probe send -d ADDR -p PORT [-S SPORT] [-c COUNT] [-s SIZE]
 *                  [-t TXTIME_NS] [-k mono|tai|realtime] [-B SNDBUF]
 *                  [-w HOLD_S] [-R]
 *	Send COUNT datagrams of SIZE payload bytes from port SPORT (default
 *	ephemeral) as fast as the socket takes them. With -t, each carries an
 *	SO_TXTIME departure of now + TXTIME_NS on the clock -k names
 *	(default CLOCK_MONOTONIC). Prints the CLOCK_REALTIME time in ns just
 *	before the first send and how many sends succeeded. -w keeps the
 *	socket open HOLD_S seconds after sending (to inspect its memory).
 *	-R sends from a raw socket of protocol IPPROTO_TCP instead (a TCP
 *	header from SPORT to PORT, then the payload): TCP on the wire, but
 *	not a TCP socket.
 *
 *   udp_probe recv -p PORT [-c COUNT] [-T TIMEOUT_MS]
 *	Print the kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME)
 *	in ns of each datagram, one a line, until COUNT arrived or TIMEOUT_MS
 *	passed without one. Kernel stamps keep the receiver's wake-up latency
 *	out of the measurement.
 *
 * Both ends run in network namespaces of one VM: the same clocks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

static int hbm_usage(void)
{
	fprintf(stderr,
		"usage: udp_probe send -d ADDR -p PORT [-S SPORT] [-c COUNT] [-s SIZE] [-t TXTIME_NS] [-k mono|tai|realtime] [-B SNDBUF] [-w HOLD_S] [-R]\n"
		"       udp_probe recv -p PORT [-c COUNT] [-T TIMEOUT_MS]\n");
	return 2;
}

static int hbm_send(int argc, char **argv)
{
	long count = 1, size = 64, hold = 0, sndbuf = 0, sent = 0, i;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct sockaddr_in src = { .sin_family = AF_INET };
	clockid_t clk = CLOCK_MONOTONIC;
	long long txtime = -1;
	uint64_t first = 0;
	char buf[65536] = {};
	int fd, opt, raw = 0;

	while ((opt = getopt(argc, argv, "d:p:S:c:s:t:k:B:w:R")) != -1) {
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
		case 't':
			txtime = atoll(optarg);
			break;
		case 'k':
			if (!strcmp(optarg, "mono"))
				clk = CLOCK_MONOTONIC;
			else if (!strcmp(optarg, "tai"))
				clk = CLOCK_TAI;
			else if (!strcmp(optarg, "realtime"))
				clk = CLOCK_REALTIME;
			else
				return hbm_usage();
			break;
		case 'R':
			raw = 1;
			break;
		case 'B':
			sndbuf = atol(optarg);
			break;
		case 'w':
			hold = atol(optarg);
			break;
		default:
			return hbm_usage();
		}
	}
	if (!dst.sin_port || size < 0 ||
	    size + sizeof(struct tcphdr) > sizeof(buf))
		return hbm_usage();

	if (raw) {
		struct tcphdr *th = (struct tcphdr *)buf;

		/* A data segment, as an established connection would send. */
		th->source = src.sin_port ? src.sin_port : htons(40000);
		th->dest = dst.sin_port;
		th->doff = sizeof(*th) / 4;
		th->ack = 1;
		th->psh = 1;
		th->window = htons(65535);
		size += sizeof(*th);
		dst.sin_port = 0;	/* a raw socket's port is its protocol */
		fd = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
	} else {
		fd = socket(AF_INET, SOCK_DGRAM, 0);
	}
	if (fd < 0) {
		perror("udp_probe: couldn't create socket");
		return 1;
	}
	if (!raw && src.sin_port &&
	    bind(fd, (struct sockaddr *)&src, sizeof(src))) {
		perror("udp_probe: couldn't bind the source port");
		return 1;
	}
	if (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
				 sizeof(sndbuf))) {
		perror("udp_probe: couldn't set SO_SNDBUFFORCE");
		return 1;
	}
	if (txtime >= 0) {
		struct sock_txtime st = { .clockid = clk };

		if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st))) {
			perror("udp_probe: couldn't set SO_TXTIME");
			return 1;
		}
	}

	for (i = 0; i < count; i++) {
		char control[HBM_TXTIME_CONTROL] = {};
		struct iovec iov = { buf, size };
		struct msghdr msg = {
			.msg_name = &dst, .msg_namelen = sizeof(dst),
			.msg_iov = &iov, .msg_iovlen = 1,
		};
		uint64_t now;

		/*
		 * The reference is read before the clock the txtime is
		 * based on: read after, a preemption between the two (TCG)
		 * made a datagram sent on time look early by as much.
		 */
		if (!first)
			first = hbm_now_ns(CLOCK_REALTIME);
		now = hbm_now_ns(clk);
		if (txtime >= 0)
			hbm_msg_txtime(&msg, control, now + txtime);
		if (sendmsg(fd, &msg, 0) >= 0)
			sent++;
		else if (errno != ENOBUFS)
			perror("udp_probe: couldn't send");
	}
	printf("first_send_ns %llu\nsent %ld\n", (unsigned long long)first,
	       sent);
	fflush(stdout);
	if (hold)
		sleep(hold);
	close(fd);
	return sent ? 0 : 1;
}

static int hbm_recv(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	long count = 1, timeout = 2000, got = 0;
	char buf[65536];
	int fd, opt, on = 1;

	while ((opt = getopt(argc, argv, "p:c:T:")) != -1) {
		switch (opt) {
		case 'p':
			addr.sin_port = htons(atoi(optarg));
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
	if (!addr.sin_port)
		return hbm_usage();
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on))) {
		perror("udp_probe: couldn't bind");
		return 1;
	}
	/* Tell a waiting test we are bound. */
	fprintf(stderr, "ready\n");
	while (got < count) {
		char control[CMSG_SPACE(sizeof(struct timespec))];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, timeout) <= 0)
			break;
		if (recvmsg(fd, &msg, 0) < 0)
			break;
		printf("%llu\n", (unsigned long long)hbm_msg_stamp(&msg));
		fflush(stdout);
		got++;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return hbm_usage();
	if (!strcmp(argv[1], "send"))
		return hbm_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return hbm_recv(argc - 1, argv + 1);
	return hbm_usage();
}
