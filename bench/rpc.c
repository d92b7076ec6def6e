// SPDX-License-Identifier: GPL-2.0
/*
 * rpc: back-to-back RPCs over TCP, the workload of HBM's result tables.
 *
 *   rpc server -p PORT
 *	Accept connections; on each, read requests (an 8-byte length, then
 *	that many bytes) and answer each with one byte once all of it has
 *	arrived. Runs until killed.
 *
 *   rpc client -d ADDR -p PORT -s SIZE [-t SECONDS] [-c CONGESTION]
 *	One connection sending RPCs of SIZE bytes back to back for SECONDS:
 *	the payload flows from client to server, through the egress being
 *	shaped, as in HBM's tests where one server sends to another. Prints
 *	one line of key=value pairs: rpcs, goodput in Mbit/s, per-RPC
 *	latency percentiles (p50, p90, p99 in us), mean srtt in us and
 *	retransmits from TCP_INFO.
 *
 * A latency is the time from the first byte written to the one-byte
 * answer read: the RPC's completion time as the sender sees it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RPC_MAX_SAMPLES	(1 << 20)

static uint64_t rpc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int rpc_full(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;

	while (len) {
		ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static void rpc_serve(int fd)
{
	static char buf[1 << 16];
	uint64_t len;
	char ack = 1;

	while (!rpc_full(fd, &len, sizeof(len), 0)) {
		while (len) {
			size_t chunk = len < sizeof(buf) ? len : sizeof(buf);

			if (rpc_full(fd, buf, chunk, 0))
				return;
			len -= chunk;
		}
		if (rpc_full(fd, &ack, 1, 1))
			return;
	}
}

static int rpc_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;

	signal(SIGCHLD, SIG_IGN);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 128)) {
		perror("rpc: couldn't listen");
		return 1;
	}
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		if (!fork()) {
			close(fd);
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			rpc_serve(c);
			_exit(0);
		}
		close(c);
	}
}

static int rpc_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int rpc_client(const char *addr, int port, uint64_t size, int secs,
		      const char *cc)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	static char buf[1 << 16];
	uint64_t start, end, srtt_sum = 0, bytes = 0;
	uint32_t *lat, n = 0, srtt_n = 0;
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	int fd, one = 1;
	char ack;

	lat = calloc(RPC_MAX_SAMPLES, sizeof(*lat));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (!lat || fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		fprintf(stderr, "rpc: bad address or no memory\n");
		return 2;
	}
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc))) {
		perror("rpc: couldn't set TCP_CONGESTION");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("rpc: couldn't connect");
		return 1;
	}
	start = rpc_now_us();
	end = start + (uint64_t)secs * 1000000;
	while (rpc_now_us() < end && n < RPC_MAX_SAMPLES) {
		uint64_t t0 = rpc_now_us(), left = size;

		if (rpc_full(fd, &size, sizeof(size), 1))
			break;
		while (left) {
			size_t chunk = left < sizeof(buf) ? left : sizeof(buf);

			if (rpc_full(fd, buf, chunk, 1))
				goto out;
			left -= chunk;
		}
		if (rpc_full(fd, &ack, 1, 0))
			break;
		lat[n++] = rpc_now_us() - t0;
		bytes += size;
		if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl)) {
			srtt_sum += ti.tcpi_rtt;
			srtt_n++;
		}
	}
out:
	end = rpc_now_us();
	tl = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
	close(fd);
	if (!n) {
		fprintf(stderr, "rpc: no RPC completed\n");
		return 1;
	}
	qsort(lat, n, sizeof(*lat), rpc_cmp);
	printf("size=%llu rpcs=%u mbps=%.2f p50_us=%u p90_us=%u p99_us=%u "
	       "srtt_us=%llu retrans=%u\n", (unsigned long long)size, n,
	       bytes * 8.0 / (end - start), lat[n / 2], lat[n * 9 / 10],
	       lat[n * 99 / 100],
	       (unsigned long long)(srtt_n ? srtt_sum / srtt_n : 0),
	       ti.tcpi_total_retrans);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *cc = NULL;
	int port = 0, secs = 5, opt;
	uint64_t size = 10000;

	if (argc < 2)
		goto usage;
	while ((opt = getopt(argc - 1, argv + 1, "d:p:s:t:c:")) != -1) {
		switch (opt) {
		case 'd': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 't': secs = atoi(optarg); break;
		case 'c': cc = optarg; break;
		default: goto usage;
		}
	}
	if (!port)
		goto usage;
	if (!strcmp(argv[1], "server"))
		return rpc_server(port);
	if (!strcmp(argv[1], "client") && addr && size)
		return rpc_client(addr, port, size, secs, cc);
usage:
	fprintf(stderr, "usage: rpc server -p PORT\n"
		"       rpc client -d ADDR -p PORT -s SIZE [-t SECONDS] [-c CC]\n");
	return 2;
}
