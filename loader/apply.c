// SPDX-License-Identifier: GPL-2.0
/*
 * apply [FILE] [--dry-run]: make this network namespace's devices match
 * the configuration file, and only it (apply.h: the file; conf.c: the
 * plan). The file is read and checked whole before anything is looked at
 * (main.c does that before it takes the lock, so a bad file is refused
 * even where the lock cannot be had); then the current state is read,
 * every cgroup of the file resolved, and the plan run change by change
 * through the commands themselves (attach, set, detach, class add, set,
 * del), which print their own errors and are quiet otherwise: apply
 * prints one line per change made.
 *
 * A device the file names that does not exist is skipped with a note,
 * not refused: at boot a device may appear after the service runs (a
 * USB or hotplugged NIC, a VF, a veth a container makes), and the others
 * should be shaped meanwhile. The same for a class whose cgroup does not
 * exist yet (a service's, made when it starts). A change that fails does
 * not stop the others (a device's own classes excepted), and makes apply
 * exit 1.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "apply.h"

int hbm_conf_load(const char *file, struct hbm_conf *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f, *m;
	int err, i;

	memset(c, 0, sizeof(*c));
	if (!file)
		file = HBM_CONF_FILE;
	f = fopen(file, "re");
	if (!f) {
		hbm_error("read", file, "%s", strerror(errno));
		return HBM_EXIT_FAIL;
	}
	m = open_memstream(&text, &len);
	if (!m) {
		fclose(f);
		hbm_error("read", file, "%s", strerror(errno));
		return HBM_EXIT_FAIL;
	}
	for (;;) {
		char buf[4096];
		size_t n = fread(buf, 1, sizeof(buf), f);

		if (!n)
			break;
		/* A NUL would end the text early: refused, not cut. */
		if (memchr(buf, '\0', n)) {
			fclose(f);
			fclose(m);
			free(text);
			hbm_error("read", file, "not a text file (a NUL byte in it)");
			return HBM_EXIT_USAGE;
		}
		fwrite(buf, 1, n, m);
	}
	err = ferror(f) ? errno : 0;
	fclose(f);
	if (fclose(m) && !err)
		err = errno;
	if (err) {
		free(text);
		hbm_error("read", file, "%s", strerror(err));
		return HBM_EXIT_FAIL;
	}
	err = hbm_conf_parse(c, file, text ? text : "");
	free(text);
	if (err == -ENOMEM) {
		hbm_error("read", file, "%s", strerror(ENOMEM));
		return HBM_EXIT_FAIL;
	}
	if (!err)
		return HBM_EXIT_OK;
	/* Every problem, each on a line of its own, as a compiler says. */
	for (i = 0; i < c->nerr && i < HBM_CONF_MAX_ERRS; i++)
		fprintf(stderr, HBM_PROG ": couldn't apply %s\n", c->errs[i]);
	if (c->nerr > HBM_CONF_MAX_ERRS)
		hbm_error("apply", file, "%d more problems not shown",
			  c->nerr - HBM_CONF_MAX_ERRS);
	return HBM_EXIT_USAGE;
}

/* The state apply starts from, and what it needs to read it. */
struct hbm_apply_ctx {
	struct hbm_maps maps;
	bool loaded;			/* maps open */
	struct hbm_nl nl;
	__u32 own;
	struct hbm_cur_dev *cur;
	int ncur;
	struct hbm_class_ent *cls;	/* every class, for cur's */
	int ncls;
};

/* Read device @name (ifindex @ifindex, 0: none) into a new cur entry. */
static int hbm_apply_read_dev(struct hbm_apply_ctx *x, const char *name,
			      int ifindex)
{
	struct hbm_dev_key key = { .ifindex = ifindex, .netns = x->own };
	struct hbm_cur_dev *d;
	struct hbm_root r;
	int i, j, err;

	d = realloc(x->cur, (x->ncur + 1) * sizeof(*d));
	if (!d)
		return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
	x->cur = d;
	d = &x->cur[x->ncur++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	hbm_config_default(&d->cfg);
	if (!ifindex)
		return 0;
	d->exists = true;
	err = hbm_root_get(&x->nl, ifindex, &r, NULL);
	if (err)
		return err;
	d->attached = r.attached;
	d->parent = r.present && !strcmp(r.q.kind, "mq") ? HBM_PARENT_MQ :
		    HBM_PARENT_ROOT;
	d->txq = hbm_tx_queues(&x->nl, name, ifindex);
	if (d->txq < 0)
		return d->txq;
	/* What a line without --rate asks for. */
	if (hbm_dev_link_rate(name, &d->link_bps, d->link_err,
			      sizeof(d->link_err)))
		d->link_bps = 0;
	if (!x->loaded)
		return 0;
	if (!bpf_map_lookup_elem(x->maps.config, &key, &d->cfg)) {
		d->unfinished = d->cfg.flags & HBM_F_ATTACHING;
		/* As show says it: on only where the marker is, too. */
		d->ecn = (d->cfg.flags & HBM_F_ECN) && hbm_marker_seen(&key);
	} else if (d->attached) {
		/* tc qdisc add's: it runs at load's defaults (load --rate). */
		hbm_bpf_defaults(&d->cfg);
	}
	for (i = 0; i < x->ncls; i++)
		if (x->cls[i].key.ifindex == key.ifindex &&
		    x->cls[i].key.netns == key.netns)
			d->ncls++;
	if (!d->ncls)
		return 0;
	d->cls = calloc(d->ncls, sizeof(*d->cls));
	if (!d->cls) {
		d->ncls = 0;
		return hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
	}
	for (i = 0, j = 0; i < x->ncls; i++) {
		if (x->cls[i].key.ifindex != key.ifindex ||
		    x->cls[i].key.netns != key.netns)
			continue;
		d->cls[j].id = x->cls[i].key.cgroup;
		d->cls[j].path = x->cls[i].path;
		d->cls[j].cfg = x->cls[i].cfg;
		j++;
	}
	return 0;
}

/*
 * The devices the file names, found or not, then every other device of
 * this network namespace, for those with bpf_hbm attached.
 */
static int hbm_apply_read(struct hbm_apply_ctx *x, const struct hbm_conf *c,
			  int only)
{
	struct if_nameindex *all, *i;
	int k, err;

	err = hbm_own_netns(&x->own);
	if (err)
		return err;
	x->maps = (struct hbm_maps)HBM_MAPS_INIT;
	err = hbm_maps_open(&x->maps);
	if (err && err != -ENOENT)
		return err;
	x->loaded = !err;
	if (x->loaded) {
		/* As every command that opens the maps does, first. */
		hbm_classes_prune(&x->maps);
		err = hbm_classes_get(&x->maps, NULL, &x->cls, &x->ncls);
		if (err)
			return err;
	}
	err = hbm_nl_open(&x->nl);
	if (err)
		return err;
	for (k = 0; k < c->ndev; k++) {
		if (only >= 0 && k != only)
			continue;
		err = hbm_apply_read_dev(x, c->dev[k].name,
					 if_nametoindex(c->dev[k].name));
		if (err)
			return hbm_set_reason(err, "%s: %s", c->dev[k].name,
					      hbm_reason());
	}
	/* One device (apply --watch): nothing else is looked at. */
	if (only >= 0)
		return 0;
	all = if_nameindex();
	if (!all)
		return hbm_set_reason(-errno, "couldn't list the devices: %s",
				      strerror(errno));
	for (i = all; i->if_index; i++) {
		for (k = 0; k < c->ndev; k++)
			if (!strcmp(c->dev[k].name, i->if_name))
				break;
		if (k < c->ndev)
			continue;
		err = hbm_apply_read_dev(x, i->if_name, i->if_index);
		/* Gone meanwhile: nothing of it to detach. */
		if (err == -ENODEV) {
			x->ncur--;
			continue;
		}
		if (err) {
			err = hbm_set_reason(err, "%s: %s", i->if_name,
					     hbm_reason());
			break;
		}
	}
	if_freenameindex(all);
	return err;
}

static void hbm_apply_free(struct hbm_apply_ctx *x)
{
	int i;

	for (i = 0; i < x->ncur; i++)
		free(x->cur[i].cls);
	free(x->cur);
	hbm_classes_free(x->cls, x->ncls);
	hbm_nl_close(&x->nl);
	hbm_maps_close(&x->maps);
}

/*
 * The file's cgroups, as class add would resolve them. One that does not
 * exist is left !found (a note, not an error); one that cannot be a
 * class's, or that another line of the device names too under another
 * spelling, is the file's error. Returns an exit status, or -1.
 */
static int hbm_apply_cgroups(struct hbm_conf *c, int only)
{
	struct hbm_conf_class *cl, *o;
	struct hbm_cgroup cg;
	int i, j, k, err;

	for (i = 0; i < c->ndev; i++) {
		if (only >= 0 && i != only)
			continue;
		for (j = 0; j < c->dev[i].ncls; j++) {
			cl = &c->dev[i].cls[j];
			/* Resolved afresh each run: --watch applies again. */
			free(cl->path);
			cl->path = NULL;
			cl->found = false;
			cl->id = 0;
			err = hbm_cgroup_resolve(cl->cgroup, &cg);
			if (err == -ENOENT)
				continue;
			if (err) {
				fprintf(stderr, HBM_PROG ": couldn't apply %s:%d: %s\n",
					c->file, cl->line, hbm_reason());
				return HBM_EXIT_FAIL;
			}
			if (cg.level > HBM_CLASS_MAX_LEVEL) {
				fprintf(stderr, HBM_PROG ": couldn't apply %s:%d: %s is at cgroup level %u, deeper than classes go (level %d at most)\n",
					c->file, cl->line, cg.path, cg.level,
					HBM_CLASS_MAX_LEVEL);
				return HBM_EXIT_FAIL;
			}
			for (k = 0; k < j; k++) {
				o = &c->dev[i].cls[k];
				if (!o->found || o->id != cg.id)
					continue;
				fprintf(stderr, HBM_PROG ": couldn't apply %s:%d: duplicate class %s on %s (line %d names it too)\n",
					c->file, cl->line, cg.path,
					c->dev[i].name, o->line);
				return HBM_EXIT_USAGE;
			}
			cl->path = strdup(cg.path);
			if (!cl->path) {
				hbm_error("apply", c->file, "%s",
					  strerror(ENOMEM));
				return HBM_EXIT_FAIL;
			}
			cl->found = true;
			cl->id = cg.id;
		}
	}
	return -1;
}

/* Run one change through its command: an exit status. */
static int hbm_apply_one(const struct hbm_change *ch)
{
	struct hbm_attach_args a = {
		.dev = ch->dev,
		.opts = ch->opts,
		.parent = ch->parent,
		.ecn = ch->ecn,
		.replace = ch->replace,
	};
	struct hbm_class_args k = {
		.dev = ch->dev,
		.cgroup = ch->cgroup,
		.opts = ch->opts,
	};

	switch (ch->kind) {
	case HBM_CH_DETACH:
		return hbm_cmd_detach(ch->dev);
	case HBM_CH_ATTACH:
	case HBM_CH_REATTACH:
		return hbm_cmd_attach(&a);
	case HBM_CH_SET:
		return hbm_cmd_set(ch->dev, &ch->opts, ch->ecn);
	case HBM_CH_CLASS_DEL:
		return hbm_cmd_class_del(&k);
	case HBM_CH_CLASS_SET:
		return hbm_cmd_class_set(&k);
	case HBM_CH_CLASS_ADD:
		return hbm_cmd_class_add(&k);
	default:
		return HBM_EXIT_OK;
	}
}

static bool hbm_dev_change(enum hbm_change_kind k)
{
	return k == HBM_CH_ATTACH || k == HBM_CH_REATTACH || k == HBM_CH_SET;
}

/* A line of apply's on stdout; --watch's start with the time. */
static void __attribute__((format(printf, 2, 3)))
hbm_apply_say(bool stamp, const char *fmt, ...)
{
	char when[HBM_ISO_BUFSZ];
	struct timespec now;
	va_list ap;

	if (stamp) {
		clock_gettime(CLOCK_REALTIME, &now);
		hbm_fmt_iso8601(when, sizeof(when), &now);
		printf("%s ", when);
	}
	fputs(HBM_PROG ": ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int hbm_apply_run(struct hbm_conf *c, int only, bool dry_run, bool stamp)
{
	struct hbm_apply_ctx x = {};
	struct hbm_change *ch = NULL;
	const char *failed_dev = NULL;
	int ret, i, n = 0, changes, failed = 0, skipped = 0;

	x.maps = (struct hbm_maps)HBM_MAPS_INIT;
	ret = hbm_apply_cgroups(c, only);
	if (ret >= 0)
		return ret;
	ret = HBM_EXIT_FAIL;
	if (hbm_apply_read(&x, c, only)) {
		if (only >= 0)
			hbm_fail("attach", c->dev[only].name);
		else
			hbm_fail("apply", c->file);
		goto out;
	}
	if (only >= 0 ? hbm_plan_one(c, only, x.cur, &ch, &n) :
			hbm_plan(c, x.cur, x.ncur, &ch, &n)) {
		hbm_fail("apply", c->file);
		goto out;
	}
	/* What the plan was made from stays read: the commands reopen. */
	changes = hbm_plan_changes(ch, n);
	for (i = 0; i < n; i++) {
		if (ch[i].kind == HBM_CH_NOTE) {
			hbm_note("%s", ch[i].text);
			continue;
		}
		/* Refused by the plan: a failed change, dry run or not. */
		if (ch[i].kind == HBM_CH_FAIL) {
			fprintf(stderr, HBM_PROG ": couldn't apply %s:%d: %s\n",
				c->file, ch[i].line, ch[i].text);
			failed++;
			continue;
		}
		if (dry_run) {
			hbm_apply_say(stamp, "dry run: %s", ch[i].text);
			continue;
		}
		/* A device that could not be attached or set: its classes wait. */
		if (failed_dev && !strcmp(failed_dev, ch[i].dev) &&
		    !hbm_dev_change(ch[i].kind)) {
			skipped++;
			continue;
		}
		failed_dev = NULL;
		if (hbm_apply_one(&ch[i]) != HBM_EXIT_OK) {
			failed++;
			if (hbm_dev_change(ch[i].kind))
				failed_dev = ch[i].dev;
			continue;
		}
		hbm_apply_say(stamp, "%s", ch[i].text);
	}
	/* One device of --watch's: its changes, and nothing if none. */
	if (only >= 0) {
		if (failed || skipped)
			hbm_error("attach", c->dev[only].name,
				  "%d of its %d changes failed%s; it is tried again at its next event",
				  failed, changes,
				  skipped ? ", and its classes were left alone" : "");
		else
			ret = HBM_EXIT_OK;
		goto out;
	}
	if (!changes)
		hbm_apply_say(stamp, "nothing to change");
	else if (dry_run)
		hbm_apply_say(stamp, "dry run: %d change%s, none made", changes,
			      changes == 1 ? "" : "s");
	if (failed || skipped) {
		hbm_error("apply", c->file, "%d of %d changes failed%s",
			  failed, changes,
			  skipped ? ", and the classes of the devices that failed were left alone" : "");
		goto out;
	}
	ret = HBM_EXIT_OK;
out:
	free(ch);
	hbm_apply_free(&x);
	return ret;
}

int hbm_cmd_apply(struct hbm_conf *c, bool dry_run)
{
	return hbm_apply_run(c, -1, dry_run, false);
}
