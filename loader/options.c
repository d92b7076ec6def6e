// SPDX-License-Identifier: GPL-2.0
/* The one table of bpf-hbm's options: see options.h. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "units.h"

#define HBM_SHAPING	(HBM_CMD_ATTACH | HBM_CMD_SET)
#define HBM_SHAPE(opt, arg) \
	{ NULL, arg, HBM_OPTV_SHAPE + (opt), HBM_SHAPING }
/* A class has its own rate and thresholds; the device gives the rest. */
#define HBM_CLASS_SHAPE(opt, arg) \
	{ NULL, arg, HBM_OPTV_SHAPE + (opt), \
	  HBM_SHAPING | HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET }

/* Shaping options take their names from config.c (hbm_opt_name). */
const struct hbm_optdef hbm_optdefs[] = {
	{ "help", NULL, 'h', HBM_CMD_ALL },
	{ "verbose", NULL, 'v', HBM_CMD_ALL },
	{ "flow-idle", "TIME", HBM_OPTV_FLOW_IDLE, HBM_CMD_LOAD },
	{ "force", NULL, HBM_OPTV_FORCE, HBM_CMD_UNLOAD },
	/* load's: the rate of devices without a configuration (tc's). */
	{ NULL, "RATE", HBM_OPTV_SHAPE + HBM_OPT_RATE,
	  HBM_SHAPING | HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET | HBM_CMD_LOAD },
	HBM_CLASS_SHAPE(HBM_OPT_BURST, "TIME"),
	HBM_CLASS_SHAPE(HBM_OPT_MARK, "TIME"),
	HBM_CLASS_SHAPE(HBM_OPT_DROP, "TIME"),
	HBM_CLASS_SHAPE(HBM_OPT_DROP_LARGE, "TIME"),
	HBM_SHAPE(HBM_OPT_LIMIT, "N"),
	HBM_SHAPE(HBM_OPT_FLOW_LIMIT, "N"),
	HBM_SHAPE(HBM_OPT_HORIZON, "TIME"),
	HBM_SHAPE(HBM_OPT_CN, "on|off"),
	HBM_SHAPE(HBM_OPT_LATE_CREDIT, "on|off"),
	HBM_SHAPE(HBM_OPT_QUANTUM, "BYTES"),
	HBM_SHAPE(HBM_OPT_INITIAL_QUANTUM, "BYTES"),
	{ "ecn", "on|off", HBM_OPTV_ECN, HBM_SHAPING },
	{ "parent", "root|mq", HBM_OPTV_PARENT, HBM_CMD_ATTACH },
	{ "replace", NULL, HBM_OPTV_REPLACE, HBM_CMD_ATTACH },
	{ "json", NULL, HBM_OPTV_JSON, HBM_CMD_SHOW | HBM_CMD_CLASS_LIST },
	{ "prometheus", NULL, HBM_OPTV_PROMETHEUS, HBM_CMD_SHOW },
	{ "watch", "INTERVAL", HBM_OPTV_WATCH, HBM_CMD_SHOW },
	{ "cgroup", "PATH", HBM_OPTV_CGROUP,
	  HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET | HBM_CMD_CLASS_DEL },
	{ "dry-run", NULL, HBM_OPTV_DRY_RUN, HBM_CMD_APPLY },
	/* A name of show's too: no command takes both. */
	{ "watch", NULL, HBM_OPTV_APPLY_WATCH, HBM_CMD_APPLY },
};

const size_t hbm_n_optdefs = sizeof(hbm_optdefs) / sizeof(hbm_optdefs[0]);

static const char *const hbm_cmd_names[] = {
	"load", "unload", "attach", "set", "show", "detach",
	"class add", "class set", "class del", "class list", "apply",
};

const char *hbm_cmd_name(unsigned int cmd)
{
	unsigned int i;

	for (i = 0; i < sizeof(hbm_cmd_names) / sizeof(hbm_cmd_names[0]); i++)
		if (cmd == 1U << i)
			return hbm_cmd_names[i];
	return NULL;
}

const char *hbm_optdef_name(const struct hbm_optdef *d)
{
	return d->name ? d->name : hbm_opt_name(d->val - HBM_OPTV_SHAPE);
}

int hbm_getopt_table(unsigned int cmd, struct option *out, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < hbm_n_optdefs; i++) {
		const struct hbm_optdef *d = &hbm_optdefs[i];

		if (!(d->cmds & cmd))
			continue;
		if (k + 1 >= n)
			return -1;
		out[k++] = (struct option){
			.name = hbm_optdef_name(d),
			.has_arg = d->arg ? required_argument : no_argument,
			.val = d->val,
		};
	}
	out[k] = (struct option){};
	return k;
}

/* "auto (2 MTU)", as sch_fq derives it, or the bytes hbm.h gives. */
static void hbm_fmt_quantum(char *buf, size_t len, __u32 val,
			    unsigned int mtus)
{
	if (val == HBM_QUANTUM_AUTO)
		snprintf(buf, len, "auto (%u MTU)", mtus);
	else
		snprintf(buf, len, "%u", val);
}

static void hbm_lower(char *s)
{
	for (; *s; s++)
		*s = tolower((unsigned char)*s);
}

const char *hbm_opt_default(const struct hbm_optdef *d, unsigned int cmd,
			    char *buf, size_t len)
{
	struct hbm_config c;
	int opt = d->val - HBM_OPTV_SHAPE;

	hbm_config_default(&c);
	if (d->val == HBM_OPTV_FLOW_IDLE) {
		hbm_fmt_time(buf, len, HBM_DEF_FLOW_IDLE_NS);
		return buf;
	}
	/* A class's rate has none: class add requires it. */
	if (cmd == HBM_CMD_CLASS_ADD && opt == HBM_OPT_RATE)
		return NULL;
	/* attach's is DEV's link speed (where its driver reports one). */
	if (cmd == HBM_CMD_ATTACH && opt == HBM_OPT_RATE) {
		snprintf(buf, len, "DEV's link speed");
		return buf;
	}
	/* set starts from DEV's configuration, class set from the class's. */
	if (cmd != HBM_CMD_ATTACH && cmd != HBM_CMD_CLASS_ADD &&
	    !(cmd == HBM_CMD_LOAD && opt == HBM_OPT_RATE))
		return NULL;
	if (d->val == HBM_OPTV_ECN && cmd == HBM_CMD_ATTACH) {
		snprintf(buf, len, "on");
		return buf;
	}
	if (opt < 0 || opt >= HBM_OPT_MAX)
		return NULL;
	switch (opt) {
	case HBM_OPT_RATE:
		hbm_fmt_rate(buf, len, c.rate_bps);
		hbm_lower(buf);		/* as tc and --help write it */
		break;
	case HBM_OPT_BURST:
		hbm_fmt_time(buf, len, c.burst_ns);
		break;
	case HBM_OPT_MARK:
		hbm_fmt_time(buf, len, c.mark_ns);
		break;
	case HBM_OPT_DROP:
		hbm_fmt_time(buf, len, c.drop_ns);
		break;
	case HBM_OPT_DROP_LARGE:
		hbm_fmt_time(buf, len, c.drop_large_ns);
		break;
	case HBM_OPT_HORIZON:
		hbm_fmt_time(buf, len, c.horizon_ns);
		break;
	case HBM_OPT_LIMIT:
		snprintf(buf, len, "%u", c.limit);
		break;
	case HBM_OPT_FLOW_LIMIT:
		snprintf(buf, len, "%u", c.flow_limit);
		break;
	case HBM_OPT_CN:
		snprintf(buf, len, "%s", c.flags & HBM_F_NO_CN ? "off" : "on");
		break;
	case HBM_OPT_LATE_CREDIT:
		snprintf(buf, len, "%s",
			 c.flags & HBM_F_FIXED_BURST ? "off" : "on");
		break;
	case HBM_OPT_QUANTUM:
		hbm_fmt_quantum(buf, len, c.quantum, HBM_DEF_QUANTUM_MTUS);
		break;
	case HBM_OPT_INITIAL_QUANTUM:
		hbm_fmt_quantum(buf, len, c.initial_quantum,
				HBM_DEF_INITIAL_QUANTUM_MTUS);
		break;
	default:
		return NULL;
	}
	return buf;
}

/* The value option @o would set for config @c (0: not a config option). */
__u64 hbm_opt_value(const struct hbm_config *c, enum hbm_opt o)
{
	switch (o) {
	case HBM_OPT_RATE:
		return c->rate_bps;
	case HBM_OPT_BURST:
		return c->burst_ns;
	case HBM_OPT_MARK:
		return c->mark_ns;
	case HBM_OPT_DROP:
		return c->drop_ns;
	case HBM_OPT_DROP_LARGE:
		return c->drop_large_ns;
	case HBM_OPT_LIMIT:
		return c->limit;
	case HBM_OPT_FLOW_LIMIT:
		return c->flow_limit;
	case HBM_OPT_HORIZON:
		return c->horizon_ns;
	case HBM_OPT_CN:
		return !(c->flags & HBM_F_NO_CN);
	case HBM_OPT_LATE_CREDIT:
		return !(c->flags & HBM_F_FIXED_BURST);
	case HBM_OPT_QUANTUM:
		return c->quantum;
	case HBM_OPT_INITIAL_QUANTUM:
		return c->initial_quantum;
	default:
		return 0;
	}
}

/* A value as --help writes the option's ("1Gbit", "50us", "on", "auto"). */
void hbm_opt_fmt_value(char *buf, size_t len, enum hbm_opt o, __u64 v)
{
	switch (o) {
	case HBM_OPT_RATE:
		hbm_fmt_rate(buf, len, v);
		break;
	case HBM_OPT_BURST:
	case HBM_OPT_MARK:
	case HBM_OPT_DROP:
	case HBM_OPT_DROP_LARGE:
	case HBM_OPT_HORIZON:
		hbm_fmt_time(buf, len, v);
		break;
	case HBM_OPT_CN:
	case HBM_OPT_LATE_CREDIT:
		snprintf(buf, len, "%s", v ? "on" : "off");
		break;
	case HBM_OPT_QUANTUM:
	case HBM_OPT_INITIAL_QUANTUM:
		if (v == HBM_QUANTUM_AUTO) {
			snprintf(buf, len, "auto");
			break;
		}
		/* fall through */
	default:
		snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	}
}
