// SPDX-License-Identifier: GPL-2.0
/* Error reporting, libbpf's log and small helpers shared by the commands. */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/libbpf.h>

#include "util.h"

static char hbm_reason_buf[512];

/*
 * Formatted apart first, then copied: a new reason may quote the one
 * before it (hbm_set_reason(e, "tx queue %d: %s", i, hbm_reason())).
 */
int hbm_set_reason(int err, const char *fmt, ...)
{
	char buf[sizeof(hbm_reason_buf)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(hbm_reason_buf, buf, sizeof(buf));
	return err < 0 ? err : -EINVAL;
}

const char *hbm_reason(void)
{
	return hbm_reason_buf[0] ? hbm_reason_buf : "unknown error";
}

void hbm_fail(const char *verb, const char *obj)
{
	fprintf(stderr, HBM_PROG ": couldn't %s %s: %s\n", verb, obj,
		hbm_reason());
}

void hbm_error(const char *verb, const char *obj, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, HBM_PROG ": couldn't %s %s: ", verb, obj);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void hbm_note(const char *fmt, ...)
{
	va_list ap;

	fputs(HBM_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int hbm_libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			    va_list ap)
{
	return 0;
}

static int hbm_libbpf_verbose(enum libbpf_print_level level, const char *fmt,
			      va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

/*
 * libbpf's messages go to stderr only with -v: without it a failure is
 * reported in one line, which says to rerun with -v where the log helps.
 */
void hbm_set_verbose(bool verbose)
{
	libbpf_set_print(verbose ? hbm_libbpf_verbose : hbm_libbpf_quiet);
}

/* What to add to strerror() for a permission error, or "". */
const char *hbm_perm_hint(int err)
{
	if (err == -EPERM || err == -EACCES)
		return " (need CAP_BPF and CAP_NET_ADMIN)";
	return "";
}

/* The inode of the current network namespace: the qdisc's netns.ns.inum. */
int hbm_own_netns(__u32 *netns)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return hbm_set_reason(-errno, "couldn't read /proc/self/ns/net: %s",
				      strerror(errno));
	*netns = (__u32)st.st_ino;
	return 0;
}

/* "eth0"; "ifindex 7 (gone)"; "ifindex 7 (netns 4026532281)". */
void hbm_dev_label(char *buf, size_t len, const struct hbm_dev_key *key,
		   __u32 own_netns)
{
	char name[IF_NAMESIZE];

	if (key->netns != own_netns)
		snprintf(buf, len, "ifindex %u (netns %u)", key->ifindex,
			 key->netns);
	else if (if_indextoname(key->ifindex, name))
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "ifindex %u (gone)", key->ifindex);
}
