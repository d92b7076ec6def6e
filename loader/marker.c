// SPDX-License-Identifier: GPL-2.0
/*
 * The ECN marker: the BPF object's hbm_ce program, pinned at
 * /sys/fs/bpf/bpf_hbm/hbm_ce by load, attached to a device's tcx egress
 * hook by a bpf link pinned next to it as ce-NETNS-IFINDEX (the network
 * namespace's inode and the device's ifindex, as struct hbm_dev_key). The
 * pin owns the link: removing it (after a link detach, so the program
 * leaves the hook at once) takes the marker off the device, and a device
 * that goes away leaves a defunct link behind (tcx reports ifindex 0),
 * which any command that looks at the markers removes.
 *
 * tcx holds several programs per hook: the marker is put first, so that a
 * program that ends the chain (TCX_PASS, a redirect) cannot keep it from
 * seeing the packets, and it always returns TCX_NEXT, so the programs
 * after it run as before.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "objects.h"

#define HBM_MARKER_PREFIX	"ce-"

void hbm_marker_path(char *buf, size_t len, const struct hbm_dev_key *key)
{
	snprintf(buf, len, "%s/" HBM_MARKER_PREFIX "%u-%u", hbm_pin_dir(),
		 key->netns, key->ifindex);
}

bool hbm_marker_name(const char *name)
{
	return !strncmp(name, HBM_MARKER_PREFIX, strlen(HBM_MARKER_PREFIX));
}

/* The id of the pinned hbm_ce program, or a negative errno. */
static int hbm_mark_prog_get(__u32 *id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char path[128];
	int fd, err;

	snprintf(path, sizeof(path), "%s/" HBM_CE_PROG, hbm_pin_dir());
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (fd == -ENOENT)
			return hbm_set_reason(fd, "%s is missing (loaded by an older bpf-hbm? run bpf-hbm unload --force, then bpf-hbm load)",
					      path);
		return hbm_set_reason(fd, "couldn't open %s: %s%s", path,
				      strerror(-fd), hbm_perm_hint(fd));
	}
	err = bpf_prog_get_info_by_fd(fd, &info, &len);
	if (err || info.type != BPF_PROG_TYPE_SCHED_CLS) {
		close(fd);
		return hbm_set_reason(err ? err : -EPROTO,
				      "%s is not the marker program", path);
	}
	if (id)
		*id = info.id;
	return fd;
}

/*
 * What the pin at @path holds: 1 a tcx egress link attached to a device
 * (*ifindex, *prog_id), 0 anything else (a defunct link, not a link).
 * -ENOENT when there is no pin.
 */
static int hbm_marker_read(const char *path, __u32 *ifindex, __u32 *prog_id)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int fd, ok;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return access(path, F_OK) && errno == ENOENT ? -ENOENT : 0;
	ok = !bpf_link_get_info_by_fd(fd, &info, &len) &&
	     info.type == BPF_LINK_TYPE_TCX &&
	     info.tcx.attach_type == BPF_TCX_EGRESS && info.tcx.ifindex;
	close(fd);
	if (ifindex)
		*ifindex = ok ? info.tcx.ifindex : 0;
	if (prog_id)
		*prog_id = ok ? info.prog_id : 0;
	return ok;
}

/* Detach the link pinned at @path (if it is one) and remove the pin. */
static int hbm_marker_remove(const char *path)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int fd;

	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (!bpf_link_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_TCX)
			bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(path) && errno != ENOENT)
		return hbm_set_reason(-errno, "couldn't remove %s: %s", path,
				      strerror(errno));
	return 0;
}

/*
 * Whether @key's device has the marker. A stale pin (its device is gone,
 * or it holds something else) is removed with @fix, else reported absent.
 */
static int hbm_marker_lookup(const struct hbm_dev_key *key, bool *present,
			     bool fix)
{
	__u32 ifindex, prog_id, mark_id;
	char path[160];
	int fd, ret;

	*present = false;
	hbm_marker_path(path, sizeof(path), key);
	ret = hbm_marker_read(path, &ifindex, &prog_id);
	if (ret == -ENOENT)
		return 0;
	if (ret == 1 && ifindex == key->ifindex) {
		fd = hbm_mark_prog_get(&mark_id);
		if (fd >= 0)
			close(fd);
		/* Can't tell which program it should be: trust the pin. */
		if (fd < 0 || prog_id == mark_id) {
			*present = true;
			return 0;
		}
	}
	/* Stale: its device is gone, or not our link. */
	return fix ? hbm_marker_remove(path) : 0;
}

/* Whether DEV has our marker; a stale pin for it is removed on the way. */
int hbm_marker_check(const struct hbm_dev_key *key, bool *present)
{
	return hbm_marker_lookup(key, present, true);
}

bool hbm_marker_seen(const struct hbm_dev_key *key)
{
	bool present;

	return !hbm_marker_lookup(key, &present, false) && present;
}

int hbm_marker_attach(const struct hbm_dev_key *key, bool *created)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = BPF_F_BEFORE);
	char path[160], why[512];
	int prog, link, err;
	bool present;

	*created = false;
	err = hbm_marker_check(key, &present);
	if (err || present)
		return err;
	prog = hbm_mark_prog_get(NULL);
	if (prog < 0)
		return prog;
	link = bpf_link_create(prog, key->ifindex, BPF_TCX_EGRESS, &opts);
	close(prog);
	if (link < 0)
		return hbm_set_reason(link, "couldn't attach the ECN marker to tc egress (tcx): %s%s",
				      strerror(-link), hbm_perm_hint(link));
	hbm_marker_path(path, sizeof(path), key);
	err = bpf_obj_pin(link, path);
	if (err) {
		snprintf(why, sizeof(why), "%s", strerror(-err));
		bpf_link_detach(link);
		close(link);
		return hbm_set_reason(err, "couldn't pin %s: %s", path, why);
	}
	close(link);
	*created = true;
	return 0;
}

int hbm_marker_detach(const struct hbm_dev_key *key, bool *removed)
{
	char path[160];
	int err;

	*removed = false;
	hbm_marker_path(path, sizeof(path), key);
	if (access(path, F_OK) && errno == ENOENT)
		return 0;
	err = hbm_marker_remove(path);
	if (!err)
		*removed = true;
	return err;
}

/*
 * Remove marker pins whose device is gone (defunct links), in any network
 * namespace; with @all, every marker pin. Returns the first error.
 */
int hbm_markers_sweep(bool all)
{
	char path[384];
	struct dirent *e;
	int err = 0, e2;
	DIR *d;

	d = opendir(hbm_pin_dir());
	if (!d)
		return errno == ENOENT ? 0 : hbm_set_reason(-errno, "couldn't open %s: %s",
							    hbm_pin_dir(), strerror(errno));
	while ((e = readdir(d))) {
		if (!hbm_marker_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", hbm_pin_dir(), e->d_name);
		if (!all && hbm_marker_read(path, NULL, NULL) != 0)
			continue;
		e2 = hbm_marker_remove(path);
		if (e2 && !err)
			err = e2;
	}
	closedir(d);
	return err;
}
