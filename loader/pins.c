// SPDX-License-Identifier: GPL-2.0
/*
 * The pins: where bpf_hbm's are (bpffs, /sys/fs/bpf/bpf_hbm), what state
 * they are in, and the pinned maps the commands work with, opened with a
 * check of their layout against HBM_ABI_VERSION.
 *
 * /sys/fs/bpf/bpf_hbm/link holds the struct_ops link: while it is pinned,
 * the "bpf_hbm" qdisc kind stays registered. hbm_config, hbm_dev_rates,
 * hbm_instances, hbm_class_configs and hbm_class_rates are pinned next to
 * it for bpf-hbm (and bpftool) to use,
 * and the ECN marker program hbm_ce, which attach puts on devices' tcx
 * egress hooks through links pinned there too (marker.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <linux/magic.h>

#include "pins.h"

const char *const hbm_pin_maps[HBM_PIN_MAPS] = {
	"hbm_config", "hbm_dev_rates", "hbm_instances", "hbm_class_configs",
	"hbm_class_rates",
};

/*
 * Where the pins are. /sys/fs/bpf normally; but a command run in a mount
 * namespace of its own without bpffs there (`ip netns exec` remounts /sys)
 * uses PID 1's, through /proc/1/root: pins made in a private bpffs would
 * vanish with the namespace, and the ones made outside could not be found.
 */
#define HBM_BPFFS_INIT	"/proc/1/root" HBM_BPFFS

static const char *hbm_bpffs;
static char hbm_dir[64];
static char hbm_link_path[80];

static bool hbm_is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

static bool hbm_own_mntns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/mnt", &self) || stat("/proc/1/ns/mnt", &init))
		return true;	/* can't tell: assume the usual */
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

static void hbm_paths(void)
{
	if (hbm_bpffs)
		return;
	hbm_bpffs = HBM_BPFFS;
	if (!hbm_is_bpffs(HBM_BPFFS) && !hbm_own_mntns() &&
	    hbm_is_bpffs(HBM_BPFFS_INIT))
		hbm_bpffs = HBM_BPFFS_INIT;
	snprintf(hbm_dir, sizeof(hbm_dir), "%s/bpf_hbm", hbm_bpffs);
	snprintf(hbm_link_path, sizeof(hbm_link_path), "%s/link", hbm_dir);
}

const char *hbm_pin_dir(void)
{
	hbm_paths();
	return hbm_dir;
}

const char *hbm_link_file(void)
{
	hbm_paths();
	return hbm_link_path;
}

void hbm_pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", hbm_pin_dir(), name);
}

static bool hbm_lock_wanted;

/* Mount bpffs at /sys/fs/bpf unless it is there (systemd mounts it). */
int hbm_bpffs_ensure(void)
{
	int err;

	hbm_paths();
	if (hbm_is_bpffs(hbm_bpffs))
		return 0;
	if (!hbm_own_mntns())
		return hbm_set_reason(-ENOENT,
				      "%s is not a bpffs, neither in this mount namespace nor in PID 1's, and pins made in this one (e.g. under ip netns exec) would vanish with it: mount it outside first (mount -t bpf bpf %s)",
				      HBM_BPFFS, HBM_BPFFS);
	if (mount("bpf", HBM_BPFFS, "bpf", 0, "mode=0700")) {
		err = -errno;
		return hbm_set_reason(err,
				      "%s is not a bpffs and mounting one failed: %s (mount it: mount -t bpf bpf %s)",
				      HBM_BPFFS, strerror(-err), HBM_BPFFS);
	}
	hbm_note("mounted bpffs at %s", HBM_BPFFS);
	return hbm_lock_wanted ? hbm_lock() : 0;
}

/*
 * The commands that change state run one at a time: without this, one
 * loader's pins half-made (a pin directory without its link yet) read as
 * stale to another, which removes them, and set's read-modify-write of a
 * configuration loses a concurrent one. The lock is an flock on the bpffs
 * directory that holds the pin directory: every loader that can see these
 * pins sees that directory (the /proc/1/root one too), it outlives the pin
 * directory, and a loader that dies, even by SIGKILL, lets go of it.
 * Without a bpffs there can be no pins to protect yet: hbm_bpffs_ensure()
 * takes the lock once it has mounted one.
 */
static int hbm_lock_fd = -1;

int hbm_lock(void)
{
	int fd, err;

	hbm_lock_wanted = true;
	hbm_paths();
	if (hbm_lock_fd >= 0 || !hbm_is_bpffs(hbm_bpffs))
		return 0;
	fd = open(hbm_bpffs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return hbm_set_reason(err, "couldn't open %s to lock it: %s%s",
				      hbm_bpffs, strerror(-err),
				      hbm_perm_hint(err));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		hbm_note("waiting for another bpf-hbm to finish (lock on %s)",
			 hbm_bpffs);
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
	}
	/* Any other failure: no lock to take on this filesystem, go on. */
	hbm_lock_fd = fd;
	return 0;
}

void hbm_unlock(void)
{
	hbm_lock_wanted = false;
	if (hbm_lock_fd < 0)
		return;
	close(hbm_lock_fd);	/* releases the flock */
	hbm_lock_fd = -1;
}

/* A struct_ops link still attached to a map named "hbm". */
bool hbm_link_valid(int fd)
{
	struct bpf_link_info info = {};
	struct bpf_map_info minfo = {};
	__u32 len = sizeof(info), mlen = sizeof(minfo);
	bool ok;
	int mfd;

	if (bpf_link_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_LINK_TYPE_STRUCT_OPS || !info.struct_ops.map_id)
		return false;
	mfd = bpf_map_get_fd_by_id(info.struct_ops.map_id);
	if (mfd < 0)
		return mfd == -EPERM;	/* can't look closer: trust it */
	ok = !bpf_map_get_info_by_fd(mfd, &minfo, &mlen) &&
	     minfo.type == BPF_MAP_TYPE_STRUCT_OPS &&
	     !strcmp(minfo.name, "hbm");
	close(mfd);
	return ok;
}

int hbm_bpf_state(enum hbm_state *state)
{
	char path[128];
	struct stat st;
	int i, fd, err;
	bool valid;

	*state = HBM_ABSENT;
	hbm_paths();
	if (!hbm_is_bpffs(hbm_bpffs))
		return 0;
	if (stat(hbm_dir, &st)) {
		err = -errno;
		if (err == -ENOENT)
			return 0;
		return hbm_set_reason(err, "couldn't read %s: %s%s", hbm_dir,
				      strerror(-err), hbm_perm_hint(err));
	}
	*state = HBM_STALE;
	fd = bpf_obj_get(hbm_link_path);
	if (fd == -EPERM || fd == -EACCES)
		return hbm_set_reason(fd, "couldn't open %s: %s%s", hbm_link_path,
				      strerror(-fd), hbm_perm_hint(fd));
	if (fd < 0)
		return 0;
	valid = hbm_link_valid(fd);
	close(fd);
	if (!valid)
		return 0;
	*state = HBM_BROKEN;
	for (i = 0; i < HBM_PIN_MAPS; i++) {
		hbm_pin_path(path, sizeof(path), hbm_pin_maps[i]);
		if (access(path, F_OK))
			return 0;
	}
	*state = HBM_LOADED;
	return 0;
}

/*
 * Open a pinned map, checking that its layout is the one this loader was
 * built for (HBM_ABI_VERSION): of @type, with @value_size exactly, or at
 * least @min_value.
 */
static int hbm_map_open(const char *name, __u32 type, __u32 key_size,
			__u32 value_size, __u32 min_value)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[128];
	int fd;

	hbm_pin_path(path, sizeof(path), name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return hbm_set_reason(fd, "couldn't open %s: %s%s", path,
				      strerror(-fd), hbm_perm_hint(fd));
	if (bpf_map_get_info_by_fd(fd, &info, &len) ||
	    info.type != type || info.key_size != key_size ||
	    (value_size && info.value_size != value_size) ||
	    info.value_size < min_value) {
		close(fd);
		return hbm_set_reason(-EPROTO, "%s does not have the layout this bpf-hbm expects (ABI %d); run bpf-hbm unload --force, then bpf-hbm load",
				      path, HBM_ABI_VERSION);
	}
	return fd;
}

int hbm_maps_open(struct hbm_maps *maps)
{
	enum hbm_state state;
	int err;

	*maps = (struct hbm_maps)HBM_MAPS_INIT;
	err = hbm_bpf_state(&state);
	if (err)
		return err;
	if (state == HBM_BROKEN)
		return hbm_set_reason(-ENOENT, "a map pin is missing in %s (run bpf-hbm unload --force, then bpf-hbm load)",
				      hbm_pin_dir());
	if (state != HBM_LOADED)
		return hbm_set_reason(-ENOENT, "not loaded (run bpf-hbm load)");
	err = hbm_map_open("hbm_config", BPF_MAP_TYPE_HASH,
			   sizeof(struct hbm_dev_key), sizeof(struct hbm_config), 0);
	if (err < 0)
		goto err;
	maps->config = err;
	err = hbm_map_open("hbm_dev_rates", BPF_MAP_TYPE_HASH,
			   sizeof(struct hbm_dev_key), sizeof(struct hbm_dev_rate), 0);
	if (err < 0)
		goto err;
	maps->rates = err;
	err = hbm_map_open("hbm_instances", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
			   0, sizeof(struct hbm_inst_info));
	if (err < 0)
		goto err;
	maps->instances = err;
	err = hbm_map_open("hbm_class_configs", BPF_MAP_TYPE_HASH,
			   sizeof(struct hbm_class_key), sizeof(struct hbm_class_config), 0);
	if (err < 0)
		goto err;
	maps->class_configs = err;
	err = hbm_map_open("hbm_class_rates", BPF_MAP_TYPE_HASH,
			   sizeof(struct hbm_class_key), sizeof(struct hbm_class_rate), 0);
	if (err < 0)
		goto err;
	maps->class_rates = err;
	return 0;
err:
	hbm_maps_close(maps);
	return err;
}

void hbm_maps_close(struct hbm_maps *maps)
{
	if (maps->config >= 0)
		close(maps->config);
	if (maps->rates >= 0)
		close(maps->rates);
	if (maps->instances >= 0)
		close(maps->instances);
	if (maps->class_configs >= 0)
		close(maps->class_configs);
	if (maps->class_rates >= 0)
		close(maps->class_rates);
	*maps = (struct hbm_maps)HBM_MAPS_INIT;
}

static int hbm_key_cmp(const void *a, const void *b)
{
	const struct hbm_dev_key *x = a, *y = b;

	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return 0;
}

int hbm_map_each_key(int fd, size_t key_size, const char *name,
		     int (*fn)(const void *key, void *ctx), void *ctx)
{
	unsigned char key[HBM_MAX_KEY], prev[HBM_MAX_KEY];
	void *pk = NULL;
	int err;

	if (key_size > HBM_MAX_KEY)
		return hbm_set_reason(-EINVAL, "%s's keys are over %d bytes",
				      name, HBM_MAX_KEY);
	for (;;) {
		err = bpf_map_get_next_key(fd, pk, key);
		if (err == -ENOENT)
			return 0;
		if (err)
			return hbm_set_reason(err, "couldn't read %s: %s", name,
					      strerror(-err));
		memcpy(prev, key, key_size);
		pk = prev;
		err = fn(key, ctx);
		if (err)
			return err;
	}
}

int hbm_inst_each(int fd, int (*fn)(const struct hbm_inst_info *info,
				    void *ctx), void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), slot;
	void *val;
	int err = 0;

	if (bpf_map_get_info_by_fd(fd, &info, &len))
		return hbm_set_reason(-errno, "couldn't read hbm_instances: %s",
				      strerror(errno));
	if (info.value_size < sizeof(struct hbm_inst_info))
		return hbm_set_reason(-EPROTO, "hbm_instances' values are %u bytes",
				      info.value_size);
	val = calloc(1, info.value_size);
	if (!val)
		return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
	for (slot = 0; slot < info.max_entries && !err; slot++) {
		err = bpf_map_lookup_elem(fd, &slot, val);
		if (err) {
			err = hbm_set_reason(-errno, "couldn't read hbm_instances: %s",
					     strerror(errno));
			break;
		}
		if (((struct hbm_inst_info *)val)->in_use)
			err = fn(val, ctx);
	}
	free(val);
	return err;
}

/* What hbm_map_keys collects: keys of key_size bytes each. */
struct hbm_keys {
	unsigned char *k;
	size_t key_size;
	int n, cap;
};

static int hbm_keys_add(const void *key, void *ctx)
{
	struct hbm_keys *ks = ctx;
	unsigned char *tmp;

	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 16;
		tmp = realloc(ks->k, ks->cap * ks->key_size);
		if (!tmp)
			return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
		ks->k = tmp;
	}
	memcpy(ks->k + ks->n++ * ks->key_size, key, ks->key_size);
	return 0;
}

int hbm_map_keys(int fd, size_t key_size, const char *name, void **keys,
		 int *n)
{
	struct hbm_keys ks = { .key_size = key_size };
	int err;

	err = hbm_map_each_key(fd, key_size, name, hbm_keys_add, &ks);
	if (err) {
		free(ks.k);
		return err;
	}
	*keys = ks.k;
	*n = ks.n;
	return 0;
}

/* The keys of hbm_dev_rates (devices with bpf_hbm), by netns and ifindex. */
int hbm_dev_keys(int rates_fd, struct hbm_dev_key **keys, int *n)
{
	void *k;
	int err;

	err = hbm_map_keys(rates_fd, sizeof(**keys), "hbm_dev_rates", &k, n);
	if (err)
		return err;
	if (*n)
		qsort(k, *n, sizeof(**keys), hbm_key_cmp);
	*keys = k;
	return 0;
}
