// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/util.c's string output: hbm_json_str(), which
 * writes names (devices, cgroup paths) into show's and class list's JSON,
 * and hbm_text_str() for their text.
 */
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

static const char *json(const char *s)
{
	static char buf[256];

	return out(hbm_json_str, s, buf, sizeof(buf));
}

static void test_json_plain(void)
{
	ASSERT_STREQ(json("eth0"), "\"eth0\"", "ASCII as is");
	ASSERT_STREQ(json(""), "\"\"", "empty");
	ASSERT_STREQ(json(NULL), "null", "NULL is null");
	ASSERT_STREQ(json("/sys/fs/cgroup/system.slice/tenant a.slice"),
		     "\"/sys/fs/cgroup/system.slice/tenant a.slice\"",
		     "spaces as is");
}

static void test_json_escapes(void)
{
	ASSERT_STREQ(json("a\"b"), "\"a\\\"b\"", "quote");
	ASSERT_STREQ(json("a\\b"), "\"a\\\\b\"", "backslash");
	ASSERT_STREQ(json("a\nb\tc"), "\"a\\u000ab\\u0009c\"",
		     "control characters");
	ASSERT_STREQ(json("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"",
		     "0x01, 0x1f and DEL");
	ASSERT_STREQ(json("'"), "\"'\"", "a single quote needs nothing");
}

/* Well-formed UTF-8 passes through; every other byte is U+FFFD. */
static void test_json_utf8(void)
{
	ASSERT_STREQ(json("caf\xc3\xa9"), "\"caf\xc3\xa9\"", "2 bytes");
	ASSERT_STREQ(json("\xe2\x82\xac"), "\"\xe2\x82\xac\"", "3 bytes (euro)");
	ASSERT_STREQ(json("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"",
		     "4 bytes (emoji)");
	ASSERT_STREQ(json("\xef\xbf\xbf"), "\"\xef\xbf\xbf\"", "U+FFFF");
	ASSERT_STREQ(json("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"",
		     "U+10FFFF, the last");
	ASSERT_STREQ(json("a\xff" "b"), "\"a\\ufffdb\"", "0xff");
	ASSERT_STREQ(json("\x80"), "\"\\ufffd\"", "a lone continuation");
	ASSERT_STREQ(json("\xc3"), "\"\\ufffd\"", "cut short at the end");
	ASSERT_STREQ(json("\xc3(x"), "\"\\ufffd(x\"",
		     "cut short: the next byte stays");
	ASSERT_STREQ(json("\xe2\x82"), "\"\\ufffd\\ufffd\"",
		     "3 bytes cut short: one each");
	ASSERT_STREQ(json("\xc0\xaf"), "\"\\ufffd\\ufffd\"", "overlong '/'");
	ASSERT_STREQ(json("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"",
		     "overlong, 3 bytes");
	ASSERT_STREQ(json("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"",
		     "a surrogate");
	ASSERT_STREQ(json("\xf4\x90\x80\x80"),
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "above U+10FFFF");
	ASSERT_STREQ(json("\xf8\x88\x80\x80\x80"),
		     "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"", "5 bytes");
	ASSERT_STREQ(json("\"\xff\\"), "\"\\\"\\ufffd\\\\\"",
		     "mixed with escapes");
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
	      HBM_TEST(test_json_utf8), HBM_TEST(test_text),
	      HBM_TEST(test_drop_names))
