// SPDX-License-Identifier: GPL-2.0
/*
 * attach, set and detach: a device's qdiscs (through rtnetlink) and its
 * entry in hbm_config; detach deletes its classes too (class.c), and
 * neither attach nor set changes their levels in the configuration.
 *
 * bpf_hbm is attached to a device when its root qdisc is bpf_hbm, or when
 * its root is mq with bpf_hbm children (one per tx queue). A root qdisc
 * with handle 0 is one the kernel made (pfifo_fast, noqueue, mq, ...): the
 * device's default, which attach replaces without --replace.
 *
 * With ECN on (attach's default, or set --ecn on), the device also has the
 * ECN marker on its tcx egress hook (marker.c) and HBM_F_ECN in its
 * configuration. The flag is set only once the marker is there, and
 * cleared before the marker goes: the qdisc treats ECN-capable senders'
 * packets as marked only while something sets CE in them.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>

#include "cmds.h"
#include "units.h"

/*
 * Delete the device's bpf_hbm root (or mq root with bpf_hbm children), so
 * the kernel puts its default qdisc back, its ECN marker, its hbm_config
 * entry and its classes (@maps may be NULL). *attached tells whether
 * there was a qdisc to delete; the marker goes either way. A foreign root
 * qdisc is never touched.
 */
int hbm_dev_detach(struct hbm_nl *nl, int ifindex, const struct hbm_maps *maps,
		   bool *attached)
{
	struct hbm_dev_key key = { .ifindex = ifindex };
	struct hbm_root r;
	bool removed;
	int err;

	*attached = false;
	err = hbm_own_netns(&key.netns);
	if (err)
		return err;
	err = hbm_root_get(nl, ifindex, &r, NULL);
	if (err)
		return err;
	if (r.attached) {
		err = hbm_nl_qdisc_del(nl, ifindex, TC_H_ROOT, r.q.handle,
				       r.q.kind);
		if (err)
			return err;
		*attached = true;
		hbm_step("qdiscs deleted");
	}
	err = hbm_marker_detach(&key, &removed);
	if (err)
		return err;
	/*
	 * What a detach killed after deleting the qdiscs left behind counts
	 * as attached, so that running it again finishes it and says so.
	 */
	if (removed) {
		*attached = true;
		hbm_step("marker detached");
	}
	if (!maps)
		return 0;
	/*
	 * Its classes go with its configuration, before it: the entry,
	 * deleted last, is what tells a second run that there is more to do.
	 */
	err = hbm_classes_del_dev(maps, &key);
	if (err)
		return err;
	hbm_step("classes deleted");
	if (maps->config >= 0 && !bpf_map_delete_elem(maps->config, &key))
		*attached = true;
	return 0;
}

/* What attach changed, to be undone if it fails half-way. */
struct hbm_attach_undo {
	bool loaded;		/* this command loaded bpf_hbm */
	bool wrote;		/* it wrote the config entry */
	bool had_old;		/* which existed before, as old */
	struct hbm_config old;
	bool swapped;		/* it replaced the root qdisc with ... */
	__u32 root_handle;	/* ... this one (0: unknown) */
	const char *root_kind;
	struct hbm_qdiscs before;	/* the device's qdiscs before */
	bool marker;		/* it attached the ECN marker */
};

/*
 * Undo a root swap. Where the kernel's default root was (handle 0), or
 * none, deleting ours brings the default back. Otherwise the old root goes
 * back as it was dumped (kind, handle, options) and, under an mq root, so
 * do the child qdiscs that had handles (mq makes its default children
 * itself). Classes and filters are not put back: a classful root other
 * than mq comes back empty. If the old root can't be put back, the device
 * is left with its default qdisc rather than a half-built attachment.
 */
static void hbm_root_restore(struct hbm_nl *nl, int ifindex,
			     const struct hbm_attach_undo *u)
{
	const struct hbm_qdiscs *qs = &u->before;
	const struct hbm_qdisc *root = hbm_root_in(qs), *q;
	char dev[IF_NAMESIZE] = "?";
	int i;

	if_indextoname(ifindex, dev);
	if (!root || !root->handle)
		goto dflt;
	if (hbm_nl_qdisc_create(nl, ifindex, root, NLM_F_CREATE | NLM_F_REPLACE)) {
		fprintf(stderr,
			"bpf-hbm: couldn't restore %s's root qdisc (%s): %s; "
			"it has the default qdisc now\n",
			dev, root->kind, hbm_reason());
		goto dflt;
	}
	for (i = 0; !strcmp(root->kind, "mq") && i < qs->n; i++) {
		q = &qs->q[i];
		if (q->handle && hbm_child_of(q, root->handle) &&
		    hbm_nl_qdisc_create(nl, ifindex, q, NLM_F_CREATE | NLM_F_REPLACE))
			hbm_fail("restore", dev);
	}
	return;
dflt:
	hbm_nl_qdisc_del(nl, ifindex, TC_H_ROOT, u->root_handle, u->root_kind);
}

static void hbm_attach_undo(struct hbm_nl *nl, int ifindex,
			    struct hbm_maps *maps, const struct hbm_dev_key *key,
			    const struct hbm_attach_undo *u)
{
	struct hbm_dev_key *keys = NULL;
	bool removed;
	int n = 1;

	if (u->marker)
		hbm_marker_detach(key, &removed);
	if (u->swapped)
		hbm_root_restore(nl, ifindex, u);
	if (u->wrote) {
		if (u->had_old)
			bpf_map_update_elem(maps->config, key, &u->old,
					    BPF_ANY);
		else
			bpf_map_delete_elem(maps->config, key);
	}
	if (!u->loaded)
		return;
	/* Unload what this command loaded, unless someone uses it now. */
	if (maps->rates < 0 ||
	    (!hbm_dev_keys(maps->rates, &keys, &n) && !n)) {
		hbm_maps_close(maps);
		hbm_bpf_unload();
	}
	free(keys);
}

/* How many instances bpf_hbm runs (its init fails when all are in use). */
static int hbm_count_inst(const struct hbm_inst_info *info, void *ctx)
{
	(void)info;
	(*(int *)ctx)++;
	return 0;
}

static int hbm_instances_in_use(int fd)
{
	int n = 0;

	if (fd >= 0)
		hbm_inst_each(fd, hbm_count_inst, &n);
	return n;
}

/* A qdisc handle that none of @qs has (0 if all are taken). */
static __u32 hbm_free_handle(const struct hbm_qdiscs *qs)
{
	__u32 maj;
	int i;

	/* From where the kernel starts its own, which skips used ones. */
	for (maj = 0x8000; maj < 0xffff; maj++) {
		for (i = 0; i < qs->n; i++)
			if (TC_H_MAJ(qs->q[i].handle) == maj << 16)
				break;
		if (i == qs->n)
			return maj << 16;
	}
	return 0;
}

/* Create mq at the root, then bpf_hbm on each of its tx queues. */
static int hbm_attach_mq(struct hbm_nl *nl, int ifindex, int txq,
			 __u16 flags, bool swaps, int inst_fd,
			 struct hbm_attach_undo *u)
{
	struct hbm_root r;
	int i, n, all, err;

	/*
	 * Until mq is there, a failure has nothing to undo. Without a
	 * handle, CREATE|REPLACE would only change a user's mq root in place
	 * (same kind), children and all: a handle no qdisc of the device has
	 * makes the kernel create ours and swap it in, in one step.
	 */
	err = hbm_nl_qdisc_new(nl, ifindex, TC_H_ROOT,
			       swaps ? hbm_free_handle(&u->before) : 0, "mq",
			       flags);
	if (err)
		return err;
	u->swapped = swaps;
	u->root_kind = "mq";
	hbm_step("mq created");
	/* The kernel picked the handle: read it back, and the children. */
	err = hbm_root_get(nl, ifindex, &r, NULL);
	if (err)
		return err;
	if (!r.present || strcmp(r.q.kind, "mq"))
		return hbm_set_reason(-EAGAIN, "the root qdisc changed meanwhile (now %s)",
				      r.present ? r.q.kind : "none");
	if (u->swapped)
		u->root_handle = r.q.handle;
	/*
	 * mq shows one child per tx queue in use (real_num_tx_queues), but
	 * it made one for each queue the device has: `ethtool -L` raising
	 * the count in use puts those in service, and they must not be the
	 * default qdisc then. So every queue gets bpf_hbm now.
	 */
	n = r.children ? r.children : txq;
	all = hbm_nl_num_tx_queues(nl, ifindex);
	if (all > n)
		n = all;
	for (i = 0; i < n; i++) {
		if (i)
			hbm_step("mq child created");
		err = hbm_nl_qdisc_new(nl, ifindex,
				       TC_H_MAKE(r.q.handle, i + 1), 0,
				       HBM_KIND, NLM_F_CREATE | NLM_F_REPLACE);
		if (err) {
			if (err == -ENOMEM && hbm_instances_in_use(inst_fd) >=
			    HBM_MAX_INSTANCES)
				return hbm_set_reason(err, "tx queue %d of %d: %s (all %d bpf_hbm instances in use)",
						      i + 1, n, hbm_reason(),
						      HBM_MAX_INSTANCES);
			return hbm_set_reason(err, "tx queue %d of %d: %s",
					      i + 1, n, hbm_reason());
		}
	}
	return 0;
}

/*
 * Attach, in the order the steps must happen: check everything, load,
 * write the configuration, create the qdiscs, put the marker on. One
 * function over 80 lines, on purpose: every step's failure takes the one
 * `fail` path to hbm_attach_undo(), which undoes what `undo` says was done,
 * and the steps read top to bottom in the order they run.
 */
/*
 * Whether @key's configuration says that an attach began and never
 * finished (HBM_F_ATTACHING: its loader was killed half-way). The next
 * attach then completes it, as with --replace, rather than refusing the
 * qdiscs that attach left.
 */
static bool hbm_attach_unfinished(const struct hbm_dev_key *key)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_config cfg;
	bool ret;

	if (hbm_maps_open(&maps))
		return false;
	ret = !bpf_map_lookup_elem(maps.config, key, &cfg) &&
	      (cfg.flags & HBM_F_ATTACHING);
	hbm_maps_close(&maps);
	return ret;
}

int hbm_dev_link_rate(const char *dev, __u64 *bps, char *err, size_t len)
{
	__u32 mbps = 0;

	/* A driver that reports no speed (-EOPNOTSUPP) is one unknown. */
	if (hbm_link_speed(dev, &mbps))
		mbps = 0;
	return hbm_link_rate(mbps, bps, err, len);
}

int hbm_cmd_attach(const struct hbm_attach_args *a)
{
	bool replace = a->replace;
	__u16 flags;
	struct hbm_attach_undo undo = {};
	struct hbm_maps maps = HBM_MAPS_INIT;
	enum hbm_parent parent = a->parent;
	struct hbm_dev_key key = {};
	struct hbm_nl nl = {};
	char err[HBM_ERRSZ];
	struct hbm_config cfg;
	int ret = HBM_EXIT_FAIL;
	int ifindex, txq, e;
	bool ecn = a->ecn != HBM_ECN_OFF;
	bool fresh, marked, swaps;
	bool link = !(a->opts.given & (1U << HBM_OPT_RATE));
	char rate[HBM_FMT_BUFSZ];
	const char *kind;
	struct hbm_root r;

	/* Everything about the options is checked before anything changes. */
	hbm_config_default(&cfg);
	if (hbm_config_apply(&cfg, &a->opts, err, sizeof(err))) {
		hbm_error("attach", a->dev, "%s", err);
		return HBM_EXIT_USAGE;
	}
	ifindex = if_nametoindex(a->dev);
	if (!ifindex) {
		hbm_error("attach", a->dev, "no such device");
		return HBM_EXIT_FAIL;
	}
	key.ifindex = ifindex;
	if (hbm_own_netns(&key.netns) || hbm_nl_open(&nl))
		goto fail;
	txq = hbm_tx_queues(&nl, a->dev, ifindex);
	if (txq < 0)
		goto fail;
	if (parent == HBM_PARENT_AUTO)
		parent = txq > 1 ? HBM_PARENT_MQ : HBM_PARENT_ROOT;
	if (parent == HBM_PARENT_MQ && txq < 2) {
		hbm_error("attach", a->dev,
			  "%s has one tx queue; use --parent root", a->dev);
		ret = HBM_EXIT_USAGE;
		goto out;
	}
	kind = parent == HBM_PARENT_MQ ? "mq" : HBM_KIND;

	if (hbm_root_get(&nl, ifindex, &r, &undo.before))
		goto fail;
	if (!replace && r.present && (r.attached || r.q.handle) &&
	    hbm_attach_unfinished(&key)) {
		hbm_note("completing an attach to %s that did not finish",
			 a->dev);
		replace = true;
	}
	flags = NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL);
	if (r.attached && !replace) {
		hbm_error("attach", a->dev,
			  "bpf_hbm already attached (use --replace or set)");
		goto out;
	}
	if (r.present && r.q.handle && !r.attached && !replace) {
		hbm_error("attach", a->dev, "%s has a root qdisc (%s); use --replace",
			  a->dev, r.q.kind);
		goto out;
	}
	/*
	 * A root of our own kind is changed in place, not replaced, and
	 * stays on failure. Anything else is swapped out and, on failure,
	 * the old root comes back: a default one by deleting ours, one with
	 * a handle from its dump (hbm_root_restore()).
	 */
	swaps = !(r.attached && !strcmp(r.q.kind, kind));
	/* No --rate: the link speed, where the driver reports one. */
	if (link && hbm_dev_link_rate(a->dev, &cfg.rate_bps, err,
				      sizeof(err))) {
		hbm_error("attach", a->dev, "%s", err);
		goto out;
	}

	if (hbm_bpf_load(0, 0, &fresh)) {
		hbm_fail("load", HBM_KIND);
		goto out;
	}
	undo.loaded = fresh;
	hbm_step("loaded");
	if (hbm_maps_open(&maps))
		goto fail;
	/* Markers of devices that are gone; ours, if stale, goes too. */
	hbm_markers_sweep(false);
	if (hbm_marker_check(&key, &marked))
		goto fail;
	/*
	 * The configuration is rewritten from the defaults and the options,
	 * but the device's classes stay, and so do their levels.
	 */
	hbm_classes_prune(&maps);
	if (hbm_class_levels(&maps, &key, NULL, &cfg.class_levels))
		goto fail;
	/* The flag only where the marker already is: see the top. */
	if (ecn && marked)
		cfg.flags |= HBM_F_ECN;
	undo.had_old = !bpf_map_lookup_elem(maps.config, &key, &undo.old);
	/* Marked unfinished until the last write below: see HBM_F_ATTACHING. */
	cfg.flags |= HBM_F_ATTACHING;
	e = bpf_map_update_elem(maps.config, &key, &cfg, BPF_ANY);
	if (e == -E2BIG) {
		hbm_set_reason(e, "couldn't write its configuration: %s (bpf_hbm configures at most %d devices)",
			       strerror(-e), HBM_MAX_DEVS);
		goto fail;
	} else if (e) {
		hbm_set_reason(e, "couldn't write its configuration: %s",
			       strerror(-e));
		goto fail;
	}
	undo.wrote = true;
	hbm_step("configuration written");

	if (parent == HBM_PARENT_ROOT) {
		/* One atomic swap: nothing to undo if it fails. */
		if (hbm_nl_qdisc_new(&nl, ifindex, TC_H_ROOT, 0, HBM_KIND,
				     flags))
			goto fail;
		undo.swapped = swaps;
		undo.root_kind = HBM_KIND;
	} else if (hbm_attach_mq(&nl, ifindex, txq, flags, swaps,
					 maps.instances, &undo)) {
		goto fail;
	}
	hbm_step("qdiscs created");

	if (ecn && !marked) {
		if (hbm_marker_attach(&key, &undo.marker))
			goto fail;
		cfg.flags |= HBM_F_ECN;
		hbm_step("marker attached");
	} else if (!ecn && marked) {
		/* The flag is clear already; a failure restores both. */
		if (hbm_marker_detach(&key, &marked))
			goto fail;
		hbm_step("marker detached");
	}
	cfg.flags &= ~HBM_F_ATTACHING;
	e = bpf_map_update_elem(maps.config, &key, &cfg, BPF_EXIST);
	if (e) {
		hbm_set_reason(e, "couldn't write its configuration: %s",
			       strerror(-e));
		goto fail;
	}
	ret = HBM_EXIT_OK;
	if (link) {
		hbm_fmt_rate(rate, sizeof(rate), cfg.rate_bps);
		hbm_note("%s: no --rate, using the link speed %s", a->dev,
			 rate);
	}
	goto out;
fail:
	hbm_fail("attach", a->dev);
out:
	if (ret != HBM_EXIT_OK)
		hbm_attach_undo(&nl, ifindex, &maps, &key, &undo);
	hbm_qdiscs_free(&undo.before);
	hbm_maps_close(&maps);
	hbm_nl_close(&nl);
	return ret;
}

int hbm_cmd_set(const char *dev, const struct hbm_opts *opts,
		enum hbm_ecn ecn)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_dev_key key = {};
	int ret = HBM_EXIT_FAIL, e;
	struct hbm_config cfg, old;
	bool has_cls, has_cfg;
	bool created = false, removed;
	char err[HBM_ERRSZ];
	struct hbm_dev_rate dr;

	key.ifindex = if_nametoindex(dev);
	if (!key.ifindex) {
		hbm_error("set", dev, "no such device");
		return HBM_EXIT_FAIL;
	}
	if (hbm_own_netns(&key.netns))
		goto fail;
	e = hbm_maps_open(&maps);
	if (e == -ENOENT) {
		hbm_error("set", dev, "bpf_hbm not attached to %s (not loaded)",
			  dev);
		goto out;
	}
	if (e)
		goto fail;
	hbm_classes_prune(&maps);
	has_cls = !bpf_map_lookup_elem(maps.rates, &key, &dr);
	has_cfg = !bpf_map_lookup_elem(maps.config, &key, &cfg);
	if (!has_cls && !has_cfg) {
		hbm_error("set", dev, "bpf_hbm not attached to %s", dev);
		goto out;
	}
	/* Unconfigured (tc qdisc add): from what it runs with, load's. */
	if (!has_cfg && hbm_bpf_defaults(&cfg))
		goto fail;
	/* Kept by class add and del: what the map says, in any case. */
	if (hbm_class_levels(&maps, &key, NULL, &cfg.class_levels))
		goto fail;
	old = cfg;
	if (hbm_config_apply(&cfg, opts, err, sizeof(err))) {
		hbm_error("set", dev, "%s", err);
		ret = HBM_EXIT_USAGE;
		goto out;
	}
	/* ECN on: the marker first, then the flag; off: the other way. */
	if (ecn == HBM_ECN_ON) {
		hbm_markers_sweep(false);
		if (hbm_marker_attach(&key, &created))
			goto fail;
		cfg.flags |= HBM_F_ECN;
	} else if (ecn == HBM_ECN_OFF) {
		cfg.flags &= ~HBM_F_ECN;
	}
	/* One update: the qdisc sees the old or the new config, never a mix. */
	e = bpf_map_update_elem(maps.config, &key, &cfg, BPF_ANY);
	if (e) {
		hbm_set_reason(e, "couldn't write its configuration: %s",
			       strerror(-e));
		goto fail;
	}
	if (ecn == HBM_ECN_OFF && hbm_marker_detach(&key, &removed)) {
		/* The marker stays: so does the old configuration. */
		if (has_cfg)
			bpf_map_update_elem(maps.config, &key, &old, BPF_ANY);
		else
			bpf_map_delete_elem(maps.config, &key);
		goto fail;
	}
	ret = HBM_EXIT_OK;
	goto out;
fail:
	if (created)
		hbm_marker_detach(&key, &created);
	hbm_fail("set", dev);
out:
	hbm_maps_close(&maps);
	return ret;
}

int hbm_cmd_detach(const char *dev)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	int ret = HBM_EXIT_FAIL, ifindex;
	struct hbm_nl nl = {};
	bool attached;

	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		hbm_error("detach", dev, "no such device");
		return HBM_EXIT_FAIL;
	}
	if (hbm_nl_open(&nl))
		goto fail;
	/* Not loaded: no config to delete, but look at the qdiscs anyway. */
	if (!hbm_maps_open(&maps))
		hbm_classes_prune(&maps);
	if (hbm_dev_detach(&nl, ifindex, &maps, &attached))
		goto fail;
	hbm_markers_sweep(false);	/* markers of devices that are gone */
	if (!attached) {
		hbm_error("detach", dev, "bpf_hbm not attached to %s", dev);
		goto out;
	}
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("detach", dev);
out:
	hbm_maps_close(&maps);
	hbm_nl_close(&nl);
	return ret;
}
