/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shaping options -> struct hbm_config: parsing and validation.
 *
 * Pure functions: no I/O, no globals. Errors are described in the caller's
 * buffer as the <reason> of "bpf-hbm: couldn't <verb> <object>: <reason>".
 *
 * Rules (also in `bpf-hbm --help`):
 *  - rate in 1Mbit..400Gbit (HBM_MIN_RATE_BPS..HBM_MAX_RATE_BPS);
 *  - burst, horizon > 0; every time at most HBM_MAX_TIME_NS (1 hour);
 *  - mark < drop, and mark < drop-large <= drop (larger packets are dropped
 *    first, as in HBM, never later than small ones); mark may be 0;
 *  - limit, flow-limit > 0 and flow-limit <= limit;
 *  - quantum, initial-quantum in 1..HBM_MAX_QUANTUM bytes, or auto (0,
 *    HBM_QUANTUM_AUTO: the qdisc derives them from the device's MTU); a
 *    literal 0 is refused, as tc-fq refuses a zero quantum;
 *  - --drop without --drop-large scales drop-large by the same factor, so
 *    it keeps its ratio to drop (HBM's 480/500 by default).
 */
#ifndef HBM_CONFIG_H
#define HBM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "hbm.h"

/* Room for any reason these functions write. */
#define HBM_ERRSZ		256

/* Longest time any option accepts. */
#define HBM_MAX_TIME_NS		(3600 * HBM_NSEC_PER_SEC)

enum hbm_opt {
	HBM_OPT_RATE,
	HBM_OPT_BURST,
	HBM_OPT_MARK,
	HBM_OPT_DROP,
	HBM_OPT_DROP_LARGE,
	HBM_OPT_LIMIT,
	HBM_OPT_FLOW_LIMIT,
	HBM_OPT_HORIZON,
	HBM_OPT_CN,		/* on|off: HBM_F_NO_CN cleared or set */
	HBM_OPT_LATE_CREDIT,	/* on|off: HBM_F_FIXED_BURST cleared or set */
	HBM_OPT_QUANTUM,	/* bytes, or auto: HBM_QUANTUM_AUTO */
	HBM_OPT_INITIAL_QUANTUM,
	HBM_OPT_MAX,
};

/* Shaping options as given on the command line, parsed. */
struct hbm_opts {
	unsigned int given;		/* bit (1 << HBM_OPT_*) per option */
	__u64 val[HBM_OPT_MAX];		/* bit/s, ns, packets, bytes or 1/0 */
};

/* The option's name without dashes: "rate", "drop-large", ... */
const char *hbm_opt_name(enum hbm_opt opt);

/* The compiled defaults (HBM_DEF_*), as the BPF side's hbm_defaults. */
void hbm_config_default(struct hbm_config *cfg);

/*
 * Parse the value of option @opt into @o. Returns 0, or -EINVAL with the
 * reason in @err ("invalid rate 'x'", "rate 2tbit out of range ...").
 */
int hbm_opt_parse(struct hbm_opts *o, enum hbm_opt opt, const char *arg,
		  char *err, size_t errlen);

/*
 * The bytes a quantum of @val stands for on a device that sends packets of
 * up to @psched_mtu bytes (MTU plus link-layer header, sch_fq's
 * psched_mtu()): @val itself, or @mtus times @psched_mtu when @val is
 * HBM_QUANTUM_AUTO. 0 when it is auto and @psched_mtu unknown (0).
 */
__u32 hbm_quantum_bytes(__u32 val, __u32 psched_mtu, unsigned int mtus);

/* Check a whole configuration. Returns 0 or -EINVAL with a reason. */
int hbm_config_validate(const struct hbm_config *cfg, char *err,
			size_t errlen);

/*
 * Override @cfg with the options in @o and validate the result. On error
 * @cfg is left untouched and -EINVAL returned with a reason.
 */
int hbm_config_apply(struct hbm_config *cfg, const struct hbm_opts *o,
		     char *err, size_t errlen);

/*
 * @o applied to a class's configuration, from @cur or (NULL) HBM's
 * defaults, defaulted and checked as a device's options are. On error
 * @cc is undefined and -EINVAL returned with a reason.
 */
int hbm_class_config_apply(struct hbm_class_config *cc,
			   const struct hbm_class_config *cur,
			   const struct hbm_opts *o, char *err, size_t len);

/* ethtool's SPEED_UNKNOWN, in Mb/s (linux/ethtool.h) */
#define HBM_SPEED_UNKNOWN	0xffffffffU

/*
 * The rate attach gives a device without --rate: its link speed @mbps, in
 * Mb/s as ethtool reports it, as bit/s into *@bps. Returns 0, -ENODATA
 * where the speed is unknown (0, or SPEED_UNKNOWN: no carrier, or a
 * device that has none, as dummy), or -ERANGE above HBM_MAX_RATE_BPS,
 * with the reason in @err ("the link speed is unknown; give --rate").
 */
int hbm_link_rate(__u32 mbps, __u64 *bps, char *err, size_t errlen);

#endif /* HBM_CONFIG_H */
