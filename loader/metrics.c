// SPDX-License-Identifier: GPL-2.0
/*
 * show's counters for other programs: the Prometheus text exposition
 * format and the per-interval rates of --watch; see metrics.h. Nothing
 * here reads a map or a clock: show.c does, and hands the numbers over.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "hbm_edt.h"
#include "metrics.h"
#include "util.h"

__u64 hbm_dev_drops(const struct hbm_dev_rate *dr)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < HBM_DROP_MAX; i++)
		sum += dr->drops[i];
	return sum;
}

__u64 hbm_class_drops(const struct hbm_class_rate *cr)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < HBM_DROP_MAX; i++)
		sum += cr->drops[i];
	return sum;
}

__u64 hbm_late_count(const struct hbm_dev_rate *dr)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < HBM_LATE_BUCKETS; i++)
		sum += dr->late_hist[i];
	return sum;
}

__u64 hbm_late_mean(const struct hbm_dev_rate *dr)
{
	__u64 n = hbm_late_count(dr);

	return n ? dr->late_sum_ns / n : 0;
}

__u64 hbm_credit_now(const struct hbm_dev_stats *st)
{
	return st->cfg.burst_ns + hbm_late_allowance(st->cfg.burst_ns,
						     st->dr.late_ns,
						     st->cfg.flags);
}

void hbm_fmt_seconds(char *buf, size_t len, __u64 ns)
{
	char frac[16];
	int n;

	if (!(ns % HBM_NSEC_PER_SEC)) {
		snprintf(buf, len, "%llu", ns / HBM_NSEC_PER_SEC);
		return;
	}
	n = snprintf(frac, sizeof(frac), "%09llu", ns % HBM_NSEC_PER_SEC);
	while (n > 1 && frac[n - 1] == '0')
		frac[--n] = '\0';
	snprintf(buf, len, "%llu.%s", ns / HBM_NSEC_PER_SEC, frac);
}

/*
 * The families, in the order they are written. A device's value comes
 * from dev(), a class's from cls(); a family has one or the other. NS:
 * the value is in nanoseconds, written in seconds.
 */
enum hbm_prom_type {
	HBM_PROM_COUNTER,
	HBM_PROM_GAUGE,
};

struct hbm_prom_family {
	const char *name;
	enum hbm_prom_type type;
	bool ns;
	const char *help;
	__u64 (*dev)(const struct hbm_dev_stats *s);
	__u64 (*cls)(const struct hbm_class_ent *e);
};

#define HBM_DEV_GET(field, expr)					\
static __u64 hbm_dev_##field(const struct hbm_dev_stats *s)		\
{									\
	return (expr);							\
}
#define HBM_CLS_GET(field, expr)					\
static __u64 hbm_cls_##field(const struct hbm_class_ent *e)		\
{									\
	return (expr);							\
}

HBM_DEV_GET(enqueued, s->dr.enqueued)
HBM_DEV_GET(packets, s->dr.packets)
HBM_DEV_GET(bytes, s->dr.bytes)
HBM_DEV_GET(marks, s->dr.marks)
HBM_DEV_GET(cn, s->dr.cn)
HBM_DEV_GET(ce, s->dr.ce)
HBM_DEV_GET(guard_saves, s->dr.guard_saves)
HBM_DEV_GET(cn_spared, s->dr.cn_spared)
HBM_DEV_GET(delayed, s->dr.delayed)
HBM_DEV_GET(fastpath, s->dr.fastpath)
HBM_DEV_GET(vq_delay, s->dr.delta_ns > 0 ? s->dr.delta_ns : 0)
HBM_DEV_GET(qlen, s->qlen)
HBM_DEV_GET(backlog, s->backlog)
HBM_DEV_GET(flows, s->flows)
HBM_DEV_GET(idle_flows, s->idle_flows)
HBM_DEV_GET(instances, s->dr.instances)
HBM_DEV_GET(rate, s->cfg.rate_bps)
HBM_DEV_GET(burst, s->cfg.burst_ns)
HBM_DEV_GET(mark, s->cfg.mark_ns)
HBM_DEV_GET(drop, s->cfg.drop_ns)
HBM_DEV_GET(drop_large, s->cfg.drop_large_ns)
HBM_DEV_GET(limit, s->cfg.limit)
HBM_DEV_GET(flow_limit, s->cfg.flow_limit)
HBM_DEV_GET(ecn, !!(s->cfg.flags & HBM_F_ECN))
HBM_DEV_GET(credit, hbm_credit_now(s))
HBM_DEV_GET(envelope, s->dr.late_ns)

HBM_CLS_GET(enqueued, e->rate.enqueued)
HBM_CLS_GET(packets, e->rate.packets)
HBM_CLS_GET(bytes, e->rate.bytes)
HBM_CLS_GET(marks, e->rate.marks)
HBM_CLS_GET(cn, e->rate.cn)
HBM_CLS_GET(ce, e->rate.ce)
HBM_CLS_GET(guard_saves, e->rate.guard_saves)
HBM_CLS_GET(cn_spared, e->rate.cn_spared)
HBM_CLS_GET(delayed, e->rate.delayed)
HBM_CLS_GET(vq_delay, e->rate.delta_ns > 0 ? e->rate.delta_ns : 0)
HBM_CLS_GET(rate, e->cfg.rate_bps)
HBM_CLS_GET(burst, e->cfg.burst_ns)
HBM_CLS_GET(mark, e->cfg.mark_ns)
HBM_CLS_GET(drop, e->cfg.drop_ns)
HBM_CLS_GET(drop_large, e->cfg.drop_large_ns)

#define C HBM_PROM_COUNTER
#define G HBM_PROM_GAUGE
#define DEV(f) hbm_dev_##f, NULL
#define CLS(f) NULL, hbm_cls_##f

static const struct hbm_prom_family hbm_dev_families[] = {
	{ "enqueued_packets_total", C, false,
	  "Packets the qdisc accepted (queued, or sent at once).",
	  DEV(enqueued) },
	{ "sent_packets_total", C, false,
	  "Packets the qdisc sent (dequeued).", DEV(packets) },
	{ "sent_bytes_total", C, false,
	  "Bytes the qdisc sent, at L2 (qdisc_pkt_len).", DEV(bytes) },
	{ "marked_packets_total", C, false,
	  "Packets over the mark threshold of the device's virtual queue, the dropped ones among them.",
	  DEV(marks) },
	{ "cn_packets_total", C, false,
	  "Packets for which the sender got NET_XMIT_CN.", DEV(cn) },
	{ "ce_packets_total", C, false,
	  "ECN-capable packets the ECN marker set CE in.", DEV(ce) },
	{ "guard_saves_total", C, false,
	  "Drops turned into CN by the 2-packet guard (TCP flows with at most one packet in flight).",
	  DEV(guard_saves) },
	{ "cn_spared_total", C, false,
	  "Marks of thin TCP senders, which got no CN.", DEV(cn_spared) },
	{ "delayed_packets_total", C, false,
	  "Accepted packets that had to wait for their departure time (tc's overlimits).",
	  DEV(delayed) },
	{ "fastpath_packets_total", C, false,
	  "Accepted packets due on arrival at an empty qdisc, sent without a flow.",
	  DEV(fastpath) },
	{ "vq_delay_seconds", G, true,
	  "Delay of the device's virtual queue at its last packet.",
	  DEV(vq_delay) },
	{ "queue_packets", G, false,
	  "Packets queued, all instances together.", DEV(qlen) },
	{ "backlog_bytes", G, false,
	  "Bytes queued, all instances together.", DEV(backlog) },
	{ "flows", G, false, "Backlogged flows.", DEV(flows) },
	{ "idle_flows", G, false,
	  "Emptied flows still cached in the flow table.", DEV(idle_flows) },
	{ "instances", G, false,
	  "bpf_hbm qdiscs on the device (1 at the root, one per tx queue under mq).",
	  DEV(instances) },
	{ "rate_bits_per_second", G, false,
	  "Configured rate of the device's virtual queue.", DEV(rate) },
	{ "burst_seconds", G, true, "Configured idle credit (burst).",
	  DEV(burst) },
	{ "mark_threshold_seconds", G, true,
	  "Configured mark (and CN) threshold.", DEV(mark) },
	{ "drop_threshold_seconds", G, true,
	  "Configured drop threshold.", DEV(drop) },
	{ "drop_large_threshold_seconds", G, true,
	  "Configured drop threshold of packets over large_pkt bytes.",
	  DEV(drop_large) },
	{ "limit_packets", G, false,
	  "Configured packet limit of each instance.", DEV(limit) },
	{ "flow_limit_packets", G, false,
	  "Configured packet limit of each flow.", DEV(flow_limit) },
	{ "ecn_enabled", G, false,
	  "1 if ECN is on (CE marks instead of CN for ECN-capable senders).",
	  DEV(ecn) },
	{ "idle_credit_seconds", G, true,
	  "Idle credit applied now: burst plus the allowance for release lateness.",
	  DEV(credit) },
	{ "release_lateness_envelope_seconds", G, true,
	  "Envelope of the watchdog's release lateness over about a second.",
	  DEV(envelope) },
};

static const struct hbm_prom_family hbm_cls_families[] = {
	{ "class_enqueued_packets_total", C, false,
	  "Packets of the class the qdisc accepted.", CLS(enqueued) },
	{ "class_sent_packets_total", C, false,
	  "Packets of the class the qdisc sent.", CLS(packets) },
	{ "class_sent_bytes_total", C, false,
	  "Bytes of the class the qdisc sent, at L2.", CLS(bytes) },
	{ "class_marked_packets_total", C, false,
	  "Packets over the mark threshold of the class's virtual queue, the dropped ones among them.",
	  CLS(marks) },
	{ "class_cn_packets_total", C, false,
	  "Packets for which the class's delay gave the sender NET_XMIT_CN.",
	  CLS(cn) },
	{ "class_ce_packets_total", C, false,
	  "Packets of the class the ECN marker set CE in, from either level's delay.",
	  CLS(ce) },
	{ "class_guard_saves_total", C, false,
	  "Class drops turned into CN by the 2-packet guard.",
	  CLS(guard_saves) },
	{ "class_cn_spared_total", C, false,
	  "Class marks of thin TCP senders, which got no CN.",
	  CLS(cn_spared) },
	{ "class_delayed_packets_total", C, false,
	  "Accepted packets of the class that had to wait for their departure time.",
	  CLS(delayed) },
	{ "class_vq_delay_seconds", G, true,
	  "Delay of the class's virtual queue at its last packet.",
	  CLS(vq_delay) },
	{ "class_rate_bits_per_second", G, false,
	  "Configured rate of the class.", CLS(rate) },
	{ "class_burst_seconds", G, true, "Configured idle credit of the class.",
	  CLS(burst) },
	{ "class_mark_threshold_seconds", G, true,
	  "Configured mark threshold of the class.", CLS(mark) },
	{ "class_drop_threshold_seconds", G, true,
	  "Configured drop threshold of the class.", CLS(drop) },
	{ "class_drop_large_threshold_seconds", G, true,
	  "Configured drop threshold of the class's large packets.",
	  CLS(drop_large) },
};

#undef C
#undef G
#undef DEV
#undef CLS

#define HBM_PROM_PREFIX "bpf_hbm_"

/* A family's head: its # HELP (escaped as the format asks) and # TYPE. */
static void hbm_prom_head(FILE *f, const char *name, const char *type,
			  const char *help)
{
	fprintf(f, "# HELP " HBM_PROM_PREFIX "%s ", name);
	for (; *help; help++) {
		if (*help == '\\')
			fputs("\\\\", f);
		else if (*help == '\n')
			fputs("\\n", f);
		else
			fputc(*help, f);
	}
	fprintf(f, "\n# TYPE " HBM_PROM_PREFIX "%s %s\n", name, type);
}

/* A device's labels, without the braces: dev, ifindex, netns. */
static void hbm_prom_dev_labels(FILE *f, const struct hbm_dev_stats *s)
{
	fputs("dev=", f);
	hbm_prom_str(f, s->name);
	fprintf(f, ",ifindex=\"%u\",netns=\"%u\"", s->key.ifindex,
		s->key.netns);
}

/* A class's: its device's (@dev, NULL if not in @st), class, cgroup_id. */
static void hbm_prom_cls_labels(FILE *f, const struct hbm_class_ent *e,
				const struct hbm_dev_stats *dev)
{
	if (dev) {
		hbm_prom_dev_labels(f, dev);
	} else {
		fprintf(f, "dev=\"\",ifindex=\"%u\",netns=\"%u\"",
			e->key.ifindex, e->key.netns);
	}
	fputs(",class=", f);
	hbm_prom_str(f, e->path ? e->path : "");
	fprintf(f, ",cgroup_id=\"%llu\"", e->key.cgroup);
}

static void hbm_prom_value(FILE *f, __u64 v, bool ns)
{
	char buf[32];

	if (ns) {
		hbm_fmt_seconds(buf, sizeof(buf), v);
		fprintf(f, " %s\n", buf);
	} else {
		fprintf(f, " %llu\n", v);
	}
}

static const struct hbm_dev_stats *
hbm_prom_dev_of(const struct hbm_class_ent *e, const struct hbm_dev_stats *st,
		int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (st[i].key.ifindex == e->key.ifindex &&
		    st[i].key.netns == e->key.netns)
			return &st[i];
	return NULL;
}

/* Drops by reason: one family, a series per device and reason. */
static void hbm_prom_drops(FILE *f, const struct hbm_dev_stats *st, int n,
			   const struct hbm_class_ent *cls, int ncls,
			   bool classes)
{
	const char *name = classes ? "class_dropped_packets_total" :
				     "dropped_packets_total";
	int i, j;

	hbm_prom_head(f, name, "counter", classes ?
		      "Packets of the class dropped, at either level, by reason." :
		      "Packets dropped, by reason (threshold, nontcp, horizon, limit, flow_limit, nomem).");
	for (i = 0; i < (classes ? ncls : n); i++) {
		for (j = 0; j < HBM_DROP_MAX; j++) {
			fprintf(f, HBM_PROM_PREFIX "%s{", name);
			if (classes)
				hbm_prom_cls_labels(f, &cls[i],
						    hbm_prom_dev_of(&cls[i], st, n));
			else
				hbm_prom_dev_labels(f, &st[i]);
			fprintf(f, ",reason=\"%s\"}", hbm_drop_name(j));
			hbm_prom_value(f, classes ? cls[i].rate.drops[j] :
					   st[i].dr.drops[j], false);
		}
	}
}

/* SO_TXTIME stamps on the clocks BPF cannot use as they are. */
static void hbm_prom_txtime(FILE *f, const struct hbm_dev_stats *st, int n)
{
	int i;

	hbm_prom_head(f, "txtime_packets_total", "counter",
		      "Packets with an SO_TXTIME stamp on clock tai (converted) or realtime (not honoured).");
	for (i = 0; i < n; i++) {
		fputs(HBM_PROM_PREFIX "txtime_packets_total{", f);
		hbm_prom_dev_labels(f, &st[i]);
		fputs(",clock=\"tai\"}", f);
		hbm_prom_value(f, st[i].dr.tstamp_tai, false);
		fputs(HBM_PROM_PREFIX "txtime_packets_total{", f);
		hbm_prom_dev_labels(f, &st[i]);
		fputs(",clock=\"realtime\"}", f);
		hbm_prom_value(f, st[i].dr.tstamp_realtime, false);
	}
}

/*
 * The lateness histogram as Prometheus's: bucket b of late_hist is
 * [2^(b-1), 2^b) us (bucket 0 under 1 us), so its upper bound is the le
 * of a cumulative bucket (a sample on a bound counts in the next one up,
 * where Prometheus's le would count it in this one: within the
 * histogram's factor of 2 anyway); the last one has none, +Inf.
 */
static void hbm_prom_lateness(FILE *f, const struct hbm_dev_stats *st, int n)
{
	const char *name = "release_lateness_seconds";
	char le[32];
	__u64 acc;
	int i, b;

	hbm_prom_head(f, name, "histogram",
		      "How late the watchdog released the first packet after each time it was set for.");
	for (i = 0; i < n; i++) {
		acc = 0;
		for (b = 0; b < HBM_LATE_BUCKETS; b++) {
			acc += st[i].dr.late_hist[b];
			if (b == HBM_LATE_BUCKETS - 1)
				snprintf(le, sizeof(le), "+Inf");
			else
				hbm_fmt_seconds(le, sizeof(le),
						(1ULL << b) * HBM_NSEC_PER_USEC);
			fprintf(f, HBM_PROM_PREFIX "%s_bucket{", name);
			hbm_prom_dev_labels(f, &st[i]);
			fprintf(f, ",le=\"%s\"}", le);
			hbm_prom_value(f, acc, false);
		}
		fprintf(f, HBM_PROM_PREFIX "%s_sum{", name);
		hbm_prom_dev_labels(f, &st[i]);
		fputc('}', f);
		hbm_prom_value(f, st[i].dr.late_sum_ns, true);
		fprintf(f, HBM_PROM_PREFIX "%s_count{", name);
		hbm_prom_dev_labels(f, &st[i]);
		fputc('}', f);
		hbm_prom_value(f, acc, false);
	}
}

static void hbm_prom_family(FILE *f, const struct hbm_prom_family *fam,
			    const struct hbm_dev_stats *st, int n,
			    const struct hbm_class_ent *cls, int ncls)
{
	int i;

	hbm_prom_head(f, fam->name, fam->type == HBM_PROM_COUNTER ?
		      "counter" : "gauge", fam->help);
	for (i = 0; fam->dev && i < n; i++) {
		fprintf(f, HBM_PROM_PREFIX "%s{", fam->name);
		hbm_prom_dev_labels(f, &st[i]);
		fputc('}', f);
		hbm_prom_value(f, fam->dev(&st[i]), fam->ns);
	}
	for (i = 0; fam->cls && i < ncls; i++) {
		fprintf(f, HBM_PROM_PREFIX "%s{", fam->name);
		hbm_prom_cls_labels(f, &cls[i], hbm_prom_dev_of(&cls[i], st, n));
		fputc('}', f);
		hbm_prom_value(f, fam->cls(&cls[i]), fam->ns);
	}
}

void hbm_prom_write(FILE *f, const struct hbm_dev_stats *st, int n,
		    const struct hbm_class_ent *cls, int ncls)
{
	size_t i;

	for (i = 0; i < sizeof(hbm_dev_families) / sizeof(hbm_dev_families[0]);
	     i++)
		hbm_prom_family(f, &hbm_dev_families[i], st, n, cls, ncls);
	hbm_prom_drops(f, st, n, cls, ncls, false);
	hbm_prom_txtime(f, st, n);
	hbm_prom_lateness(f, st, n);
	for (i = 0; i < sizeof(hbm_cls_families) / sizeof(hbm_cls_families[0]);
	     i++)
		hbm_prom_family(f, &hbm_cls_families[i], st, n, cls, ncls);
	hbm_prom_drops(f, st, n, cls, ncls, true);
}

/* @b - @a, or @b where the counter went back (new counters since @a). */
static __u64 hbm_delta(__u64 a, __u64 b)
{
	return b >= a ? b - a : b;
}

void hbm_rates_of(const struct hbm_dev_rate *a, const struct hbm_dev_rate *b,
		  __u64 dt_ns, struct hbm_rates *r)
{
	static const struct hbm_dev_rate zero;
	double dt = (double)dt_ns / HBM_NSEC_PER_SEC;

	memset(r, 0, sizeof(*r));
	if (!dt_ns)
		return;
	if (!a)
		a = &zero;
	r->pps = hbm_delta(a->packets, b->packets) / dt;
	r->bps = hbm_delta(a->bytes, b->bytes) * 8.0 / dt;
	r->drops = hbm_delta(hbm_dev_drops(a), hbm_dev_drops(b)) / dt;
	r->marks = hbm_delta(a->marks, b->marks) / dt;
	r->cn = hbm_delta(a->cn, b->cn) / dt;
	r->ce = hbm_delta(a->ce, b->ce) / dt;
}

void hbm_fmt_iso8601(char *buf, size_t len, const struct timespec *ts)
{
	struct tm tm;
	char s[24];

	if (!gmtime_r(&ts->tv_sec, &tm) ||
	    !strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s.%03ldZ", s, ts->tv_nsec / 1000000);
}

/* @v as printf's @fmt ("%.1f", "%.0f") writes it, as a JSON number. */
static json_t *hbm_json_rate(const char *fmt, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), fmt, v);
	return hbm_json_num(buf);
}

json_t *hbm_json_dev(const struct hbm_dev_stats *st)
{
	json_t *d = json_object();

	hbm_json_set(d, "dev", hbm_json_string(st->name[0] ? st->name : NULL));
	hbm_json_set(d, "ifindex", json_integer(st->key.ifindex));
	hbm_json_set(d, "netns", json_integer(st->key.netns));
	return d;
}

/* An interval of --watch --json, as bpf-hbm --help lists the fields. */
static json_t *hbm_watch_json(const char *when, __u64 dt_ns,
			      const struct hbm_dev_stats *st,
			      const struct hbm_rates *r, int n)
{
	json_t *root = json_object(), *devs = json_array(), *d;
	char dt[32];
	int i;

	hbm_fmt_seconds(dt, sizeof(dt), dt_ns);
	hbm_json_set(root, "time", hbm_json_string(when));
	hbm_json_set(root, "interval_s", hbm_json_num(dt));
	for (i = 0; i < n; i++) {
		d = hbm_json_dev(&st[i]);
		hbm_json_set(d, "pps", hbm_json_rate("%.1f", r[i].pps));
		hbm_json_set(d, "bps", hbm_json_rate("%.0f", r[i].bps));
		hbm_json_set(d, "drops_per_s",
			     hbm_json_rate("%.1f", r[i].drops));
		hbm_json_set(d, "marks_per_s",
			     hbm_json_rate("%.1f", r[i].marks));
		hbm_json_set(d, "cn_per_s", hbm_json_rate("%.1f", r[i].cn));
		hbm_json_set(d, "ce_per_s", hbm_json_rate("%.1f", r[i].ce));
		hbm_json_push(devs, d);
	}
	hbm_json_set(root, "devices", devs);
	return root;
}

int hbm_watch_print(FILE *f, bool json, const char *when, __u64 dt_ns,
		    const struct hbm_dev_stats *st,
		    const struct hbm_rates *r, int n)
{
	int i;

	if (json)
		return hbm_json_write(f, hbm_watch_json(when, dt_ns, st, r, n));
	for (i = 0; i < n; i++) {
		fprintf(f, "%s ", when);
		if (st[i].name[0])
			hbm_text_str(f, st[i].name);
		else
			fprintf(f, "ifindex%u@netns%u", st[i].key.ifindex,
				st[i].key.netns);
		fprintf(f, " pps %.1f bit/s %.0f drops/s %.1f marks/s %.1f cn/s %.1f ce/s %.1f\n",
			r[i].pps, r[i].bps, r[i].drops, r[i].marks, r[i].cn,
			r[i].ce);
	}
	return 0;
}
