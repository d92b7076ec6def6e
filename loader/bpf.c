// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF object's lifecycle: load (open the skeleton, load it, attach the
 * struct_ops map, pin the link, the marker program and the maps), unload
 * (detach the link, remove the pins). What the pins are is pins.c's.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>

#include "config.h"
#include "objects.h"
#include "bpf_hbm.skel.h"

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
	return hbm_set_reason(-EPERM, "%s%s", strerror(EPERM), hbm_perm_hint(-EPERM));
}

/* BPF qdiscs need CONFIG_NET_SCH_BPF, which brings their kfuncs. */
static int hbm_check_kernel(void)
{
	struct btf *btf;
	int err = 0;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		err = -errno;
		return hbm_set_reason(err, "couldn't read the kernel's BTF (needs CONFIG_DEBUG_INFO_BTF): %s",
				      strerror(-err));
	}
	if (btf__find_by_name_kind(btf, "bpf_qdisc_skb_drop",
				   BTF_KIND_FUNC) < 0)
		err = hbm_set_reason(-EOPNOTSUPP, "kernel lacks CONFIG_NET_SCH_BPF");
	btf__free(btf);
	return err;
}

/* @fd's map if it is an hbm_config of this loader's layout, else -1. */
static int hbm_config_check(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (fd >= 0 && !bpf_map_get_info_by_fd(fd, &info, &len) &&
	    info.type == BPF_MAP_TYPE_HASH && !strcmp(info.name, "hbm_config") &&
	    info.key_size == sizeof(struct hbm_dev_key) &&
	    info.value_size == sizeof(struct hbm_config))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The hbm_config map the marker program pinned at @path uses, or -1. */
static int hbm_config_of_prog(const char *path)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[16];
	int prog, fd = -1;
	__u32 i;

	prog = bpf_obj_get(path);
	if (prog < 0)
		return -1;
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_prog_get_info_by_fd(prog, &info, &len))
		for (i = 0; fd < 0 && i < info.nr_map_ids &&
			    i < sizeof(ids) / sizeof(ids[0]); i++)
			fd = hbm_config_check(bpf_map_get_fd_by_id(ids[i]));
	close(prog);
	return fd;
}

/*
 * The markers go with the pins, but the qdiscs they served may keep
 * running (in other network namespaces, or any, when the pins are stale or
 * broken: nothing says which devices use them). Their configurations lose
 * HBM_F_ECN first, so that their ECN-capable senders get CN again rather
 * than marks that no one sets. The map is found by its pin or, with that
 * gone, through the marker program, which uses it.
 */
static void hbm_ecn_off_unpinning(void)
{
	struct hbm_dev_key *keys = NULL;
	struct hbm_config cfg;
	char path[128];
	int fd, i, n = 0;

	hbm_pin_path(path, sizeof(path), "hbm_config");
	fd = hbm_config_check(bpf_obj_get(path));
	if (fd < 0) {
		hbm_pin_path(path, sizeof(path), HBM_CE_PROG);
		fd = hbm_config_of_prog(path);
	}
	if (fd < 0)
		return;
	if (!hbm_map_keys(fd, sizeof(*keys), "hbm_config", (void **)&keys, &n))
		for (i = 0; i < n; i++)
			if (!bpf_map_lookup_elem(fd, &keys[i], &cfg) &&
			    (cfg.flags & HBM_F_ECN)) {
				cfg.flags &= ~HBM_F_ECN;
				bpf_map_update_elem(fd, &keys[i], &cfg,
						    BPF_EXIST);
			}
	free(keys);
	close(fd);
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

	hbm_ecn_off_unpinning();
	hbm_markers_sweep(true);
	d = opendir(hbm_pin_dir());
	if (!d) {
		if (errno == ENOENT)
			return 0;
		err = -errno;
		return hbm_set_reason(err, "couldn't open %s: %s", hbm_pin_dir(),
				      strerror(-err));
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) && errno != ENOENT && !err)
			err = hbm_set_reason(-errno, "couldn't remove %s/%s: %s",
					     hbm_pin_dir(), e->d_name, strerror(errno));
		hbm_step("pin removed");
	}
	closedir(d);
	if (!err && rmdir(hbm_pin_dir()) && errno != ENOENT)
		err = hbm_set_reason(-errno, "couldn't remove %s: %s", hbm_pin_dir(),
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

	fd = bpf_obj_get(hbm_link_file());
	if (fd >= 0 && hbm_link_valid(fd))
		bpf_link_detach(fd);
	err = hbm_pins_remove();
	if (fd >= 0)
		close(fd);
	return err;
}

static int hbm_load_error(int err, const char *what)
{
	/*
	 * EPERM is a missing capability. EACCES, with the capabilities
	 * checked already, is the verifier refusing a program: its log is
	 * what helps, not the capability hint.
	 */
	if (err == -EPERM)
		return hbm_set_reason(err, "%s%s", strerror(-err), hbm_perm_hint(err));
	return hbm_set_reason(err, "%s: %s (run with -v for libbpf's log)", what,
			      strerror(-err));
}

/*
 * The rodata a fresh load gets (load --flow-idle, --rate); 0 keeps the
 * default.
 */
static __u64 hbm_flow_idle_ns;
static __u64 hbm_default_rate_bps;

/*
 * Open, load, register and pin bpf_hbm. Over 80 lines on purpose: each
 * pin is made in turn, the link's last, and each failure takes the one `out` path, which
 * removes exactly the pins made so far (pinned[], link_pinned,
 * mark_pinned), so no half-loaded state is left behind.
 */
static int hbm_load_fresh(void)
{
	char path[128], pinned[HBM_PIN_MAPS] = {};
	struct bpf_link *link = NULL;
	bool link_pinned = false, mark_pinned = false;
	struct bpf_hbm *skel;
	struct bpf_map *map;
	const char *fault;
	int i, err;

	if (mkdir(hbm_pin_dir(), 0700)) {
		err = -errno;
		if (err == -EEXIST)
			return hbm_set_reason(err, "%s appeared meanwhile (another bpf-hbm loading?)",
					      hbm_pin_dir());
		return hbm_set_reason(err, "couldn't create %s: %s%s", hbm_pin_dir(),
				      strerror(-err), hbm_perm_hint(err));
	}
	skel = bpf_hbm__open();
	if (!skel) {
		err = hbm_load_error(-errno, "couldn't open the BPF object");
		goto out;
	}
	if (hbm_flow_idle_ns)
		skel->rodata->hbm_flow_idle_ns = hbm_flow_idle_ns;
	if (hbm_default_rate_bps)
		skel->rodata->hbm_defaults.rate_bps = hbm_default_rate_bps;
	/* The tests' fault injection: every Nth flow allocation fails. */
	fault = getenv("BPF_HBM_FAULT_FLOW_ALLOC");
	if (fault)
		skel->rodata->hbm_fault_flow_alloc = strtoul(fault, NULL, 10);
	err = bpf_hbm__load(skel);
	if (err) {
		err = hbm_load_error(err, "the kernel refused the BPF programs");
		goto out;
	}
	/*
	 * The kind may still be registered by the link of a loader that was
	 * killed a moment ago, whose pins were stale: its release can take
	 * an RCU grace period. Retry for up to a second before blaming
	 * another loader.
	 */
	for (i = 0; i < 20; i++) {
		link = bpf_map__attach_struct_ops(skel->maps.hbm);
		if (link || errno != EEXIST)
			break;
		usleep(50 * 1000);
	}
	if (!link) {
		err = -errno;
		if (err == -EEXIST)
			err = hbm_set_reason(err, "the bpf_hbm qdisc kind is registered, but not by pins in %s (another loader, e.g. bpftool struct_ops register, or pins in another bpffs?)",
					     hbm_pin_dir());
		else
			err = hbm_load_error(err, "couldn't register the qdisc");
		goto out;
	}
	hbm_step("kind registered");
	hbm_pin_path(path, sizeof(path), HBM_CE_PROG);
	err = bpf_program__pin(skel->progs.hbm_ce, path);
	if (err) {
		err = hbm_set_reason(err, "couldn't pin %s: %s", path, strerror(-err));
		goto out;
	}
	mark_pinned = true;
	hbm_step("marker program pinned");
	for (i = 0; i < HBM_PIN_MAPS; i++) {
		map = bpf_object__find_map_by_name(skel->obj, hbm_pin_maps[i]);
		hbm_pin_path(path, sizeof(path), hbm_pin_maps[i]);
		err = map ? bpf_map__pin(map, path) : -ENOENT;
		if (err) {
			err = hbm_set_reason(err, "couldn't pin %s: %s", path,
					     strerror(-err));
			goto out;
		}
		pinned[i] = 1;
		hbm_step("map pinned");
	}
	/*
	 * The link last: until it is pinned, a loader killed here leaves
	 * pins without a link, which read as stale and go with the next
	 * load, and its link dies with its fd, unregistering the kind. A
	 * link pinned first would leave a "broken" state (link, maps
	 * missing) that needs an unload by hand.
	 */
	err = bpf_link__pin(link, hbm_link_file());
	if (err) {
		err = hbm_set_reason(err, "couldn't pin %s: %s", hbm_link_file(),
				     strerror(-err));
		goto out;
	}
	link_pinned = true;
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
			hbm_pin_path(path, sizeof(path), HBM_CE_PROG);
			unlink(path);
		}
		if (link_pinned)
			unlink(hbm_link_file());
		if (link)
			bpf_link_detach(bpf_link__fd(link));
		rmdir(hbm_pin_dir());
	}
	bpf_link__destroy(link);
	bpf_hbm__destroy(skel);
	return err;
}

/*
 * Load and pin bpf_hbm unless it is loaded; *fresh tells whether this call
 * loaded it (with @flow_idle_ns and @rate_bps, the unconfigured devices'
 * rate, where not 0). Stale pins (no valid link among them, say from a
 * crash) are removed first.
 */
int hbm_bpf_load(__u64 flow_idle_ns, __u64 rate_bps, bool *fresh)
{
	enum hbm_state state;
	int err;

	*fresh = false;
	hbm_flow_idle_ns = flow_idle_ns;
	hbm_default_rate_bps = rate_bps;
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
		return hbm_set_reason(-EEXIST, "a map pin is missing in %s; run bpf-hbm unload first",
				      hbm_pin_dir());
	case HBM_STALE:
		err = hbm_pins_remove();
		if (err)
			return err;
		hbm_note("removed stale pins in %s", hbm_pin_dir());
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
 * The load-time defaults (hbm_defaults in the object's .rodata) of the
 * loaded bpf_hbm: what a device without a configuration gets. The
 * .rodata map is not pinned, but the marker program, which is, uses it
 * (hbm_config_of()): it is the one of the program's maps named *.rodata
 * with this skeleton's layout.
 */
int hbm_bpf_defaults(struct hbm_config *cfg)
{
	struct bpf_prog_info info = {};
	struct bpf_map_info mi;
	__u32 len = sizeof(info), mlen, ids[16], key = 0, i;
	struct bpf_hbm__rodata ro = {};
	char path[128];
	int prog, fd, err = -ENOENT;
	size_t n;

	hbm_config_default(cfg);
	hbm_pin_path(path, sizeof(path), HBM_CE_PROG);
	prog = bpf_obj_get(path);
	if (prog < 0)
		return hbm_set_reason(-errno, "couldn't open %s: %s", path,
				      strerror(errno));
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_prog_get_info_by_fd(prog, &info, &len)) {
		err = -errno;
		info.nr_map_ids = 0;
	}
	close(prog);
	for (i = 0; i < info.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]);
	     i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		memset(&mi, 0, sizeof(mi));
		mlen = sizeof(mi);
		n = 0;
		if (!bpf_map_get_info_by_fd(fd, &mi, &mlen))
			n = strlen(mi.name);
		if (mi.type == BPF_MAP_TYPE_ARRAY && n >= 7 &&
		    !strcmp(mi.name + n - 7, ".rodata") &&
		    mi.value_size <= sizeof(ro) &&
		    mi.value_size >= offsetof(struct bpf_hbm__rodata,
					      hbm_defaults) + sizeof(*cfg) &&
		    !bpf_map_lookup_elem(fd, &key, &ro)) {
			close(fd);
			/* As hbm_config_of() copies it; no class levels. */
			memcpy(cfg, (const void *)&ro.hbm_defaults,
			       sizeof(*cfg));
			cfg->class_levels = 0;
			return 0;
		}
		close(fd);
	}
	return hbm_set_reason(err, "couldn't read bpf_hbm's load-time defaults: %s",
			      strerror(-err));
}
