// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/metrics.c: show --prometheus's text for a made-up
 * pair of devices and classes (each family once, with # HELP and # TYPE
 * before its samples; counters ending in _total; the labels, escaped;
 * exact seconds; the lateness histogram cumulative), the rates --watch
 * prints between two readings, and its lines; and show --json's object
 * (show.c) for the same state, as it was before it was written with
 * jansson, read back by jansson.
 *
 * `test_metrics --sample` prints that made-up exposition and nothing
 * else: selftests/host/prom.sh feeds it to Prometheus's own parser
 * (python3-prometheus-client), which checks what these tests cannot, that
 * the format is what Prometheus reads.
 */
#include <limits.h>

#include "../hbm_test.h"
#include "../../loader/cmds.h"

/*
 * The made-up state: hbm0 at ifindex 2 of netns 4026531840, with two
 * classes (one whose path needs every escape, and a byte that is not
 * UTF-8; one whose path is unknown), and a device of another netns.
 */
#define FIX_PATH "/sys/fs/cgroup/a \"b\"\\c\nd\xff"

static void hbm_fixture(struct hbm_dev_stats st[2], struct hbm_class_ent cls[2])
{
	int i;

	memset(st, 0, 2 * sizeof(*st));
	memset(cls, 0, 2 * sizeof(*cls));
	st[0].key.ifindex = 2;
	st[0].key.netns = 4026531840U;
	strcpy(st[0].name, "hbm0");
	st[0].cfg = (struct hbm_config)HBM_CONFIG_DEFAULT;
	st[0].cfg.rate_bps = 400000000;
	st[0].cfg.flags = HBM_F_ECN;
	st[0].dr.instances = 1;
	st[0].dr.enqueued = 1010;
	st[0].dr.packets = 1000;
	st[0].dr.bytes = 1514000;
	st[0].dr.marks = 40;
	st[0].dr.cn = 7;
	st[0].dr.ce = 20;
	st[0].dr.guard_saves = 2;
	st[0].dr.cn_spared = 3;
	st[0].dr.delayed = 900;
	st[0].dr.fastpath = 100;
	st[0].dr.delta_ns = 50000;
	st[0].dr.drops[HBM_DROP_THRESH] = 5;
	st[0].dr.drops[HBM_DROP_LIMIT] = 1;
	st[0].dr.tstamp_tai = 4;
	for (i = 0; i < HBM_LATE_BUCKETS; i++)
		st[0].dr.late_hist[i] = i + 1;	/* 136 in all */
	st[0].dr.late_sum_ns = 1500000;
	st[0].dr.late_ns = 300000;		/* envelope: credit 100+200us */
	st[0].qlen = 10;
	st[0].backlog = 15140;
	st[0].flows = 2;
	st[0].idle_flows = 1;

	st[1].key.ifindex = 7;
	st[1].key.netns = 4026532281U;
	st[1].cfg = (struct hbm_config)HBM_CONFIG_DEFAULT;
	st[1].dr.instances = 4;
	st[1].dr.delta_ns = -5;		/* an idle queue: delay 0 */

	for (i = 0; i < 2; i++) {
		cls[i].key.ifindex = 2;
		cls[i].key.netns = 4026531840U;
		cls[i].key.cgroup = 1000 + i;
		cls[i].cfg.rate_bps = 100000000;
		cls[i].cfg.burst_ns = HBM_DEF_BURST_NS;
		cls[i].cfg.mark_ns = HBM_DEF_MARK_NS;
		cls[i].cfg.drop_ns = 1500000;
		cls[i].cfg.drop_large_ns = HBM_DEF_DROP_LARGE_NS;
		cls[i].cfg.level = 3;
	}
	cls[0].path = FIX_PATH;
	cls[0].rate.packets = 600;
	cls[0].rate.bytes = 908400;
	cls[0].rate.marks = 9;
	cls[0].rate.drops[HBM_DROP_NONTCP] = 2;
	cls[0].rate.delta_ns = 1234567;
}

/* What hbm_prom_write() writes for the fixture, or NULL. */
static char *hbm_sample(void)
{
	struct hbm_dev_stats st[2];
	struct hbm_class_ent cls[2];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	hbm_fixture(st, cls);
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	hbm_prom_write(f, st, 2, cls, 2);
	fclose(f);
	return buf;
}

/* Whether @text has @line as a whole line. */
static bool hbm_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int hbm_count(const char *text, const char *needle)
{
	const char *p;
	int n = 0;

	for (p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

#define DEV0 "dev=\"hbm0\",ifindex=\"2\",netns=\"4026531840\""
#define DEV1 "dev=\"\",ifindex=\"7\",netns=\"4026532281\""
#define CLS0 DEV0 ",class=\"/sys/fs/cgroup/a \\\"b\\\"\\\\c\\nd\xef\xbf\xbd\",cgroup_id=\"1000\""
#define CLS1 DEV0 ",class=\"\",cgroup_id=\"1001\""

static void test_prom_samples(void)
{
	char *t = hbm_sample();

	if (!ASSERT_TRUE(t != NULL, "exposition"))
		return;
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_sent_packets_total{" DEV0 "} 1000"), "packets");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_sent_bytes_total{" DEV0 "} 1514000"), "bytes");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_enqueued_packets_total{" DEV0 "} 1010"), "enqueued");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_marked_packets_total{" DEV0 "} 40"), "marks");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_cn_packets_total{" DEV0 "} 7"), "cn");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_ce_packets_total{" DEV0 "} 20"), "ce");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_delayed_packets_total{" DEV0 "} 900"), "delayed");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_fastpath_packets_total{" DEV0 "} 100"), "fastpath");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_vq_delay_seconds{" DEV0 "} 0.00005"), "vq delay");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_vq_delay_seconds{" DEV1 "} 0"), "negative delay: 0");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_queue_packets{" DEV0 "} 10"), "qlen");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_backlog_bytes{" DEV0 "} 15140"), "backlog");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_flows{" DEV0 "} 2"), "flows");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_instances{" DEV1 "} 4"), "instances");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_rate_bits_per_second{" DEV0 "} 400000000"), "rate");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_rate_bits_per_second{" DEV1 "} 1000000000"), "default rate");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_mark_threshold_seconds{" DEV0 "} 0.00005"), "mark");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_drop_threshold_seconds{" DEV0 "} 0.0005"), "drop");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_drop_large_threshold_seconds{" DEV0 "} 0.00048"), "drop-large");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_burst_seconds{" DEV0 "} 0.0001"), "burst");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_ecn_enabled{" DEV0 "} 1"), "ecn on");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_ecn_enabled{" DEV1 "} 0"), "ecn off");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_idle_credit_seconds{" DEV0 "} 0.0003"), "credit");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_dropped_packets_total{" DEV0 ",reason=\"threshold\"} 5"), "drops: threshold");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_dropped_packets_total{" DEV0 ",reason=\"limit\"} 1"), "drops: limit");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_dropped_packets_total{" DEV0 ",reason=\"nomem\"} 0"), "drops: nomem");
	ASSERT_EQ(hbm_count(t, "bpf_hbm_dropped_packets_total{"), 2 * HBM_DROP_MAX, "a drop series per device and reason");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_txtime_packets_total{" DEV0 ",clock=\"tai\"} 4"), "txtime tai");
	/* Buckets: 1..16, cumulative; +Inf is the count. */
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_bucket{" DEV0 ",le=\"0.000001\"} 1"), "bucket 1us");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_bucket{" DEV0 ",le=\"0.000002\"} 3"), "bucket 2us");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_bucket{" DEV0 ",le=\"0.016384\"} 120"), "bucket 16ms");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_bucket{" DEV0 ",le=\"+Inf\"} 136"), "bucket +Inf");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_count{" DEV0 "} 136"), "count");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_release_lateness_seconds_sum{" DEV0 "} 0.0015"), "sum");
	/* Classes: their families, their device's labels and their own. */
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_sent_packets_total{" CLS0 "} 600"), "class packets");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_sent_bytes_total{" CLS0 "} 908400"), "class bytes");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_sent_packets_total{" CLS1 "} 0"), "class, path unknown");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_marked_packets_total{" CLS0 "} 9"), "class marks");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_vq_delay_seconds{" CLS0 "} 0.001234567"), "class delay");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_rate_bits_per_second{" CLS0 "} 100000000"), "class rate");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_drop_threshold_seconds{" CLS0 "} 0.0015"), "class drop");
	ASSERT_TRUE(hbm_has_line(t, "bpf_hbm_class_dropped_packets_total{" CLS0 ",reason=\"nontcp\"} 2"), "class drops");
	/* A class is not a device: no device family has class series. */
	ASSERT_EQ(hbm_count(t, "bpf_hbm_sent_packets_total{"), 2, "device packets: devices only");
	ASSERT_EQ(hbm_count(t, "bpf_hbm_class_sent_packets_total{"), 2, "class packets: classes only");
	free(t);
}

/*
 * The format's rules: every line a comment or a sample; # HELP then
 * # TYPE once per family, before its samples, which are together;
 * counters end in _total; every name bpf_hbm_*.
 */
static void test_prom_format(void)
{
	char *t = hbm_sample(), *line, *save = NULL;
	char fam[256] = "", type[32] = "", seen[8192] = "|", name[300];
	int families = 0, samples = 0;

	if (!ASSERT_TRUE(t != NULL, "exposition"))
		return;
	ASSERT_TRUE(t[strlen(t) - 1] == '\n', "ends with a newline");
	for (line = strtok_r(t, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t n;

		if (!strncmp(line, "# HELP ", 7)) {
			n = strcspn(line + 7, " ");
			snprintf(fam, sizeof(fam), "%.*s", (int)n, line + 7);
			snprintf(name, sizeof(name), "|%s|", fam);
			ASSERT_TRUE(!strstr(seen, name), line);
			if (strlen(seen) + strlen(fam) + 2 < sizeof(seen)) {
				strcat(seen, fam);
				strcat(seen, "|");
			}
			ASSERT_TRUE(!strncmp(fam, "bpf_hbm_", 8), line);
			ASSERT_TRUE(line[7 + n] == ' ' && line[8 + n], "help text");
			type[0] = '\0';
			families++;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			n = strlen(fam);
			ASSERT_TRUE(!strncmp(line + 7, fam, n) &&
				    line[7 + n] == ' ', line);
			snprintf(type, sizeof(type), "%s", line + 8 + n);
			ASSERT_TRUE(!strcmp(type, "counter") ||
				    !strcmp(type, "gauge") ||
				    !strcmp(type, "histogram"), line);
			if (!strcmp(type, "counter"))
				ASSERT_TRUE(n > 6 && !strcmp(fam + n - 6, "_total"),
					    line);
			else
				ASSERT_TRUE(n < 6 || strcmp(fam + n - 6, "_total"),
					    line);
			continue;
		}
		ASSERT_TRUE(line[0] != '#', line);
		samples++;
		/* A sample of the family just described, after its TYPE. */
		n = strcspn(line, "{ ");
		snprintf(name, sizeof(name), "%.*s", (int)n, line);
		ASSERT_TRUE(type[0] != '\0', line);
		if (!strcmp(type, "histogram")) {
			size_t f = strlen(fam);

			ASSERT_TRUE(!strncmp(name, fam, f) &&
				    (!strcmp(name + f, "_bucket") ||
				     !strcmp(name + f, "_sum") ||
				     !strcmp(name + f, "_count")), line);
		} else {
			ASSERT_STREQ(name, fam, line);
		}
		/* Labels, then one space and a value: no timestamp. */
		ASSERT_TRUE(line[n] == '{', line);
		ASSERT_TRUE(strstr(line, "} ") && !strchr(strrchr(line, '}') + 2, ' '),
			    line);
	}
	ASSERT_GE(families, 40, "families");
	ASSERT_GE(samples, 140, "samples");
	free(t);
}

/* Nothing attached: the families alone, no sample. */
static void test_prom_empty(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_TRUE(f != NULL, "memstream"))
		return;
	hbm_prom_write(f, NULL, 0, NULL, 0);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "# TYPE bpf_hbm_sent_packets_total counter\n") != NULL,
		    "families are described");
	ASSERT_TRUE(!strstr(buf, "} "), "no sample");
	free(buf);
}

static void test_fmt_seconds(void)
{
	static const struct {
		__u64 ns;
		const char *want;
	} c[] = {
		{ 0, "0" },
		{ 1, "0.000000001" },
		{ 50000, "0.00005" },
		{ 1500000000, "1.5" },
		{ 3600000000000ULL, "3600" },
		{ 18446744073709551615ULL, "18446744073.709551615" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		hbm_fmt_seconds(buf, sizeof(buf), c[i].ns);
		ASSERT_STREQ(buf, c[i].want, c[i].want);
	}
}

/* Two readings and the time between them give the rates. */
static void test_rates(void)
{
	struct hbm_dev_rate a = {}, b = {};
	struct hbm_rates r;

	a.packets = 1000;
	a.bytes = 1500000;
	a.marks = 10;
	a.cn = 1;
	a.ce = 5;
	a.drops[HBM_DROP_THRESH] = 3;
	b = a;
	b.packets += 500;		/* in 0.5 s */
	b.bytes += 750000;
	b.marks += 20;
	b.cn += 2;
	b.ce += 4;
	b.drops[HBM_DROP_THRESH] += 1;
	b.drops[HBM_DROP_NONTCP] += 2;
	hbm_rates_of(&a, &b, 500000000, &r);
	ASSERT_EQ(r.pps, 1000, "pps");
	ASSERT_EQ(r.bps, 12000000, "bit/s");
	ASSERT_EQ(r.marks, 40, "marks/s");
	ASSERT_EQ(r.cn, 4, "cn/s");
	ASSERT_EQ(r.ce, 8, "ce/s");
	ASSERT_EQ(r.drops, 6, "drops/s, every reason");

	/* No previous reading: attached since, counted from 0. */
	hbm_rates_of(NULL, &b, 2000000000, &r);
	ASSERT_EQ(r.pps, 750, "from 0: pps");
	ASSERT_EQ(r.drops, 3, "from 0: drops/s");

	/* Counters that went back: re-attached, new counters. */
	a.packets = 5000;
	hbm_rates_of(&a, &b, 1000000000, &r);
	ASSERT_EQ(r.pps, 1500, "reset: from 0");

	/* No time: no rate (and no division by 0). */
	hbm_rates_of(&a, &b, 0, &r);
	ASSERT_EQ(r.pps, 0, "dt 0: pps");
	ASSERT_EQ(r.bps, 0, "dt 0: bit/s");
}

static void test_iso8601(void)
{
	struct timespec ts = { .tv_sec = 1796245999, .tv_nsec = 123999999 };
	char buf[HBM_ISO_BUFSZ];

	hbm_fmt_iso8601(buf, sizeof(buf), &ts);
	ASSERT_STREQ(buf, "2026-12-02T21:13:19.123Z", "milliseconds, truncated");
	ts.tv_sec = 0;
	ts.tv_nsec = 5000000;
	hbm_fmt_iso8601(buf, sizeof(buf), &ts);
	ASSERT_STREQ(buf, "1970-01-01T00:00:00.005Z", "zero-padded");
}

static void test_watch_lines(void)
{
	struct hbm_dev_stats st[2];
	struct hbm_class_ent cls[2];
	struct hbm_rates r[2] = {
		{ .pps = 1000, .bps = 12000000, .drops = 6, .marks = 40,
		  .cn = 4, .ce = 8 },
		{ .pps = 0.3 },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	hbm_fixture(st, cls);
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		return;
	hbm_watch_print(f, false, "2026-12-02T21:13:19.123Z", 500000000, st,
			r, 2);
	fclose(f);
	ASSERT_STREQ(buf,
		     "2026-12-02T21:13:19.123Z hbm0 pps 1000.0 bit/s 12000000 drops/s 6.0 marks/s 40.0 cn/s 4.0 ce/s 8.0\n"
		     "2026-12-02T21:13:19.123Z ifindex7@netns4026532281 pps 0.3 bit/s 0 drops/s 0.0 marks/s 0.0 cn/s 0.0 ce/s 0.0\n",
		     "text");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	if (!ASSERT_TRUE(f != NULL, "memstream"))
		return;
	hbm_watch_print(f, true, "2026-12-02T21:13:19.123Z", 500000000, st,
			r, 2);
	fclose(f);
	ASSERT_STREQ(buf,
		     "{\"time\":\"2026-12-02T21:13:19.123Z\",\"interval_s\":0.5,\"devices\":["
		     "{\"dev\":\"hbm0\",\"ifindex\":2,\"netns\":4026531840,\"pps\":1000.0,\"bps\":12000000,\"drops_per_s\":6.0,\"marks_per_s\":40.0,\"cn_per_s\":4.0,\"ce_per_s\":8.0},"
		     "{\"dev\":null,\"ifindex\":7,\"netns\":4026532281,\"pps\":0.3,\"bps\":0,\"drops_per_s\":0.0,\"marks_per_s\":0.0,\"cn_per_s\":0.0,\"ce_per_s\":0.0}]}\n",
		     "json");
	free(buf);
}

/* show --json of the fixture, as hbm_json_write() writes it, or NULL. */
static char *hbm_show_text(const struct hbm_dev_stats *st,
			   const struct hbm_class_ent *cls)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	err = hbm_json_write(f, hbm_show_json(st, 2, cls, 2));
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Every field, in order, as show --json printf'd it before jansson wrote
 * it; but the class's path, then written "...c\u000ad\ufffd".
 */
static void test_show_json(void)
{
	struct hbm_dev_stats st[2];
	struct hbm_class_ent cls[2];
	json_t *o, *c;
	char *buf;

	hbm_fixture(st, cls);
	buf = hbm_show_text(st, cls);
	ASSERT_STREQ(buf,
		"{\"devices\":[{"
		"\"dev\":\"hbm0\",\"ifindex\":2,\"netns\":4026531840,\"instances\":1,\"configured\":false,\"config\":{\"rate_bps\":400000000,\"burst_ns\":100000,\"mark_ns\":50000,\"drop_ns\":500000,\"drop_large_ns\":480000,\"limit\":10000,\"flow_limit\":100,\"quantum\":0,\"initial_quantum\":0,\"quantum_auto\":true,\"initial_quantum_auto\":true,\"horizon_ns\":10000000000,\"large_pkt\":120,\"flags\":1,\"ecn\":true,\"cn\":true,\"late_credit\":true,\"attach_finished\":true},"
		"\"stats\":{\"enqueued\":1010,\"packets\":1000,\"bytes\":1514000,\"marks\":40,\"cn\":7,\"ce\":20,\"guard_saves\":2,\"cn_spared\":3,\"delayed\":900,\"fastpath\":100,\"drops\":6,\"vq_delay_ns\":50000,\"tstamp_tai\":4,\"tstamp_realtime\":0},"
		"\"drops\":{\"threshold\":5,\"nontcp\":0,\"horizon\":0,\"limit\":1,\"flow_limit\":0,\"nomem\":0,\"total\":6},"
		"\"lateness\":{\"credit_ns\":300000,\"envelope_ns\":300000,\"samples\":136,\"mean_ns\":11029,\"p50_ns\":2048000,\"p90_ns\":16384000,\"p99_ns\":16384000,\"hist_us\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},"
		"\"qlen\":10,\"flows\":2,\"idle_flows\":1,\"backlog\":15140,\"classes\":[{"
		"\"cgroup\":\"/sys/fs/cgroup/a \\\"b\\\"\\\\c\\nd\xef\xbf\xbd\",\"cgroup_id\":1000,\"level\":3,\"config\":{\"rate_bps\":100000000,\"burst_ns\":100000,\"mark_ns\":50000,\"drop_ns\":1500000,\"drop_large_ns\":480000},"
		"\"stats\":{\"enqueued\":0,\"packets\":600,\"bytes\":908400,\"marks\":9,\"cn\":0,\"ce\":0,\"guard_saves\":0,\"cn_spared\":0,\"delayed\":0,\"vq_delay_ns\":1234567,\"drops\":{\"threshold\":0,\"nontcp\":2,\"horizon\":0,\"limit\":0,\"flow_limit\":0,\"nomem\":0,\"total\":2}}},"
		"{\"cgroup\":null,\"cgroup_id\":1001,\"level\":3,\"config\":{\"rate_bps\":100000000,\"burst_ns\":100000,\"mark_ns\":50000,\"drop_ns\":1500000,\"drop_large_ns\":480000},"
		"\"stats\":{\"enqueued\":0,\"packets\":0,\"bytes\":0,\"marks\":0,\"cn\":0,\"ce\":0,\"guard_saves\":0,\"cn_spared\":0,\"delayed\":0,\"vq_delay_ns\":0,\"drops\":{\"threshold\":0,\"nontcp\":0,\"horizon\":0,\"limit\":0,\"flow_limit\":0,\"nomem\":0,\"total\":0}}}]},"
		"{\"dev\":null,\"ifindex\":7,\"netns\":4026532281,\"instances\":4,\"configured\":false,\"config\":{\"rate_bps\":1000000000,\"burst_ns\":100000,\"mark_ns\":50000,\"drop_ns\":500000,\"drop_large_ns\":480000,\"limit\":10000,\"flow_limit\":100,\"quantum\":0,\"initial_quantum\":0,\"quantum_auto\":true,\"initial_quantum_auto\":true,\"horizon_ns\":10000000000,\"large_pkt\":120,\"flags\":0,\"ecn\":false,\"cn\":true,\"late_credit\":true,\"attach_finished\":true},"
		"\"stats\":{\"enqueued\":0,\"packets\":0,\"bytes\":0,\"marks\":0,\"cn\":0,\"ce\":0,\"guard_saves\":0,\"cn_spared\":0,\"delayed\":0,\"fastpath\":0,\"drops\":0,\"vq_delay_ns\":0,\"tstamp_tai\":0,\"tstamp_realtime\":0},"
		"\"drops\":{\"threshold\":0,\"nontcp\":0,\"horizon\":0,\"limit\":0,\"flow_limit\":0,\"nomem\":0,\"total\":0},"
		"\"lateness\":{\"credit_ns\":100000,\"envelope_ns\":0,\"samples\":0,\"mean_ns\":0,\"p50_ns\":0,\"p90_ns\":0,\"p99_ns\":0,\"hist_us\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},"
		"\"qlen\":0,\"flows\":0,\"idle_flows\":0,\"backlog\":0,\"classes\":[]}]}"
		"\n", "show --json");
	o = buf ? json_loads(buf, 0, NULL) : NULL;
	ASSERT_TRUE(o != NULL, "jansson reads it back");
	c = json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(o, "devices"), 0), "classes"), 0), "cgroup");
	ASSERT_STREQ(json_string_value(c),
		     "/sys/fs/cgroup/a \"b\"\\c\nd\xef\xbf\xbd",
		     "the path, with U+FFFD for its byte that is not UTF-8");
	json_decref(o);
	free(buf);

	/* jansson's integers are signed: a u64 above 2^63 - 1 is clamped. */
	st[1].dr.packets = ~0ULL;
	st[1].dr.bytes = 1ULL << 63;
	st[1].dr.enqueued = (1ULL << 63) - 1;
	buf = hbm_show_text(st, cls);
	ASSERT_TRUE(buf && strstr(buf, "\"stats\":{\"enqueued\":9223372036854775807,\"packets\":9223372036854775807,\"bytes\":9223372036854775807,"),
		    "u64s above 2^63 - 1: 2^63 - 1");
	free(buf);
}

bool hbm_test_failed;

int main(int argc, char **argv)
{
	static const struct hbm_test tests[] = {
		HBM_TEST(test_prom_samples),
		HBM_TEST(test_prom_format),
		HBM_TEST(test_prom_empty),
		HBM_TEST(test_fmt_seconds),
		HBM_TEST(test_rates),
		HBM_TEST(test_iso8601),
		HBM_TEST(test_watch_lines),
		HBM_TEST(test_show_json),
	};
	char *t;

	/* The sample for prom.sh's parser, instead of the tests. */
	if (argc == 2 && !strcmp(argv[1], "--sample")) {
		t = hbm_sample();
		if (!t)
			return 1;
		fputs(t, stdout);
		free(t);
		return 0;
	}
	return hbm_test_run(tests, sizeof(tests) / sizeof(tests[0]), argc,
			    argv);
}
