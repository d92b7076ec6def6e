/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the VM tests' UDP probes (udp_probe.c, sched_probe.c) share: the
 * clocks, an SO_TXTIME departure on a message, and the kernel's receive
 * stamp of one.
 */
#ifndef HBM_PROBE_H
#define HBM_PROBE_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifndef SO_TXTIME
#define SO_TXTIME 61
#define SCM_TXTIME SO_TXTIME
#endif

/* Room for hbm_msg_txtime's control message. */
#define HBM_TXTIME_CONTROL	CMSG_SPACE(sizeof(uint64_t))

static inline uint64_t hbm_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Ask for departure @at (the socket's SO_TXTIME clock), in @control. */
static inline void hbm_msg_txtime(struct msghdr *msg, char *control,
				  uint64_t at)
{
	struct cmsghdr *cm;

	msg->msg_control = control;
	msg->msg_controllen = HBM_TXTIME_CONTROL;
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_TXTIME;
	cm->cmsg_len = CMSG_LEN(sizeof(at));
	memcpy(CMSG_DATA(cm), &at, sizeof(at));
}

/* A received message's kernel stamp (SO_TIMESTAMPNS, CLOCK_REALTIME), or now. */
static inline uint64_t hbm_msg_stamp(struct msghdr *msg)
{
	struct cmsghdr *cm;
	struct timespec ts;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
		return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	}
	return hbm_now_ns(CLOCK_REALTIME);
}

#endif /* HBM_PROBE_H */
