// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/options.c, the one table of bpf-hbm's options:
 * `bpf-hbm --help`, each command's --help and the README's reference name
 * every option the table gives a command, with its argument, and say the
 * default the table derives from include/hbm.h. The loader is run as built
 * (build/bpf-hbm beside build/tests/), the README read from the repository
 * (the build directory's parent, or its grandparent for the sanitizers'
 * build/asan/).
 */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>

#include "../hbm_test.h"
#include "../../loader/options.h"

static char hbm_build[PATH_MAX];	/* build/, from /proc/self/exe */

static bool hbm_paths_ok(void)
{
	ssize_t n = readlink("/proc/self/exe", hbm_build, sizeof(hbm_build) - 1);
	char *p;

	if (n <= 0)
		return false;
	hbm_build[n] = '\0';
	p = strrchr(hbm_build, '/');	/* .../build/tests/test_options */
	if (!p)
		return false;
	*p = '\0';
	p = strrchr(hbm_build, '/');	/* .../build/tests */
	if (!p)
		return false;
	*p = '\0';
	return true;
}

/* The whole output of a command, or NULL; the caller frees it. */
static char *hbm_slurp_cmd(const char *cmd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = popen(cmd, "r");

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	if (pclose(f) != 0 || !buf || !len) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static char *hbm_help_of(const char *cmd)
{
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "'%s/bpf-hbm' %s --help", hbm_build,
		 cmd ? cmd : "");
	return hbm_slurp_cmd(line);
}

/* Case-insensitive strstr. */
static const char *hbm_find(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return hay;
	return NULL;
}

/*
 * Where --help describes "--NAME[ ARG]": a line starting (after spaces)
 * with it. The description runs to the next such line.
 */
static const char *hbm_entry(const char *text, const char *name,
			     const char *arg, size_t *len)
{
	char want[64];
	const char *p = text, *end;

	snprintf(want, sizeof(want), "--%s%s%s", name, arg ? " " : "",
		 arg ? arg : "");
	for (; (p = strstr(p, want)); p++) {
		const char *bol = p;

		while (bol > text && bol[-1] == ' ')
			bol--;
		if (bol != text && bol[-1] != '\n')
			continue;	/* mentioned in prose, not described */
		end = strstr(p + 1, "\n  --");
		*len = end ? (size_t)(end - p) : strlen(p);
		return p;
	}
	return NULL;
}

static bool hbm_says_default(const char *entry, size_t len, const char *def)
{
	char want[96], *copy = strndup(entry, len);
	bool ok;

	snprintf(want, sizeof(want), "default %s", def);
	ok = copy && hbm_find(copy, want);
	free(copy);
	return ok;
}

/* Each command's --help describes its options, with their defaults. */
static void test_command_help(void)
{
	unsigned int bit;
	size_t i, len;
	char def[64], tag[96];

	if (!ASSERT_TRUE(hbm_paths_ok(), "build dir"))
		return;
	for (bit = 1; bit < HBM_CMD_ALL; bit <<= 1) {
		const char *cmd = hbm_cmd_name(bit);
		char *help = hbm_help_of(cmd);

		snprintf(tag, sizeof(tag), "bpf-hbm %s --help", cmd);
		if (!ASSERT_TRUE(help != NULL, tag))
			continue;
		for (i = 0; i < hbm_n_optdefs; i++) {
			const struct hbm_optdef *d = &hbm_optdefs[i];
			const char *e;

			if (!(d->cmds & bit) || d->val == 'h' || d->val == 'v')
				continue;
			snprintf(tag, sizeof(tag), "%s --help: --%s %s", cmd,
				 hbm_optdef_name(d), d->arg ? d->arg : "");
			e = hbm_entry(help, hbm_optdef_name(d), d->arg, &len);
			if (!ASSERT_TRUE(e != NULL, tag))
				continue;
			if (hbm_opt_default(d, bit, def, sizeof(def)))
				ASSERT_TRUE(hbm_says_default(e, len, def), tag);
		}
		free(help);
	}
}

/* `bpf-hbm --help` describes every option, with attach's defaults. */
static void test_main_help(void)
{
	char def[64], tag[96];
	char *help;
	size_t i, len;

	if (!ASSERT_TRUE(hbm_paths_ok(), "build dir"))
		return;
	help = hbm_help_of(NULL);
	if (!ASSERT_TRUE(help != NULL, "bpf-hbm --help"))
		return;
	for (i = 0; i < hbm_n_optdefs; i++) {
		const struct hbm_optdef *d = &hbm_optdefs[i];
		unsigned int cmd = d->cmds & HBM_CMD_ATTACH ? HBM_CMD_ATTACH :
							      d->cmds;
		const char *e;

		if (d->val == 'h' || d->val == 'v')
			continue;
		snprintf(tag, sizeof(tag), "--help: --%s", hbm_optdef_name(d));
		e = hbm_entry(help, hbm_optdef_name(d), d->arg, &len);
		if (!e) {
			/* load's and unload's are on their command's line. */
			ASSERT_TRUE(strstr(help, hbm_optdef_name(d)) != NULL, tag);
			e = strstr(help, hbm_optdef_name(d));
			len = e ? strcspn(e, "\n") + 400 : 0;
			if (e && len > strlen(e))
				len = strlen(e);
		}
		if (e && hbm_opt_default(d, cmd, def, sizeof(def)))
			ASSERT_TRUE(hbm_says_default(e, len, def) ||
				    hbm_find(e, def), tag);
	}
	free(help);
}

/* The README's reference names every option and each default it has. */
static void test_readme(void)
{
	char path[PATH_MAX + 32], cmd[PATH_MAX + 48], def[64], want[64], tag[96];
	const char *ref, *p;
	char *readme;
	size_t i;

	if (!ASSERT_TRUE(hbm_paths_ok(), "build dir"))
		return;
	snprintf(path, sizeof(path), "%s/../README.md", hbm_build);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "%s/../../README.md", hbm_build);
	snprintf(cmd, sizeof(cmd), "cat '%s'", path);
	readme = hbm_slurp_cmd(cmd);
	if (!ASSERT_TRUE(readme != NULL, "README.md"))
		return;
	ref = strstr(readme, "## bpf-hbm reference");
	if (!ASSERT_TRUE(ref != NULL, "README: the reference section")) {
		free(readme);
		return;
	}
	for (i = 0; i < hbm_n_optdefs; i++) {
		const struct hbm_optdef *d = &hbm_optdefs[i];
		unsigned int cmd = d->cmds & HBM_CMD_ATTACH ? HBM_CMD_ATTACH :
							      d->cmds;

		if (d->val == 'h' || d->val == 'v')
			continue;
		snprintf(want, sizeof(want), "--%s", hbm_optdef_name(d));
		snprintf(tag, sizeof(tag), "README: %s", want);
		p = strstr(ref, want);
		if (!ASSERT_TRUE(p != NULL, tag))
			continue;
		/* A number, time or rate default follows the name closely. */
		if (!hbm_opt_default(d, cmd, def, sizeof(def)) ||
		    !isdigit((unsigned char)def[0]))
			continue;
		for (; p; p = strstr(p + 1, want)) {
			char *near = strndup(p, 60);
			bool ok = near && hbm_find(near, def);

			free(near);
			if (ok)
				break;
		}
		ASSERT_TRUE(p != NULL, tag);
	}
	/* And every command, "bpf-hbm class add" as much as "bpf-hbm load". */
	for (i = 1; i < HBM_CMD_ALL; i <<= 1) {
		snprintf(want, sizeof(want), "bpf-hbm %s", hbm_cmd_name(i));
		snprintf(tag, sizeof(tag), "README: %s", want);
		ASSERT_TRUE(strstr(ref, want) != NULL, tag);
	}
	free(readme);
}

/*
 * The table itself: names unique among the options of a command (show
 * --watch INTERVAL and apply --watch are two, of no command in common),
 * each command's getopt table fits.
 */
static void test_table(void)
{
	struct option opts[32];
	unsigned int bit;
	size_t i, j;

	for (i = 0; i < hbm_n_optdefs; i++)
		for (j = i + 1; j < hbm_n_optdefs; j++)
			ASSERT_TRUE(!(hbm_optdefs[i].cmds & hbm_optdefs[j].cmds) ||
				    strcmp(hbm_optdef_name(&hbm_optdefs[i]),
					   hbm_optdef_name(&hbm_optdefs[j])) != 0,
				    hbm_optdef_name(&hbm_optdefs[i]));
	for (bit = 1; bit < HBM_CMD_ALL; bit <<= 1)
		ASSERT_GE(hbm_getopt_table(bit, opts, 32), 2, hbm_cmd_name(bit));
	ASSERT_EQ(hbm_getopt_table(HBM_CMD_ATTACH, opts, 3), -1,
		  "a table too small is refused");
}

static const struct hbm_optdef *hbm_optdef_of(const char *name)
{
	size_t i;

	for (i = 0; i < hbm_n_optdefs; i++)
		if (!strcmp(hbm_optdef_name(&hbm_optdefs[i]), name))
			return &hbm_optdefs[i];
	return NULL;
}

/* --quantum and --initial-quantum: attach's and set's, fq's defaults. */
static void test_quantum_opts(void)
{
	const struct hbm_optdef *q = hbm_optdef_of("quantum");
	const struct hbm_optdef *iq = hbm_optdef_of("initial-quantum");
	char def[64];

	if (!ASSERT_TRUE(q && iq, "both in the table"))
		return;
	ASSERT_EQ(q->cmds, HBM_CMD_ATTACH | HBM_CMD_SET, "quantum: commands");
	ASSERT_EQ(iq->cmds, HBM_CMD_ATTACH | HBM_CMD_SET,
		  "initial-quantum: commands");
	ASSERT_STREQ(q->arg, "BYTES", "quantum's argument");
	ASSERT_STREQ(iq->arg, "BYTES", "initial-quantum's argument");
	ASSERT_STREQ(hbm_opt_default(q, HBM_CMD_ATTACH, def, sizeof(def)),
		     "auto (2 MTU)", "quantum's default");
	ASSERT_STREQ(hbm_opt_default(iq, HBM_CMD_ATTACH, def, sizeof(def)),
		     "auto (10 MTU)", "initial-quantum's default");
	ASSERT_TRUE(!hbm_opt_default(q, HBM_CMD_SET, def, sizeof(def)),
		    "set keeps DEV's quantum");
}

/*
 * The class commands: a class takes the device's rate and thresholds (not
 * its limits, horizon or switches) and --cgroup; class add's defaults are
 * HBM's, but its rate has none; class list takes --json, as show.
 */
static void test_class_opts(void)
{
	static const char *const own[] = {
		"rate", "burst", "mark", "drop", "drop-large",
	};
	const unsigned int cls = HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET;
	const struct hbm_optdef *d;
	char def[64], tag[96];
	char *help;
	size_t i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		d = hbm_optdef_of(own[i]);
		snprintf(tag, sizeof(tag), "--%s: class add and set", own[i]);
		if (ASSERT_TRUE(d != NULL, tag))
			ASSERT_EQ(d->cmds & (cls | HBM_CMD_CLASS_DEL |
					     HBM_CMD_CLASS_LIST), cls, tag);
	}
	for (i = 0; i < hbm_n_optdefs; i++) {
		d = &hbm_optdefs[i];
		if (d->val == 'h' || d->val == 'v' || !(d->cmds & cls))
			continue;
		snprintf(tag, sizeof(tag), "--%s is a class option",
			 hbm_optdef_name(d));
		ASSERT_TRUE(!strcmp(hbm_optdef_name(d), "cgroup") ||
			    (d->cmds & HBM_CMD_ATTACH), tag);
	}
	ASSERT_TRUE(!(hbm_optdef_of("limit")->cmds & HBM_CMD_CLASS),
		    "--limit is the device's");
	ASSERT_TRUE(!(hbm_optdef_of("ecn")->cmds & HBM_CMD_CLASS),
		    "--ecn is the device's");
	d = hbm_optdef_of("cgroup");
	if (ASSERT_TRUE(d != NULL, "--cgroup")) {
		ASSERT_EQ(d->cmds, HBM_CMD_CLASS_ADD | HBM_CMD_CLASS_SET |
				   HBM_CMD_CLASS_DEL, "--cgroup: commands");
		ASSERT_STREQ(d->arg, "PATH", "--cgroup's argument");
	}
	ASSERT_EQ(hbm_optdef_of("json")->cmds,
		  HBM_CMD_SHOW | HBM_CMD_CLASS_LIST, "--json: commands");
	ASSERT_TRUE(!hbm_opt_default(hbm_optdef_of("rate"), HBM_CMD_CLASS_ADD,
				     def, sizeof(def)),
		    "class add: no default rate");
	ASSERT_STREQ(hbm_opt_default(hbm_optdef_of("burst"),
				     HBM_CMD_CLASS_ADD, def, sizeof(def)),
		     "100us", "class add: HBM's burst");
	ASSERT_STREQ(hbm_opt_default(hbm_optdef_of("drop-large"),
				     HBM_CMD_CLASS_ADD, def, sizeof(def)),
		     "480us", "class add: HBM's drop-large");
	ASSERT_TRUE(!hbm_opt_default(hbm_optdef_of("mark"), HBM_CMD_CLASS_SET,
				     def, sizeof(def)),
		    "class set keeps the class's");
	ASSERT_STREQ(hbm_cmd_name(HBM_CMD_CLASS_ADD), "class add", "name");
	ASSERT_STREQ(hbm_cmd_name(HBM_CMD_CLASS_LIST), "class list", "name");

	/* `bpf-hbm class --help` and `bpf-hbm --help` name each of them. */
	if (!ASSERT_TRUE(hbm_paths_ok(), "build dir"))
		return;
	help = hbm_help_of("class");
	if (ASSERT_TRUE(help != NULL, "bpf-hbm class --help"))
		for (i = HBM_CMD_CLASS_ADD; i & HBM_CMD_CLASS; i <<= 1)
			ASSERT_TRUE(strstr(help, hbm_cmd_name(i)) != NULL,
				    hbm_cmd_name(i));
	free(help);
	help = hbm_help_of(NULL);
	if (ASSERT_TRUE(help != NULL, "bpf-hbm --help")) {
		for (i = HBM_CMD_CLASS_ADD; i & HBM_CMD_CLASS; i <<= 1)
			ASSERT_TRUE(strstr(help, hbm_cmd_name(i)) != NULL,
				    hbm_cmd_name(i));
		ASSERT_TRUE(strstr(help, "4096") && strstr(help, "0..31"),
			    "--help: the class limits");
	}
	free(help);
}

HBM_TEST_MAIN(HBM_TEST(test_table), HBM_TEST(test_command_help),
	      HBM_TEST(test_main_help), HBM_TEST(test_readme),
	      HBM_TEST(test_quantum_opts), HBM_TEST(test_class_opts))
