/* SPDX-License-Identifier: GPL-2.0 */
/*
 * apply: the configuration file (/etc/bpf-hbm.conf) and the command that
 * makes the system match it. conf.c is pure (no I/O, no globals): the
 * file's text into the desired state (hbm_conf_parse()), and the desired
 * state against the current one into a list of changes (hbm_plan()).
 * apply.c reads the file and the current state, runs the plan through the
 * other commands (attach, set, detach, class add, set, del) and prints
 * it. Both are at the commands layer: they use cmds.h's types.
 *
 * The file, line by line:
 *   # a comment, to the end of the line; blank lines are ignored
 *   DEV [ATTACH OPTION...]
 *   DEV class --cgroup PATH --rate RATE [CLASS OPTION...]
 * Options as `bpf-hbm attach DEV` and `bpf-hbm class add DEV` take them,
 * spelled out in full ("--rate 1gbit" or "--rate=1gbit"; not "--ra",
 * which getopt would take while it is unambiguous: a file that boots a
 * machine must not start to fail when a later version adds an option).
 * The last of an option given twice wins, as on the command line. Words
 * are split on whitespace; a double-quoted part of a word keeps its
 * spaces and '#', with \" and \\ for a quote and a backslash (a cgroup
 * path with spaces: --cgroup "/sys/fs/cgroup/my app"). A device has one
 * line; its class lines may come before or after it.
 */
#ifndef HBM_APPLY_H
#define HBM_APPLY_H

#include <net/if.h>

#include "cmds.h"

#define HBM_CONF_FILE		"/etc/bpf-hbm.conf"
#define HBM_CONF_MAX_ERRS	20	/* reported; the rest are counted */

/* A class line. */
struct hbm_conf_class {
	char *cgroup;			/* PATH as written */
	struct hbm_opts opts;		/* as given */
	struct hbm_class_config cfg;	/* HBM's defaults with opts applied */
	int line;
	/* Filled in by apply.c (hbm_cgroup_resolve()), or by a test. */
	bool found;			/* the cgroup exists */
	__u64 id;
	char *path;			/* canonical, malloc'd; NULL if !found */
};

/* A device line and its class lines. */
struct hbm_conf_dev {
	char name[IF_NAMESIZE];
	int line;
	struct hbm_opts opts;		/* as given */
	struct hbm_config cfg;		/* the defaults with opts applied */
	enum hbm_parent parent;
	enum hbm_ecn ecn;		/* KEEP: not given, which means on */
	bool replace;			/* --replace: a foreign root may go */
	struct hbm_conf_class *cls;
	int ncls;
};

struct hbm_conf {
	char *file;
	struct hbm_conf_dev *dev;
	int ndev;
	char **errs;			/* "FILE:LINE: reason", in line order */
	int nerr;			/* all of them, reported or not */
};

/*
 * Parse @text, the contents of @file, into @c (zeroed first): every line,
 * every option through the checks attach and class add make. Returns 0,
 * or -EINVAL with c->errs holding each problem found (at most
 * HBM_CONF_MAX_ERRS; c->nerr counts them all), or -ENOMEM. Free @c with
 * hbm_conf_free() either way.
 */
int hbm_conf_parse(struct hbm_conf *c, const char *file, const char *text);
void hbm_conf_free(struct hbm_conf *c);

/* A class a device has now. */
struct hbm_cur_class {
	__u64 id;
	const char *path;		/* NULL: its cgroup's path is unknown */
	struct hbm_class_config cfg;
};

/* A device of this network namespace as it is now. */
struct hbm_cur_dev {
	char name[IF_NAMESIZE];
	bool exists;
	bool attached;			/* bpf_hbm, or mq with bpf_hbm */
	enum hbm_parent parent;		/* ROOT or MQ, when attached */
	int txq;			/* tx queues: what AUTO means */
	struct hbm_config cfg;		/* hbm_config's, or the defaults */
	bool ecn;			/* HBM_F_ECN, and the marker there */
	bool unfinished;		/* HBM_F_ATTACHING: attach completes it */
	/*
	 * Its link speed as a rate (hbm_dev_link_rate()), what a line
	 * without --rate asks for; 0: none, and link_err says why.
	 */
	__u64 link_bps;
	char link_err[128];
	struct hbm_cur_class *cls;
	int ncls;
};

enum hbm_change_kind {
	HBM_CH_NOTE,			/* not a change: a device skipped, ... */
	HBM_CH_DETACH,
	HBM_CH_ATTACH,
	HBM_CH_REATTACH,		/* attach --replace: parent, unfinished */
	HBM_CH_SET,
	HBM_CH_CLASS_DEL,
	HBM_CH_CLASS_SET,
	HBM_CH_CLASS_ADD,
	HBM_CH_FAIL,			/* refused: a line without --rate on a
					 * device of unknown link speed */
};

/*
 * One change, with what its command needs and what apply prints. A
 * device line without --rate asks for the device's link speed: the
 * change gives it as --rate, and its text says "(link speed)"; where the
 * speed is unknown, the plan has a HBM_CH_FAIL for the device instead of
 * its changes (and its classes'), which apply reports as a failed change.
 */
struct hbm_change {
	enum hbm_change_kind kind;
	char dev[IF_NAMESIZE];
	int line;			/* of the file, 0 for a detach or del */
	struct hbm_opts opts;		/* attach's as given; set's, every one */
	enum hbm_parent parent;		/* attach */
	enum hbm_ecn ecn;		/* attach, set (KEEP: unchanged) */
	bool replace;			/* attach */
	const char *cgroup;		/* class: its path (the plan's inputs') */
	char text[512];			/* "eth0: set rate 1Gbit -> 2Gbit" */
};

/*
 * What makes @cur (every device @c names, found or not, and every other
 * device with bpf_hbm attached) match @c, in the order to run it:
 * detaches first, then each device of the file in its order, with its
 * classes deleted, changed and added after it. Notes (devices and
 * cgroups that do not exist) come where they apply. *@out is malloc'd,
 * NULL when *@n is 0. Returns 0 or -ENOMEM.
 */
int hbm_plan(const struct hbm_conf *c, const struct hbm_cur_dev *cur,
	     int ncur, struct hbm_change **out, int *n);

/*
 * The plan of device @k of @c alone (apply --watch, when it appears): what
 * makes @cur, that device as it is now, match its line and its classes,
 * as hbm_plan() would plan it. Nothing else is detached.
 */
int hbm_plan_one(const struct hbm_conf *c, int k,
		 const struct hbm_cur_dev *cur, struct hbm_change **out, int *n);

/* The changes in a plan, notes left out. */
int hbm_plan_changes(const struct hbm_change *ch, int n);

/* apply.c: read @file (NULL: HBM_CONF_FILE) into @c; an exit status. */
int hbm_conf_load(const char *file, struct hbm_conf *c);
int hbm_cmd_apply(struct hbm_conf *c, bool dry_run);
/*
 * apply's run: of every device (@only -1), or of device @only of @c alone
 * (its changes printed, no "nothing to change", no summary: apply
 * --watch). With @stamp, each line printed starts with the time (ISO
 * 8601, UTC). The caller holds the lock. Returns an exit status.
 */
int hbm_apply_run(struct hbm_conf *c, int only, bool dry_run, bool stamp);

/*
 * apply --watch (watch.c). Device events are coalesced per device of the
 * file: a burst of them is one apply, HBM_WATCH_QUIET after the last
 * event, and never later than HBM_WATCH_MAX after the first.
 */
#define HBM_WATCH_QUIET_NS	(250 * 1000000ULL)
#define HBM_WATCH_MAX_NS	(2000 * 1000000ULL)

struct hbm_debounce {
	__u64 quiet_ns, max_ns;
	int n;				/* entries: the file's devices */
	struct hbm_debounce_ent {
		bool pending;
		__u64 first;		/* the burst's first event */
		__u64 due;
	} *e;
};

/* Pure: @n entries, none pending; 0 or -ENOMEM. */
int hbm_debounce_init(struct hbm_debounce *d, int n, __u64 quiet_ns,
		      __u64 max_ns);
void hbm_debounce_free(struct hbm_debounce *d);
/* An event for entry @k at @now (ns, any monotonic clock). */
void hbm_debounce_event(struct hbm_debounce *d, int k, __u64 now);
/* The earliest due time of the pending entries, or UINT64_MAX. */
__u64 hbm_debounce_next(const struct hbm_debounce *d);
/* An entry due at @now, taken (no longer pending), or -1 if none. */
int hbm_debounce_take(struct hbm_debounce *d, __u64 now);
/* Forget every pending entry (a full apply covers them). */
void hbm_debounce_clear(struct hbm_debounce *d);

/*
 * Which device of @c a link event makes new, to be applied: one named as
 * the file names it that @known (the ifindex each device of @c had when
 * last applied, 0: none) does not have under that name: created, created
 * again, renamed to it or moved into this namespace. A NEWLINK of a
 * device already known (up, down, a changed MTU, ...) is none. @known is
 * updated for the devices an event shows gone or renamed away. Returns
 * the device's index in c->dev, or -1. Pure.
 */
int hbm_watch_event(const struct hbm_conf *c, int *known,
		    const struct hbm_link_ev *ev);

int hbm_cmd_apply_watch(const char *file, struct hbm_conf *c);

#endif /* HBM_APPLY_H */
