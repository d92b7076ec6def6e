// SPDX-License-Identifier: GPL-2.0
/*
 * class add, set, del and list: per-cgroup rate classes of a device, in
 * hbm_class_configs (their configuration) and hbm_class_rates (their
 * virtual queues and counters: created zeroed here, kept by the qdisc),
 * both keyed by device and cgroup id; and what the other commands do with
 * classes: prune those whose cgroup is gone, delete a device's with it,
 * show them.
 *
 * The qdisc looks a packet's cgroup and its ancestors up only at the
 * levels set in its device's hbm_config.class_levels, which this file
 * keeps: a class's rate state is written before its configuration (what
 * the qdisc finds it by), a level's bit is set only once the class that
 * needs it is complete, and cleared (recomputed without the class) before
 * a class goes; a configuration the qdisc finds without its rate state
 * (a class going) it passes over, on to the next ancestor. Which class a
 * packet belongs to, the nearest up its cgroup's tree, is the qdisc's
 * walk; this file only stores them.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "cmds.h"
#include "units.h"

void hbm_class_obj(char *buf, size_t len, const char *cgroup,
		   const char *dev, bool list)
{
	if (list && dev)
		snprintf(buf, len, "classes of %s", dev);
	else if (list)
		snprintf(buf, len, "classes");
	else if (cgroup && dev)
		snprintf(buf, len, "class %s on %s", cgroup, dev);
	else if (dev)
		snprintf(buf, len, "class on %s", dev);
	else if (cgroup)
		snprintf(buf, len, "class %s", cgroup);
	else
		snprintf(buf, len, "class");
}

struct hbm_class_keys {
	struct hbm_class_key *k;
	int n;
};

/* Every key of the class map @fd, named @name in errors. */
static int hbm_class_keys(int fd, const char *name, struct hbm_class_keys *ks)
{
	void *k;
	int err;

	memset(ks, 0, sizeof(*ks));
	err = hbm_map_keys(fd, sizeof(*ks->k), name, &k, &ks->n);
	if (!err)
		ks->k = k;
	return err;
}

static bool hbm_class_of(const struct hbm_class_key *k,
			 const struct hbm_dev_key *dev)
{
	return k->ifindex == dev->ifindex && k->netns == dev->netns;
}

static bool hbm_class_key_eq(const struct hbm_class_key *a,
			     const struct hbm_class_key *b)
{
	return a->ifindex == b->ifindex && a->netns == b->netns &&
	       a->cgroup == b->cgroup;
}

int hbm_class_levels(const struct hbm_maps *maps,
		     const struct hbm_dev_key *dev,
		     const struct hbm_class_key *skip, __u32 *levels)
{
	struct hbm_class_config cc;
	struct hbm_class_keys ks;
	int i, err;

	*levels = 0;
	err = hbm_class_keys(maps->class_configs, "hbm_class_configs", &ks);
	if (err)
		return err;
	for (i = 0; i < ks.n; i++) {
		if (!hbm_class_of(&ks.k[i], dev) ||
		    (skip && hbm_class_key_eq(&ks.k[i], skip)))
			continue;
		if (bpf_map_lookup_elem(maps->class_configs, &ks.k[i], &cc))
			continue;	/* deleted meanwhile */
		if (cc.level <= HBM_CLASS_MAX_LEVEL)
			*levels |= 1U << cc.level;
	}
	free(ks.k);
	return 0;
}

/*
 * Write @levels into @dev's configuration (read, modify, write). A device
 * without one runs with the load-time defaults, which have no levels: add
 * (@create) makes it one from them; taking classes away leaves it be.
 */
static int hbm_class_levels_write(const struct hbm_maps *maps,
				  const struct hbm_dev_key *dev, __u32 levels,
				  bool create)
{
	struct hbm_config cfg;
	int e;

	if (bpf_map_lookup_elem(maps->config, dev, &cfg)) {
		if (!levels || !create)
			return 0;
		/* What it runs with (tc qdisc add's): load's, not ours. */
		e = hbm_bpf_defaults(&cfg);
		if (e)
			return e;
	} else if (cfg.class_levels == levels) {
		return 0;
	}
	cfg.class_levels = levels;
	e = bpf_map_update_elem(maps->config, dev, &cfg, BPF_ANY);
	if (e == -E2BIG)
		return hbm_set_reason(e, "couldn't write the device's configuration: %s (bpf_hbm configures at most %d devices)",
				      strerror(-e), HBM_MAX_DEVS);
	if (e)
		return hbm_set_reason(e, "couldn't write the device's configuration: %s",
				      strerror(-e));
	return 0;
}

/* A class's entries: its configuration first, as the qdisc finds it. */
static void hbm_class_remove(const struct hbm_maps *maps,
			     const struct hbm_class_key *k)
{
	bpf_map_delete_elem(maps->class_configs, k);
	bpf_map_delete_elem(maps->class_rates, k);
}

/* The rate states left without a configuration: an add cut short. */
static void hbm_class_rates_prune(const struct hbm_maps *maps)
{
	struct hbm_class_config cc;
	struct hbm_class_keys ks;
	int i;

	if (hbm_class_keys(maps->class_rates, "hbm_class_rates", &ks))
		return;
	for (i = 0; i < ks.n; i++)
		if (bpf_map_lookup_elem(maps->class_configs, &ks.k[i], &cc) ==
		    -ENOENT)
			bpf_map_delete_elem(maps->class_rates, &ks.k[i]);
	free(ks.k);
}

/*
 * A configuration of a device gone from our namespace: a device deleted
 * while bpf_hbm was not on it (tc qdisc del first, then ip link del)
 * leaves it, where it would take one of the HBM_MAX_DEVS entries for good
 * and give its rate to a device that later gets its ifindex. Its classes
 * go by the same rule (hbm_classes_prune). Other namespaces' devices are
 * not seen from here: kept.
 */
static void hbm_configs_prune(const struct hbm_maps *maps, __u32 own)
{
	struct hbm_dev_key *keys = NULL;
	char name[IF_NAMESIZE];
	int i, n = 0;

	if (maps->config < 0 ||
	    hbm_map_keys(maps->config, sizeof(*keys), "hbm_config",
			 (void **)&keys, &n))
		return;
	for (i = 0; i < n; i++)
		if (keys[i].netns == own &&
		    !if_indextoname(keys[i].ifindex, name) && errno == ENXIO)
			bpf_map_delete_elem(maps->config, &keys[i]);
	free(keys);
}

/*
 * Quiet on purpose: show, set and attach run it too, and their output
 * (show --json's above all) is not the place to report what was tidied.
 * A class whose cgroup may or may not exist (the cgroup2 mount cannot be
 * read, say) is kept.
 */
void hbm_classes_prune(const struct hbm_maps *maps)
{
	struct hbm_dev_key dev;
	struct hbm_class_config cc;
	struct hbm_class_keys ks;
	struct hbm_cgroups cgs;
	char name[IF_NAMESIZE];
	int *level = NULL;
	bool *gone = NULL, any = false;
	__u32 own, levels;
	int i, j;

	if (hbm_own_netns(&own))
		return;
	hbm_configs_prune(maps, own);
	if (maps->class_configs < 0 || maps->class_rates < 0)
		return;
	if (hbm_class_keys(maps->class_configs, "hbm_class_configs", &ks))
		return;
	/* Without the mount, every cgroup's existence is unknown: kept. */
	hbm_cgroups_open(&cgs);
	gone = calloc(ks.n ? ks.n : 1, sizeof(*gone));
	level = calloc(ks.n ? ks.n : 1, sizeof(*level));
	if (!gone || !level)
		goto out;
	for (i = 0; i < ks.n; i++) {
		if (bpf_map_lookup_elem(maps->class_configs, &ks.k[i], &cc)) {
			level[i] = -1;	/* deleted meanwhile */
			continue;
		}
		level[i] = cc.level;
		gone[i] = !hbm_cgroups_exists(&cgs, ks.k[i].cgroup) ||
			  (ks.k[i].netns == own &&
			   !if_indextoname(ks.k[i].ifindex, name));
		any |= gone[i];
	}
	/* Each device that loses classes: its levels without them, first. */
	for (i = 0; any && i < ks.n; i++) {
		if (!gone[i])
			continue;
		for (j = 0; j < i; j++)
			if (gone[j] && ks.k[j].ifindex == ks.k[i].ifindex &&
			    ks.k[j].netns == ks.k[i].netns)
				break;
		if (j < i)
			continue;	/* done with the first of its device */
		dev.ifindex = ks.k[i].ifindex;
		dev.netns = ks.k[i].netns;
		levels = 0;
		for (j = 0; j < ks.n; j++)
			if (!gone[j] && level[j] >= 0 &&
			    level[j] <= HBM_CLASS_MAX_LEVEL &&
			    hbm_class_of(&ks.k[j], &dev))
				levels |= 1U << level[j];
		hbm_class_levels_write(maps, &dev, levels, false);
	}
	for (i = 0; any && i < ks.n; i++)
		if (gone[i])
			hbm_class_remove(maps, &ks.k[i]);
	hbm_class_rates_prune(maps);
out:
	free(gone);
	free(level);
	free(ks.k);
	hbm_cgroups_close(&cgs);
}

int hbm_classes_del_dev(const struct hbm_maps *maps,
			const struct hbm_dev_key *dev)
{
	const int fds[] = { maps->class_configs, maps->class_rates };
	const char *const names[] = { "hbm_class_configs", "hbm_class_rates" };
	struct hbm_class_keys ks;
	int i, m, err;

	for (m = 0; m < 2; m++) {
		if (fds[m] < 0)
			continue;
		err = hbm_class_keys(fds[m], names[m], &ks);
		if (err)
			return err;
		for (i = 0; i < ks.n; i++)
			if (hbm_class_of(&ks.k[i], dev))
				bpf_map_delete_elem(fds[m], &ks.k[i]);
		free(ks.k);
	}
	return 0;
}

static __u32 hbm_class_own;	/* our netns, for sorting */

static int hbm_class_ent_cmp(const void *a, const void *b)
{
	const struct hbm_class_ent *x = a, *y = b;
	const struct hbm_class_key *p = &x->key, *q = &y->key;
	int c;

	/* As show sorts the devices: ours first, by netns and ifindex. */
	if ((p->netns == hbm_class_own) != (q->netns == hbm_class_own))
		return p->netns == hbm_class_own ? -1 : 1;
	if (p->netns != q->netns)
		return p->netns < q->netns ? -1 : 1;
	if (p->ifindex != q->ifindex)
		return p->ifindex < q->ifindex ? -1 : 1;
	if (x->path && y->path) {
		c = strcmp(x->path, y->path);
		if (c)
			return c;
	} else if (x->path || y->path) {
		return x->path ? -1 : 1;	/* unknown paths last */
	}
	return p->cgroup < q->cgroup ? -1 : p->cgroup > q->cgroup;
}

void hbm_classes_free(struct hbm_class_ent *e, int n)
{
	int i;

	for (i = 0; e && i < n; i++)
		free(e[i].path);
	free(e);
}

int hbm_classes_get(const struct hbm_maps *maps,
		    const struct hbm_dev_key *only,
		    struct hbm_class_ent **out, int *n)
{
	struct hbm_class_ent *e = NULL, *c;
	struct hbm_class_keys ks;
	struct hbm_cgroups cgs;
	char path[PATH_MAX];
	int i, cnt = 0, err;

	*out = NULL;
	*n = 0;
	err = hbm_own_netns(&hbm_class_own);
	if (err)
		return err;
	err = hbm_class_keys(maps->class_configs, "hbm_class_configs", &ks);
	if (err)
		return err;
	/* Without the mount, paths are unknown: shown as such. */
	hbm_cgroups_open(&cgs);
	e = calloc(ks.n ? ks.n : 1, sizeof(*e));
	if (!e) {
		err = hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < ks.n; i++) {
		if (only && !hbm_class_of(&ks.k[i], only))
			continue;
		c = &e[cnt];
		c->key = ks.k[i];
		if (bpf_map_lookup_elem(maps->class_configs, &c->key, &c->cfg))
			continue;	/* deleted meanwhile */
		/* Under its lock where the kernel can: a consistent queue. */
		err = bpf_map_lookup_elem_flags(maps->class_rates, &c->key,
						&c->rate, BPF_F_LOCK);
		if (err == -EINVAL)
			err = bpf_map_lookup_elem(maps->class_rates, &c->key,
						  &c->rate);
		if (err)
			memset(&c->rate, 0, sizeof(c->rate));
		if (!hbm_cgroups_path(&cgs, c->key.cgroup, path,
				      sizeof(path))) {
			c->path = strdup(path);
			if (!c->path) {
				err = hbm_set_reason(-ENOMEM, "%s",
						     strerror(ENOMEM));
				goto out;
			}
		}
		cnt++;
	}
	err = 0;
	if (cnt)
		qsort(e, cnt, sizeof(*e), hbm_class_ent_cmp);
	*out = e;
	*n = cnt;
	e = NULL;
out:
	hbm_classes_free(e, cnt);
	hbm_cgroups_close(&cgs);
	free(ks.k);
	return err;
}

json_t *hbm_class_json(const struct hbm_class_ent *e, bool with_dev,
		       __u32 own)
{
	const struct hbm_class_config *c = &e->cfg;
	const struct hbm_class_rate *r = &e->rate;
	json_t *o = json_object(), *cfg, *st;
	char name[IF_NAMESIZE];

	if (with_dev) {
		/* Its name where it is a device of this netns, else null. */
		if (e->key.netns != own ||
		    !if_indextoname(e->key.ifindex, name))
			name[0] = '\0';
		hbm_json_set(o, "dev", hbm_json_string(name[0] ? name : NULL));
		hbm_json_set(o, "ifindex", json_integer(e->key.ifindex));
		hbm_json_set(o, "netns", json_integer(e->key.netns));
	}
	hbm_json_set(o, "cgroup", hbm_json_string(e->path));
	hbm_json_set(o, "cgroup_id", hbm_json_u64(e->key.cgroup));
	hbm_json_set(o, "level", json_integer(c->level));

	cfg = json_object();
	hbm_json_set(cfg, "rate_bps", hbm_json_u64(c->rate_bps));
	hbm_json_set(cfg, "burst_ns", hbm_json_u64(c->burst_ns));
	hbm_json_set(cfg, "mark_ns", hbm_json_u64(c->mark_ns));
	hbm_json_set(cfg, "drop_ns", hbm_json_u64(c->drop_ns));
	hbm_json_set(cfg, "drop_large_ns", hbm_json_u64(c->drop_large_ns));
	hbm_json_set(o, "config", cfg);

	st = json_object();
	hbm_json_set(st, "enqueued", hbm_json_u64(r->enqueued));
	hbm_json_set(st, "packets", hbm_json_u64(r->packets));
	hbm_json_set(st, "bytes", hbm_json_u64(r->bytes));
	hbm_json_set(st, "marks", hbm_json_u64(r->marks));
	hbm_json_set(st, "cn", hbm_json_u64(r->cn));
	hbm_json_set(st, "ce", hbm_json_u64(r->ce));
	hbm_json_set(st, "guard_saves", hbm_json_u64(r->guard_saves));
	hbm_json_set(st, "cn_spared", hbm_json_u64(r->cn_spared));
	hbm_json_set(st, "delayed", hbm_json_u64(r->delayed));
	hbm_json_set(st, "vq_delay_ns",
		     json_integer(r->delta_ns > 0 ? r->delta_ns : 0));
	hbm_json_set(st, "drops", hbm_json_drops(r->drops,
						 hbm_class_drops(r)));
	hbm_json_set(o, "stats", st);
	return o;
}

void hbm_class_print_text(const struct hbm_class_ent *e, int indent,
			  bool stats)
{
	const struct hbm_class_config *c = &e->cfg;
	const struct hbm_class_rate *r = &e->rate;
	char rate[HBM_FMT_BUFSZ], burst[HBM_FMT_BUFSZ], mark[HBM_FMT_BUFSZ];
	char drop[HBM_FMT_BUFSZ], large[HBM_FMT_BUFSZ];
	int j;

	hbm_fmt_rate(rate, sizeof(rate), c->rate_bps);
	hbm_fmt_time(burst, sizeof(burst), c->burst_ns);
	hbm_fmt_time(mark, sizeof(mark), c->mark_ns);
	hbm_fmt_time(drop, sizeof(drop), c->drop_ns);
	hbm_fmt_time(large, sizeof(large), c->drop_large_ns);
	printf("%*sclass ", indent, "");
	if (e->path)
		hbm_text_str(stdout, e->path);
	else
		printf("(path unknown)");
	printf(": rate %s, burst %s, mark %s, drop %s, drop-large %s (cgroup id %llu, level %u)\n",
	       rate, burst, mark, drop, large, e->key.cgroup, c->level);
	if (!stats)
		return;
	hbm_fmt_time(drop, sizeof(drop), r->delta_ns > 0 ? r->delta_ns : 0);
	printf("%*senqueued %llu, packets %llu, bytes %llu, delayed %llu, vq delay %s\n",
	       indent + 2, "", r->enqueued, r->packets, r->bytes, r->delayed,
	       drop);
	printf("%*smarks %llu, cn %llu, ce %llu, guard saves %llu, cn spared %llu\n",
	       indent + 2, "", r->marks, r->cn, r->ce, r->guard_saves,
	       r->cn_spared);
	printf("%*sdrops %llu (", indent + 2, "", hbm_class_drops(r));
	for (j = 0; j < HBM_DROP_MAX; j++)
		printf("%s%s %llu", j ? ", " : "", hbm_drop_name(j),
		       r->drops[j]);
	printf(")\n");
}

/* What class add, set and del start from. */
struct hbm_class_ctx {
	char obj[512];		/* "class PATH on DEV", for errors */
	struct hbm_maps maps;
	struct hbm_cgroup cg;
	struct hbm_dev_key dev;
	struct hbm_class_key key;
};

static void hbm_class_init(struct hbm_class_ctx *c,
			   const struct hbm_class_args *a)
{
	memset(c, 0, sizeof(*c));
	c->maps = (struct hbm_maps)HBM_MAPS_INIT;
	hbm_class_obj(c->obj, sizeof(c->obj), a->cgroup, a->dev, false);
}

/*
 * DEV and PATH resolved (for add, at a level a class may have), the maps
 * opened and pruned. Returns 0, or HBM_EXIT_FAIL with the error printed.
 */
static int hbm_class_open(struct hbm_class_ctx *c,
			  const struct hbm_class_args *a, const char *verb,
			  bool add)
{
	c->dev.ifindex = if_nametoindex(a->dev);
	if (!c->dev.ifindex) {
		hbm_error(verb, c->obj, "no such device");
		return HBM_EXIT_FAIL;
	}
	if (hbm_own_netns(&c->dev.netns) ||
	    hbm_cgroup_resolve(a->cgroup, &c->cg)) {
		hbm_fail(verb, c->obj);
		return HBM_EXIT_FAIL;
	}
	/* The qdisc's levels are the bits of hbm_config.class_levels. */
	if (add && c->cg.level > HBM_CLASS_MAX_LEVEL) {
		hbm_error(verb, c->obj,
			  "%s is at cgroup level %u, deeper than classes go (level %d at most)",
			  c->cg.path, c->cg.level, HBM_CLASS_MAX_LEVEL);
		return HBM_EXIT_FAIL;
	}
	if (hbm_maps_open(&c->maps)) {
		hbm_fail(verb, c->obj);
		hbm_maps_close(&c->maps);
		return HBM_EXIT_FAIL;
	}
	hbm_classes_prune(&c->maps);
	c->key.ifindex = c->dev.ifindex;
	c->key.netns = c->dev.netns;
	c->key.cgroup = c->cg.id;
	return 0;
}

/*
 * Over 80 lines on purpose, as attach: each write's failure takes the one
 * `undo` path, and the order of the writes is the point (the level's bit
 * last, once the class is whole).
 */
int hbm_cmd_class_add(const struct hbm_class_args *a)
{
	struct hbm_class_config cc, old;
	struct hbm_class_rate zero = {};
	struct hbm_class_ctx c;
	struct hbm_nl nl = {};
	char err[HBM_ERRSZ];
	int ret = HBM_EXIT_FAIL, e;
	struct hbm_root r;
	__u32 levels;

	hbm_class_init(&c, a);
	/* The options first: a usage error changes nothing (as attach). */
	if (hbm_class_config_apply(&cc, NULL, &a->opts, err, sizeof(err))) {
		hbm_error("add", c.obj, "%s", err);
		return HBM_EXIT_USAGE;
	}
	if (hbm_class_open(&c, a, "add", true))
		return HBM_EXIT_FAIL;
	cc.level = c.cg.level;
	if (hbm_nl_open(&nl) || hbm_root_get(&nl, c.dev.ifindex, &r, NULL))
		goto fail;
	if (!r.attached) {
		hbm_error("add", c.obj, "bpf_hbm not attached to %s", a->dev);
		goto out;
	}
	e = bpf_map_lookup_elem(c.maps.class_configs, &c.key, &old);
	if (!e)
		goto exists;
	/*
	 * The rate state first, zeroed (a class of this cgroup removed
	 * earlier leaves nothing), then the configuration the qdisc finds
	 * the class by.
	 */
	e = bpf_map_update_elem(c.maps.class_rates, &c.key, &zero, BPF_ANY);
	if (e) {
		if (e == -E2BIG)
			hbm_set_reason(e, "couldn't create its rate state: %s (bpf_hbm holds at most %d classes, of all devices)",
				       strerror(-e), HBM_MAX_CLASSES);
		else
			hbm_set_reason(e, "couldn't create its rate state: %s",
				       strerror(-e));
		goto fail;
	}
	e = bpf_map_update_elem(c.maps.class_configs, &c.key, &cc,
				BPF_NOEXIST);
	if (e == -EEXIST)
		goto exists;
	if (e == -E2BIG) {
		hbm_set_reason(e, "couldn't write its configuration: %s (bpf_hbm holds at most %d classes, of all devices)",
			       strerror(-e), HBM_MAX_CLASSES);
		goto undo_rate;
	} else if (e) {
		hbm_set_reason(e, "couldn't write its configuration: %s",
			       strerror(-e));
		goto undo_rate;
	}
	/* Whole: now the qdisc may look it up. */
	if (hbm_class_levels(&c.maps, &c.dev, NULL, &levels) ||
	    hbm_class_levels_write(&c.maps, &c.dev, levels, true))
		goto undo;
	ret = HBM_EXIT_OK;
	goto out;
exists:
	hbm_error("add", c.obj, "%s already has a class for %s (bpf-hbm class set changes it)",
		  a->dev, c.cg.path);
	goto out;
undo:
	hbm_class_remove(&c.maps, &c.key);
	goto fail;
undo_rate:
	bpf_map_delete_elem(c.maps.class_rates, &c.key);
fail:
	hbm_fail("add", c.obj);
out:
	hbm_nl_close(&nl);
	hbm_maps_close(&c.maps);
	return ret;
}

int hbm_cmd_class_set(const struct hbm_class_args *a)
{
	struct hbm_class_config cc, cur;
	struct hbm_class_ctx c;
	char err[HBM_ERRSZ];
	int ret = HBM_EXIT_FAIL, e;

	hbm_class_init(&c, a);
	if (hbm_class_open(&c, a, "change", false))
		return HBM_EXIT_FAIL;
	if (bpf_map_lookup_elem(c.maps.class_configs, &c.key, &cur))
		goto missing;
	/* As set: the options apply to the class's current values. */
	if (hbm_class_config_apply(&cc, &cur, &a->opts, err, sizeof(err))) {
		hbm_error("change", c.obj, "%s", err);
		ret = HBM_EXIT_USAGE;
		goto out;
	}
	/* One update: the qdisc sees the old or the new class, not a mix. */
	e = bpf_map_update_elem(c.maps.class_configs, &c.key, &cc, BPF_EXIST);
	if (e == -ENOENT)
		goto missing;
	if (e) {
		hbm_set_reason(e, "couldn't write its configuration: %s",
			       strerror(-e));
		hbm_fail("change", c.obj);
		goto out;
	}
	ret = HBM_EXIT_OK;
	goto out;
missing:
	hbm_error("change", c.obj, "%s has no class for %s (bpf-hbm class add makes one)",
		  a->dev, c.cg.path);
out:
	hbm_maps_close(&c.maps);
	return ret;
}

int hbm_cmd_class_del(const struct hbm_class_args *a)
{
	struct hbm_class_config cur;
	struct hbm_class_ctx c;
	int ret = HBM_EXIT_FAIL;
	__u32 levels;

	hbm_class_init(&c, a);
	if (hbm_class_open(&c, a, "delete", false))
		return HBM_EXIT_FAIL;
	if (bpf_map_lookup_elem(c.maps.class_configs, &c.key, &cur)) {
		hbm_error("delete", c.obj, "%s has no class for %s", a->dev,
			  c.cg.path);
		goto out;
	}
	/* Its level's bit first, if no other class needs it; then it. */
	if (hbm_class_levels(&c.maps, &c.dev, &c.key, &levels) ||
	    hbm_class_levels_write(&c.maps, &c.dev, levels, false)) {
		hbm_fail("delete", c.obj);
		goto out;
	}
	hbm_class_remove(&c.maps, &c.key);
	ret = HBM_EXIT_OK;
out:
	hbm_maps_close(&c.maps);
	return ret;
}

static void hbm_class_list_text(const struct hbm_class_ent *e, int n,
				__u32 own)
{
	struct hbm_dev_key dev;
	char label[64];
	int i;

	for (i = 0; i < n; i++) {
		if (!i || e[i].key.ifindex != e[i - 1].key.ifindex ||
		    e[i].key.netns != e[i - 1].key.netns) {
			dev.ifindex = e[i].key.ifindex;
			dev.netns = e[i].key.netns;
			hbm_dev_label(label, sizeof(label), &dev, own);
			printf("%s:\n", label);
		}
		hbm_class_print_text(&e[i], 2, false);
	}
}

int hbm_cmd_class_list(const struct hbm_class_args *a)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_dev_key key, *only = NULL;
	struct hbm_class_ent *e = NULL;
	int ret = HBM_EXIT_FAIL, n = 0, i;
	json_t *root, *arr;
	char obj[64];

	hbm_class_obj(obj, sizeof(obj), NULL, a->dev, true);
	if (hbm_own_netns(&key.netns))
		goto fail;
	if (a->dev) {
		key.ifindex = if_nametoindex(a->dev);
		if (!key.ifindex) {
			hbm_error("list", obj, "no such device");
			return HBM_EXIT_FAIL;
		}
		only = &key;
	}
	if (hbm_maps_open(&maps))
		goto fail;
	hbm_classes_prune(&maps);
	if (hbm_classes_get(&maps, only, &e, &n))
		goto fail;
	if (a->json) {
		root = json_object();
		arr = json_array();
		for (i = 0; i < n; i++)
			hbm_json_push(arr, hbm_class_json(&e[i], true,
							  key.netns));
		hbm_json_set(root, "classes", arr);
		if (hbm_json_write(stdout, root)) {
			hbm_fail("write", "JSON");
			goto out;
		}
	} else if (!n && a->dev) {
		printf("no classes on %s\n", a->dev);
	} else if (!n) {
		printf("no classes\n");
	} else {
		hbm_class_list_text(e, n, key.netns);
	}
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("list", obj);
out:
	hbm_classes_free(e, n);
	hbm_maps_close(&maps);
	return ret;
}
