// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration file apply reads, and the plan that makes the system
 * match it: pure functions (apply.h says what the file holds; apply.c
 * does the I/O). Each option goes through the checks the command line's
 * go through (hbm_opt_parse(), hbm_config_apply()), so that a file
 * apply accepts is one whose lines attach and class add would accept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "options.h"
#include "units.h"

static void hbm_catf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append to the string in @buf, truncating as snprintf() does. */
static void hbm_catf(char *buf, size_t len, const char *fmt, ...)
{
	size_t off = strnlen(buf, len);
	va_list ap;

	if (off + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
}

/* Problems found, each with its line, to be sorted by it at the end. */
struct hbm_conf_errs {
	int *lines;
	bool oom;
};

static void __attribute__((format(printf, 4, 5)))
hbm_conf_err(struct hbm_conf *c, struct hbm_conf_errs *e, int line,
	     const char *fmt, ...)
{
	char reason[HBM_ERRSZ + 64], **errs;
	int *lines;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	errs = realloc(c->errs, (c->nerr + 1) * sizeof(*errs));
	if (errs)
		c->errs = errs;
	lines = realloc(e->lines, (c->nerr + 1) * sizeof(*lines));
	if (lines)
		e->lines = lines;
	if (!errs || !lines ||
	    asprintf(&c->errs[c->nerr], "%s:%d: %s", c->file, line,
		     reason) < 0) {
		e->oom = true;
		return;
	}
	e->lines[c->nerr++] = line;
}

/*
 * Split a line (@len bytes, without its newline) into words, written into
 * @buf (@len + 1 bytes at least) and pointed to from @words (@len / 2 + 1
 * entries at least). Returns the number of words, or -1 for a quote left
 * open.
 */
static int hbm_conf_words(const char *line, size_t len, char *buf,
			  char **words)
{
	bool in_word = false, quoted = false;
	char *o = buf;
	size_t i;
	int n = 0;

	for (i = 0; i < len; i++) {
		char ch = line[i];

		if (quoted) {
			if (ch == '\\' && i + 1 < len &&
			    (line[i + 1] == '"' || line[i + 1] == '\\'))
				*o++ = line[++i];
			else if (ch == '"')
				quoted = false;
			else
				*o++ = ch;
			continue;
		}
		if (ch == '#')
			break;
		if (isspace((unsigned char)ch)) {
			if (in_word)
				*o++ = '\0';
			in_word = false;
			continue;
		}
		if (!in_word)
			words[n++] = o;
		in_word = true;
		if (ch == '"')
			quoted = true;
		else
			*o++ = ch;
	}
	if (quoted)
		return -1;
	if (in_word)
		*o = '\0';
	return n;
}

/* What a line's options say. */
struct hbm_conf_opts {
	struct hbm_opts opts;
	enum hbm_parent parent;
	enum hbm_ecn ecn;
	bool replace;
	const char *cgroup;
};

/*
 * The option @cmd takes named @name (@nlen bytes), in full: -h and -v
 * are the command line's, not a configuration's.
 */
static const struct hbm_optdef *hbm_conf_optdef(unsigned int cmd,
						const char *name, size_t nlen)
{
	const char *n;
	size_t i;

	for (i = 0; i < hbm_n_optdefs; i++) {
		const struct hbm_optdef *d = &hbm_optdefs[i];

		if (!(d->cmds & cmd) || d->val == 'h' || d->val == 'v')
			continue;
		n = hbm_optdef_name(d);
		if (strlen(n) == nlen && !strncmp(n, name, nlen))
			return d;
	}
	return NULL;
}

/* One option's value into @o; 0, or -EINVAL with the reason in @err. */
static int hbm_conf_value(struct hbm_conf_opts *o,
			  const struct hbm_optdef *d, const char *arg,
			  char *err, size_t len)
{
	switch (d->val) {
	case HBM_OPTV_PARENT:
		if (!strcmp(arg, "root"))
			o->parent = HBM_PARENT_ROOT;
		else if (!strcmp(arg, "mq"))
			o->parent = HBM_PARENT_MQ;
		else
			goto bad;
		return 0;
	case HBM_OPTV_ECN:
		if (!strcmp(arg, "on"))
			o->ecn = HBM_ECN_ON;
		else if (!strcmp(arg, "off"))
			o->ecn = HBM_ECN_OFF;
		else
			goto bad;
		return 0;
	case HBM_OPTV_REPLACE:
		o->replace = true;
		return 0;
	case HBM_OPTV_CGROUP:
		if (!arg[0]) {
			snprintf(err, len, "invalid cgroup path '' (a directory under the cgroup2 mount)");
			return -EINVAL;
		}
		o->cgroup = arg;
		return 0;
	default:
		return hbm_opt_parse(&o->opts, d->val - HBM_OPTV_SHAPE, arg,
				     err, len);
	}
bad:
	snprintf(err, len, "invalid %s '%s' (%s)", d->name, arg,
		 d->val == HBM_OPTV_PARENT ? "root or mq" : "on or off");
	return -EINVAL;
}

/*
 * The options in @w[0..@n) of a line for @cmd (attach or class add), as
 * main.c's parser takes them, with its messages. Returns 0, or -EINVAL
 * with the reason in @err.
 */
static int hbm_conf_opts(unsigned int cmd, char **w, int n,
			 struct hbm_conf_opts *o, char *err, size_t len)
{
	const struct hbm_optdef *d;
	const char *arg, *eq;
	size_t nlen;
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < n; i++) {
		if (strncmp(w[i], "--", 2) || !w[i][2]) {
			d = hbm_conf_optdef(cmd, w[i], strlen(w[i]));
			if (d)
				snprintf(err, len, "unexpected argument '%s': did you mean --%s?",
					 w[i], w[i]);
			else if (w[i][0] == '-')
				snprintf(err, len, "unrecognized option '%s'",
					 w[i]);
			else
				snprintf(err, len, "unexpected argument '%s'",
					 w[i]);
			return -EINVAL;
		}
		eq = strchr(w[i], '=');
		nlen = eq ? (size_t)(eq - w[i] - 2) : strlen(w[i] + 2);
		d = hbm_conf_optdef(cmd, w[i] + 2, nlen);
		if (!d) {
			snprintf(err, len, "unrecognized option '%.*s'",
				 (int)nlen + 2, w[i]);
			return -EINVAL;
		}
		if (!d->arg && eq) {
			snprintf(err, len, "option '--%s' doesn't allow an argument",
				 hbm_optdef_name(d));
			return -EINVAL;
		}
		arg = NULL;
		if (eq)
			arg = eq + 1;
		else if (d->arg && i + 1 < n)
			arg = w[++i];
		if (d->arg && !arg) {
			snprintf(err, len, "option '--%s' needs a value",
				 hbm_optdef_name(d));
			return -EINVAL;
		}
		if (hbm_conf_value(o, d, arg, err, len))
			return -EINVAL;
	}
	return 0;
}

/* The device named @name, made (with line 0: no line yet) if absent. */
static struct hbm_conf_dev *hbm_conf_dev_get(struct hbm_conf *c,
					     const char *name)
{
	struct hbm_conf_dev *d;
	int i;

	for (i = 0; i < c->ndev; i++)
		if (!strcmp(c->dev[i].name, name))
			return &c->dev[i];
	d = realloc(c->dev, (c->ndev + 1) * sizeof(*d));
	if (!d)
		return NULL;
	c->dev = d;
	d = &c->dev[c->ndev++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	hbm_config_default(&d->cfg);
	return d;
}

static int hbm_conf_class_line(struct hbm_conf *c, struct hbm_conf_errs *e,
			       int line, char **w, int n)
{
	struct hbm_conf_class *cl;
	struct hbm_conf_dev *d;
	struct hbm_conf_opts o;
	struct hbm_class_config cc;
	char err[HBM_ERRSZ];
	int i;

	if (hbm_conf_opts(HBM_CMD_CLASS_ADD, w + 2, n - 2, &o, err,
			  sizeof(err))) {
		hbm_conf_err(c, e, line, "%s", err);
		return 0;
	}
	if (!o.cgroup) {
		hbm_conf_err(c, e, line, "missing --cgroup PATH (a class line is DEV class --cgroup PATH --rate RATE ...)");
		return 0;
	}
	if (!(o.opts.given & (1U << HBM_OPT_RATE))) {
		hbm_conf_err(c, e, line, "missing --rate RATE (a class has no default rate)");
		return 0;
	}
	if (hbm_class_config_apply(&cc, NULL, &o.opts, err, sizeof(err))) {
		hbm_conf_err(c, e, line, "%s", err);
		return 0;
	}
	d = hbm_conf_dev_get(c, w[0]);
	if (!d)
		return -ENOMEM;
	for (i = 0; i < d->ncls; i++) {
		if (strcmp(d->cls[i].cgroup, o.cgroup))
			continue;
		hbm_conf_err(c, e, line, "duplicate class %s on %s (first at line %d)",
			     o.cgroup, d->name, d->cls[i].line);
		return 0;
	}
	cl = realloc(d->cls, (d->ncls + 1) * sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	d->cls = cl;
	cl = &d->cls[d->ncls];
	memset(cl, 0, sizeof(*cl));
	cl->cgroup = strdup(o.cgroup);
	if (!cl->cgroup)
		return -ENOMEM;
	d->ncls++;
	cl->opts = o.opts;
	cl->cfg = cc;
	cl->line = line;
	return 0;
}

static int hbm_conf_dev_line(struct hbm_conf *c, struct hbm_conf_errs *e,
			     int line, char **w, int n)
{
	struct hbm_conf_dev *d;
	struct hbm_conf_opts o;
	struct hbm_config cfg;
	char err[HBM_ERRSZ];

	if (hbm_conf_opts(HBM_CMD_ATTACH, w + 1, n - 1, &o, err,
			  sizeof(err))) {
		hbm_conf_err(c, e, line, "%s", err);
		return 0;
	}
	/* As attach: the defaults, then the options, checked together. */
	hbm_config_default(&cfg);
	if (hbm_config_apply(&cfg, &o.opts, err, sizeof(err))) {
		hbm_conf_err(c, e, line, "%s", err);
		return 0;
	}
	d = hbm_conf_dev_get(c, w[0]);
	if (!d)
		return -ENOMEM;
	if (d->line) {
		hbm_conf_err(c, e, line, "duplicate line for %s (first at line %d)",
			     d->name, d->line);
		return 0;
	}
	d->line = line;
	d->opts = o.opts;
	d->cfg = cfg;
	d->parent = o.parent;
	d->ecn = o.ecn;
	d->replace = o.replace;
	return 0;
}

/* One line, its words in @w[0..@n) (n > 0). */
static int hbm_conf_line(struct hbm_conf *c, struct hbm_conf_errs *e,
			 int line, char **w, int n)
{
	if (w[0][0] == '-') {
		hbm_conf_err(c, e, line, "a line starts with its device's name, not '%s'",
			     w[0]);
		return 0;
	}
	/* As main.c checks DEV. */
	if (strlen(w[0]) >= IF_NAMESIZE || strchr(w[0], '/')) {
		hbm_conf_err(c, e, line, "invalid device name '%s'", w[0]);
		return 0;
	}
	if (n > 1 && !strcmp(w[1], "class"))
		return hbm_conf_class_line(c, e, line, w, n);
	return hbm_conf_dev_line(c, e, line, w, n);
}

/* Each problem in line order (insertion sort: stable, and few). */
static void hbm_conf_sort_errs(struct hbm_conf *c, struct hbm_conf_errs *e)
{
	int i, j, l;
	char *s;

	for (i = 1; i < c->nerr; i++) {
		l = e->lines[i];
		s = c->errs[i];
		for (j = i; j > 0 && e->lines[j - 1] > l; j--) {
			e->lines[j] = e->lines[j - 1];
			c->errs[j] = c->errs[j - 1];
		}
		e->lines[j] = l;
		c->errs[j] = s;
	}
}

int hbm_conf_parse(struct hbm_conf *c, const char *file, const char *text)
{
	struct hbm_conf_errs e = {};
	const char *p = text, *nl;
	char *buf = NULL, **words = NULL;
	size_t len;
	int line = 0, n, i, j, err = 0;

	memset(c, 0, sizeof(*c));
	c->file = strdup(file);
	if (!c->file)
		return -ENOMEM;
	for (; *p && !err; p = *nl ? nl + 1 : nl) {
		line++;
		nl = strchrnul(p, '\n');
		len = nl - p;
		free(buf);
		free(words);
		buf = malloc(len + 1);
		words = malloc((len / 2 + 1) * sizeof(*words));
		if (!buf || !words) {
			err = -ENOMEM;
			break;
		}
		n = hbm_conf_words(p, len, buf, words);
		if (n < 0)
			hbm_conf_err(c, &e, line, "a double quote is not closed");
		else if (n > 0)
			err = hbm_conf_line(c, &e, line, words, n);
	}
	free(buf);
	free(words);
	/* A class line's device needs a line of its own, anywhere. */
	for (i = 0; !err && i < c->ndev; i++) {
		if (c->dev[i].line)
			continue;
		for (j = 0; j < c->dev[i].ncls; j++)
			hbm_conf_err(c, &e, c->dev[i].cls[j].line,
				     "a class of %s, which has no line of its own (%s [ATTACH OPTION...])",
				     c->dev[i].name, c->dev[i].name);
	}
	if (!err && e.oom)
		err = -ENOMEM;
	if (!err && c->nerr) {
		hbm_conf_sort_errs(c, &e);
		err = -EINVAL;
	}
	free(e.lines);
	return err;
}

void hbm_conf_free(struct hbm_conf *c)
{
	int i, j;

	for (i = 0; i < c->ndev; i++) {
		for (j = 0; j < c->dev[i].ncls; j++) {
			free(c->dev[i].cls[j].cgroup);
			free(c->dev[i].cls[j].path);
		}
		free(c->dev[i].cls);
	}
	for (i = 0; i < c->nerr; i++)
		free(c->errs[i]);
	free(c->errs);
	free(c->dev);
	free(c->file);
	memset(c, 0, sizeof(*c));
}

/*
 * The plan. Configurations are compared option by option (enum hbm_opt),
 * through the values the options set: what attach would write against
 * what hbm_config holds, apart from what no option sets (large_pkt, the
 * class levels, the ECN and attaching flags, which are compared apart).
 */

/* A class's configuration as a device's, for the same comparisons. */
static void hbm_cfg_of_class(struct hbm_config *c,
			     const struct hbm_class_config *cc)
{
	hbm_config_default(c);
	c->rate_bps = cc->rate_bps;
	c->burst_ns = cc->burst_ns;
	c->mark_ns = cc->mark_ns;
	c->drop_ns = cc->drop_ns;
	c->drop_large_ns = cc->drop_large_ns;
}

/*
 * Append ", NAME OLD -> NEW" for each of the options below @end whose
 * value differs between @from and @to (with @arrow; without it, ", NAME
 * NEW"), the rate followed by " (link speed)" with @link. Returns how many
 * differ.
 */
static int hbm_cfg_diff(char *buf, size_t len, const struct hbm_config *from,
			const struct hbm_config *to, enum hbm_opt end,
			bool arrow, bool link)
{
	char a[HBM_FMT_BUFSZ], b[HBM_FMT_BUFSZ];
	enum hbm_opt o;
	int n = 0;

	for (o = 0; o < end; o++) {
		if (hbm_opt_value(from, o) == hbm_opt_value(to, o))
			continue;
		hbm_opt_fmt_value(a, sizeof(a), o, hbm_opt_value(from, o));
		hbm_opt_fmt_value(b, sizeof(b), o, hbm_opt_value(to, o));
		if (arrow)
			hbm_catf(buf, len, ", %s %s -> %s", hbm_opt_name(o),
				 a, b);
		else
			hbm_catf(buf, len, ", %s %s", hbm_opt_name(o), b);
		/* The rate a line without --rate gets: DEV's link speed. */
		if (link && o == HBM_OPT_RATE)
			hbm_catf(buf, len, " (link speed)");
		n++;
	}
	return n;
}

/* Every option below @end, given with @c's value: set reaches @c itself. */
static void hbm_opts_of(struct hbm_opts *o, const struct hbm_config *c,
			enum hbm_opt end)
{
	enum hbm_opt i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < end; i++) {
		o->val[i] = hbm_opt_value(c, i);
		o->given |= 1U << i;
	}
}

static const char *hbm_parent_name(enum hbm_parent p)
{
	return p == HBM_PARENT_MQ ? "mq" : "root";
}

struct hbm_plan_out {
	struct hbm_change *ch;
	int n;
	int err;
};

static struct hbm_change *hbm_plan_add(struct hbm_plan_out *p,
				       enum hbm_change_kind kind,
				       const char *dev, int line)
{
	struct hbm_change *ch;

	if (p->err)
		return NULL;
	ch = realloc(p->ch, (p->n + 1) * sizeof(*ch));
	if (!ch) {
		p->err = -ENOMEM;
		return NULL;
	}
	p->ch = ch;
	ch = &p->ch[p->n++];
	memset(ch, 0, sizeof(*ch));
	ch->kind = kind;
	snprintf(ch->dev, sizeof(ch->dev), "%s", dev);
	ch->line = line;
	return ch;
}

static const struct hbm_cur_class *hbm_cur_class_of(const struct hbm_cur_dev *d,
						    __u64 id)
{
	int i;

	for (i = 0; d && i < d->ncls; i++)
		if (d->cls[i].id == id)
			return &d->cls[i];
	return NULL;
}

static bool hbm_conf_has_class(const struct hbm_conf_dev *d, __u64 id)
{
	int i;

	for (i = 0; i < d->ncls; i++)
		if (d->cls[i].found && d->cls[i].id == id)
			return true;
	return false;
}

/* Device @d's classes: those it has and the file no longer lists go. */
static void hbm_plan_classes(struct hbm_plan_out *p,
			     const struct hbm_conf_dev *d,
			     const struct hbm_cur_dev *cur)
{
	const struct hbm_conf_class *cl;
	const struct hbm_cur_class *now;
	struct hbm_config want, had;
	struct hbm_change *ch;
	char items[384];
	int i;

	for (i = 0; cur && i < cur->ncls; i++) {
		now = &cur->cls[i];
		/* One whose cgroup's path is unknown is going anyway. */
		if (!now->path || hbm_conf_has_class(d, now->id))
			continue;
		ch = hbm_plan_add(p, HBM_CH_CLASS_DEL, d->name, 0);
		if (!ch)
			return;
		ch->cgroup = now->path;
		snprintf(ch->text, sizeof(ch->text), "%s: class %s: deleted",
			 d->name, now->path);
	}
	for (i = 0; i < d->ncls; i++) {
		cl = &d->cls[i];
		if (!cl->found) {
			ch = hbm_plan_add(p, HBM_CH_NOTE, d->name, cl->line);
			if (ch)
				snprintf(ch->text, sizeof(ch->text),
					 "%s: class %s: no such cgroup, skipped (line %d)",
					 d->name, cl->cgroup, cl->line);
			continue;
		}
		hbm_cfg_of_class(&want, &cl->cfg);
		now = hbm_cur_class_of(cur, cl->id);
		items[0] = '\0';
		if (now) {
			hbm_cfg_of_class(&had, &now->cfg);
			if (!hbm_cfg_diff(items, sizeof(items), &had, &want,
					  HBM_OPT_LIMIT, true, false))
				continue;	/* as it should be */
			ch = hbm_plan_add(p, HBM_CH_CLASS_SET, d->name,
					  cl->line);
			if (!ch)
				return;
			snprintf(ch->text, sizeof(ch->text), "%s: class %s: set %s",
				 d->name, cl->path, items + 2);
			hbm_opts_of(&ch->opts, &want, HBM_OPT_LIMIT);
		} else {
			/* The rate, and the rest where not HBM's defaults. */
			hbm_config_default(&had);
			had.rate_bps = 0;
			hbm_cfg_diff(items, sizeof(items), &had, &want,
				     HBM_OPT_LIMIT, false, false);
			ch = hbm_plan_add(p, HBM_CH_CLASS_ADD, d->name,
					  cl->line);
			if (!ch)
				return;
			snprintf(ch->text, sizeof(ch->text),
				 "%s: class %s: added (%s)", d->name, cl->path,
				 items + 2);
			ch->opts = cl->opts;
		}
		ch->cgroup = cl->path;
	}
}

static const struct hbm_cur_dev *hbm_cur_of(const struct hbm_cur_dev *cur,
					    int ncur, const char *name)
{
	int i;

	for (i = 0; i < ncur; i++)
		if (!strcmp(cur[i].name, name))
			return &cur[i];
	return NULL;
}

static const struct hbm_conf_dev *hbm_conf_of(const struct hbm_conf *c,
					      const char *name)
{
	int i;

	for (i = 0; i < c->ndev; i++)
		if (!strcmp(c->dev[i].name, name))
			return &c->dev[i];
	return NULL;
}

/*
 * A device the file names and that exists: attached as it says (again,
 * with --replace, where its parent differs or an attach did not finish),
 * or its configuration set where it differs; then its classes.
 */
static void hbm_plan_dev(struct hbm_plan_out *p, const struct hbm_conf_dev *d,
			 const struct hbm_cur_dev *cur)
{
	enum hbm_parent parent = d->parent;
	bool ecn = d->ecn != HBM_ECN_OFF;
	bool link = !(d->opts.given & (1U << HBM_OPT_RATE));
	struct hbm_config had, want = d->cfg;
	struct hbm_opts opts = d->opts;
	struct hbm_change *ch;
	char items[400];
	int n;

	/* No --rate: DEV's link speed, as attach takes it; none: refused. */
	if (link && !cur->link_bps) {
		ch = hbm_plan_add(p, HBM_CH_FAIL, d->name, d->line);
		if (ch)
			snprintf(ch->text, sizeof(ch->text), "%s: %s", d->name,
				 cur->link_err[0] ? cur->link_err :
				 "the link speed is unknown; give --rate");
		return;
	}
	if (link) {
		want.rate_bps = cur->link_bps;
		opts.val[HBM_OPT_RATE] = cur->link_bps;
		opts.given |= 1U << HBM_OPT_RATE;
	}
	if (parent == HBM_PARENT_AUTO)
		parent = cur->txq > 1 ? HBM_PARENT_MQ : HBM_PARENT_ROOT;
	items[0] = '\0';
	if (!cur->attached) {
		/* The parent, the rate, the rest where not the defaults. */
		hbm_catf(items, sizeof(items), ", parent %s",
			 hbm_parent_name(parent));
		hbm_config_default(&had);
		had.rate_bps = 0;
		hbm_cfg_diff(items, sizeof(items), &had, &want, HBM_OPT_MAX,
			     false, link);
		hbm_catf(items, sizeof(items), ", ecn %s", ecn ? "on" : "off");
		ch = hbm_plan_add(p, HBM_CH_ATTACH, d->name, d->line);
		if (!ch)
			return;
		snprintf(ch->text, sizeof(ch->text), "%s: attached (%s)",
			 d->name, items + 2);
		ch->opts = opts;
		ch->parent = parent;
		ch->ecn = ecn ? HBM_ECN_ON : HBM_ECN_OFF;
		ch->replace = d->replace;
		/*
		 * Its classes, against those it kept: a device whose qdisc
		 * went by tc qdisc del keeps them, and attach keeps them.
		 */
		hbm_plan_classes(p, d, cur);
		return;
	}
	if (cur->parent != parent)
		hbm_catf(items, sizeof(items), ", parent %s -> %s",
			 hbm_parent_name(cur->parent),
			 hbm_parent_name(parent));
	n = hbm_cfg_diff(items, sizeof(items), &cur->cfg, &want,
			 HBM_OPT_MAX, true, link);
	if (cur->ecn != ecn)
		hbm_catf(items, sizeof(items), ", ecn %s -> %s",
			 cur->ecn ? "on" : "off", ecn ? "on" : "off");
	if (cur->parent != parent || cur->unfinished) {
		/* attach --replace: the configuration from the file's. */
		if (cur->unfinished)
			hbm_catf(items, sizeof(items),
				 ", completing an attach that did not finish");
		ch = hbm_plan_add(p, HBM_CH_REATTACH, d->name, d->line);
		if (!ch)
			return;
		snprintf(ch->text, sizeof(ch->text), "%s: re-attached (%s)",
			 d->name, items + 2);
		ch->opts = opts;
		ch->parent = parent;
		ch->ecn = ecn ? HBM_ECN_ON : HBM_ECN_OFF;
		ch->replace = true;
	} else if (n || cur->ecn != ecn) {
		ch = hbm_plan_add(p, HBM_CH_SET, d->name, d->line);
		if (!ch)
			return;
		snprintf(ch->text, sizeof(ch->text), "%s: set %s", d->name,
			 items + 2);
		/* Every option, so that set reaches the file's exactly. */
		hbm_opts_of(&ch->opts, &want, HBM_OPT_MAX);
		ch->ecn = cur->ecn == ecn ? HBM_ECN_KEEP :
			  ecn ? HBM_ECN_ON : HBM_ECN_OFF;
	}
	hbm_plan_classes(p, d, cur);
}

int hbm_plan(const struct hbm_conf *c, const struct hbm_cur_dev *cur,
	     int ncur, struct hbm_change **out, int *n)
{
	struct hbm_plan_out p = {};
	const struct hbm_cur_dev *now;
	struct hbm_change *ch;
	int i;

	/* Detaches first: they free instances and classes for the rest. */
	for (i = 0; i < ncur; i++) {
		if (!cur[i].exists || !cur[i].attached ||
		    hbm_conf_of(c, cur[i].name))
			continue;
		ch = hbm_plan_add(&p, HBM_CH_DETACH, cur[i].name, 0);
		if (ch)
			snprintf(ch->text, sizeof(ch->text), "%s: detached",
				 cur[i].name);
	}
	for (i = 0; i < c->ndev; i++) {
		now = hbm_cur_of(cur, ncur, c->dev[i].name);
		if (now && now->exists) {
			hbm_plan_dev(&p, &c->dev[i], now);
			continue;
		}
		ch = hbm_plan_add(&p, HBM_CH_NOTE, c->dev[i].name,
				  c->dev[i].line);
		if (ch)
			snprintf(ch->text, sizeof(ch->text),
				 "%s: no such device, skipped (line %d): it is shaped once it exists and apply runs again",
				 c->dev[i].name, c->dev[i].line);
	}
	if (p.err) {
		free(p.ch);
		*out = NULL;
		*n = 0;
		return p.err;
	}
	*out = p.ch;
	*n = p.n;
	return 0;
}

int hbm_plan_one(const struct hbm_conf *c, int k,
		 const struct hbm_cur_dev *cur, struct hbm_change **out, int *n)
{
	struct hbm_conf one = *c;

	/* The file as if it named device k alone, and cur that device. */
	one.dev = &c->dev[k];
	one.ndev = 1;
	return hbm_plan(&one, cur, 1, out, n);
}

int hbm_plan_changes(const struct hbm_change *ch, int n)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += ch[i].kind != HBM_CH_NOTE;
	return k;
}
