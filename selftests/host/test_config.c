// SPDX-License-Identifier: GPL-2.0
/* Host tests for loader/config.c: shaping options -> struct hbm_config. */
#include <errno.h>
#include <stdarg.h>

#include "../hbm_test.h"
#include "../../loader/config.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct opt_ok {
	enum hbm_opt opt;
	const char *arg;
	__u64 want;
};

struct opt_bad {
	enum hbm_opt opt;
	const char *arg;
	const char *reason;
};

/* Apply "opt=arg" pairs to the defaults; 0 or -EINVAL with a reason. */
static int apply(struct hbm_config *cfg, char *err, size_t len, int n, ...)
{
	struct hbm_opts o = {};
	va_list ap;
	int i, ret = 0;

	va_start(ap, n);
	for (i = 0; i < n && !ret; i++) {
		enum hbm_opt opt = va_arg(ap, int);
		const char *arg = va_arg(ap, const char *);

		ret = hbm_opt_parse(&o, opt, arg, err, len);
	}
	va_end(ap);
	if (ret)
		return ret;
	return hbm_config_apply(cfg, &o, err, len);
}

static void test_defaults(void)
{
	struct hbm_config cfg;
	char err[HBM_ERRSZ] = "";

	hbm_config_default(&cfg);
	ASSERT_U64_EQ(cfg.rate_bps, HBM_DEF_RATE_BPS, "rate");
	ASSERT_U64_EQ(cfg.burst_ns, HBM_DEF_BURST_NS, "burst");
	ASSERT_U64_EQ(cfg.mark_ns, HBM_DEF_MARK_NS, "mark");
	ASSERT_U64_EQ(cfg.drop_ns, HBM_DEF_DROP_NS, "drop");
	ASSERT_U64_EQ(cfg.drop_large_ns, HBM_DEF_DROP_LARGE_NS, "drop-large");
	ASSERT_U64_EQ(cfg.horizon_ns, HBM_DEF_HORIZON_NS, "horizon");
	ASSERT_EQ(cfg.limit, HBM_DEF_LIMIT, "limit");
	ASSERT_EQ(cfg.flow_limit, HBM_DEF_FLOW_LIMIT, "flow-limit");
	ASSERT_EQ(cfg.large_pkt, HBM_DEF_LARGE_PKT, "large_pkt");
	ASSERT_EQ(cfg.flags, 0, "flags");
	ASSERT_EQ(cfg.quantum, HBM_QUANTUM_AUTO, "quantum: auto");
	ASSERT_EQ(cfg.initial_quantum, HBM_QUANTUM_AUTO,
		  "initial-quantum: auto");
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), "valid");
}

static void test_parse_ok(void)
{
	static const struct opt_ok c[] = {
		{ HBM_OPT_RATE, "50mbit", 50000000 },
		{ HBM_OPT_RATE, "1mbit", HBM_MIN_RATE_BPS },
		{ HBM_OPT_RATE, "400gbit", HBM_MAX_RATE_BPS },
		{ HBM_OPT_RATE, "12.5mbps", 100000000 },
		{ HBM_OPT_RATE, "1000000", 1000000 },
		{ HBM_OPT_BURST, "200us", 200000 },
		{ HBM_OPT_BURST, "200", 200000 },	/* bare: us */
		{ HBM_OPT_MARK, "0", 0 },
		{ HBM_OPT_DROP, "1ms", 1000000 },
		{ HBM_OPT_DROP_LARGE, "1.5ms", 1500000 },
		{ HBM_OPT_HORIZON, "3600s", 3600ULL * 1000000000 },
		{ HBM_OPT_LIMIT, "4294967295", 4294967295ULL },
		{ HBM_OPT_FLOW_LIMIT, "1", 1 },
		{ HBM_OPT_QUANTUM, "1514", 1514 },
		{ HBM_OPT_QUANTUM, "1514b", 1514 },
		{ HBM_OPT_QUANTUM, "4k", 4096 },
		{ HBM_OPT_QUANTUM, "1", 1 },
		{ HBM_OPT_QUANTUM, "auto", HBM_QUANTUM_AUTO },
		{ HBM_OPT_INITIAL_QUANTUM, "15140", 15140 },
		{ HBM_OPT_INITIAL_QUANTUM, "1048576", HBM_MAX_QUANTUM },
		{ HBM_OPT_INITIAL_QUANTUM, "1mb", HBM_MAX_QUANTUM },
		{ HBM_OPT_INITIAL_QUANTUM, "auto", HBM_QUANTUM_AUTO },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct hbm_opts o = {};
		char err[HBM_ERRSZ] = "";

		if (!ASSERT_OK(hbm_opt_parse(&o, c[i].opt, c[i].arg, err,
					     sizeof(err)), c[i].arg))
			continue;
		ASSERT_U64_EQ(o.val[c[i].opt], c[i].want, c[i].arg);
		ASSERT_EQ(o.given, 1U << c[i].opt, c[i].arg);
	}
}

static void test_parse_errors(void)
{
	static const struct opt_bad c[] = {
		{ HBM_OPT_RATE, "0", "rate must be positive" },
		{ HBM_OPT_RATE, "0mbit", "rate must be positive" },
		{ HBM_OPT_RATE, "999kbit",
		  "rate 999kbit out of range 1Mbit..400Gbit" },
		{ HBM_OPT_RATE, "401gbit",
		  "rate 401gbit out of range 1Mbit..400Gbit" },
		{ HBM_OPT_RATE, "99999999tbit",
		  "rate 99999999tbit out of range 1Mbit..400Gbit" },
		{ HBM_OPT_RATE, "-5mbit", "invalid rate '-5mbit'" },
		{ HBM_OPT_RATE, "fast", "invalid rate 'fast'" },
		{ HBM_OPT_RATE, "", "invalid rate ''" },
		{ HBM_OPT_RATE, "10 mbit", "invalid rate '10 mbit'" },
		{ HBM_OPT_BURST, "1furlong", "invalid burst '1furlong'" },
		{ HBM_OPT_MARK, "-1us", "invalid mark '-1us'" },
		{ HBM_OPT_DROP_LARGE, "x", "invalid drop-large 'x'" },
		{ HBM_OPT_HORIZON, "3601s",
		  "horizon 3601s out of range (at most 3600s)" },
		{ HBM_OPT_LIMIT, "10k", "invalid limit '10k'" },
		{ HBM_OPT_LIMIT, "4294967296",
		  "limit 4294967296 out of range (at most 4294967295)" },
		{ HBM_OPT_FLOW_LIMIT, "-1", "invalid flow-limit '-1'" },
		/* 0 is auto in the map, but tc-fq refuses a zero quantum. */
		{ HBM_OPT_QUANTUM, "0",
		  "quantum 0 out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_QUANTUM, "0b",
		  "quantum 0b out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_QUANTUM, "1048577",
		  "quantum 1048577 out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_QUANTUM, "99999999999999999999",
		  "quantum 99999999999999999999 out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_QUANTUM, "-1", "invalid quantum '-1'" },
		{ HBM_OPT_QUANTUM, "abc", "invalid quantum 'abc'" },
		{ HBM_OPT_QUANTUM, "", "invalid quantum ''" },
		{ HBM_OPT_QUANTUM, "1514 b", "invalid quantum '1514 b'" },
		{ HBM_OPT_INITIAL_QUANTUM, "2m",
		  "initial-quantum 2m out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_INITIAL_QUANTUM, "0",
		  "initial-quantum 0 out of range (1..1048576 bytes, or auto)" },
		{ HBM_OPT_INITIAL_QUANTUM, "Auto", "invalid initial-quantum 'Auto'" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct hbm_opts o = {};
		char err[HBM_ERRSZ] = "";

		ASSERT_EQ(hbm_opt_parse(&o, c[i].opt, c[i].arg, err,
					sizeof(err)), -EINVAL, c[i].arg);
		ASSERT_STREQ(err, c[i].reason, c[i].arg);
		ASSERT_EQ(o.given, 0, c[i].arg);
	}
}

static void test_apply(void)
{
	struct hbm_config cfg;
	char err[HBM_ERRSZ] = "";

	hbm_config_default(&cfg);
	if (!ASSERT_OK(apply(&cfg, err, sizeof(err), 4,
			     HBM_OPT_RATE, "50mbit", HBM_OPT_BURST, "1ms",
			     HBM_OPT_LIMIT, "500", HBM_OPT_FLOW_LIMIT, "500"),
		       err))
		return;
	ASSERT_U64_EQ(cfg.rate_bps, 50000000, "rate");
	ASSERT_U64_EQ(cfg.burst_ns, 1000000, "burst");
	ASSERT_EQ(cfg.limit, 500, "limit");
	ASSERT_EQ(cfg.flow_limit, 500, "flow-limit");
	/* Untouched fields keep their values. */
	ASSERT_U64_EQ(cfg.mark_ns, HBM_DEF_MARK_NS, "mark");
	ASSERT_U64_EQ(cfg.horizon_ns, HBM_DEF_HORIZON_NS, "horizon");
	ASSERT_EQ(cfg.large_pkt, HBM_DEF_LARGE_PKT, "large_pkt");

	/* set: starts from the current values. */
	if (!ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			     HBM_OPT_RATE, "2gbit"), err))
		return;
	ASSERT_U64_EQ(cfg.rate_bps, 2000000000, "rate 2");
	ASSERT_U64_EQ(cfg.burst_ns, 1000000, "burst kept");
}

/* A quantum given is kept by set; auto puts back the derived one. */
static void test_apply_quantum(void)
{
	struct hbm_config cfg;
	char err[HBM_ERRSZ] = "";

	hbm_config_default(&cfg);
	if (!ASSERT_OK(apply(&cfg, err, sizeof(err), 2,
			     HBM_OPT_QUANTUM, "1514",
			     HBM_OPT_INITIAL_QUANTUM, "3028"), err))
		return;
	ASSERT_EQ(cfg.quantum, 1514, "quantum");
	ASSERT_EQ(cfg.initial_quantum, 3028, "initial-quantum");
	ASSERT_EQ(cfg.flow_limit, HBM_DEF_FLOW_LIMIT, "flow-limit kept");
	if (!ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			     HBM_OPT_RATE, "2gbit"), err))
		return;
	ASSERT_EQ(cfg.quantum, 1514, "quantum kept by set");
	ASSERT_EQ(cfg.initial_quantum, 3028, "initial-quantum kept by set");
	if (!ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			     HBM_OPT_QUANTUM, "auto"), err))
		return;
	ASSERT_EQ(cfg.quantum, HBM_QUANTUM_AUTO, "quantum back to auto");
	ASSERT_EQ(cfg.initial_quantum, 3028, "initial-quantum untouched");
}

/* As sch_fq: 2 and 10 times MTU + link-layer header when auto. */
static void test_quantum_bytes(void)
{
	ASSERT_EQ(hbm_quantum_bytes(HBM_QUANTUM_AUTO, 1514,
				    HBM_DEF_QUANTUM_MTUS), 3028, "auto");
	ASSERT_EQ(hbm_quantum_bytes(HBM_QUANTUM_AUTO, 1514,
				    HBM_DEF_INITIAL_QUANTUM_MTUS), 15140,
		  "initial auto");
	ASSERT_EQ(hbm_quantum_bytes(HBM_QUANTUM_AUTO, 65550,
				    HBM_DEF_INITIAL_QUANTUM_MTUS), 655500,
		  "lo's 64k MTU");
	ASSERT_EQ(hbm_quantum_bytes(1514, 9014, HBM_DEF_QUANTUM_MTUS), 1514,
		  "given: as is");
	ASSERT_EQ(hbm_quantum_bytes(HBM_QUANTUM_AUTO, 0,
				    HBM_DEF_QUANTUM_MTUS), 0,
		  "auto, MTU unknown");
}

static void test_drop_large_follows_drop(void)
{
	struct hbm_config cfg;
	char err[HBM_ERRSZ] = "";

	/* 480/500 of the new drop. */
	hbm_config_default(&cfg);
	if (ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			    HBM_OPT_DROP, "1ms"), err)) {
		ASSERT_U64_EQ(cfg.drop_ns, 1000000, "drop");
		ASSERT_U64_EQ(cfg.drop_large_ns, 960000, "drop-large");
	}
	/* Given explicitly, it is used as is. */
	hbm_config_default(&cfg);
	if (ASSERT_OK(apply(&cfg, err, sizeof(err), 2, HBM_OPT_DROP, "1ms",
			    HBM_OPT_DROP_LARGE, "1ms"), err))
		ASSERT_U64_EQ(cfg.drop_large_ns, 1000000, "explicit");
	/* Equal stays equal. */
	if (ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			    HBM_OPT_DROP, "200us"), err))
		ASSERT_U64_EQ(cfg.drop_large_ns, 200000, "ratio 1");
	/* --drop-large alone leaves drop alone. */
	hbm_config_default(&cfg);
	if (ASSERT_OK(apply(&cfg, err, sizeof(err), 1,
			    HBM_OPT_DROP_LARGE, "300us"), err)) {
		ASSERT_U64_EQ(cfg.drop_ns, HBM_DEF_DROP_NS, "drop kept");
		ASSERT_U64_EQ(cfg.drop_large_ns, 300000, "drop-large");
	}
}

struct apply_bad {
	const char *name;
	enum hbm_opt opt1;
	const char *arg1;
	enum hbm_opt opt2;
	const char *arg2;
	const char *reason;
};

static void test_apply_errors(void)
{
	static const struct apply_bad c[] = {
		{ "mark=drop", HBM_OPT_MARK, "500us", HBM_OPT_DROP, "500us",
		  "mark threshold (500us) must be below drop threshold (500us)" },
		{ "mark>drop", HBM_OPT_MARK, "1ms", HBM_OPT_MARK, "1ms",
		  "mark threshold (1ms) must be below drop threshold (500us)" },
		{ "drop0", HBM_OPT_DROP, "0", HBM_OPT_DROP, "0",
		  "mark threshold (50us) must be below drop threshold (0ns)" },
		{ "dl>drop", HBM_OPT_DROP_LARGE, "501us", HBM_OPT_DROP_LARGE,
		  "501us",
		  "drop-large threshold (501us) must not exceed drop threshold (500us)" },
		{ "dl<=mark", HBM_OPT_DROP_LARGE, "50us", HBM_OPT_DROP_LARGE,
		  "50us",
		  "drop-large threshold (50us) must be above mark threshold (50us)" },
		{ "mark>dl", HBM_OPT_MARK, "490us", HBM_OPT_MARK, "490us",
		  "drop-large threshold (480us) must be above mark threshold (490us)" },
		{ "burst0", HBM_OPT_BURST, "0", HBM_OPT_BURST, "0",
		  "burst must be positive" },
		{ "horizon0", HBM_OPT_HORIZON, "0s", HBM_OPT_HORIZON, "0s",
		  "horizon must be positive" },
		{ "limit0", HBM_OPT_LIMIT, "0", HBM_OPT_LIMIT, "0",
		  "limit must be positive" },
		{ "flow0", HBM_OPT_FLOW_LIMIT, "0", HBM_OPT_FLOW_LIMIT, "0",
		  "flow-limit must be positive" },
		{ "flow>limit", HBM_OPT_LIMIT, "50", HBM_OPT_FLOW_LIMIT, "51",
		  "flow-limit (51) must not exceed limit (50)" },
		{ "limit<flow", HBM_OPT_LIMIT, "99", HBM_OPT_LIMIT, "99",
		  "flow-limit (100) must not exceed limit (99)" },
	};
	struct hbm_config cfg, before;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		char err[HBM_ERRSZ] = "";

		hbm_config_default(&cfg);
		before = cfg;
		ASSERT_EQ(apply(&cfg, err, sizeof(err), 2, c[i].opt1,
				c[i].arg1, c[i].opt2, c[i].arg2), -EINVAL,
			  c[i].name);
		ASSERT_STREQ(err, c[i].reason, c[i].name);
		/* Nothing is changed on error. */
		ASSERT_TRUE(!memcmp(&cfg, &before, sizeof(cfg)), c[i].name);
	}
}

static void test_validate(void)
{
	struct hbm_config cfg;
	char err[HBM_ERRSZ] = "";

	/* What a hand-edited map could hold. */
	hbm_config_default(&cfg);
	cfg.rate_bps = 0;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL, "0");
	ASSERT_STREQ(err, "rate must be positive", "rate 0");
	cfg.rate_bps = 999999;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL, "lo");
	ASSERT_STREQ(err, "rate 999.999Kbit out of range 1Mbit..400Gbit",
		     "rate low");
	cfg.rate_bps = HBM_MAX_RATE_BPS + 1;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL, "hi");
	hbm_config_default(&cfg);
	cfg.burst_ns = HBM_MAX_TIME_NS + 1;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL,
		  "burst");
	ASSERT_STREQ(err, "burst 3600.000000001s out of range (at most 3600s)",
		     "burst max");
	hbm_config_default(&cfg);
	cfg.flags = HBM_F_ECN | HBM_F_NO_CN;
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), "flags");
	cfg.flags = 1U << 7;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL,
		  "bad flags");
	ASSERT_STREQ(err, "unknown flags 0x80", "flags msg");
	/* Boundaries that are fine. */
	hbm_config_default(&cfg);
	cfg.mark_ns = 0;
	cfg.drop_large_ns = 1;
	cfg.drop_ns = 1;
	cfg.limit = 1;
	cfg.flow_limit = 1;
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), err);
	/* No more than the qdisc's purge frees (HBM_MAX_LIMIT). */
	cfg.limit = HBM_MAX_LIMIT;
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), err);
	cfg.limit = HBM_MAX_LIMIT + 1;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL,
		  "limit over the purge's bound");
	ASSERT_STREQ(err, "limit 8388609 out of range (at most 8388608)",
		     "limit max msg");
	cfg.limit = 1;
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), err);
	/* A hand-edited map's quantum: auto or 1..HBM_MAX_QUANTUM. */
	hbm_config_default(&cfg);
	cfg.quantum = HBM_MAX_QUANTUM;
	cfg.initial_quantum = 1;
	ASSERT_OK(hbm_config_validate(&cfg, err, sizeof(err)), err);
	cfg.quantum = HBM_MAX_QUANTUM + 1;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL,
		  "quantum over the max");
	ASSERT_STREQ(err, "quantum 1048577 out of range (1..1048576 bytes, or auto)",
		     "quantum max msg");
	cfg.quantum = HBM_QUANTUM_AUTO;
	cfg.initial_quantum = 0xffffffff;
	ASSERT_EQ(hbm_config_validate(&cfg, err, sizeof(err)), -EINVAL,
		  "initial-quantum over the max");
	ASSERT_STREQ(err, "initial-quantum 4294967295 out of range (1..1048576 bytes, or auto)",
		     "initial-quantum max msg");
}

/* --cn and --late-credit switch their flag and nothing else. */
static void test_switches(void)
{
	char err[HBM_ERRSZ];
	struct hbm_config cfg, was;
	struct hbm_opts o = {};

	hbm_config_default(&cfg);
	cfg.flags = HBM_F_ECN;
	was = cfg;
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_CN, "off", err, sizeof(err)), err);
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_LATE_CREDIT, "off", err,
				sizeof(err)), err);
	ASSERT_OK(hbm_config_apply(&cfg, &o, err, sizeof(err)), err);
	ASSERT_EQ(cfg.flags, HBM_F_ECN | HBM_F_NO_CN | HBM_F_FIXED_BURST,
		  "both off set both flags, ECN kept");
	ASSERT_U64_EQ(cfg.burst_ns, was.burst_ns, "burst untouched");
	memset(&o, 0, sizeof(o));
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_LATE_CREDIT, "on", err,
				sizeof(err)), err);
	ASSERT_OK(hbm_config_apply(&cfg, &o, err, sizeof(err)), err);
	ASSERT_EQ(cfg.flags, HBM_F_ECN | HBM_F_NO_CN,
		  "late-credit on clears only its flag");
	ASSERT_EQ(hbm_opt_parse(&o, HBM_OPT_CN, "yes", err, sizeof(err)),
		  -EINVAL, "bad switch");
	ASSERT_STREQ(err, "invalid cn 'yes' (on or off)", "switch msg");
	ASSERT_EQ(hbm_opt_parse(&o, HBM_OPT_LATE_CREDIT, "", err,
				sizeof(err)), -EINVAL, "empty switch");
	ASSERT_STREQ(err, "invalid late-credit '' (on or off)", "empty msg");
}

static void test_opt_names(void)
{
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_RATE), "rate", "rate");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_DROP_LARGE), "drop-large", "dl");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_FLOW_LIMIT), "flow-limit", "fl");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_LATE_CREDIT), "late-credit", "lc");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_QUANTUM), "quantum", "q");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_INITIAL_QUANTUM), "initial-quantum",
		     "iq");
	ASSERT_STREQ(hbm_opt_name(HBM_OPT_MAX), "?", "max");
}

/* attach without --rate: ethtool's speed (Mb/s) as the rate. */
static void test_link_rate(void)
{
	char err[HBM_ERRSZ];
	__u64 bps = 42;

	ASSERT_OK(hbm_link_rate(10000, &bps, err, sizeof(err)), "veth's");
	ASSERT_U64_EQ(bps, 10000000000ULL, "10000 Mb/s is 10gbit");
	ASSERT_OK(hbm_link_rate(1, &bps, err, sizeof(err)), "1 Mb/s");
	ASSERT_U64_EQ(bps, HBM_MIN_RATE_BPS, "the lowest rate");
	ASSERT_OK(hbm_link_rate(400000, &bps, err, sizeof(err)), "400G");
	ASSERT_U64_EQ(bps, HBM_MAX_RATE_BPS, "the highest rate");
	/* Unknown: no carrier (SPEED_UNKNOWN), or none (0, as we pass). */
	bps = 42;
	ASSERT_EQ(hbm_link_rate(HBM_SPEED_UNKNOWN, &bps, err, sizeof(err)),
		  -ENODATA, "SPEED_UNKNOWN");
	ASSERT_STREQ(err, "the link speed is unknown; give --rate", "reason");
	ASSERT_U64_EQ(bps, 42, "left alone");
	ASSERT_EQ(hbm_link_rate((__u32)-1, &bps, err, sizeof(err)), -ENODATA,
		  "-1");
	ASSERT_EQ(hbm_link_rate(0, &bps, err, sizeof(err)), -ENODATA, "0");
	ASSERT_STREQ(err, "the link speed is unknown; give --rate", "reason");
	/* Above bpf_hbm's highest rate: 800G. */
	ASSERT_EQ(hbm_link_rate(800000, &bps, err, sizeof(err)), -ERANGE,
		  "800G");
	ASSERT_STREQ(err, "the link speed 800Gbit is above bpf_hbm's 400Gbit; give --rate",
		     "reason");
	ASSERT_U64_EQ(bps, 42, "left alone");
	/* A speed no u64 multiplication could overflow, still refused. */
	ASSERT_EQ(hbm_link_rate(0xfffffffeU, &bps, err, sizeof(err)), -ERANGE,
		  "huge");
	ASSERT_EQ(hbm_link_rate(0, &bps, NULL, 0), -ENODATA, "no err buffer");
}

/* A class's options: from the defaults (add) or its own (set), checked. */
static void test_class_apply(void)
{
	struct hbm_class_config cc, cur;
	struct hbm_config def;
	struct hbm_opts o = {};
	char err[HBM_ERRSZ];

	hbm_config_default(&def);
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_RATE, "100mbit", err, sizeof(err)),
		  "--rate 100mbit");
	ASSERT_OK(hbm_class_config_apply(&cc, NULL, &o, err, sizeof(err)),
		  "class add --rate 100mbit");
	ASSERT_U64_EQ(cc.rate_bps, 100000000ULL, "its rate");
	ASSERT_U64_EQ(cc.mark_ns, def.mark_ns, "HBM's mark");
	ASSERT_U64_EQ(cc.drop_ns, def.drop_ns, "HBM's drop");
	ASSERT_U64_EQ(cc.drop_large_ns, def.drop_large_ns, "HBM's drop-large");

	/* set --mark 100us keeps what the class had. */
	cur = cc;
	cur.burst_ns = 2000000;
	memset(&o, 0, sizeof(o));
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_MARK, "100us", err, sizeof(err)),
		  "--mark 100us");
	ASSERT_OK(hbm_class_config_apply(&cc, &cur, &o, err, sizeof(err)),
		  "class set --mark 100us");
	ASSERT_U64_EQ(cc.mark_ns, 100000, "the new mark");
	ASSERT_U64_EQ(cc.rate_bps, 100000000ULL, "the rate kept");
	ASSERT_U64_EQ(cc.burst_ns, 2000000, "the burst kept");

	/* Checked as a device's: mark at or over drop is refused. */
	memset(&o, 0, sizeof(o));
	ASSERT_OK(hbm_opt_parse(&o, HBM_OPT_MARK, "1ms", err, sizeof(err)),
		  "--mark 1ms");
	ASSERT_EQ(hbm_class_config_apply(&cc, &cur, &o, err, sizeof(err)),
		  -EINVAL, "mark over drop refused");
	ASSERT_TRUE(strstr(err, "mark") != NULL, "the reason names mark");
}

HBM_TEST_MAIN(
	HBM_TEST(test_link_rate),
	HBM_TEST(test_defaults),
	HBM_TEST(test_parse_ok),
	HBM_TEST(test_parse_errors),
	HBM_TEST(test_apply),
	HBM_TEST(test_apply_quantum),
	HBM_TEST(test_quantum_bytes),
	HBM_TEST(test_drop_large_follows_drop),
	HBM_TEST(test_apply_errors),
	HBM_TEST(test_validate),
	HBM_TEST(test_switches),
	HBM_TEST(test_opt_names),
	HBM_TEST(test_class_apply),
)
