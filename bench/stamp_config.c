// SPDX-License-Identifier: GPL-2.0
/*
 * stamp_config PIN RATE_BPS BURST_NS: configure the fq+edt arrangement,
 * writing bench/edt_stamp.bpf.c's state (its map hbm_stamp_state, pinned
 * at PIN): HBM's defaults from include/hbm.h with the rate and burst
 * given, a fresh virtual queue and zero counters. It is compiled against
 * the program's own struct and checks the map's value size against it, so
 * a change of layout fails here instead of writing the wrong bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "hbm_stamp.h"

static int hbm_sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static __u64 hbm_ptr(const void *p)
{
	return (__u64)(uintptr_t)p;
}

int main(int argc, char **argv)
{
	struct hbm_stamp_state st = { .cfg = HBM_CONFIG_DEFAULT };
	struct bpf_map_info info = {};
	union bpf_attr a;
	__u32 key = 0;
	char *end;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: stamp_config PIN RATE_BPS BURST_NS\n");
		return 2;
	}
	st.cfg.rate_bps = strtoull(argv[2], &end, 10);
	if (*end || st.cfg.rate_bps < HBM_MIN_RATE_BPS) {
		fprintf(stderr, "stamp_config: invalid rate '%s'\n", argv[2]);
		return 2;
	}
	st.cfg.burst_ns = strtoull(argv[3], &end, 10);
	if (*end || !st.cfg.burst_ns) {
		fprintf(stderr, "stamp_config: invalid burst '%s'\n", argv[3]);
		return 2;
	}

	memset(&a, 0, sizeof(a));
	a.pathname = hbm_ptr(argv[1]);
	fd = hbm_sys_bpf(BPF_OBJ_GET, &a);
	if (fd < 0) {
		fprintf(stderr, "stamp_config: couldn't open %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = hbm_ptr(&info);
	if (hbm_sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) ||
	    info.value_size != sizeof(st) || info.key_size != sizeof(key)) {
		fprintf(stderr, "stamp_config: %s is not a map of struct hbm_stamp_state (value %u bytes, want %zu)\n",
			argv[1], info.value_size, sizeof(st));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = hbm_ptr(&key);
	a.value = hbm_ptr(&st);
	a.flags = BPF_ANY;
	if (hbm_sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) {
		fprintf(stderr, "stamp_config: couldn't write %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
