// SPDX-License-Identifier: GPL-2.0
/*
 * show: configuration and counters of each device with bpf_hbm attached
 * (each entry of hbm_dev_rates) and of its classes (class.c's), as a
 * key/value block, as JSON or in Prometheus's text format (metrics.c);
 * --watch: their rates over each interval, a line each (metrics.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_ether.h>

#include "hbm_edt.h"
#include "cmds.h"
#include "units.h"

static __u32 hbm_own;	/* our netns, for sorting and names */
/*
 * What an unconfigured device runs with (tc qdisc add without bpf-hbm
 * attach): the loaded object's load-time defaults (load --rate), read
 * once per round; whether they could be read.
 */
static struct hbm_config hbm_load_defaults;
static bool hbm_load_defaults_ok;

/*
 * The lateness under which a fraction @q of the watchdog releases left:
 * the upper bound of the histogram bucket the quantile falls in (within a
 * factor of 2), in ns; the last bucket has none and reports its lower
 * bound. 0 when none was measured.
 */
static __u64 hbm_late_quantile(const struct hbm_dev_rate *dr, double q)
{
	__u64 n = hbm_late_count(dr), acc = 0;
	int b;

	if (!n)
		return 0;
	for (b = 0; b < HBM_LATE_BUCKETS - 1; b++) {
		acc += dr->late_hist[b];
		if (acc >= q * n)
			break;
	}
	if (b == HBM_LATE_BUCKETS - 1)
		return (1ULL << (b - 1)) * HBM_NSEC_PER_USEC;
	return (1ULL << b) * HBM_NSEC_PER_USEC;
}

/*
 * What sch_fq's psched_mtu() gives for the device, the unit of an auto
 * quantum: its MTU plus its link-layer header (14 bytes on Ethernet and
 * loopback, taken as 0 elsewhere). Read through ioctls, which answer for
 * our netns as the ifindex does (sysfs may be another's); 0 for a device
 * in another netns or one that cannot be read: show then says "auto".
 */
static __u32 hbm_psched_mtu(const struct hbm_dev_key *key)
{
	struct ifreq ifr = {};
	__u32 mtu = 0;
	int fd;

	if (key->netns != hbm_own ||
	    !if_indextoname(key->ifindex, ifr.ifr_name))
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (!ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0) {
		mtu = ifr.ifr_mtu;	/* ifr is a union: read before reuse */
		if (!ioctl(fd, SIOCGIFHWADDR, &ifr) &&
		    (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER ||
		     ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK))
			mtu += ETH_HLEN;
	}
	close(fd);
	return mtu;
}

/* The bytes the device's quantum stands for; 0: auto, MTU unknown. */
static __u32 hbm_quantum_now(const struct hbm_dev_stats *st)
{
	return hbm_quantum_bytes(st->cfg.quantum, st->psched_mtu,
				 HBM_DEF_QUANTUM_MTUS);
}

static __u32 hbm_initial_quantum_now(const struct hbm_dev_stats *st)
{
	return hbm_quantum_bytes(st->cfg.initial_quantum, st->psched_mtu,
				 HBM_DEF_INITIAL_QUANTUM_MTUS);
}

static int hbm_stats_cmp(const void *a, const void *b)
{
	const struct hbm_dev_key *x = &((const struct hbm_dev_stats *)a)->key;
	const struct hbm_dev_key *y = &((const struct hbm_dev_stats *)b)->key;

	/* Ours first, then by netns and ifindex. */
	if ((x->netns == hbm_own) != (y->netns == hbm_own))
		return x->netns == hbm_own ? -1 : 1;
	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return 0;
}

struct hbm_sum_ctx {
	struct hbm_dev_stats *st;
	int n;
};

static int hbm_sum_one(const struct hbm_inst_info *info, void *ctx)
{
	struct hbm_sum_ctx *c = ctx;
	int i;

	for (i = 0; i < c->n; i++) {
		if (c->st[i].key.ifindex != info->key.ifindex ||
		    c->st[i].key.netns != info->key.netns)
			continue;
		c->st[i].qlen += info->qlen;
		c->st[i].flows += info->flows;
		c->st[i].idle_flows += info->idle_flows;
		c->st[i].backlog += info->backlog;
		c->st[i].dr.enqueued += info->enqueued;
		c->st[i].dr.packets += info->packets;
		c->st[i].dr.bytes += info->bytes;
		c->st[i].dr.delayed += info->delayed;
		c->st[i].dr.fastpath += info->fastpath;
		break;
	}
	return 0;
}

/* Add each instance's queue to its device's totals. */
static int hbm_sum_instances(const struct hbm_maps *maps,
			     struct hbm_dev_stats *st, int n)
{
	struct hbm_sum_ctx c = { st, n };

	return hbm_inst_each(maps->instances, hbm_sum_one, &c);
}

static int hbm_lookup_dev_rate(int fd, const struct hbm_dev_key *key,
			    struct hbm_dev_rate *dr)
{
	int err;

	/* Under the rate state's lock: a consistent virtual queue. */
	err = bpf_map_lookup_elem_flags(fd, key, dr, BPF_F_LOCK);
	if (err == -EINVAL)
		err = bpf_map_lookup_elem(fd, key, dr);
	return err;
}

/*
 * The devices to show: @only, or every device in hbm_dev_rates. *n is 0 if
 * @only has no rate state (not attached).
 */
static int hbm_collect(const struct hbm_maps *maps,
		       const struct hbm_dev_key *only,
		       struct hbm_dev_stats **out, int *n)
{
	struct hbm_dev_key *keys = NULL;
	struct hbm_dev_stats *st = NULL;
	int i, cnt = 0, nkeys = 1, err;
	bool defaults_read = false;

	if (!only) {
		err = hbm_dev_keys(maps->rates, &keys, &nkeys);
		if (err)
			return err;
	}
	st = calloc(nkeys ? nkeys : 1, sizeof(*st));
	if (!st) {
		err = hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < nkeys; i++) {
		struct hbm_dev_stats *s = &st[cnt];

		s->key = only ? *only : keys[i];
		err = hbm_lookup_dev_rate(maps->rates, &s->key, &s->dr);
		if (err == -ENOENT)
			continue;	/* detached meanwhile */
		if (err) {
			err = hbm_set_reason(err, "couldn't read hbm_dev_rates: %s",
					     strerror(-err));
			goto out;
		}
		s->configured = !bpf_map_lookup_elem(maps->config, &s->key,
						     &s->cfg);
		if (!s->configured && !defaults_read) {
			hbm_load_defaults_ok =
				!hbm_bpf_defaults(&hbm_load_defaults);
			defaults_read = true;
		}
		if (!s->configured)
			s->cfg = hbm_load_defaults;
		s->marker = hbm_marker_seen(&s->key);
		if (s->key.netns != hbm_own ||
		    !if_indextoname(s->key.ifindex, s->name))
			s->name[0] = '\0';
		s->psched_mtu = hbm_psched_mtu(&s->key);
		cnt++;
	}
	err = hbm_sum_instances(maps, st, cnt);
	if (err)
		goto out;
	qsort(st, cnt, sizeof(*st), hbm_stats_cmp);
	*out = st;
	*n = cnt;
	st = NULL;
out:
	free(st);
	free(keys);
	return err;
}

/* Whether class @e is device @s's. */
static bool hbm_class_in(const struct hbm_class_ent *e,
			 const struct hbm_dev_stats *s)
{
	return e->key.ifindex == s->key.ifindex &&
	       e->key.netns == s->key.netns;
}

/* Device @s's configuration, as show --json's "config". */
static json_t *hbm_config_json(const struct hbm_dev_stats *s)
{
	const struct hbm_config *c = &s->cfg;
	json_t *o = json_object();

	hbm_json_set(o, "rate_bps", hbm_json_u64(c->rate_bps));
	hbm_json_set(o, "burst_ns", hbm_json_u64(c->burst_ns));
	hbm_json_set(o, "mark_ns", hbm_json_u64(c->mark_ns));
	hbm_json_set(o, "drop_ns", hbm_json_u64(c->drop_ns));
	hbm_json_set(o, "drop_large_ns", hbm_json_u64(c->drop_large_ns));
	hbm_json_set(o, "limit", json_integer(c->limit));
	hbm_json_set(o, "flow_limit", json_integer(c->flow_limit));
	hbm_json_set(o, "quantum", json_integer(hbm_quantum_now(s)));
	hbm_json_set(o, "initial_quantum",
		     json_integer(hbm_initial_quantum_now(s)));
	hbm_json_set(o, "quantum_auto",
		     json_boolean(c->quantum == HBM_QUANTUM_AUTO));
	hbm_json_set(o, "initial_quantum_auto",
		     json_boolean(c->initial_quantum == HBM_QUANTUM_AUTO));
	hbm_json_set(o, "horizon_ns", hbm_json_u64(c->horizon_ns));
	hbm_json_set(o, "large_pkt", json_integer(c->large_pkt));
	hbm_json_set(o, "flags", json_integer(c->flags));
	hbm_json_set(o, "ecn", json_boolean(c->flags & HBM_F_ECN));
	hbm_json_set(o, "cn", json_boolean(!(c->flags & HBM_F_NO_CN)));
	hbm_json_set(o, "late_credit",
		     json_boolean(!(c->flags & HBM_F_FIXED_BURST)));
	hbm_json_set(o, "attach_finished",
		     json_boolean(!(c->flags & HBM_F_ATTACHING)));
	return o;
}

/* Device @s's counters, as show --json's "stats". */
static json_t *hbm_stats_json(const struct hbm_dev_stats *s)
{
	const struct hbm_dev_rate *k = &s->dr;
	json_t *o = json_object();

	hbm_json_set(o, "enqueued", hbm_json_u64(k->enqueued));
	hbm_json_set(o, "packets", hbm_json_u64(k->packets));
	hbm_json_set(o, "bytes", hbm_json_u64(k->bytes));
	hbm_json_set(o, "marks", hbm_json_u64(k->marks));
	hbm_json_set(o, "cn", hbm_json_u64(k->cn));
	hbm_json_set(o, "ce", hbm_json_u64(k->ce));
	hbm_json_set(o, "guard_saves", hbm_json_u64(k->guard_saves));
	hbm_json_set(o, "cn_spared", hbm_json_u64(k->cn_spared));
	hbm_json_set(o, "delayed", hbm_json_u64(k->delayed));
	hbm_json_set(o, "fastpath", hbm_json_u64(k->fastpath));
	hbm_json_set(o, "drops", hbm_json_u64(hbm_dev_drops(k)));
	hbm_json_set(o, "vq_delay_ns",
		     json_integer(k->delta_ns > 0 ? k->delta_ns : 0));
	hbm_json_set(o, "tstamp_tai", hbm_json_u64(k->tstamp_tai));
	hbm_json_set(o, "tstamp_realtime", hbm_json_u64(k->tstamp_realtime));
	return o;
}

/* Device @s's lateness of the watchdog, as show --json's "lateness". */
static json_t *hbm_lateness_json(const struct hbm_dev_stats *s)
{
	const struct hbm_dev_rate *k = &s->dr;
	json_t *o = json_object(), *hist = json_array();
	int j;

	hbm_json_set(o, "credit_ns", hbm_json_u64(hbm_credit_now(s)));
	hbm_json_set(o, "envelope_ns", hbm_json_u64(k->late_ns));
	hbm_json_set(o, "samples", hbm_json_u64(hbm_late_count(k)));
	hbm_json_set(o, "mean_ns", hbm_json_u64(hbm_late_mean(k)));
	hbm_json_set(o, "p50_ns", hbm_json_u64(hbm_late_quantile(k, 0.5)));
	hbm_json_set(o, "p90_ns", hbm_json_u64(hbm_late_quantile(k, 0.9)));
	hbm_json_set(o, "p99_ns", hbm_json_u64(hbm_late_quantile(k, 0.99)));
	for (j = 0; j < HBM_LATE_BUCKETS; j++)
		hbm_json_push(hist, hbm_json_u64(k->late_hist[j]));
	hbm_json_set(o, "hist_us", hist);
	return o;
}

json_t *hbm_show_json(const struct hbm_dev_stats *st, int n,
		      const struct hbm_class_ent *cls, int ncls)
{
	json_t *root = json_object(), *devs = json_array(), *d, *classes;
	int i, j;

	for (i = 0; i < n; i++) {
		d = hbm_json_dev(&st[i]);
		hbm_json_set(d, "instances", json_integer(st[i].dr.instances));
		hbm_json_set(d, "configured", json_boolean(st[i].configured));
		hbm_json_set(d, "config", hbm_config_json(&st[i]));
		hbm_json_set(d, "stats", hbm_stats_json(&st[i]));
		hbm_json_set(d, "drops",
			     hbm_json_drops(st[i].dr.drops,
					    hbm_dev_drops(&st[i].dr)));
		hbm_json_set(d, "lateness", hbm_lateness_json(&st[i]));
		hbm_json_set(d, "qlen", hbm_json_u64(st[i].qlen));
		hbm_json_set(d, "flows", hbm_json_u64(st[i].flows));
		hbm_json_set(d, "idle_flows", hbm_json_u64(st[i].idle_flows));
		hbm_json_set(d, "backlog", hbm_json_u64(st[i].backlog));
		classes = json_array();
		for (j = 0; j < ncls; j++) {
			if (!hbm_class_in(&cls[j], &st[i]))
				continue;
			hbm_json_push(classes,
				      hbm_class_json(&cls[j], false, hbm_own));
		}
		hbm_json_set(d, "classes", classes);
		hbm_json_push(devs, d);
	}
	hbm_json_set(root, "devices", devs);
	return root;
}

/* "3028 (auto)", "1514", or "auto" where the MTU is unknown. */
static void hbm_fmt_quantum_now(char *buf, size_t len, __u32 val,
				__u32 bytes)
{
	if (val != HBM_QUANTUM_AUTO)
		snprintf(buf, len, "%u", val);
	else if (bytes)
		snprintf(buf, len, "%u (auto)", bytes);
	else
		snprintf(buf, len, "auto");
}

#define HBM_KV(key, fmt, ...) printf("  %-12s" fmt "\n", key, ##__VA_ARGS__)

/* The configuration's lines of show's text. */
static void hbm_print_config_human(const struct hbm_dev_stats *s)
{
	const struct hbm_config *c = &s->cfg;
	char a[HBM_FMT_BUFSZ], b[HBM_FMT_BUFSZ];

	hbm_fmt_rate(a, sizeof(a), c->rate_bps);
	HBM_KV("rate", "%s", a);
	hbm_fmt_time(a, sizeof(a), c->burst_ns);
	HBM_KV("burst", "%s", a);
	hbm_fmt_time(a, sizeof(a), c->mark_ns);
	HBM_KV("mark", "%s", a);
	hbm_fmt_time(a, sizeof(a), c->drop_ns);
	HBM_KV("drop", "%s", a);
	hbm_fmt_time(a, sizeof(a), c->drop_large_ns);
	HBM_KV("drop-large", "%s (packets over %u bytes)", a, c->large_pkt);
	HBM_KV("limit", "%u", c->limit);
	HBM_KV("flow-limit", "%u", c->flow_limit);
	hbm_fmt_quantum_now(a, sizeof(a), c->quantum, hbm_quantum_now(s));
	hbm_fmt_quantum_now(b, sizeof(b), c->initial_quantum,
			    hbm_initial_quantum_now(s));
	HBM_KV("quantum", "%s, initial-quantum %s", a, b);
	hbm_fmt_time(a, sizeof(a), c->horizon_ns);
	HBM_KV("horizon", "%s", a);
	HBM_KV("cn", "%s", c->flags & HBM_F_NO_CN ? "off" : "on");
	HBM_KV("late-credit", "%s",
	       c->flags & HBM_F_FIXED_BURST ? "off" : "on");
	HBM_KV("ecn", "%s", !(c->flags & HBM_F_ECN) ? "off" :
	       s->marker || s->key.netns != hbm_own ? "on" :
	       "on, but no marker on the tcx egress hook (bpf-hbm set DEV --ecn on)");
	if (c->flags & HBM_F_ATTACHING)
		HBM_KV("attach", "%s", "not finished (bpf-hbm attach DEV again completes it)");
}

static void hbm_print_human(const struct hbm_dev_stats *st, int n,
			    const struct hbm_class_ent *cls, int ncls)
{
	char label[64], a[HBM_FMT_BUFSZ];
	const struct hbm_dev_rate *k;
	int i, j;

	if (!n)
		printf("bpf_hbm is loaded but not attached to any device\n");
	for (i = 0; i < n; i++) {
		k = &st[i].dr;
		hbm_dev_label(label, sizeof(label), &st[i].key, hbm_own);
		printf("%s%s: ", i ? "\n" : "", label);
		if (st[i].key.netns == hbm_own)
			printf("ifindex %u, ", st[i].key.ifindex);
		printf("%u instance%s", k->instances,
		       k->instances == 1 ? "" : "s");
		hbm_fmt_rate(a, sizeof(a), st[i].cfg.rate_bps);
		if (st[i].configured)
			printf("\n");
		else if (hbm_load_defaults_ok)
			printf(", unconfigured (load-time default rate %s)\n", a);
		else
			printf(", unconfigured (load-time defaults, which couldn't be read: the compiled ones below)\n");
		hbm_print_config_human(&st[i]);
		HBM_KV("enqueued", "%llu", k->enqueued);
		HBM_KV("packets", "%llu", k->packets);
		HBM_KV("bytes", "%llu", k->bytes);
		HBM_KV("marks", "%llu", k->marks);
		HBM_KV("cn", "%llu", k->cn);
		HBM_KV("ce", "%llu", k->ce);
		HBM_KV("guard saves", "%llu", k->guard_saves);
		HBM_KV("cn spared", "%llu (thin flows' marks)", k->cn_spared);
		HBM_KV("delayed", "%llu", k->delayed);
		HBM_KV("fastpath", "%llu", k->fastpath);
		HBM_KV("txtime", "%llu on CLOCK_TAI (converted), %llu on CLOCK_REALTIME (ignored)",
		       k->tstamp_tai, k->tstamp_realtime);
		printf("  %-12s%llu (", "drops", hbm_dev_drops(k));
		for (j = 0; j < HBM_DROP_MAX; j++)
			printf("%s%s %llu", j ? ", " : "", hbm_drop_name(j),
			       k->drops[j]);
		printf(")\n");
		hbm_fmt_time(a, sizeof(a), k->delta_ns > 0 ? k->delta_ns : 0);
		HBM_KV("vq delay", "%s", a);
		hbm_fmt_time(a, sizeof(a), hbm_credit_now(&st[i]));
		printf("  %-12s%s", "idle credit", a);
		if (hbm_late_count(k)) {
			hbm_fmt_time(a, sizeof(a), hbm_late_mean(k));
			printf(" (lateness of %llu watchdog releases: mean %s",
			       hbm_late_count(k), a);
			hbm_fmt_time(a, sizeof(a), hbm_late_quantile(k, 0.5));
			printf(", p50 < %s", a);
			hbm_fmt_time(a, sizeof(a), hbm_late_quantile(k, 0.99));
			printf(", p99 < %s)", a);
		}
		printf("\n");
		HBM_KV("qlen", "%llu", st[i].qlen);
		HBM_KV("flows", "%llu backlogged, %llu idle", st[i].flows,
		       st[i].idle_flows);
		HBM_KV("backlog", "%llu", st[i].backlog);
		for (j = 0; j < ncls; j++)
			if (hbm_class_in(&cls[j], &st[i]))
				hbm_class_print_text(&cls[j], 2, true);
	}
}

static volatile sig_atomic_t hbm_stop;

static void hbm_on_signal(int sig)
{
	hbm_stop = 1;
}

static __u64 hbm_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * HBM_NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * Sleep until @at (CLOCK_MONOTONIC, ns) unless a signal asks to stop;
 * returns false to stop. An absolute deadline: the intervals do not drift
 * by the time each reading takes.
 */
static bool hbm_wait_until(__u64 at)
{
	struct timespec ts = {
		.tv_sec = at / HBM_NSEC_PER_SEC,
		.tv_nsec = at % HBM_NSEC_PER_SEC,
	};

	while (!hbm_stop &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	return !hbm_stop;
}

/*
 * One reading, under the lock (see main.c) and never while waiting: a
 * cgroup removed meanwhile takes its class. The classes are read only if
 * @cls is given.
 */
static int hbm_read(const struct hbm_maps *maps, const struct hbm_dev_key *only,
		    struct hbm_dev_stats **st, int *n,
		    struct hbm_class_ent **cls, int *ncls)
{
	int err;

	hbm_lock();
	hbm_classes_prune(maps);
	err = hbm_collect(maps, only, st, n);
	if (!err && cls)
		err = hbm_classes_get(maps, only, cls, ncls);
	hbm_unlock();
	return err;
}

/* @key's entry in the previous reading @prev, or NULL (attached since). */
static const struct hbm_dev_rate *hbm_prev_of(const struct hbm_dev_stats *prev,
					      int nprev,
					      const struct hbm_dev_key *key)
{
	int i;

	for (i = 0; i < nprev; i++)
		if (prev[i].key.ifindex == key->ifindex &&
		    prev[i].key.netns == key->netns)
			return &prev[i].dr;
	return NULL;
}

/*
 * --watch: a reading, then one every interval, and the rates between
 * each two printed (metrics.c), a line per device (or a JSON object per
 * interval). The first line comes after the first interval: a rate needs
 * two readings. Returns an exit status; SIGINT and SIGTERM end it with 0.
 */
static int hbm_watch(const struct hbm_show_args *args,
		     const struct hbm_maps *maps, const struct hbm_dev_key *only)
{
	struct hbm_dev_stats *prev = NULL, *cur = NULL;
	int nprev = 0, ncur = 0, i, ret = HBM_EXIT_FAIL;
	struct hbm_rates *r = NULL;
	char when[HBM_ISO_BUFSZ];
	struct sigaction sa = {};
	__u64 t_prev, t_cur, next;
	struct timespec now;

	sa.sa_handler = hbm_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hbm_read(maps, only, &prev, &nprev, NULL, NULL))
		goto fail;
	t_prev = hbm_mono_ns();
	next = t_prev;
	for (;;) {
		if (only && !nprev) {
			hbm_error("show", args->dev,
				  "bpf_hbm not attached to %s", args->dev);
			goto out;
		}
		next += args->watch_ns;
		if (!hbm_wait_until(next))
			break;
		if (hbm_read(maps, only, &cur, &ncur, NULL, NULL))
			goto fail;
		t_cur = hbm_mono_ns();
		clock_gettime(CLOCK_REALTIME, &now);
		free(r);
		r = calloc(ncur ? ncur : 1, sizeof(*r));
		if (!r) {
			hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
			goto fail;
		}
		for (i = 0; i < ncur; i++)
			hbm_rates_of(hbm_prev_of(prev, nprev, &cur[i].key),
				     &cur[i].dr, t_cur - t_prev, &r[i]);
		hbm_fmt_iso8601(when, sizeof(when), &now);
		if ((!only || ncur) &&
		    hbm_watch_print(stdout, args->json, when, t_cur - t_prev,
				    cur, r, ncur)) {
			hbm_fail("write", "JSON");
			goto out;
		}
		fflush(stdout);
		free(prev);
		prev = cur;
		nprev = ncur;
		cur = NULL;
		t_prev = t_cur;
		/* A reading that took longer than the interval: no burst. */
		if (next < t_cur)
			next = t_cur;
	}
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("show", args->dev ? args->dev : HBM_KIND);
out:
	free(r);
	free(prev);
	free(cur);
	return ret;
}

int hbm_cmd_show(const struct hbm_show_args *args)
{
	const char *obj = args->dev ? args->dev : HBM_KIND;
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_dev_stats *st = NULL;
	struct hbm_class_ent *cls = NULL;
	struct hbm_dev_key key, *only = NULL;
	int ret = HBM_EXIT_FAIL, n = 0, ncls = 0;
	int err;

	if (hbm_own_netns(&hbm_own))
		goto fail;
	if (args->dev) {
		key.ifindex = if_nametoindex(args->dev);
		key.netns = hbm_own;
		if (!key.ifindex) {
			hbm_error("show", args->dev, "no such device");
			goto out;
		}
		only = &key;
	}
	err = hbm_maps_open(&maps);
	if (err == -ENOENT) {
		/* "not loaded (run bpf-hbm load)" */
		hbm_fail("show", HBM_KIND);
		goto out;
	}
	if (err)
		goto fail;
	if (args->watch_ns) {
		ret = hbm_watch(args, &maps, only);
		goto out;
	}
	if (hbm_read(&maps, only, &st, &n, &cls, &ncls))
		goto fail;
	if (only && !n) {
		hbm_error("show", args->dev, "bpf_hbm not attached to %s",
			  args->dev);
		goto out;
	}
	if (args->prometheus) {
		hbm_prom_write(stdout, st, n, cls, ncls);
	} else if (args->json) {
		if (hbm_json_write(stdout, hbm_show_json(st, n, cls, ncls))) {
			hbm_fail("write", "JSON");
			goto out;
		}
	} else {
		hbm_print_human(st, n, cls, ncls);
	}
	/*
	 * A short write must fail: `show --prometheus >f.tmp && mv f.tmp f`
	 * would otherwise install a truncated file for the collector.
	 */
	if (fflush(stdout) || ferror(stdout)) {
		hbm_error("write", "the output", "%s", strerror(errno));
		goto out;
	}
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("show", obj);
out:
	free(st);
	hbm_classes_free(cls, ncls);
	hbm_maps_close(&maps);
	return ret;
}
