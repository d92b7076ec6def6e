/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands (lifecycle.c, device.c, show.c, class.c), above the kernel
 * objects. device.c and show.c use class.c's helpers (the classes of a
 * device: pruned, deleted, shown); class.c uses neither. A device's and a
 * class's counters as show reads them (struct hbm_dev_stats,
 * struct hbm_class_ent) are metrics.h's, whose writers are pure.
 */
#ifndef HBM_CMDS_H
#define HBM_CMDS_H

#include "cgroup.h"
#include "config.h"
#include "metrics.h"
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
	bool prometheus;	/* the text exposition format; not with json */
	__u64 watch_ns;		/* --watch's interval, 0: once */
};

/*
 * --watch's interval: under 100ms the readings' own cost and the
 * scheduler's jitter would be the rates; 1h as the other times.
 */
#define HBM_MIN_WATCH_NS	(HBM_NSEC_PER_SEC / 10)
#define HBM_MAX_WATCH_NS	(3600 * HBM_NSEC_PER_SEC)

int hbm_cmd_show(const struct hbm_show_args *args);

/*
 * show --json's object for @n devices @st and their classes among @cls
 * (as bpf-hbm --help lists the fields), for hbm_json_write().
 */
json_t *hbm_show_json(const struct hbm_dev_stats *st, int n,
		      const struct hbm_class_ent *cls, int ncls);

/* class.c: class add, set, del, list */
struct hbm_class_args {
	const char *dev;	/* list: or NULL, every device */
	const char *cgroup;	/* PATH, as given */
	struct hbm_opts opts;	/* rate, burst, mark, drop, drop-large */
	bool json;		/* list */
};

int hbm_cmd_class_add(const struct hbm_class_args *a);
int hbm_cmd_class_set(const struct hbm_class_args *a);
int hbm_cmd_class_del(const struct hbm_class_args *a);
int hbm_cmd_class_list(const struct hbm_class_args *a);

/*
 * What errors call a class: "class PATH on DEV", "class on DEV"; with
 * @list, "classes of DEV" or "classes".
 */
void hbm_class_obj(char *buf, size_t len, const char *cgroup,
		   const char *dev, bool list);

/*
 * Delete the classes of cgroups that are gone (and of devices of this
 * network namespace that are gone), clearing their levels in their
 * devices' configurations first. Every command that opens the maps calls
 * it first; it is quiet, and keeps every class where it cannot tell.
 */
void hbm_classes_prune(const struct hbm_maps *maps);

/* Delete all the classes of @dev (detach). */
int hbm_classes_del_dev(const struct hbm_maps *maps,
			const struct hbm_dev_key *dev);

/* hbm_config.class_levels of @dev, from its classes in the map. */
int hbm_class_levels(const struct hbm_maps *maps,
		     const struct hbm_dev_key *dev,
		     const struct hbm_class_key *skip, __u32 *levels);

/*
 * The classes of @only, or of every device, sorted by device (this
 * network namespace's first, as show sorts them) and path; free with
 * hbm_classes_free().
 */
int hbm_classes_get(const struct hbm_maps *maps,
		    const struct hbm_dev_key *only,
		    struct hbm_class_ent **out, int *n);
void hbm_classes_free(struct hbm_class_ent *e, int n);

/*
 * One class as a JSON object for hbm_json_write() (with its device's
 * "dev", "ifindex" and "netns" first if @with_dev; @own is this network
 * namespace), or as a block of text indented by @indent spaces (its
 * counters too if @stats).
 */
json_t *hbm_class_json(const struct hbm_class_ent *e, bool with_dev,
		       __u32 own);
void hbm_class_print_text(const struct hbm_class_ent *e, int indent,
			  bool stats);

#endif /* HBM_CMDS_H */
