/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands (lifecycle.c, device.c, show.c), above the kernel objects.
 */
#ifndef HBM_CMDS_H
#define HBM_CMDS_H

#include "config.h"
#include "objects.h"

/* lifecycle.c: load, unload */
int hbm_cmd_load(__u64 flow_idle_ns);
int hbm_cmd_unload(bool force);

/* device.c: attach, set, detach */
enum hbm_parent {
	HBM_PARENT_AUTO,
	HBM_PARENT_ROOT,
	HBM_PARENT_MQ,
};

/* --ecn: not given, on, off */
enum hbm_ecn {
	HBM_ECN_KEEP,
	HBM_ECN_ON,
	HBM_ECN_OFF,
};

struct hbm_attach_args {
	const char *dev;
	struct hbm_opts opts;
	enum hbm_parent parent;
	enum hbm_ecn ecn;	/* attach: KEEP means on */
	bool replace;
};

int hbm_dev_detach(struct hbm_nl *nl, int ifindex, const struct hbm_maps *maps,
		   bool *attached);
int hbm_cmd_attach(const struct hbm_attach_args *args);
int hbm_cmd_set(const char *dev, const struct hbm_opts *opts,
		enum hbm_ecn ecn);
int hbm_cmd_detach(const char *dev);

/* show.c */
struct hbm_show_args {
	const char *dev;	/* or NULL: every device */
	bool json;
	unsigned int watch;	/* seconds, 0: once */
};

int hbm_cmd_show(const struct hbm_show_args *args);

#endif /* HBM_CMDS_H */
