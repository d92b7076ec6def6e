/* SPDX-License-Identifier: GPL-2.0 */
/*
 * show's counters as numbers for other programs (metrics.c): the
 * Prometheus text exposition format (show --prometheus) and the rates
 * between two readings (show --watch). Pure: these functions read the
 * structs they are given and write to the FILE they are given, nothing
 * else, so that selftests/host/test_metrics.c checks their text whole.
 * show.c fills the structs from the maps.
 */
#ifndef HBM_METRICS_H
#define HBM_METRICS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>
#include <linux/types.h>

#include "hbm.h"

/* A device with bpf_hbm, as show reads it. */
struct hbm_dev_stats {
	struct hbm_dev_key key;
	char name[IF_NAMESIZE];	/* "" if in another netns, or gone */
	struct hbm_dev_rate dr;	/* its instances' counters added in */
	struct hbm_config cfg;
	bool configured;	/* cfg from hbm_config, not the defaults */
	bool marker;		/* the ECN marker is on its tcx egress hook */
	__u32 psched_mtu;	/* MTU + link-layer header; 0: unknown */
	__u64 qlen;		/* summed over the device's instances */
	__u64 flows;
	__u64 idle_flows;
	__u64 backlog;
};

/* A class, as show and class list print it. */
struct hbm_class_ent {
	struct hbm_class_key key;
	struct hbm_class_config cfg;
	struct hbm_class_rate rate;
	char *path;		/* its cgroup's, or NULL if unknown */
};

/* Drops of every reason, of a device and of a class. */
__u64 hbm_dev_drops(const struct hbm_dev_rate *dr);
__u64 hbm_class_drops(const struct hbm_class_rate *cr);

/* Watchdog releases in the lateness histogram, and their mean in ns. */
__u64 hbm_late_count(const struct hbm_dev_rate *dr);
__u64 hbm_late_mean(const struct hbm_dev_rate *dr);

/* The idle credit the qdisc applies now: burst + hbm_late_allowance. */
/*
 * A device's identity in JSON (show --json, --watch --json): an object
 * with dev (null where the name is not known), ifindex and netns, for the
 * caller to add to.
 */
json_t *hbm_json_dev(const struct hbm_dev_stats *st);
__u64 hbm_credit_now(const struct hbm_dev_stats *st);

/*
 * The Prometheus text exposition format (version 0.0.4, what
 * node_exporter's textfile collector reads) of @n devices and their
 * @ncls classes: each family once, with its # HELP and # TYPE, then its
 * samples, devices in @st's order. Device series are labelled dev,
 * ifindex and netns (dev "" for a device in another network namespace,
 * or gone); class series are families of their own (bpf_hbm_class_*),
 * labelled with their device's labels, class (the cgroup's path, "" if
 * unknown) and cgroup_id: a class's packets are its device's too, and a
 * family's series must add up. Times are in seconds, rates in bits per
 * second, exact decimals; no timestamps (the textfile collector refuses
 * them). The README's "Metrics" table lists the families.
 */
void hbm_prom_write(FILE *f, const struct hbm_dev_stats *st, int n,
		    const struct hbm_class_ent *cls, int ncls);

/* @ns as seconds: "0", "0.00005", "1.5", exact. */
void hbm_fmt_seconds(char *buf, size_t len, __u64 ns);

/* Per second, over an interval (show --watch). */
struct hbm_rates {
	double pps;		/* packets sent */
	double bps;		/* bits sent, L2 (qdisc_pkt_len) */
	double drops;		/* of every reason */
	double marks;
	double cn;
	double ce;
};

/*
 * The rates from counters @a to @b, read @dt_ns apart; @a NULL: from 0 (a
 * device attached since the last reading). A counter that went back (the
 * device was detached and attached again: new counters) counts from 0
 * too. All 0 when @dt_ns is 0.
 */
void hbm_rates_of(const struct hbm_dev_rate *a, const struct hbm_dev_rate *b,
		  __u64 dt_ns, struct hbm_rates *r);

/* @ts (CLOCK_REALTIME) in ISO 8601, UTC: "2026-12-02T21:13:19.123Z". */
#define HBM_ISO_BUFSZ 32
void hbm_fmt_iso8601(char *buf, size_t len, const struct timespec *ts);

/*
 * One interval of show --watch, @n devices' rates @r (in @st's order)
 * ending at @when (hbm_fmt_iso8601) after @dt_ns: a line per device,
 *   WHEN DEV pps N bit/s N drops/s N marks/s N cn/s N ce/s N
 * DEV its name, or ifindexN@netnsM where it has none here; or, @json,
 * one line of JSON for the interval (see bpf-hbm --help): the rates as
 * the text has them (pps 0.3, bps 12000000). Returns 0, or, where the
 * JSON could not be written, a negative errno and hbm_reason().
 */
int hbm_watch_print(FILE *f, bool json, const char *when, __u64 dt_ns,
		    const struct hbm_dev_stats *st,
		    const struct hbm_rates *r, int n);

#endif /* HBM_METRICS_H */
