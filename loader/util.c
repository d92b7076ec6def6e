// SPDX-License-Identifier: GPL-2.0
/* Error reporting, libbpf's log and small helpers shared by the commands. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * The tests' kill-anywhere hook: with BPF_HBM_TEST_KILL_AT=N in the
 * environment, the Nth step a command reaches (a point between two changes
 * to the kernel's state) kills it with SIGKILL, as a crash or the OOM
 * killer would there; the tests check that running the command again
 * converges. BPF_HBM_TEST_PAUSE_AT=N sleeps 2 s there instead, for a test
 * to send signals mid-command. Without them, a step costs two getenv().
 */
void hbm_step(const char *what)
{
	const char *kill_at = getenv("BPF_HBM_TEST_KILL_AT");
	const char *pause_at = getenv("BPF_HBM_TEST_PAUSE_AT");
	static unsigned long n;

	if (!kill_at && !pause_at)
		return;
	n++;
	if (pause_at && n == strtoul(pause_at, NULL, 10))
		sleep(2);
	if (!kill_at || n != strtoul(kill_at, NULL, 10))
		return;
	fprintf(stderr, HBM_PROG ": test: killed at step %lu (%s)\n", n, what);
	raise(SIGKILL);
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

static const char *const hbm_drop_names[HBM_DROP_MAX] = {
	[HBM_DROP_THRESH] = "threshold",
	[HBM_DROP_NONTCP] = "nontcp",
	[HBM_DROP_HORIZON] = "horizon",
	[HBM_DROP_LIMIT] = "limit",
	[HBM_DROP_FLOW_LIMIT] = "flow_limit",
	[HBM_DROP_NOMEM] = "nomem",
};

/* A drop reason's name, as show writes it (JSON keys too). */
const char *hbm_drop_name(int reason)
{
	return reason >= 0 && reason < HBM_DROP_MAX ? hbm_drop_names[reason] :
						      "?";
}

/*
 * The length of the well-formed UTF-8 sequence at @s, or 0: no overlong
 * forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF (RFC
 * 3629's table). A NUL ends a sequence early, so @s is never read past
 * its end.
 */
static size_t hbm_utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Set where a JSON value could not be built; hbm_json_write() reports it. */
static bool hbm_json_failed;

json_t *hbm_json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	json_t *v;
	char *buf;
	size_t n, len = 0;

	if (!s)
		return json_null();
	/* At most 3 bytes (U+FFFD) for each byte of @s. */
	buf = malloc(3 * strlen(s) + 1);
	if (!buf)
		return NULL;
	while (*p) {
		n = hbm_utf8_len(p);
		if (!n) {
			/* U+FFFD, REPLACEMENT CHARACTER */
			memcpy(buf + len, "\xef\xbf\xbd", 3);
			len += 3;
			p++;
			continue;
		}
		memcpy(buf + len, p, n);
		len += n;
		p += n;
	}
	v = json_stringn(buf, len);
	free(buf);
	return v;
}

json_t *hbm_json_u64(__u64 v)
{
	return json_integer(v > LLONG_MAX ? LLONG_MAX : (json_int_t)v);
}

json_t *hbm_json_num(const char *text)
{
	unsigned long long v;
	char *end;
	double d;

	if (!strchr(text, '.')) {
		if (*text < '0' || *text > '9')
			return NULL;
		/* Above 2^64 - 1: ULLONG_MAX, clamped too. */
		v = strtoull(text, &end, 10);
		return *end ? NULL : hbm_json_u64(v);
	}
	errno = 0;
	d = strtod(text, &end);
	if (errno || *end || end == text)
		return NULL;
	return json_real(d);	/* NULL for NaN or an infinity */
}

void hbm_json_set(json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, v))
		hbm_json_failed = true;
}

void hbm_json_push(json_t *arr, json_t *v)
{
	if (json_array_append_new(arr, v))
		hbm_json_failed = true;
}

json_t *hbm_json_drops(const __u64 *drops, __u64 total)
{
	json_t *o = json_object();
	int i;

	for (i = 0; i < HBM_DROP_MAX; i++)
		hbm_json_set(o, hbm_drop_name(i), hbm_json_u64(drops[i]));
	hbm_json_set(o, "total", hbm_json_u64(total));
	return o;
}

/*
 * 15 significant digits for a real: those of hbm_json_num()'s text come
 * back as they were (DBL_DIG), without the 17th's noise (0.3, not
 * 0.29999999999999999).
 */
#define HBM_JSON_FLAGS \
	(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

int hbm_json_write(FILE *f, json_t *root)
{
	bool failed = hbm_json_failed;
	int err;

	hbm_json_failed = false;
	if (!root || failed) {
		json_decref(root);
		return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
	}
	errno = 0;
	err = json_dumpf(root, f, HBM_JSON_FLAGS);
	json_decref(root);
	if (!err && fputc('\n', f) == EOF)
		err = -1;
	if (err && errno)
		return hbm_set_reason(-errno, "%s", strerror(errno));
	if (err)
		return hbm_set_reason(-EINVAL, "jansson could not encode it");
	return 0;
}

void hbm_text_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

void hbm_prom_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
			continue;
		}
		if (*p == '\n') {
			fputs("\\n", f);
			p++;
			continue;
		}
		n = hbm_utf8_len(p);
		if (!n) {
			fputs("\xef\xbf\xbd", f);	/* U+FFFD */
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}
