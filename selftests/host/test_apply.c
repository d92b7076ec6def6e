// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/conf.c, apply's pure half: the configuration file
 * parsed (comments, blank lines, quotes, every option through attach's
 * and class add's checks), each kind of bad file with its FILE:LINE
 * message, and the plan that makes a current state (made up here) match
 * a file: nothing when they match, set, attach, detach, re-attach, and
 * class add, set and delete. Nothing on this host is looked at.
 */
#include <errno.h>

#include "../hbm_test.h"
#include "../../loader/apply.h"

#define F "t.conf"

static bool parse_ok(struct hbm_conf *c, const char *text)
{
	int err = hbm_conf_parse(c, F, text);

	if (err && c->nerr)
		printf("# first problem: %s\n", c->errs[0]);
	return ASSERT_OK(err, "parse");
}

static const struct hbm_conf_dev *dev_of(const struct hbm_conf *c,
					 const char *name)
{
	int i;

	for (i = 0; i < c->ndev; i++)
		if (!strcmp(c->dev[i].name, name))
			return &c->dev[i];
	return NULL;
}

static void test_comments_blank(void)
{
	struct hbm_conf c;

	if (parse_ok(&c, "# bpf-hbm.conf\n\n   \n\t# indented comment\n"
		     "eth0   # a device with the defaults\r\n"
		     "\n# eth1 --rate 1gbit\n"))
		ASSERT_EQ(c.ndev, 1, "one device");
	hbm_conf_free(&c);
	/* Nothing at all, and no newline at the end. */
	if (parse_ok(&c, ""))
		ASSERT_EQ(c.ndev, 0, "empty file");
	hbm_conf_free(&c);
	if (parse_ok(&c, "eth0 --rate 2gbit"))
		ASSERT_U64_EQ(c.dev[0].cfg.rate_bps, 2000000000ULL,
			      "last line without a newline");
	hbm_conf_free(&c);
}

static void test_valid_file(void)
{
	static const char text[] =
		"# the uplinks\n"
		"eth0 class --cgroup /sys/fs/cgroup/batch --rate 100mbit\n"
		"eth0 --rate 10gbit --ecn off --parent mq --drop 1ms\n"
		"eth1 --rate=1gbit --cn off --quantum 4k --replace\n"
		"eth0 class --cgroup \"/sys/fs/cgroup/my app\" --rate 1gbit --mark 20us # quoted\n"
		"eth0 class --cgroup \"a#b\\\"c\\\\\" --rate 5mbit\n";
	const struct hbm_conf_dev *d;
	struct hbm_config dflt;
	struct hbm_conf c;

	hbm_config_default(&dflt);
	if (!parse_ok(&c, text))
		goto out;
	if (!ASSERT_EQ(c.ndev, 2, "two devices"))
		goto out;
	/* In the order they first appear, a class line before its device. */
	ASSERT_STREQ(c.dev[0].name, "eth0", "first");
	d = dev_of(&c, "eth0");
	ASSERT_EQ(d->line, 3, "eth0's line");
	ASSERT_U64_EQ(d->cfg.rate_bps, 10000000000ULL, "eth0 rate");
	ASSERT_U64_EQ(d->cfg.drop_ns, 1000000, "eth0 drop");
	/* --drop alone scales drop-large, as attach does. */
	ASSERT_U64_EQ(d->cfg.drop_large_ns, 960000, "eth0 drop-large");
	ASSERT_EQ(d->ecn, HBM_ECN_OFF, "eth0 ecn");
	ASSERT_EQ(d->parent, HBM_PARENT_MQ, "eth0 parent");
	ASSERT_FALSE(d->replace, "eth0 replace");
	if (ASSERT_EQ(d->ncls, 3, "eth0's classes")) {
		ASSERT_STREQ(d->cls[0].cgroup, "/sys/fs/cgroup/batch", "class 1");
		ASSERT_U64_EQ(d->cls[0].cfg.rate_bps, 100000000ULL, "class 1 rate");
		ASSERT_U64_EQ(d->cls[0].cfg.mark_ns, dflt.mark_ns, "class 1 mark");
		ASSERT_EQ(d->cls[0].line, 2, "class 1 line");
		ASSERT_STREQ(d->cls[1].cgroup, "/sys/fs/cgroup/my app", "quoted");
		ASSERT_U64_EQ(d->cls[1].cfg.mark_ns, 20000, "class 2 mark");
		ASSERT_STREQ(d->cls[2].cgroup, "a#b\"c\\", "escapes");
	}
	d = dev_of(&c, "eth1");
	ASSERT_U64_EQ(d->cfg.rate_bps, 1000000000ULL, "--rate=");
	ASSERT_TRUE(d->cfg.flags & HBM_F_NO_CN, "eth1 cn off");
	ASSERT_EQ(d->cfg.quantum, 4096, "eth1 quantum");
	ASSERT_EQ(d->ecn, HBM_ECN_KEEP, "eth1 ecn (on)");
	ASSERT_EQ(d->parent, HBM_PARENT_AUTO, "eth1 parent");
	ASSERT_TRUE(d->replace, "eth1 replace");
	ASSERT_EQ(d->ncls, 0, "eth1's classes");
out:
	hbm_conf_free(&c);
}

/* A file of one problem: refused, with this as its first. */
static void bad(const char *text, const char *want)
{
	struct hbm_conf c;
	int err = hbm_conf_parse(&c, F, text);

	if (ASSERT_EQ(err, -EINVAL, want) && ASSERT_GE(c.nerr, 1, want))
		ASSERT_STREQ(c.errs[0], want, text);
	hbm_conf_free(&c);
}

static void test_bad_files(void)
{
	bad("eth0 --rate fast\n", F ":1: invalid rate 'fast'");
	bad("\n# x\neth0 --rate 1kbit\n",
	    F ":3: rate 1kbit out of range 1Mbit..400Gbit");
	bad("eth0 --bogus 1\n", F ":1: unrecognized option '--bogus'");
	bad("eth0 --bogus=1\n", F ":1: unrecognized option '--bogus'");
	/* An abbreviation getopt would take: not in a file. */
	bad("eth0 --ra 1gbit\n", F ":1: unrecognized option '--ra'");
	bad("eth0 -v\n", F ":1: unrecognized option '-v'");
	bad("eth0 --help\n", F ":1: unrecognized option '--help'");
	bad("eth0 rate 1gbit\n",
	    F ":1: unexpected argument 'rate': did you mean --rate?");
	bad("eth0 --rate 1gbit 2gbit\n", F ":1: unexpected argument '2gbit'");
	bad("eth0 --rate\n", F ":1: option '--rate' needs a value");
	bad("eth0 --replace=yes\n",
	    F ":1: option '--replace' doesn't allow an argument");
	bad("eth0 --ecn maybe\n", F ":1: invalid ecn 'maybe' (on or off)");
	bad("eth0 --parent htb\n", F ":1: invalid parent 'htb' (root or mq)");
	/* attach's rules over the whole configuration. */
	bad("eth0 --mark 1ms --drop 500us\n",
	    F ":1: mark threshold (1ms) must be below drop threshold (500us)");
	bad("eth0 --flow-limit 20 --limit 10\n",
	    F ":1: flow-limit (20) must not exceed limit (10)");
	/* Options of another command. */
	bad("eth0 --cgroup /x\n", F ":1: unrecognized option '--cgroup'");
	bad("eth0 --json\n", F ":1: unrecognized option '--json'");
	bad("eth0\neth0 class --cgroup /x --rate 1gbit --limit 5\n",
	    F ":2: unrecognized option '--limit'");
	bad("eth0\neth0 class --cgroup /x --rate 1gbit --ecn off\n",
	    F ":2: unrecognized option '--ecn'");
	bad("eth0\neth0 class --rate 1gbit\n",
	    F ":2: missing --cgroup PATH (a class line is DEV class --cgroup PATH --rate RATE ...)");
	bad("eth0\neth0 class --cgroup /x\n",
	    F ":2: missing --rate RATE (a class has no default rate)");
	bad("eth0\neth0 class --cgroup \"\" --rate 1gbit\n",
	    F ":2: invalid cgroup path '' (a directory under the cgroup2 mount)");
	bad("eth0\neth0 class --cgroup /x --rate 1gbit --drop-large 10us\n",
	    F ":2: drop-large threshold (10us) must be above mark threshold (50us)");
	bad("eth0 class --cgroup /x --rate 1gbit\n",
	    F ":1: a class of eth0, which has no line of its own (eth0 [ATTACH OPTION...])");
	bad("eth0\neth0 class --cgroup \"/x y --rate 1gbit\n",
	    F ":2: a double quote is not closed");
	bad("--rate 1gbit\n",
	    F ":1: a line starts with its device's name, not '--rate'");
	bad("a/b\n", F ":1: invalid device name 'a/b'");
	bad("0123456789abcdef\n", F ":1: invalid device name '0123456789abcdef'");
}

static void test_duplicates(void)
{
	struct hbm_conf c;

	bad("eth0\neth1\neth0 --rate 2gbit\n",
	    F ":3: duplicate line for eth0 (first at line 1)");
	bad("eth0\neth0 class --cgroup /x --rate 1gbit\n"
	    "eth0 class --cgroup /x --rate 2gbit\n",
	    F ":3: duplicate class /x on eth0 (first at line 2)");
	/* The same cgroup on two devices is two classes. */
	if (parse_ok(&c, "eth0\neth1\neth0 class --cgroup /x --rate 1gbit\n"
		     "eth1 class --cgroup /x --rate 1gbit\n"))
		ASSERT_EQ(c.dev[0].ncls + c.dev[1].ncls, 2, "one each");
	hbm_conf_free(&c);
	/* Every problem, in line order, a class's missing device too. */
	ASSERT_EQ(hbm_conf_parse(&c, F,
				 "eth1 class --cgroup /x --rate 1gbit\n"
				 "eth0 --rate x\neth0\neth0 --bogus\n"), -EINVAL,
		  "refused");
	if (ASSERT_EQ(c.nerr, 3, "three problems")) {
		ASSERT_STREQ(c.errs[0], F ":1: a class of eth1, which has no line of its own (eth1 [ATTACH OPTION...])",
			     "1");
		ASSERT_STREQ(c.errs[1], F ":2: invalid rate 'x'", "2");
		ASSERT_STREQ(c.errs[2], F ":4: unrecognized option '--bogus'",
			     "4");
	}
	hbm_conf_free(&c);
}

/* A device as attach would leave it for line @d of a file. */
static struct hbm_cur_dev cur_as(const struct hbm_conf_dev *d, int txq)
{
	struct hbm_cur_dev cur = {
		.exists = true,
		.attached = true,
		.txq = txq,
		.cfg = d->cfg,
		.ecn = d->ecn != HBM_ECN_OFF,
		/* A line without --rate: a link as fast as its rate. */
		.link_bps = d->cfg.rate_bps,
	};

	snprintf(cur.name, sizeof(cur.name), "%s", d->name);
	cur.parent = d->parent != HBM_PARENT_AUTO ? d->parent :
		     txq > 1 ? HBM_PARENT_MQ : HBM_PARENT_ROOT;
	/* What no option sets is not compared. */
	cur.cfg.class_levels = 1U << 2;
	if (cur.ecn)
		cur.cfg.flags |= HBM_F_ECN;
	return cur;
}

struct plan {
	struct hbm_change *ch;
	int n;
};

static bool plan(struct plan *p, const struct hbm_conf *c,
		 const struct hbm_cur_dev *cur, int ncur)
{
	free(p->ch);
	p->ch = NULL;
	return ASSERT_OK(hbm_plan(c, cur, ncur, &p->ch, &p->n), "plan");
}

/* Each change's text, "|"-joined, notes as "note: TEXT". */
static const char *texts(const struct plan *p)
{
	static char buf[4096];
	int i;

	buf[0] = '\0';
	for (i = 0; i < p->n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s%s",
			 i ? "|" : "",
			 p->ch[i].kind == HBM_CH_NOTE ? "note: " : "",
			 p->ch[i].text);
	return buf;
}

static void test_plan_devices(void)
{
	struct hbm_cur_dev cur[3];
	struct plan p = {};
	struct hbm_config want;
	struct hbm_conf c;
	char err[HBM_ERRSZ];

	if (!parse_ok(&c, "eth0 --rate 1gbit --ecn off\neth1 --rate 2gbit\n"))
		goto out;
	cur[0] = cur_as(&c.dev[0], 1);
	cur[1] = cur_as(&c.dev[1], 4);
	/* As the file says: nothing to change. */
	if (plan(&p, &c, cur, 2)) {
		ASSERT_EQ(p.n, 0, "nothing");
		ASSERT_EQ(hbm_plan_changes(p.ch, p.n), 0, "no change");
	}

	/* A rate differs: set, every option given, ECN kept. */
	cur[0].cfg.rate_bps = 2000000000ULL;
	if (plan(&p, &c, cur, 2) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_SET, "set");
		ASSERT_STREQ(p.ch[0].text, "eth0: set rate 2Gbit -> 1Gbit",
			     "set's line");
		ASSERT_EQ(p.ch[0].ecn, HBM_ECN_KEEP, "ecn kept");
		ASSERT_EQ(p.ch[0].opts.given, (1U << HBM_OPT_MAX) - 1,
			  "every option");
		/* What set makes of them is the file's configuration. */
		want = cur[0].cfg;
		if (ASSERT_OK(hbm_config_apply(&want, &p.ch[0].opts, err,
					       sizeof(err)), err))
			ASSERT_U64_EQ(want.rate_bps, c.dev[0].cfg.rate_bps,
				      "set reaches the file's");
	}
	cur[0] = cur_as(&c.dev[0], 1);

	/* ECN and a threshold: one set, both on its line. */
	cur[1].ecn = false;
	cur[1].cfg.flags &= ~HBM_F_ECN;
	cur[1].cfg.drop_ns = 1000000;
	if (plan(&p, &c, cur, 2) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_STREQ(p.ch[0].text, "eth1: set drop 1ms -> 500us, ecn off -> on",
			     "set's line");
		ASSERT_EQ(p.ch[0].ecn, HBM_ECN_ON, "ecn on");
	}
	cur[1] = cur_as(&c.dev[1], 4);

	/* Not attached: attached, as the file says. */
	cur[1].attached = false;
	cur[1].cfg = (struct hbm_config)HBM_CONFIG_DEFAULT;
	if (plan(&p, &c, cur, 2) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_ATTACH, "attach");
		ASSERT_STREQ(p.ch[0].text, "eth1: attached (parent mq, rate 2Gbit, ecn on)",
			     "attach's line");
		ASSERT_EQ(p.ch[0].parent, HBM_PARENT_MQ, "auto is mq");
		ASSERT_FALSE(p.ch[0].replace, "no --replace");
	}
	cur[1] = cur_as(&c.dev[1], 4);

	/* Attached, not in the file: detached, before the rest. */
	snprintf(cur[2].name, sizeof(cur[2].name), "eth9");
	cur[2] = cur_as(&c.dev[1], 1);
	snprintf(cur[2].name, sizeof(cur[2].name), "eth9");
	cur[0].cfg.rate_bps = 5000000000ULL;
	if (plan(&p, &c, cur, 3) && ASSERT_EQ(p.n, 2, "two changes")) {
		ASSERT_STREQ(texts(&p), "eth9: detached|eth0: set rate 5Gbit -> 1Gbit",
			     "detach first");
		ASSERT_EQ(p.ch[0].kind, HBM_CH_DETACH, "detach");
	}
	/* ... but not a device without bpf_hbm. */
	cur[2].attached = false;
	cur[0] = cur_as(&c.dev[0], 1);
	if (plan(&p, &c, cur, 3))
		ASSERT_EQ(p.n, 0, "nothing to detach");
out:
	free(p.ch);
	hbm_conf_free(&c);
}

/* A line without --rate: the device's link speed, or refused. */
static void test_plan_link_speed(void)
{
	struct hbm_cur_dev cur[2];
	struct plan p = {};
	struct hbm_config want;
	struct hbm_conf c;
	char err[HBM_ERRSZ];

	if (!parse_ok(&c, "eth0 --parent root\nd0 --burst 1ms\n"))
		goto out;
	cur[0] = cur_as(&c.dev[0], 1);
	cur[1] = cur_as(&c.dev[1], 1);
	cur[0].attached = cur[1].attached = false;
	cur[0].link_bps = 10000000000ULL;
	cur[1].link_bps = 0;
	snprintf(cur[1].link_err, sizeof(cur[1].link_err),
		 "the link speed is unknown; give --rate");
	/* eth0 attached at 10gbit, given as --rate; d0 refused, alone. */
	if (plan(&p, &c, cur, 2) && ASSERT_EQ(p.n, 2, "two entries")) {
		ASSERT_STREQ(texts(&p),
			     "eth0: attached (parent root, rate 10Gbit (link speed), ecn on)|"
			     "d0: the link speed is unknown; give --rate",
			     "lines");
		ASSERT_EQ(p.ch[0].kind, HBM_CH_ATTACH, "attach");
		ASSERT_TRUE(p.ch[0].opts.given & (1U << HBM_OPT_RATE),
			    "the rate given");
		ASSERT_U64_EQ(p.ch[0].opts.val[HBM_OPT_RATE], 10000000000ULL,
			      "as the link speed");
		ASSERT_EQ(p.ch[1].kind, HBM_CH_FAIL, "refused");
		ASSERT_EQ(p.ch[1].line, 2, "its line");
		ASSERT_EQ(hbm_plan_changes(p.ch, p.n), 2, "a failure counts");
	}
	/* Attached at the link speed: nothing to change. */
	hbm_conf_free(&c);
	if (!parse_ok(&c, "eth0 --parent root\n"))
		goto out;
	cur[0] = cur_as(&c.dev[0], 1);
	cur[0].cfg.rate_bps = cur[0].link_bps = 10000000000ULL;
	if (plan(&p, &c, cur, 1))
		ASSERT_EQ(p.n, 0, "as the file says");
	/* The speed changed (or was the 1gbit default): set to it. */
	cur[0].link_bps = 25000000000ULL;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_STREQ(p.ch[0].text,
			     "eth0: set rate 10Gbit -> 25Gbit (link speed)",
			     "set's line");
		want = cur[0].cfg;
		if (ASSERT_OK(hbm_config_apply(&want, &p.ch[0].opts, err,
					       sizeof(err)), err))
			ASSERT_U64_EQ(want.rate_bps, 25000000000ULL,
				      "set reaches the link speed");
	}
	/* Attached, speed now unknown: refused, its configuration kept. */
	cur[0].link_bps = 0;
	cur[0].link_err[0] = '\0';
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "one entry")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_FAIL, "refused");
		ASSERT_STREQ(p.ch[0].text,
			     "eth0: the link speed is unknown; give --rate",
			     "the reason");
	}
out:
	free(p.ch);
	hbm_conf_free(&c);
}

static void test_plan_reattach(void)
{
	struct hbm_cur_dev cur[1];
	struct plan p = {};
	struct hbm_conf c;

	if (!parse_ok(&c, "eth0 --parent root --rate 3gbit\n"))
		goto out;
	/* --parent differs: attach --replace, from the file's options. */
	cur[0] = cur_as(&c.dev[0], 8);
	cur[0].parent = HBM_PARENT_MQ;
	cur[0].cfg.rate_bps = 1000000000ULL;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_REATTACH, "re-attach");
		ASSERT_STREQ(p.ch[0].text, "eth0: re-attached (parent mq -> root, rate 1Gbit -> 3Gbit)",
			     "its line");
		ASSERT_TRUE(p.ch[0].replace, "--replace");
		ASSERT_EQ(p.ch[0].parent, HBM_PARENT_ROOT, "root");
		ASSERT_EQ(p.ch[0].ecn, HBM_ECN_ON, "ecn on");
		ASSERT_EQ(p.ch[0].opts.given, 1U << HBM_OPT_RATE,
			  "the file's options");
	}
	/* An attach that did not finish: completed. */
	cur[0] = cur_as(&c.dev[0], 8);
	cur[0].unfinished = true;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "one change")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_REATTACH, "re-attach");
		ASSERT_STREQ(p.ch[0].text, "eth0: re-attached (completing an attach that did not finish)",
			     "its line");
	}
	hbm_conf_free(&c);
	/* No --parent: what attach would choose, mq for several queues. */
	if (!parse_ok(&c, "eth0\n"))
		goto out;
	cur[0] = cur_as(&c.dev[0], 8);
	if (plan(&p, &c, cur, 1))
		ASSERT_EQ(p.n, 0, "mq on 8 queues");
	cur[0].parent = HBM_PARENT_ROOT;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "one change"))
		ASSERT_STREQ(p.ch[0].text, "eth0: re-attached (parent root -> mq)",
			     "root on 8 queues");
out:
	free(p.ch);
	hbm_conf_free(&c);
}

static void test_plan_missing(void)
{
	struct hbm_cur_dev cur[1] = {};
	struct plan p = {};
	struct hbm_conf c;

	if (!parse_ok(&c, "eth0\nusb0 --rate 100mbit\n"))
		goto out;
	/* usb0 is not there (not even in cur): a note, not a change. */
	cur[0] = cur_as(&c.dev[0], 1);
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 1, "a note")) {
		ASSERT_EQ(p.ch[0].kind, HBM_CH_NOTE, "note");
		ASSERT_STREQ(p.ch[0].text, "usb0: no such device, skipped (line 2): it is shaped once it exists and apply runs again",
			     "its text");
		ASSERT_EQ(hbm_plan_changes(p.ch, p.n), 0, "no change");
	}
out:
	free(p.ch);
	hbm_conf_free(&c);
}

/*
 * apply --watch's plan of one device, as it appears: its line and classes
 * alone; the file's other devices, absent or not, are not looked at, and
 * nothing is detached.
 */
static void test_plan_one(void)
{
	struct hbm_cur_dev cur;
	struct plan p = {};
	struct hbm_conf c;
	int i;

	if (!parse_ok(&c, "eth0 --rate 1gbit\n"
		      "veth7 --rate 100mbit --parent root --ecn off\n"
		      "veth7 class --cgroup /sys/fs/cgroup/a --rate 10mbit\n"
		      "usb0\n"))
		goto out;
	for (i = 0; i < c.dev[1].ncls; i++) {
		c.dev[1].cls[i].found = true;
		c.dev[1].cls[i].id = 100 + i;
		c.dev[1].cls[i].path = strdup(c.dev[1].cls[i].cgroup);
	}
	/* A veth made (again): attached as its line says, then its class. */
	memset(&cur, 0, sizeof(cur));
	snprintf(cur.name, sizeof(cur.name), "veth7");
	cur.exists = true;
	cur.txq = 1;
	hbm_config_default(&cur.cfg);
	if (ASSERT_OK(hbm_plan_one(&c, 1, &cur, &p.ch, &p.n), "plan one"))
		ASSERT_STREQ(texts(&p), "veth7: attached (parent root, rate 100Mbit, ecn off)|"
			     "veth7: class /sys/fs/cgroup/a: added (rate 10Mbit)",
			     "attach and class, nothing of eth0 or usb0");
	/* Already as the file says (an event of a device shaped): nothing. */
	free(p.ch);
	p.ch = NULL;
	cur = cur_as(&c.dev[0], 1);
	if (ASSERT_OK(hbm_plan_one(&c, 0, &cur, &p.ch, &p.n), "plan one"))
		ASSERT_EQ(p.n, 0, "eth0 as the file says");
	/* A device renamed to eth0 with bpf_hbm of another rate: set. */
	free(p.ch);
	p.ch = NULL;
	cur.cfg.rate_bps = 3000000000ULL;
	if (ASSERT_OK(hbm_plan_one(&c, 0, &cur, &p.ch, &p.n), "plan one"))
		ASSERT_STREQ(texts(&p), "eth0: set rate 3Gbit -> 1Gbit",
			     "renamed to eth0: set");
	/* Gone again before it was applied: a note, no change. */
	free(p.ch);
	p.ch = NULL;
	memset(&cur, 0, sizeof(cur));
	snprintf(cur.name, sizeof(cur.name), "usb0");
	if (ASSERT_OK(hbm_plan_one(&c, 2, &cur, &p.ch, &p.n), "plan one")) {
		ASSERT_EQ(p.n, 1, "one note");
		ASSERT_EQ(hbm_plan_changes(p.ch, p.n), 0, "no change");
	}
out:
	free(p.ch);
	hbm_conf_free(&c);
}

/* The cgroups of @d's classes, as apply.c resolves them: ids 100, 101... */
static void resolve(struct hbm_conf_dev *d)
{
	int i;

	for (i = 0; i < d->ncls; i++) {
		d->cls[i].found = true;
		d->cls[i].id = 100 + i;
		d->cls[i].path = strdup(d->cls[i].cgroup);
	}
}

static void test_plan_classes(void)
{
	struct hbm_cur_class cls[3];
	struct hbm_cur_dev cur[1];
	struct plan p = {};
	struct hbm_conf c;

	if (!parse_ok(&c, "eth0\n"
		      "eth0 class --cgroup /sys/fs/cgroup/a --rate 100mbit\n"
		      "eth0 class --cgroup /sys/fs/cgroup/b --rate 200mbit --mark 10us\n"))
		goto out;
	resolve(&c.dev[0]);
	cur[0] = cur_as(&c.dev[0], 1);
	cls[0] = (struct hbm_cur_class){ 100, "/sys/fs/cgroup/a",
					 c.dev[0].cls[0].cfg };
	cls[1] = (struct hbm_cur_class){ 101, "/sys/fs/cgroup/b",
					 c.dev[0].cls[1].cfg };
	cls[1].cfg.level = 3;		/* not an option: not compared */
	cur[0].cls = cls;
	cur[0].ncls = 2;
	if (plan(&p, &c, cur, 1))
		ASSERT_EQ(p.n, 0, "as the file says");

	/* One's rate differs, one more the file does not list. */
	cls[0].cfg.rate_bps = 50000000;
	cls[2] = (struct hbm_cur_class){ 7, "/sys/fs/cgroup/old",
					 c.dev[0].cls[0].cfg };
	cur[0].ncls = 3;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 2, "two changes")) {
		ASSERT_STREQ(texts(&p), "eth0: class /sys/fs/cgroup/old: deleted|"
			     "eth0: class /sys/fs/cgroup/a: set rate 50Mbit -> 100Mbit",
			     "del, set");
		ASSERT_EQ(p.ch[0].kind, HBM_CH_CLASS_DEL, "del");
		ASSERT_STREQ(p.ch[0].cgroup, "/sys/fs/cgroup/old", "its path");
		ASSERT_EQ(p.ch[1].kind, HBM_CH_CLASS_SET, "set");
		ASSERT_EQ(p.ch[1].opts.given, (1U << HBM_OPT_LIMIT) - 1,
			  "a class's options, all");
	}
	/* A class whose cgroup's path is unknown is not deleted by path. */
	cls[0].cfg.rate_bps = c.dev[0].cls[0].cfg.rate_bps;
	cls[2].path = NULL;
	if (plan(&p, &c, cur, 1))
		ASSERT_EQ(p.n, 0, "unknown path");

	/* Missing: added; a cgroup that does not exist: a note. */
	cur[0].ncls = 0;
	c.dev[0].cls[0].found = false;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 2, "note and add")) {
		ASSERT_STREQ(texts(&p), "note: eth0: class /sys/fs/cgroup/a: no such cgroup, skipped (line 2)|"
			     "eth0: class /sys/fs/cgroup/b: added (rate 200Mbit, mark 10us)",
			     "note, add");
		ASSERT_EQ(p.ch[1].kind, HBM_CH_CLASS_ADD, "add");
		ASSERT_EQ(p.ch[1].opts.given,
			  (1U << HBM_OPT_RATE) | (1U << HBM_OPT_MARK),
			  "the file's options");
	}
	c.dev[0].cls[0].found = true;

	/* A device attached now: its classes after it, all added. */
	cur[0].attached = false;
	if (plan(&p, &c, cur, 1) && ASSERT_EQ(p.n, 3, "three changes"))
		ASSERT_STREQ(texts(&p), "eth0: attached (parent root, rate 1Gbit (link speed), ecn on)|"
			     "eth0: class /sys/fs/cgroup/a: added (rate 100Mbit)|"
			     "eth0: class /sys/fs/cgroup/b: added (rate 200Mbit, mark 10us)",
			     "attach, then add");
out:
	free(p.ch);
	hbm_conf_free(&c);
}

HBM_TEST_MAIN(
	HBM_TEST(test_comments_blank),
	HBM_TEST(test_valid_file),
	HBM_TEST(test_bad_files),
	HBM_TEST(test_duplicates),
	HBM_TEST(test_plan_devices),
	HBM_TEST(test_plan_link_speed),
	HBM_TEST(test_plan_reattach),
	HBM_TEST(test_plan_missing),
	HBM_TEST(test_plan_classes),
	HBM_TEST(test_plan_one),
)
