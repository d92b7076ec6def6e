// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/util.c's output: the JSON helpers (names as
 * strings, U+FFFD for what is not UTF-8, read back by jansson; the
 * numbers; the errors hbm_json_write() reports), which show's and class
 * list's JSON are made of, and hbm_text_str() for their text.
 */
#include <errno.h>

#include "../hbm_test.h"
#include "../../loader/util.h"

/* What @fn writes for @s, into @buf. */
static const char *out(void (*fn)(FILE *, const char *), const char *s,
		       char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	if (!f)
		return NULL;
	fn(f, s);
	fclose(f);
	return buf;
}

/*
 * What hbm_json_write() writes for {"s": hbm_json_string(@s)}, without
 * its newline, into @buf; and that it parses back (json_loads()) to a
 * string @back (NULL: null).
 */
static const char *jwrite(const char *s, const char *back, const char *tag)
{
	static char buf[512];
	json_t *o = json_object(), *got;
	size_t n;
	FILE *f;

	buf[0] = '\0';
	hbm_json_set(o, "s", hbm_json_string(s));
	f = fmemopen(buf, sizeof(buf), "w");
	if (!ASSERT_TRUE(f != NULL, tag)) {
		json_decref(o);
		return NULL;
	}
	if (!ASSERT_OK(hbm_json_write(f, o), tag)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	n = strlen(buf);
	if (!ASSERT_TRUE(n && buf[n - 1] == '\n', tag))
		return NULL;
	buf[n - 1] = '\0';
	o = json_loads(buf, 0, NULL);
	got = json_object_get(o, "s");
	if (back)
		ASSERT_STREQ(json_string_value(got), back, tag);
	else
		ASSERT_TRUE(json_is_null(got), tag);
	json_decref(o);
	return buf;
}

#define JW(s, back, want, tag) ASSERT_STREQ(jwrite(s, back, tag), want, tag)

static void test_json_plain(void)
{
	JW("eth0", "eth0", "{\"s\":\"eth0\"}", "ASCII as is");
	JW("", "", "{\"s\":\"\"}", "empty");
	JW(NULL, NULL, "{\"s\":null}", "NULL is null");
	JW("/sys/fs/cgroup/system.slice/tenant a.slice",
	   "/sys/fs/cgroup/system.slice/tenant a.slice",
	   "{\"s\":\"/sys/fs/cgroup/system.slice/tenant a.slice\"}",
	   "spaces as is");
}

static void test_json_escapes(void)
{
	JW("a\"b", "a\"b", "{\"s\":\"a\\\"b\"}", "quote");
	JW("a\\b", "a\\b", "{\"s\":\"a\\\\b\"}", "backslash");
	JW("a\nb\tc\r", "a\nb\tc\r", "{\"s\":\"a\\nb\\tc\\r\"}",
	   "newline, tab, CR");
	JW("\x01\x1f", "\x01\x1f", "{\"s\":\"\\u0001\\u001F\"}",
	   "other control characters");
	JW("\x7f", "\x7f", "{\"s\":\"\x7f\"}", "DEL needs nothing in JSON");
	JW("'/", "'/", "{\"s\":\"'/\"}", "a single quote or slash neither");
}

/* Well-formed UTF-8 passes through; every other byte is U+FFFD. */
#define FFFD "\xef\xbf\xbd"

static void test_json_utf8(void)
{
	static const struct {
		const char *in, *out, *tag;
	} t[] = {
		{ "caf\xc3\xa9", "caf\xc3\xa9", "2 bytes" },
		{ "\xe2\x82\xac", "\xe2\x82\xac", "3 bytes (euro)" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "4 bytes (emoji)" },
		{ "\xef\xbf\xbf", "\xef\xbf\xbf", "U+FFFF" },
		{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "U+10FFFF, the last" },
		{ FFFD, FFFD, "U+FFFD itself" },
		{ "a\xff" "b", "a" FFFD "b", "0xff" },
		{ "\x80", FFFD, "a lone continuation" },
		{ "\xc3", FFFD, "cut short at the end" },
		{ "\xc3(x", FFFD "(x", "cut short: the next byte stays" },
		{ "\xe2\x82", FFFD FFFD, "3 bytes cut short: one each" },
		{ "\xc0\xaf", FFFD FFFD, "overlong '/'" },
		{ "\xe0\x80\xaf", FFFD FFFD FFFD, "overlong, 3 bytes" },
		{ "\xed\xa0\x80", FFFD FFFD FFFD, "a surrogate" },
		{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD, "above U+10FFFF" },
		{ "\xf8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD, "5 bytes" },
	};
	char want[128];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(want, sizeof(want), "{\"s\":\"%s\"}", t[i].out);
		JW(t[i].in, t[i].out, want, t[i].tag);
	}
	JW("\"\xff\\", "\"" FFFD "\\", "{\"s\":\"\\\"" FFFD "\\\\\"}",
	   "mixed with escapes");
}

/* A cgroup path with a bit of everything comes back as it was, but U+FFFD. */
static void test_json_path(void)
{
	ASSERT_TRUE(jwrite("/sys/fs/cgroup/t\xc3\xa9n ant \"a\"\\\t\x01/x\xfe\xff",
			   "/sys/fs/cgroup/t\xc3\xa9n ant \"a\"\\\t\x01/x"
			   FFFD FFFD, "a path") != NULL, "a path");
}

static const char *jnum(json_t *v)
{
	static char buf[64];
	json_t *a = json_array();
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	buf[0] = '\0';
	hbm_json_push(a, v);
	if (!f || hbm_json_write(f, a)) {
		if (f)
			fclose(f);
		return "(failed)";
	}
	fclose(f);
	return buf;
}

static void test_json_numbers(void)
{
	ASSERT_STREQ(jnum(hbm_json_u64(0)), "[0]\n", "0");
	ASSERT_STREQ(jnum(hbm_json_u64(400000000000ULL)), "[400000000000]\n",
		     "a u64");
	ASSERT_STREQ(jnum(hbm_json_u64(1ULL << 63)), "[9223372036854775807]\n",
		     "2^63: clamped to 2^63 - 1");
	ASSERT_STREQ(jnum(hbm_json_u64(~0ULL)), "[9223372036854775807]\n",
		     "2^64 - 1: clamped");
	ASSERT_STREQ(jnum(hbm_json_num("12000000")), "[12000000]\n",
		     "%.0f: an integer");
	ASSERT_STREQ(jnum(hbm_json_num("0.3")), "[0.3]\n", "0.3 as it is");
	ASSERT_STREQ(jnum(hbm_json_num("0.0")), "[0.0]\n", "0.0 as it is");
	ASSERT_STREQ(jnum(hbm_json_num("1000.0")), "[1000.0]\n",
		     "1000.0 as it is");
	ASSERT_STREQ(jnum(hbm_json_num("12345678901234.5")),
		     "[12345678901234.5]\n", "15 digits");
	ASSERT_STREQ(jnum(hbm_json_num("1.000123456")), "[1.000123456]\n",
		     "seconds to the ns");
	ASSERT_STREQ(jnum(hbm_json_num("99999999999999999999")),
		     "[9223372036854775807]\n", "above 2^64: clamped");
	ASSERT_TRUE(!hbm_json_num("nan"), "nan: none");
	ASSERT_TRUE(!hbm_json_num("inf"), "inf: none");
	ASSERT_TRUE(!hbm_json_num(""), "empty: none");
	ASSERT_TRUE(!hbm_json_num("-1"), "negative: none");
	ASSERT_TRUE(!hbm_json_num("1x"), "trailing junk: none");
	ASSERT_TRUE(!hbm_json_num("1.5x"), "trailing junk: none");
	ASSERT_STREQ(jnum(NULL), "(failed)", "a value that is none: fails");
	ASSERT_STREQ(jnum(json_true()), "[true]\n",
		     "the next write: the failure was reported once");
}

static void test_json_errors(void)
{
	char buf[64];
	FILE *f;

	f = fmemopen(buf, sizeof(buf), "w");
	if (!ASSERT_TRUE(f != NULL, "fmemopen"))
		return;
	ASSERT_EQ(hbm_json_write(f, NULL), -ENOMEM, "no root");
	ASSERT_STREQ(hbm_reason(), strerror(ENOMEM), "reason");
	/* An object that could not be made: its values are dropped. */
	hbm_json_set(NULL, "k", json_true());
	ASSERT_EQ(hbm_json_write(f, json_object()), -ENOMEM,
		  "a value that could not be set");
	hbm_json_push(NULL, json_true());
	ASSERT_EQ(hbm_json_write(f, json_object()), -ENOMEM,
		  "a value that could not be pushed");
	ASSERT_OK(hbm_json_write(f, json_object()), "then a good one");
	fclose(f);
	/* A stream that can't be written. */
	f = fopen("/dev/null", "r");
	if (!ASSERT_TRUE(f != NULL, "/dev/null"))
		return;
	ASSERT_ERR(hbm_json_write(f, json_object()), "a read-only stream");
	fclose(f);
}

static void test_text(void)
{
	static char buf[128];

	ASSERT_STREQ(out(hbm_text_str, "a b\xc3\xa9\"\\", buf, sizeof(buf)),
		     "a b\xc3\xa9\"\\", "printable as is");
	ASSERT_STREQ(out(hbm_text_str, "a\nb\x7f", buf, sizeof(buf)),
		     "a\\x0ab\\x7f", "control characters as \\xNN");
}

static void test_drop_names(void)
{
	ASSERT_STREQ(hbm_drop_name(HBM_DROP_THRESH), "threshold", "first");
	ASSERT_STREQ(hbm_drop_name(HBM_DROP_NOMEM), "nomem", "last");
	ASSERT_STREQ(hbm_drop_name(HBM_DROP_MAX), "?", "out of range");
}

HBM_TEST_MAIN(HBM_TEST(test_json_plain), HBM_TEST(test_json_escapes),
	      HBM_TEST(test_json_utf8), HBM_TEST(test_json_path),
	      HBM_TEST(test_json_numbers), HBM_TEST(test_json_errors),
	      HBM_TEST(test_text),
	      HBM_TEST(test_drop_names))
