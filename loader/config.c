// SPDX-License-Identifier: GPL-2.0
/* Shaping options -> struct hbm_config: parsing and validation (pure). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "units.h"

static const char *const hbm_opt_names[HBM_OPT_MAX] = {
	[HBM_OPT_RATE] = "rate",
	[HBM_OPT_BURST] = "burst",
	[HBM_OPT_MARK] = "mark",
	[HBM_OPT_DROP] = "drop",
	[HBM_OPT_DROP_LARGE] = "drop-large",
	[HBM_OPT_LIMIT] = "limit",
	[HBM_OPT_FLOW_LIMIT] = "flow-limit",
	[HBM_OPT_HORIZON] = "horizon",
	[HBM_OPT_CN] = "cn",
	[HBM_OPT_LATE_CREDIT] = "late-credit",
	[HBM_OPT_QUANTUM] = "quantum",
	[HBM_OPT_INITIAL_QUANTUM] = "initial-quantum",
};

const char *hbm_opt_name(enum hbm_opt opt)
{
	return opt < HBM_OPT_MAX ? hbm_opt_names[opt] : "?";
}

void hbm_config_default(struct hbm_config *cfg)
{
	*cfg = (struct hbm_config)HBM_CONFIG_DEFAULT;
}

static int __attribute__((format(printf, 3, 4)))
hbm_cfg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int hbm_parse_rate_opt(const char *arg, __u64 *out, char *err,
			      size_t errlen)
{
	uint64_t v;
	int ret;

	ret = hbm_parse_rate(arg, &v);
	if (ret == -ERANGE)
		goto range;
	if (ret)
		return hbm_cfg_err(err, errlen, "invalid rate '%s'", arg);
	if (!v)
		return hbm_cfg_err(err, errlen, "rate must be positive");
	if (v < HBM_MIN_RATE_BPS || v > HBM_MAX_RATE_BPS)
		goto range;
	*out = v;
	return 0;
range:
	return hbm_cfg_err(err, errlen, "rate %s out of range 1Mbit..400Gbit",
			  arg);
}

static int hbm_parse_time_opt(enum hbm_opt opt, const char *arg, __u64 *out,
			      char *err, size_t errlen)
{
	const char *name = hbm_opt_name(opt);
	uint64_t v;
	int ret;

	ret = hbm_parse_time(arg, &v);
	if (ret == -ERANGE || (!ret && v > HBM_MAX_TIME_NS))
		return hbm_cfg_err(err, errlen, "%s %s out of range (at most 3600s)",
				  name, arg);
	if (ret)
		return hbm_cfg_err(err, errlen, "invalid %s '%s'", name, arg);
	*out = v;
	return 0;
}

static int hbm_parse_count_opt(enum hbm_opt opt, const char *arg, __u64 *out,
			       char *err, size_t errlen)
{
	const char *name = hbm_opt_name(opt);
	uint32_t v;
	int ret;

	ret = hbm_parse_u32(arg, &v);
	if (ret == -ERANGE)
		return hbm_cfg_err(err, errlen,
				  "%s %s out of range (at most 4294967295)",
				  name, arg);
	if (ret)
		return hbm_cfg_err(err, errlen, "invalid %s '%s'", name, arg);
	*out = v;
	return 0;
}

/* Both quantums' range error, quoting the value as given or stored. */
static int hbm_quantum_range_err(enum hbm_opt opt, const char *val,
				 char *err, size_t errlen)
{
	return hbm_cfg_err(err, errlen,
			  "%s %s out of range (1..%u bytes, or auto)",
			  hbm_opt_name(opt), val, HBM_MAX_QUANTUM);
}

/*
 * Bytes as tc's sizes ("1514", "1514b", "4k"), or "auto". 0 means auto in
 * the configuration, so a literal 0 is refused (tc-fq refuses it too).
 */
static int hbm_parse_quantum_opt(enum hbm_opt opt, const char *arg,
				 __u64 *out, char *err, size_t errlen)
{
	uint64_t v;
	int ret;

	if (!strcmp(arg, "auto")) {
		*out = HBM_QUANTUM_AUTO;
		return 0;
	}
	ret = hbm_parse_size(arg, &v);
	if (ret == -ERANGE || (!ret && (!v || v > HBM_MAX_QUANTUM)))
		return hbm_quantum_range_err(opt, arg, err, errlen);
	if (ret)
		return hbm_cfg_err(err, errlen, "invalid %s '%s'",
				  hbm_opt_name(opt), arg);
	*out = v;
	return 0;
}

static int hbm_parse_switch_opt(enum hbm_opt opt, const char *arg,
				__u64 *out, char *err, size_t errlen)
{
	if (!strcmp(arg, "on"))
		*out = 1;
	else if (!strcmp(arg, "off"))
		*out = 0;
	else
		return hbm_cfg_err(err, errlen, "invalid %s '%s' (on or off)",
				  hbm_opt_name(opt), arg);
	return 0;
}

int hbm_opt_parse(struct hbm_opts *o, enum hbm_opt opt, const char *arg,
		  char *err, size_t errlen)
{
	__u64 v = 0;
	int ret;

	switch (opt) {
	case HBM_OPT_RATE:
		ret = hbm_parse_rate_opt(arg, &v, err, errlen);
		break;
	case HBM_OPT_BURST:
	case HBM_OPT_MARK:
	case HBM_OPT_DROP:
	case HBM_OPT_DROP_LARGE:
	case HBM_OPT_HORIZON:
		ret = hbm_parse_time_opt(opt, arg, &v, err, errlen);
		break;
	case HBM_OPT_LIMIT:
	case HBM_OPT_FLOW_LIMIT:
		ret = hbm_parse_count_opt(opt, arg, &v, err, errlen);
		break;
	case HBM_OPT_CN:
	case HBM_OPT_LATE_CREDIT:
		ret = hbm_parse_switch_opt(opt, arg, &v, err, errlen);
		break;
	case HBM_OPT_QUANTUM:
	case HBM_OPT_INITIAL_QUANTUM:
		ret = hbm_parse_quantum_opt(opt, arg, &v, err, errlen);
		break;
	default:
		ret = hbm_cfg_err(err, errlen, "unknown option %d", (int)opt);
		break;
	}
	if (ret)
		return ret;
	o->val[opt] = v;
	o->given |= 1U << opt;
	return 0;
}

__u32 hbm_quantum_bytes(__u32 val, __u32 psched_mtu, unsigned int mtus)
{
	return val != HBM_QUANTUM_AUTO ? val : psched_mtu * mtus;
}

/* Each quantum is auto (0) or 1..HBM_MAX_QUANTUM bytes. */
static int hbm_quantums_validate(const struct hbm_config *cfg, char *err,
				 size_t errlen)
{
	char v[16];

	if (cfg->quantum > HBM_MAX_QUANTUM) {
		snprintf(v, sizeof(v), "%u", cfg->quantum);
		return hbm_quantum_range_err(HBM_OPT_QUANTUM, v, err, errlen);
	}
	if (cfg->initial_quantum > HBM_MAX_QUANTUM) {
		snprintf(v, sizeof(v), "%u", cfg->initial_quantum);
		return hbm_quantum_range_err(HBM_OPT_INITIAL_QUANTUM, v, err,
					     errlen);
	}
	return 0;
}

int hbm_config_validate(const struct hbm_config *cfg, char *err,
			size_t errlen)
{
	const struct {
		const char *name;
		__u64 ns;
	} times[] = {
		{ "burst", cfg->burst_ns },
		{ "mark", cfg->mark_ns },
		{ "drop", cfg->drop_ns },
		{ "drop-large", cfg->drop_large_ns },
		{ "horizon", cfg->horizon_ns },
	};
	char a[HBM_FMT_BUFSZ], b[HBM_FMT_BUFSZ];
	size_t i;

	if (!cfg->rate_bps)
		return hbm_cfg_err(err, errlen, "rate must be positive");
	if (cfg->rate_bps < HBM_MIN_RATE_BPS ||
	    cfg->rate_bps > HBM_MAX_RATE_BPS) {
		hbm_fmt_rate(a, sizeof(a), cfg->rate_bps);
		return hbm_cfg_err(err, errlen,
				  "rate %s out of range 1Mbit..400Gbit", a);
	}
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		if (times[i].ns <= HBM_MAX_TIME_NS)
			continue;
		hbm_fmt_time(a, sizeof(a), times[i].ns);
		return hbm_cfg_err(err, errlen,
				  "%s %s out of range (at most 3600s)",
				  times[i].name, a);
	}
	if (!cfg->burst_ns)
		return hbm_cfg_err(err, errlen, "burst must be positive");
	if (!cfg->horizon_ns)
		return hbm_cfg_err(err, errlen, "horizon must be positive");
	if (cfg->mark_ns >= cfg->drop_ns) {
		hbm_fmt_time(a, sizeof(a), cfg->mark_ns);
		hbm_fmt_time(b, sizeof(b), cfg->drop_ns);
		return hbm_cfg_err(err, errlen,
				  "mark threshold (%s) must be below drop threshold (%s)",
				  a, b);
	}
	if (cfg->drop_large_ns > cfg->drop_ns) {
		hbm_fmt_time(a, sizeof(a), cfg->drop_large_ns);
		hbm_fmt_time(b, sizeof(b), cfg->drop_ns);
		return hbm_cfg_err(err, errlen,
				  "drop-large threshold (%s) must not exceed drop threshold (%s)",
				  a, b);
	}
	if (cfg->drop_large_ns <= cfg->mark_ns) {
		hbm_fmt_time(a, sizeof(a), cfg->drop_large_ns);
		hbm_fmt_time(b, sizeof(b), cfg->mark_ns);
		return hbm_cfg_err(err, errlen,
				  "drop-large threshold (%s) must be above mark threshold (%s)",
				  a, b);
	}
	if (!cfg->limit)
		return hbm_cfg_err(err, errlen, "limit must be positive");
	if (cfg->limit > HBM_MAX_LIMIT)
		return hbm_cfg_err(err, errlen,
				  "limit %u out of range (at most %u)",
				  cfg->limit, HBM_MAX_LIMIT);
	if (!cfg->flow_limit)
		return hbm_cfg_err(err, errlen, "flow-limit must be positive");
	if (cfg->flow_limit > cfg->limit)
		return hbm_cfg_err(err, errlen,
				  "flow-limit (%u) must not exceed limit (%u)",
				  cfg->flow_limit, cfg->limit);
	if (cfg->flags & ~HBM_F_ALL)
		return hbm_cfg_err(err, errlen, "unknown flags 0x%x",
				  cfg->flags);
	return hbm_quantums_validate(cfg, err, errlen);
}

static bool hbm_given(const struct hbm_opts *o, enum hbm_opt opt)
{
	return o->given & (1U << opt);
}

int hbm_config_apply(struct hbm_config *cfg, const struct hbm_opts *o,
		     char *err, size_t errlen)
{
	struct hbm_config c = *cfg;
	int ret;

	if (hbm_given(o, HBM_OPT_RATE))
		c.rate_bps = o->val[HBM_OPT_RATE];
	if (hbm_given(o, HBM_OPT_BURST))
		c.burst_ns = o->val[HBM_OPT_BURST];
	if (hbm_given(o, HBM_OPT_MARK))
		c.mark_ns = o->val[HBM_OPT_MARK];
	if (hbm_given(o, HBM_OPT_DROP))
		c.drop_ns = o->val[HBM_OPT_DROP];
	if (hbm_given(o, HBM_OPT_DROP_LARGE))
		c.drop_large_ns = o->val[HBM_OPT_DROP_LARGE];
	if (hbm_given(o, HBM_OPT_LIMIT))
		c.limit = o->val[HBM_OPT_LIMIT];
	if (hbm_given(o, HBM_OPT_FLOW_LIMIT))
		c.flow_limit = o->val[HBM_OPT_FLOW_LIMIT];
	if (hbm_given(o, HBM_OPT_HORIZON))
		c.horizon_ns = o->val[HBM_OPT_HORIZON];
	if (hbm_given(o, HBM_OPT_QUANTUM))
		c.quantum = o->val[HBM_OPT_QUANTUM];
	if (hbm_given(o, HBM_OPT_INITIAL_QUANTUM))
		c.initial_quantum = o->val[HBM_OPT_INITIAL_QUANTUM];
	/* Both switches name the behaviour; the flags store its absence. */
	if (hbm_given(o, HBM_OPT_CN))
		c.flags = o->val[HBM_OPT_CN] ? c.flags & ~HBM_F_NO_CN :
					       c.flags | HBM_F_NO_CN;
	if (hbm_given(o, HBM_OPT_LATE_CREDIT))
		c.flags = o->val[HBM_OPT_LATE_CREDIT] ?
			  c.flags & ~HBM_F_FIXED_BURST :
			  c.flags | HBM_F_FIXED_BURST;

	/* drop-large follows drop, keeping its ratio, unless given. */
	if (hbm_given(o, HBM_OPT_DROP) && !hbm_given(o, HBM_OPT_DROP_LARGE) &&
	    cfg->drop_ns)
		c.drop_large_ns = (unsigned __int128)cfg->drop_large_ns *
				  c.drop_ns / cfg->drop_ns;

	ret = hbm_config_validate(&c, err, errlen);
	if (ret)
		return ret;
	*cfg = c;
	return 0;
}

int hbm_link_rate(__u32 mbps, __u64 *bps, char *err, size_t errlen)
{
	char r[HBM_FMT_BUFSZ];
	__u64 v = (__u64)mbps * 1000000;

	if (!mbps || mbps == HBM_SPEED_UNKNOWN) {
		hbm_cfg_err(err, errlen, "the link speed is unknown; give --rate");
		return -ENODATA;
	}
	if (v > HBM_MAX_RATE_BPS) {
		hbm_fmt_rate(r, sizeof(r), v);
		hbm_cfg_err(err, errlen, "the link speed %s is above bpf_hbm's 400Gbit; give --rate",
			    r);
		return -ERANGE;
	}
	*bps = v;
	return 0;
}

/*
 * @o applied to a class's configuration: HBM's defaults, or @cur. Through
 * a device's configuration, so that a class's options are defaulted and
 * checked as a device's are (mark < drop-large <= drop; --drop without
 * --drop-large keeps drop-large's ratio to drop; the rate's range).
 */
int hbm_class_config_apply(struct hbm_class_config *cc,
			   const struct hbm_class_config *cur,
			   const struct hbm_opts *o, char *err, size_t len)
{
	struct hbm_config c;

	hbm_config_default(&c);
	memset(cc, 0, sizeof(*cc));
	if (cur) {
		*cc = *cur;
		c.rate_bps = cur->rate_bps;
		c.burst_ns = cur->burst_ns;
		c.mark_ns = cur->mark_ns;
		c.drop_ns = cur->drop_ns;
		c.drop_large_ns = cur->drop_large_ns;
	}
	if (hbm_config_apply(&c, o, err, len))
		return -EINVAL;
	cc->rate_bps = c.rate_bps;
	cc->burst_ns = c.burst_ns;
	cc->mark_ns = c.mark_ns;
	cc->drop_ns = c.drop_ns;
	cc->drop_large_ns = c.drop_large_ns;
	return 0;
}
