// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the shaping options (loader/config.c's hbm_opt_parse(),
 * hbm_config_apply(), hbm_config_validate()) and the command lines main.c
 * parses into them (hbm_parse(), with the option table of options.c).
 *
 * The input's first byte picks what the rest is:
 *  0: option/value pairs, NUL-separated; a pair's first byte picks the
 *     option (HBM_OPT_MAX and above: unknown), the rest is its value;
 *  1: a struct hbm_config, as bytes, validated alone;
 *  2: a command line: the next byte picks the command, the rest is its
 *     arguments, NUL-separated, as main() hands them to hbm_parse().
 *
 * Oracles, each an abort(): a parsed value, printed the way --help and
 * show write it (hbm_fmt_rate(), hbm_fmt_time(), "%u", on/off, auto),
 * parses back to the same value; a failed parse or apply says why and
 * changes nothing; what apply accepts, validate accepts; and a valid
 * configuration, printed option by option and applied to the defaults,
 * gives the same configuration back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * main.c's parser is static: include it, its main() renamed, to call
 * hbm_parse() alone; it parses and never runs the command.
 */
#define main hbm_main
#include "main.c"
#undef main

#define MAX_ARGS	32

/* Reports go to fd 2 itself: stdio's stderr is silenced (below). */
static void check(int ok, const char *what, const char *in)
{
	if (ok)
		return;
	dprintf(2, "fuzz_options: %s (%s)\n", what, in);
	abort();
}

/* A reason was written, and it is a terminated string. */
static void check_reason(const char *err, const char *in)
{
	check(err[0] != '\0', "error without a reason", in);
	check(memchr(err, '\0', HBM_ERRSZ) != NULL, "reason not terminated", in);
}

/* Print the value of a parsed option and parse it again. */
static void opt_round_trip(const struct hbm_opts *o, enum hbm_opt opt)
{
	struct hbm_opts again = {};
	char buf[HBM_FMT_BUFSZ], err[HBM_ERRSZ] = "";

	hbm_opt_fmt_value(buf, sizeof(buf), opt, o->val[opt]);
	check(!hbm_opt_parse(&again, opt, buf, err, sizeof(err)),
	      "printed option does not parse", buf);
	check(again.val[opt] == o->val[opt], "printed option parses to another",
	      buf);
}

/*
 * A valid configuration, every option printed and applied to the
 * defaults, is itself again. What no option sets (ECN, the packet size
 * of drop-large, the class levels) is carried over.
 */
static void config_round_trip(const struct hbm_config *c)
{
	struct hbm_config d;
	struct hbm_opts o = {};
	char buf[HBM_FMT_BUFSZ], err[HBM_ERRSZ] = "";
	int opt;

	for (opt = 0; opt < HBM_OPT_MAX; opt++) {
		hbm_opt_fmt_value(buf, sizeof(buf), opt, hbm_opt_value(c, opt));
		if (hbm_opt_parse(&o, opt, buf, err, sizeof(err))) {
			dprintf(2, "fuzz_options: %s: %s\n", buf, err);
			check(0, "a valid configuration's option does not parse",
			      hbm_opt_name(opt));
		}
	}
	hbm_config_default(&d);
	/* The flags no option sets: the marker's and attach's own. */
	d.flags = c->flags & (HBM_F_ECN | HBM_F_ATTACHING);
	d.large_pkt = c->large_pkt;
	d.class_levels = c->class_levels;
	d.__pad = c->__pad;
	if (hbm_config_apply(&d, &o, err, sizeof(err))) {
		dprintf(2, "fuzz_options: %s\n", err);
		check(0, "a valid configuration's options do not apply", "");
	}
	check(!memcmp(&d, c, sizeof(d)), "configuration differs after printing",
	      "");
}

/* Apply @o to the defaults: all or nothing, and valid if applied. */
static void apply_opts(const struct hbm_opts *o, const char *in)
{
	struct hbm_config c, before;
	char err[HBM_ERRSZ] = "";
	int opt;

	for (opt = 0; opt < HBM_OPT_MAX; opt++)
		if (o->given & (1U << opt))
			opt_round_trip(o, opt);

	hbm_config_default(&c);
	before = c;
	if (hbm_config_apply(&c, o, err, sizeof(err))) {
		check_reason(err, in);
		check(!memcmp(&c, &before, sizeof(c)), "apply failed but changed",
		      in);
		return;
	}
	check(!hbm_config_validate(&c, err, sizeof(err)),
	      "applied configuration does not validate", in);
	config_round_trip(&c);
}

/* Splits @s (@len bytes, NUL-terminated at len) at its NULs. */
static int split(char *s, size_t len, char **out, int max)
{
	char *p = s, *end = s + len;
	int n = 0;

	while (p <= end && n < max) {
		out[n++] = p;
		p += strlen(p) + 1;
	}
	return n;
}

static void fuzz_pairs(char *s, size_t len)
{
	struct hbm_opts o = {}, before;
	char *pairs[MAX_ARGS], err[HBM_ERRSZ];
	int i, n = split(s, len, pairs, MAX_ARGS);

	for (i = 0; i < n; i++) {
		enum hbm_opt opt = (unsigned char)pairs[i][0] % (HBM_OPT_MAX + 2);
		const char *arg = pairs[i] + 1;

		/* An empty piece names no option. */
		if (!pairs[i][0])
			continue;

		before = o;
		err[0] = '\0';
		if (hbm_opt_parse(&o, opt, arg, err, sizeof(err))) {
			check_reason(err, arg);
			check(!memcmp(&o, &before, sizeof(o)),
			      "failed parse changed the options", arg);
			continue;
		}
		check(opt < HBM_OPT_MAX, "unknown option parsed", arg);
		check(o.given & (1U << opt), "parsed option not given", arg);
	}
	apply_opts(&o, "pairs");
}

static void fuzz_config(const uint8_t *data, size_t size)
{
	struct hbm_config c = {}, before;
	char err[HBM_ERRSZ] = "";

	memcpy(&c, data, size < sizeof(c) ? size : sizeof(c));
	before = c;
	if (hbm_config_validate(&c, err, sizeof(err))) {
		check_reason(err, "config");
		return;
	}
	check(!memcmp(&c, &before, sizeof(c)), "validate changed it", "config");
	config_round_trip(&c);
}

static void fuzz_argv(char *s, size_t len)
{
	char *argv[MAX_ARGS + 2], *dummy[] = { "x", NULL };
	const struct hbm_cmd *cmd;
	struct hbm_args a = {};
	int argc;

	if (!len)
		return;
	cmd = &hbm_cmds[(unsigned char)s[0] % (sizeof(hbm_cmds) /
					       sizeof(hbm_cmds[0]))];
	argv[0] = (char *)cmd->name;
	argc = 1 + split(s + 1, len - 1, argv + 1, MAX_ARGS);
	argv[argc] = NULL;
	/*
	 * getopt keeps its place in the last argument across calls: start
	 * it afresh (optind 0), as a new process would, before hbm_parse()
	 * sets optind to 1.
	 */
	optind = 0;
	getopt(1, dummy, "");
	if (hbm_parse(cmd, argc, argv, &a) >= 0)
		return;		/* usage printed, or a usage error */
	check(!a.err[0], "parsed with an error", a.err);
	check(!a.dev || (a.dev[0] && strlen(a.dev) < IFNAMSIZ &&
			 !strchr(a.dev, '/')), "invalid device accepted", a.dev);
	check(!a.dev || cmd->dev_allowed, "device accepted where none is",
	      cmd->name);
	check(a.dev || !cmd->dev_required, "device required but missing",
	      cmd->name);
	apply_opts(&a.attach.opts, "argv");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/*
	 * Usage and errors go to stdout and stderr through stdio; the
	 * sanitizers and libFuzzer write to fd 2 directly, so their reports
	 * are kept when stdio's streams are silenced.
	 */
	stdout = fopen("/dev/null", "w");
	stderr = stdout;
	return stdout ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = malloc(size);
	if (!s)
		abort();
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		fuzz_pairs(s, size - 1);
		break;
	case 1:
		fuzz_config(data + 1, size - 1);
		break;
	default:
		fuzz_argv(s, size - 1);
		break;
	}
	free(s);
	return 0;
}
