/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one table of bpf-hbm's options (options.c): each option's name, its
 * argument as --help writes it, the commands that take it, and where its
 * default comes from (include/hbm.h, through hbm_config_default()). It
 * builds each command's getopt_long table; selftests/host/test_options.c
 * checks --help, each command's --help and the README's reference
 * against it, so that none of them can drift from the others.
 */
#ifndef HBM_OPTIONS_H
#define HBM_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

#include "config.h"

/* The commands, as bits of hbm_optdef.cmds. */
enum {
	HBM_CMD_LOAD	= 1 << 0,
	HBM_CMD_UNLOAD	= 1 << 1,
	HBM_CMD_ATTACH	= 1 << 2,
	HBM_CMD_SET	= 1 << 3,
	HBM_CMD_SHOW	= 1 << 4,
	HBM_CMD_DETACH	= 1 << 5,
	HBM_CMD_CLASS_ADD	= 1 << 6,
	HBM_CMD_CLASS_SET	= 1 << 7,
	HBM_CMD_CLASS_DEL	= 1 << 8,
	HBM_CMD_CLASS_LIST	= 1 << 9,
	HBM_CMD_APPLY	= 1 << 10,
	HBM_CMD_ALL	= (1 << 11) - 1,
	HBM_CMD_CLASS	= HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET |
			  HBM_CMD_CLASS_DEL | HBM_CMD_CLASS_LIST,
};

/* getopt_long's values of the options that are not single letters. */
enum {
	HBM_OPTV_SHAPE = 256,	/* + enum hbm_opt: the shaping options */
	HBM_OPTV_PARENT = HBM_OPTV_SHAPE + HBM_OPT_MAX,
	HBM_OPTV_REPLACE,
	HBM_OPTV_FORCE,
	HBM_OPTV_JSON,
	HBM_OPTV_WATCH,
	HBM_OPTV_ECN,
	HBM_OPTV_FLOW_IDLE,
	HBM_OPTV_CGROUP,
	HBM_OPTV_DRY_RUN,
	HBM_OPTV_PROMETHEUS,
	HBM_OPTV_APPLY_WATCH,	/* apply --watch: no value, unlike show's */
};

struct hbm_optdef {
	const char *name;	/* the long option, without its dashes */
	const char *arg;	/* its argument as --help writes it, or NULL */
	int val;		/* getopt_long's */
	unsigned int cmds;	/* the HBM_CMD_* that take it */
};

extern const struct hbm_optdef hbm_optdefs[];
extern const size_t hbm_n_optdefs;

/* The option's long name, without dashes (shaping options: config.c's). */
const char *hbm_optdef_name(const struct hbm_optdef *d);
/* An option's value in a config, and that value as --help writes it. */
__u64 hbm_opt_value(const struct hbm_config *c, enum hbm_opt o);
void hbm_opt_fmt_value(char *buf, size_t len, enum hbm_opt o, __u64 v);

/* Command names, by bit number of HBM_CMD_* ("class add": two words). */
const char *hbm_cmd_name(unsigned int cmd);

/*
 * getopt_long's table for @cmd into @out (@n entries at most, the last
 * one zero). Returns the number of options, or -1 if @n is too small.
 */
int hbm_getopt_table(unsigned int cmd, struct option *out, size_t n);

/*
 * The default of @d for @cmd as --help writes it ("1gbit", "100us", "on";
 * attach's rate: "DEV's link speed") into @buf, or NULL if it has none
 * there (set keeps DEV's current values, class set the class's; class add
 * requires --rate).
 */
const char *hbm_opt_default(const struct hbm_optdef *d, unsigned int cmd,
			    char *buf, size_t len);

#endif /* HBM_OPTIONS_H */
