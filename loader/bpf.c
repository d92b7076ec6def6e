// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF object's lifecycle: load (open the skeleton, load it, attach the
 * struct_ops map, pin the link and the maps), unload (detach the link,
 * remove the pins), the state of the pins, and the pinned maps the other
 * commands work with.
 *
 * /sys/fs/bpf/bpf_hbm/link holds the struct_ops link: while it is pinned,
 * the "bpf_hbm" qdisc kind stays registered. hbm_config, hbm_classes and
 * hbm_instances are pinned next to it for bpf-hbm (and bpftool) to use,
 * and the ECN marker program hbm_mark, which attach puts on devices' tcx
 * egress hooks through links pinned there too (marker.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "hbm_loader.h"
#include "bpf_hbm.skel.h"

#define HBM_PIN_MAPS	3

static const char *const hbm_pin_maps[HBM_PIN_MAPS] = {
	"hbm_config", "hbm_classes", "hbm_instances",
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

static void hbm_pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", hbm_pin_dir(), name);
}

/* Mount bpffs at /sys/fs/bpf unless it is there (systemd mounts it). */
static int hbm_bpffs_ensure(void)
{
	int err;

	hbm_paths();
	if (hbm_is_bpffs(hbm_bpffs))
		return 0;
	if (!hbm_own_mntns())
		return hbm_err(-ENOENT,
			       "%s is not a bpffs, neither in this mount namespace nor in PID 1's, and pins made in this one (e.g. under ip netns exec) would vanish with it: mount it outside first (mount -t bpf bpf %s)",
			       HBM_BPFFS, HBM_BPFFS);
	if (mount("bpf", HBM_BPFFS, "bpf", 0, "mode=0700")) {
		err = -errno;
		return hbm_err(err,
			       "%s is not a bpffs and mounting one failed: %s (mount it: mount -t bpf bpf %s)",
			       HBM_BPFFS, strerror(-err), HBM_BPFFS);
	}
	hbm_note("mounted bpffs at %s", HBM_BPFFS);
	return 0;
}

/* Refuse early, with the same message as the kernel's EPERM would get. */
static int hbm_check_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	bool bpf, net;

	if (syscall(SYS_capget, &hdr, data))
		return 0;	/* let the kernel decide */
#define HBM_HAS_CAP(c) (data[(c) / 32].effective & (1U << ((c) % 32)))
	bpf = HBM_HAS_CAP(CAP_BPF) || HBM_HAS_CAP(CAP_SYS_ADMIN);
	net = HBM_HAS_CAP(CAP_NET_ADMIN);
#undef HBM_HAS_CAP
	if (bpf && net)
		return 0;
	return hbm_err(-EPERM, "%s%s", strerror(EPERM), hbm_perm_hint(-EPERM));
}

/* BPF qdiscs need CONFIG_NET_SCH_BPF, which brings their kfuncs. */
static int hbm_check_kernel(void)
{
	struct btf *btf;
	int err = 0;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		err = -errno;
		return hbm_err(err, "couldn't read the kernel's BTF (needs CONFIG_DEBUG_INFO_BTF): %s",
			       strerror(-err));
	}
	if (btf__find_by_name_kind(btf, "bpf_qdisc_skb_drop",
				   BTF_KIND_FUNC) < 0)
		err = hbm_err(-EOPNOTSUPP, "kernel lacks CONFIG_NET_SCH_BPF");
	btf__free(btf);
	return err;
}

/* A struct_ops link still attached to a map named "hbm". */
static bool hbm_link_valid(int fd)
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
		return hbm_err(err, "couldn't read %s: %s%s", hbm_dir,
			       strerror(-err), hbm_perm_hint(err));
	}
	*state = HBM_STALE;
	fd = bpf_obj_get(hbm_link_path);
	if (fd == -EPERM || fd == -EACCES)
		return hbm_err(fd, "couldn't open %s: %s%s", hbm_link_path,
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
 * Remove every file in the pin directory, then the directory. The ECN
 * markers' links are detached first: their programs leave the devices'
 * hooks now, not when the kernel gets around to releasing the links.
 */
static int hbm_pins_remove(void)
{
	struct dirent *e;
	int err = 0;
	DIR *d;

	hbm_paths();
	hbm_markers_sweep(true);
	d = opendir(hbm_dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		err = -errno;
		return hbm_err(err, "couldn't open %s: %s", hbm_dir,
			       strerror(-err));
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) && errno != ENOENT && !err)
			err = hbm_err(-errno, "couldn't remove %s/%s: %s",
				      hbm_dir, e->d_name, strerror(errno));
	}
	closedir(d);
	if (!err && rmdir(hbm_dir) && errno != ENOENT)
		err = hbm_err(-errno, "couldn't remove %s: %s", hbm_dir,
			      strerror(errno));
	return err;
}

/*
 * Unregister and unpin. Detaching the link unregisters the "bpf_hbm" kind
 * at once; merely unpinning would release the link some time later (bpffs
 * drops its reference after an RCU grace period, from a work queue), and a
 * `load` right after could then find the kind still registered.
 */
int hbm_bpf_unload(void)
{
	int fd, err;

	hbm_paths();
	fd = bpf_obj_get(hbm_link_path);
	if (fd >= 0 && hbm_link_valid(fd))
		bpf_link_detach(fd);
	err = hbm_pins_remove();
	if (fd >= 0)
		close(fd);
	return err;
}

static int hbm_load_error(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		return hbm_err(err, "%s%s", strerror(-err), hbm_perm_hint(err));
	return hbm_err(err, "%s: %s (run with -v for libbpf's log)", what,
		       strerror(-err));
}

/* load --flow-idle: the rodata a fresh load gets; 0 keeps the default. */
static __u64 hbm_flow_idle_ns;

static int hbm_load_fresh(void)
{
	char path[128], pinned[HBM_PIN_MAPS] = {};
	struct bpf_link *link = NULL;
	bool link_pinned = false, mark_pinned = false;
	struct bpf_hbm *skel;
	struct bpf_map *map;
	const char *fault;
	int i, err;

	if (mkdir(hbm_dir, 0700)) {
		err = -errno;
		if (err == -EEXIST)
			return hbm_err(err, "%s appeared meanwhile (another bpf-hbm loading?)",
				       hbm_dir);
		return hbm_err(err, "couldn't create %s: %s%s", hbm_dir,
			       strerror(-err), hbm_perm_hint(err));
	}
	skel = bpf_hbm__open();
	if (!skel) {
		err = hbm_load_error(-errno, "couldn't open the BPF object");
		goto out;
	}
	if (hbm_flow_idle_ns)
		skel->rodata->hbm_flow_idle_ns = hbm_flow_idle_ns;
	/* The tests' fault injection: every Nth flow allocation fails. */
	fault = getenv("BPF_HBM_FAULT_FLOW_ALLOC");
	if (fault)
		skel->rodata->hbm_fault_flow_alloc = strtoul(fault, NULL, 10);
	err = bpf_hbm__load(skel);
	if (err) {
		err = hbm_load_error(err, "the kernel refused the BPF programs");
		goto out;
	}
	link = bpf_map__attach_struct_ops(skel->maps.hbm);
	if (!link) {
		err = -errno;
		if (err == -EEXIST)
			err = hbm_err(err, "the bpf_hbm qdisc kind is registered, but not by pins in %s (another loader, e.g. bpftool struct_ops register, or pins in another bpffs?)",
				      hbm_dir);
		else
			err = hbm_load_error(err, "couldn't register the qdisc");
		goto out;
	}
	err = bpf_link__pin(link, hbm_link_path);
	if (err) {
		err = hbm_err(err, "couldn't pin %s: %s", hbm_link_path,
			      strerror(-err));
		goto out;
	}
	link_pinned = true;
	hbm_pin_path(path, sizeof(path), HBM_MARK_PROG);
	err = bpf_program__pin(skel->progs.hbm_mark, path);
	if (err) {
		err = hbm_err(err, "couldn't pin %s: %s", path, strerror(-err));
		goto out;
	}
	mark_pinned = true;
	for (i = 0; i < HBM_PIN_MAPS; i++) {
		map = bpf_object__find_map_by_name(skel->obj, hbm_pin_maps[i]);
		hbm_pin_path(path, sizeof(path), hbm_pin_maps[i]);
		err = map ? bpf_map__pin(map, path) : -ENOENT;
		if (err) {
			err = hbm_err(err, "couldn't pin %s: %s", path,
				      strerror(-err));
			goto out;
		}
		pinned[i] = 1;
	}
	/* The pin keeps the link: closing our fd must not detach it. */
	bpf_link__disconnect(link);
out:
	if (err) {
		for (i = 0; i < HBM_PIN_MAPS; i++) {
			if (!pinned[i])
				continue;
			hbm_pin_path(path, sizeof(path), hbm_pin_maps[i]);
			unlink(path);
		}
		if (mark_pinned) {
			hbm_pin_path(path, sizeof(path), HBM_MARK_PROG);
			unlink(path);
		}
		if (link_pinned)
			unlink(hbm_link_path);
		if (link)
			bpf_link_detach(bpf_link__fd(link));
		rmdir(hbm_dir);
	}
	bpf_link__destroy(link);
	bpf_hbm__destroy(skel);
	return err;
}

/*
 * Load and pin bpf_hbm unless it is loaded; *fresh tells whether this call
 * loaded it. Stale pins (no valid link among them, say from a crash) are
 * removed first.
 */
int hbm_bpf_load(bool *fresh)
{
	enum hbm_state state;
	int err;

	*fresh = false;
	err = hbm_check_caps();
	if (err)
		return err;
	err = hbm_bpffs_ensure();
	if (err)
		return err;
	err = hbm_bpf_state(&state);
	if (err)
		return err;
	switch (state) {
	case HBM_LOADED:
		return 0;
	case HBM_BROKEN:
		return hbm_err(-EEXIST, "a map pin is missing in %s; run bpf-hbm unload first",
			       hbm_dir);
	case HBM_STALE:
		err = hbm_pins_remove();
		if (err)
			return err;
		hbm_note("removed stale pins in %s", hbm_dir);
		break;
	case HBM_ABSENT:
		break;
	}
	err = hbm_check_kernel();
	if (err)
		return err;
	err = hbm_load_fresh();
	if (err)
		return err;
	*fresh = true;
	return 0;
}

/*
 * Open a pinned map, checking that its layout is the one this loader was
 * built for (HBM_ABI_VERSION): @value_size exactly, or at least @min_value.
 */
static int hbm_map_open(const char *name, __u32 key_size, __u32 value_size,
			__u32 min_value, __u32 *actual_value)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[128];
	int fd;

	hbm_pin_path(path, sizeof(path), name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return hbm_err(fd, "couldn't open %s: %s%s", path,
			       strerror(-fd), hbm_perm_hint(fd));
	if (bpf_map_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_HASH || info.key_size != key_size ||
	    (value_size && info.value_size != value_size) ||
	    info.value_size < min_value) {
		close(fd);
		return hbm_err(-EPROTO, "%s does not have the layout this bpf-hbm expects (ABI %d); run bpf-hbm unload --force, then bpf-hbm load",
			       path, HBM_ABI_VERSION);
	}
	if (actual_value)
		*actual_value = info.value_size;
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
		return hbm_err(-ENOENT, "a map pin is missing in %s (run bpf-hbm unload --force, then bpf-hbm load)",
			       hbm_dir);
	if (state != HBM_LOADED)
		return hbm_err(-ENOENT, "not loaded (run bpf-hbm load)");
	err = hbm_map_open("hbm_config", sizeof(struct hbm_dev_key),
			   sizeof(struct hbm_config), 0, NULL);
	if (err < 0)
		goto err;
	maps->config = err;
	err = hbm_map_open("hbm_classes", sizeof(struct hbm_dev_key),
			   sizeof(struct hbm_class), 0, NULL);
	if (err < 0)
		goto err;
	maps->classes = err;
	err = hbm_map_open("hbm_instances", sizeof(struct hbm_inst_key), 0,
			   sizeof(struct hbm_inst_info),
			   &maps->inst_value_size);
	if (err < 0)
		goto err;
	maps->instances = err;
	return 0;
err:
	hbm_maps_close(maps);
	return err;
}

void hbm_maps_close(struct hbm_maps *maps)
{
	if (maps->config >= 0)
		close(maps->config);
	if (maps->classes >= 0)
		close(maps->classes);
	if (maps->instances >= 0)
		close(maps->instances);
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

/* The keys of hbm_classes (devices with bpf_hbm), by netns and ifindex. */
int hbm_class_keys(int classes_fd, struct hbm_dev_key **keys, int *n)
{
	struct hbm_dev_key key, *k = NULL, *tmp;
	int cnt = 0, cap = 0, err;
	void *prev = NULL;

	for (;;) {
		err = bpf_map_get_next_key(classes_fd, prev, &key);
		if (err == -ENOENT)
			break;
		if (err) {
			free(k);
			return hbm_err(err, "couldn't read hbm_classes: %s",
				       strerror(-err));
		}
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			tmp = realloc(k, cap * sizeof(*k));
			if (!tmp) {
				free(k);
				return hbm_err(-ENOMEM, "%s", strerror(ENOMEM));
			}
			k = tmp;
		}
		k[cnt++] = key;
		prev = &k[cnt - 1];
	}
	if (cnt)
		qsort(k, cnt, sizeof(*k), hbm_key_cmp);
	*keys = k;
	*n = cnt;
	return 0;
}

int hbm_cmd_load(__u64 flow_idle_ns)
{
	bool fresh;

	hbm_flow_idle_ns = flow_idle_ns;
	if (hbm_bpf_load(&fresh)) {
		hbm_fail("load", HBM_KIND);
		return HBM_EXIT_FAIL;
	}
	if (!fresh && flow_idle_ns) {
		hbm_error("load", HBM_KIND,
			  "already loaded: --flow-idle applies to a fresh load (bpf-hbm unload first)");
		return HBM_EXIT_FAIL;
	}
	if (fresh)
		printf(HBM_PROG ": loaded bpf_hbm (pinned in %s)\n",
		       hbm_dir);
	else
		printf(HBM_PROG ": bpf_hbm already loaded (pinned in %s)\n",
		       hbm_dir);
	return HBM_EXIT_OK;
}

/* "eth0, ifindex 7 (netns 4026532281)" into @buf. */
static void hbm_dev_list(char *buf, size_t len, const struct hbm_dev_key *k,
			 int n, __u32 own)
{
	char label[64];
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		hbm_dev_label(label, sizeof(label), &k[i], own);
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				label);
	}
}

/* --force: detach every device of this netns; others are left running. */
static int hbm_force_detach(const struct hbm_maps *maps,
			    const struct hbm_dev_key *k, int n, __u32 own)
{
	char label[64], why[512];
	struct hbm_nl nl;
	bool attached;
	int i, err;

	err = hbm_nl_open(&nl);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (k[i].netns != own)
			continue;
		hbm_dev_label(label, sizeof(label), &k[i], own);
		err = hbm_dev_detach(&nl, k[i].ifindex, maps, &attached);
		if (err) {
			snprintf(why, sizeof(why), "%s", hbm_reason());
			err = hbm_err(err, "couldn't detach %s: %s", label, why);
			break;
		}
		if (attached)
			hbm_note("detached %s", label);
	}
	hbm_nl_close(&nl);
	return err;
}

/*
 * The ECN markers go with the pins: devices that keep their qdiscs (other
 * network namespaces) lose HBM_F_ECN, so that their ECN-capable senders
 * get the qdisc's CN signals again instead of marks no one sets.
 */
static void hbm_ecn_off_all(const struct hbm_maps *maps,
			    const struct hbm_dev_key *k, int n)
{
	struct hbm_config cfg;
	int i;

	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(maps->config, &k[i], &cfg) ||
		    !(cfg.flags & HBM_F_ECN))
			continue;
		cfg.flags &= ~HBM_F_ECN;
		bpf_map_update_elem(maps->config, &k[i], &cfg, BPF_EXIST);
	}
}

int hbm_cmd_unload(bool force)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_dev_key *keys = NULL;
	int n = 0, ret = HBM_EXIT_FAIL;
	enum hbm_state state;
	char list[1024];
	__u32 own;

	if (hbm_own_netns(&own) || hbm_bpf_state(&state))
		goto fail;
	if (state == HBM_ABSENT) {
		printf(HBM_PROG ": bpf_hbm not loaded\n");
		return HBM_EXIT_OK;
	}
	if (state == HBM_LOADED) {
		if (hbm_maps_open(&maps) ||
		    hbm_class_keys(maps.classes, &keys, &n))
			goto fail;
		hbm_dev_list(list, sizeof(list), keys, n, own);
		if (n && !force) {
			hbm_error("unload", HBM_KIND,
				  "still attached to %s (detach first, or --force)",
				  list);
			goto out;
		}
		if (n && hbm_force_detach(&maps, keys, n, own))
			goto fail;
		free(keys);
		keys = NULL;
		if (n && hbm_class_keys(maps.classes, &keys, &n))
			goto fail;
		if (n) {
			hbm_dev_list(list, sizeof(list), keys, n, own);
			hbm_note("still used by %s; their qdiscs keep running until deleted",
				 list);
			hbm_ecn_off_all(&maps, keys, n);
		}
	}
	hbm_maps_close(&maps);
	if (hbm_bpf_unload())
		goto fail;
	if (state != HBM_STALE)
		printf(HBM_PROG ": unloaded bpf_hbm\n");
	else
		printf(HBM_PROG ": removed stale pins in %s\n", hbm_dir);
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("unload", HBM_KIND);
out:
	free(keys);
	hbm_maps_close(&maps);
	return ret;
}
