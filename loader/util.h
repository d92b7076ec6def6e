/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's bottom layer (util.c): errors, notes, names.
 *
 * The loader is in layers, each file using only the files below it:
 *   util (util.h), units and config (units.h, config.h), cgroups
 *     (cgroup.h), metrics (metrics.h: show's numbers as Prometheus text
 *     and rates, pure)
 *   pins: where the pins are, their state, the pinned maps (pins.h)
 *   the kernel objects: the BPF object, the ECN markers, qdiscs through
 *     rtnetlink (objects.h: bpf.c, marker.c, netlink.c)
 *   the commands: load and unload, attach, set, detach, show, class
 *     (cmds.h: lifecycle.c, device.c, show.c, class.c; device.c and show.c
 *     use class.c's), and apply (apply.h: conf.c, the file and the plan,
 *     pure; apply.c, which runs the plan through the other commands)
 *   main.c
 * scripts/check-layers.sh (make test) fails on a call or include cycle.
 *
 * Functions that can fail return 0 or a negative errno and leave a one-line
 * description in hbm_reason() (hbm_set_reason(), which may quote the
 * reason before it). The command that called them prints it as
 * "bpf-hbm: couldn't <verb> <object>: <reason>" (hbm_fail(), or
 * hbm_error() with a reason of its own). Commands (hbm_cmd_*) print their
 * own errors and return an exit status.
 */
#ifndef HBM_UTIL_H
#define HBM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include <jansson.h>

#include "hbm.h"

#define HBM_PROG		"bpf-hbm"
#define HBM_VERSION		"0.1"
#define HBM_KIND		"bpf_hbm"
#define HBM_BPFFS		"/sys/fs/bpf"
#define HBM_PIN_DIR		HBM_BPFFS "/bpf_hbm"	/* see hbm_pin_dir() */
#define HBM_CE_PROG		"hbm_ce"	/* the ECN marker's pin */

/* Exit status: success, runtime failure, usage error. */
enum {
	HBM_EXIT_OK = 0,
	HBM_EXIT_FAIL = 1,
	HBM_EXIT_USAGE = 2,
};

int hbm_set_reason(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *hbm_reason(void);
void hbm_fail(const char *verb, const char *obj);
void hbm_error(const char *verb, const char *obj, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hbm_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hbm_step(const char *what);
void hbm_set_verbose(bool verbose);
const char *hbm_perm_hint(int err);
int hbm_own_netns(__u32 *netns);
void hbm_dev_label(char *buf, size_t len, const struct hbm_dev_key *key,
		   __u32 own_netns);
const char *hbm_drop_name(int reason);

/*
 * JSON output (show --json, class list --json, show --watch --json) is
 * built as jansson values and written by hbm_json_write(). The helpers
 * below never fail by themselves: where jansson cannot allocate a value
 * they return NULL or drop it, and the failure is remembered until the
 * next hbm_json_write(), which reports it (as ferror() does a stream's).
 *
 * hbm_json_string(): @s as a JSON string; NULL as null. Bytes that are not
 * part of well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF) become U+FFFD each, as Go's encoding/json does,
 * since a name (a path may be any bytes) must still be written, and show
 * where it is not UTF-8. jansson escapes '"', '\\' and control characters.
 */
json_t *hbm_json_string(const char *s);

/*
 * @v as a JSON integer. jansson's are signed 64 bits (json_int_t): a
 * value above 2^63 - 1 is written as 2^63 - 1 (no counter, time or rate
 * of bpf_hbm's comes near it).
 */
json_t *hbm_json_u64(__u64 v);

/*
 * The number written as @text, a decimal as printf's %llu or %.Nf write
 * it: an integer where it has no '.', else a real that is written back as
 * @text (for up to 15 significant digits); NULL where @text is not one.
 */
json_t *hbm_json_num(const char *text);

/* Drops by reason, as show's "drops": {"threshold": N, ..., "total": N}. */
json_t *hbm_json_drops(const __u64 *drops, __u64 total);

/* @v (taken, even on failure) as @obj's @key, after those set before. */
void hbm_json_set(json_t *obj, const char *key, json_t *v);

/* @v (taken, even on failure) at the end of array @arr. */
void hbm_json_push(json_t *arr, json_t *v);

/*
 * @root (taken) on @f, compact, keys in the order they were set, and a
 * newline. Returns 0, or a negative errno and hbm_reason() where a value
 * could not be built or written (the caller says "couldn't write JSON").
 */
int hbm_json_write(FILE *f, json_t *root);

/* @s for text: control characters (and DEL) as \xNN, the rest as is. */
void hbm_text_str(FILE *f, const char *s);

/*
 * @s as a label value of the Prometheus text format, quoted, on @f: '\',
 * '"' and newline escaped as the format asks, the rest as it is but for a
 * byte that is not part of well-formed UTF-8 (which the format requires),
 * written as U+FFFD, as hbm_json_string() does.
 */
void hbm_prom_str(FILE *f, const char *s);

#endif /* HBM_UTIL_H */
