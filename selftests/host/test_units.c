// SPDX-License-Identifier: GPL-2.0
/* Host tests for loader/units.c: tc-compatible unit parsing and printing. */
#include <errno.h>

#include "../hbm_test.h"
#include "../../loader/units.h"

struct u64_case {
	const char *in;
	uint64_t want;
};

struct err_case {
	const char *in;
	int err;
};

typedef int (*parse_fn)(const char *s, uint64_t *out);

static void check_ok(parse_fn fn, const struct u64_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = 0xdeadbeef;
		int err = fn(c[i].in, &v);

		if (!ASSERT_OK(err, c[i].in))
			continue;
		ASSERT_U64_EQ(v, c[i].want, c[i].in);
	}
}

static void check_err(parse_fn fn, const struct err_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = 0x5a5a5a5a;
		int err = fn(c[i].in, &v);

		ASSERT_EQ(err, c[i].err, c[i].in);
		/* The output is left alone on error. */
		ASSERT_U64_EQ(v, 0x5a5a5a5a, c[i].in);
	}
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK_OK(fn, cases) check_ok(fn, cases, ARRAY_SIZE(cases))
#define CHECK_ERR(fn, cases) check_err(fn, cases, ARRAY_SIZE(cases))

static void test_rate_units(void)
{
	static const struct u64_case c[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "800", 800 },			/* bare number: bit/s */
		{ "800bit", 800 },
		{ "12kbit", 12000 },
		{ "100mbit", 100000000 },
		{ "1gbit", 1000000000 },
		{ "2tbit", 2000000000000ULL },
		{ "1kibit", 1024 },
		{ "1mibit", 1048576 },
		{ "1gibit", 1073741824 },
		{ "1tibit", 1099511627776ULL },
		{ "1bps", 8 },
		{ "125kbps", 1000000 },
		{ "1mbps", 8000000 },
		{ "1gbps", 8000000000ULL },
		{ "1tbps", 8000000000000ULL },
		{ "1kibps", 8192 },
		{ "1mibps", 8388608 },
		{ "1gibps", 8589934592ULL },
		{ "1tibps", 8796093022208ULL },
		{ "0mbit", 0 },
		{ "007mbit", 7000000 },
	};

	CHECK_OK(hbm_parse_rate, c);
}

static void test_rate_case(void)
{
	static const struct u64_case c[] = {
		{ "100Mbit", 100000000 },
		{ "100MBIT", 100000000 },
		{ "100mBiT", 100000000 },
		{ "1Gbit", 1000000000 },
		{ "12Kbit", 12000 },
		{ "1Tbit", 1000000000000ULL },
		{ "1KiBit", 1024 },
		{ "1MiBps", 8388608 },
		{ "1MBps", 8000000 },
		{ "1KBps", 8000 },
		{ "1Bps", 8 },
		{ "1BIT", 1 },
	};

	CHECK_OK(hbm_parse_rate, c);
}

static void test_rate_fraction(void)
{
	static const struct u64_case c[] = {
		{ "1.5gbit", 1500000000 },
		{ "1.1gbit", 1100000000 },
		{ "0.1gbit", 100000000 },
		{ "2.3mbit", 2300000 },
		{ "0.001kbit", 1 },
		{ "0.0001kbit", 0 },		/* truncated like tc */
		{ "1.9bit", 1 },		/* truncated like tc */
		{ ".5mbit", 500000 },
		{ "5.mbit", 5000000 },
		{ "1.5", 1 },
		{ "0.5kibit", 512 },
		{ "1.5bps", 12 },
		{ "0.125kbps", 1000 },
		{ "0.15bps", 1 },		/* 1.2 */
		{ "0.999bps", 7 },		/* 7.992 */
		{ "1.000000000000000000000000001gbit", 1000000000 },
		{ "0.99999999999999999999999gbit", 999999999 },
		{ "1.5e3kbit", 1500000 },
		{ "1e9", 1000000000 },
		{ "1E6bit", 1000000 },
		{ "25e-1mbit", 2500000 },
		{ "1e+2kbit", 100000 },
		{ "5e-2kbit", 50 },
		{ "0.05e-1kbit", 5 },
		{ "123e-5kbit", 1 },		/* 1.23 */
		{ "1e-999999999999gbit", 0 },
		{ "0e999999999999gbit", 0 },
		{ "18446744073709551615", UINT64_MAX },
		{ "18446744073.709551615gbit", UINT64_MAX },
		{ "2305843009213693951bps", UINT64_MAX - 7 },
	};

	CHECK_OK(hbm_parse_rate, c);
}

/* Fractions against a direct integer computation, for every rate unit. */
static void test_rate_fraction_exact(void)
{
	static const struct {
		const char *name;
		uint64_t scale;
	} u[] = {
		{ "bit", 1 }, { "kbit", 1000 }, { "kibit", 1024 },
		{ "mbit", 1000000 }, { "mibit", 1048576 },
		{ "gbit", 1000000000 }, { "gibit", 1073741824 },
		{ "bps", 8 }, { "kbps", 8000 }, { "kibps", 8192 },
		{ "mbps", 8000000 }, { "mibps", 8388608 },
		{ "tibps", 8796093022208ULL },
	};
	static const uint64_t pow10[] = { 1, 10, 100, 1000, 10000, 100000 };
	uint64_t x = 0x2545f4914f6cdd1dULL, v;
	char in[64];
	size_t i;

	for (i = 0; i < 50000; i++) {
		unsigned int k, ui;
		uint64_t ip, fp, want;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ui = x % ARRAY_SIZE(u);
		k = 1 + (x >> 8) % 5;
		ip = (x >> 16) % 1000;
		fp = (x >> 32) % pow10[k];
		want = ip * u[ui].scale + fp * u[ui].scale / pow10[k];
		snprintf(in, sizeof(in), "%" PRIu64 ".%0*" PRIu64 "%s",
			 ip, (int)k, fp, u[ui].name);
		if (!ASSERT_OK(hbm_parse_rate(in, &v), in) ||
		    !ASSERT_U64_EQ(v, want, in))
			return;
	}
}

static void test_rate_errors(void)
{
	static const struct err_case c[] = {
		{ "", -EINVAL },
		{ "mbit", -EINVAL },
		{ "10 mbit", -EINVAL },
		{ " 10mbit", -EINVAL },
		{ "10mbit ", -EINVAL },
		{ "-5mbit", -EINVAL },
		{ "-0", -EINVAL },
		{ "+5mbit", -EINVAL },
		{ "10mbitx", -EINVAL },
		{ "10mbits", -EINVAL },
		{ "1..5mbit", -EINVAL },
		{ "1.5.mbit", -EINVAL },
		{ ".mbit", -EINVAL },
		{ ".", -EINVAL },
		{ "10xbit", -EINVAL },
		{ "10kb", -EINVAL },		/* size unit, not rate */
		{ "10s", -EINVAL },
		{ "0x10bit", -EINVAL },
		{ "inf", -EINVAL },
		{ "nan", -EINVAL },
		{ "1e", -EINVAL },
		{ "1e+bit", -EINVAL },
		{ "1,5mbit", -EINVAL },
		{ "99999999999999999999tbit", -ERANGE },
		{ "18446744073709551616", -ERANGE },
		{ "18446744073709551616bit", -ERANGE },
		{ "18446744073.709551616gbit", -ERANGE },
		{ "2305843009213693952bps", -ERANGE },
		{ "20000000tbit", -ERANGE },
		{ "1e20bit", -ERANGE },
		{ "1e999999999999bit", -ERANGE },
		{ "99999999999999999999xbit", -EINVAL },
	};
	uint64_t v;

	CHECK_ERR(hbm_parse_rate, c);
	ASSERT_EQ(hbm_parse_rate(NULL, &v), -EINVAL, "NULL string");
	ASSERT_EQ(hbm_parse_rate("1mbit", NULL), -EINVAL, "NULL out");
}

static void test_time_units(void)
{
	static const struct u64_case c[] = {
		{ "0", 0 },
		{ "50", 50000 },		/* bare number: microseconds */
		{ "1s", 1000000000 },
		{ "2sec", 2000000000 },
		{ "3secs", 3000000000ULL },
		{ "5ms", 5000000 },
		{ "6msec", 6000000 },
		{ "7msecs", 7000000 },
		{ "50us", 50000 },
		{ "51usec", 51000 },
		{ "52usecs", 52000 },
		{ "120ns", 120 },
		{ "121nsec", 121 },
		{ "122nsecs", 122 },
		{ "10S", 10000000000ULL },
		{ "10SEC", 10000000000ULL },
		{ "1Ms", 1000000 },
		{ "1MSECS", 1000000 },
		{ "1Us", 1000 },
		{ "1USEC", 1000 },
		{ "1NS", 1 },
		{ "1nSeCs", 1 },
	};

	CHECK_OK(hbm_parse_time, c);
}

static void test_time_fraction(void)
{
	static const struct u64_case c[] = {
		{ "1.5ms", 1500000 },
		{ "0.5us", 500 },
		{ "0.5", 500 },
		{ "0.1s", 100000000 },
		{ "0.3s", 300000000 },
		{ "2.5ns", 2 },			/* truncated like tc */
		{ "0.0005us", 0 },
		{ "1.000001ms", 1000001 },
		{ ".25s", 250000000 },
		{ "1e3us", 1000000 },
		{ "1.5e-3s", 1500000 },
		{ "18446744073.709551615s", UINT64_MAX },
		{ "18446744073709551615ns", UINT64_MAX },
		{ "18446744073709551.615", UINT64_MAX },
	};

	CHECK_OK(hbm_parse_time, c);
}

static void test_time_errors(void)
{
	static const struct err_case c[] = {
		{ "", -EINVAL },
		{ "ms", -EINVAL },
		{ "10 ms", -EINVAL },
		{ "-5ms", -EINVAL },
		{ "10msx", -EINVAL },
		{ "1..5ms", -EINVAL },
		{ "10m", -EINVAL },
		{ "10min", -EINVAL },
		{ "10mbit", -EINVAL },
		{ "10h", -EINVAL },
		{ "18446744074s", -ERANGE },
		{ "18446744073709551616ns", -ERANGE },
		{ "18446744073709552", -ERANGE },	/* bare us */
		{ "99999999999999999999s", -ERANGE },
	};

	CHECK_ERR(hbm_parse_time, c);
}

/* show --watch's interval: a time, but a bare number is seconds. */
static void test_interval(void)
{
	static const struct u64_case ok[] = {
		{ "2", 2000000000ULL },
		{ "1", 1000000000ULL },
		{ "0.5", 500000000ULL },
		{ "500ms", 500000000ULL },
		{ "2s", 2000000000ULL },
		{ "1.5S", 1500000000ULL },
		{ "100msec", 100000000ULL },
		{ "250000us", 250000000ULL },
		{ "3600", 3600000000000ULL },
		{ "0", 0 },
	};
	static const struct err_case bad[] = {
		{ "", -EINVAL },
		{ "s", -EINVAL },
		{ "2 s", -EINVAL },
		{ "-1", -EINVAL },
		{ "2h", -EINVAL },
		{ "1e30", -ERANGE },
	};

	CHECK_OK(hbm_parse_interval, ok);
	CHECK_ERR(hbm_parse_interval, bad);
}

static void test_size_units(void)
{
	static const struct u64_case c[] = {
		{ "0", 0 },
		{ "1514", 1514 },		/* bare number: bytes */
		{ "1514b", 1514 },
		{ "1514B", 1514 },
		{ "1k", 1024 },
		{ "1kb", 1024 },
		{ "1K", 1024 },
		{ "1KB", 1024 },
		{ "1Kb", 1024 },
		{ "2m", 2097152 },
		{ "2mb", 2097152 },
		{ "2MB", 2097152 },
		{ "1g", 1073741824 },
		{ "1gb", 1073741824 },
		{ "1G", 1073741824 },
		{ "1kbit", 128 },
		{ "1KBIT", 128 },
		{ "1mbit", 131072 },
		{ "1gbit", 134217728 },
		{ "1.5k", 1536 },
		{ "0.5m", 524288 },
		{ "1.5kbit", 192 },
		{ "0.001k", 1 },		/* 1.024 truncated */
		{ "1.9", 1 },
		{ "17179869183g", 17179869183ULL * 1073741824ULL },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const struct err_case e[] = {
		{ "", -EINVAL },
		{ "k", -EINVAL },
		{ "10 k", -EINVAL },
		{ "-1k", -EINVAL },
		{ "10kx", -EINVAL },
		{ "1..5k", -EINVAL },
		{ "10t", -EINVAL },
		{ "10tb", -EINVAL },
		{ "10bit", -EINVAL },
		{ "10kib", -EINVAL },
		{ "10bytes", -EINVAL },
		{ "17179869184g", -ERANGE },
		{ "18446744073709551616", -ERANGE },
		{ "99999999999999999999gbit", -ERANGE },
	};

	CHECK_OK(hbm_parse_size, c);
	CHECK_ERR(hbm_parse_size, e);
}

static void test_parse_u32(void)
{
	static const struct {
		const char *in;
		int err;
		uint32_t want;
	} c[] = {
		{ "0", 0, 0 },
		{ "1", 0, 1 },
		{ "007", 0, 7 },
		{ "1000", 0, 1000 },
		{ "4294967295", 0, UINT32_MAX },
		{ "4294967296", -ERANGE, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1x", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1.0", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
		{ "1k", -EINVAL, 0 },
		{ "99999999999999999999x", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		uint32_t v = 0xa5a5a5a5;

		ASSERT_EQ(hbm_parse_u32(c[i].in, &v), c[i].err, c[i].in);
		ASSERT_EQ(v, c[i].err ? 0xa5a5a5a5 : c[i].want, c[i].in);
	}
	ASSERT_EQ(hbm_parse_u32(NULL, &(uint32_t){0}), -EINVAL, "NULL s");
	ASSERT_EQ(hbm_parse_u32("1", NULL), -EINVAL, "NULL out");
}

static void test_fmt_rate(void)
{
	static const struct {
		uint64_t in;
		const char *want;
	} c[] = {
		{ 0, "0bit" },
		{ 1, "1bit" },
		{ 800, "800bit" },
		{ 999, "999bit" },
		{ 1000, "1Kbit" },
		{ 1024, "1.024Kbit" },
		{ 12000, "12Kbit" },
		{ 1500, "1.5Kbit" },
		{ 100000000, "100Mbit" },
		{ 1000000000, "1Gbit" },
		{ 1500000000, "1.5Gbit" },
		{ 1100000000, "1.1Gbit" },
		{ 1000000001, "1.000000001Gbit" },
		{ 2000000000000ULL, "2Tbit" },
		{ 25000000000000ULL, "25Tbit" },
		{ 1234567, "1.234567Mbit" },
		{ UINT64_MAX, "18446744.073709551615Tbit" },
	};
	char buf[HBM_FMT_BUFSZ];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		hbm_fmt_rate(buf, sizeof(buf), c[i].in);
		ASSERT_STREQ(buf, c[i].want, c[i].want);
	}
}

static void test_fmt_time(void)
{
	static const struct {
		uint64_t in;
		const char *want;
	} c[] = {
		{ 0, "0ns" },
		{ 120, "120ns" },
		{ 999, "999ns" },
		{ 1000, "1us" },
		{ 1500, "1.5us" },
		{ 50000, "50us" },
		{ 1500000, "1.5ms" },
		{ 5000000, "5ms" },
		{ 1000000000, "1s" },
		{ 10000000000ULL, "10s" },
		{ 1000000001, "1.000000001s" },
		{ 100000000, "100ms" },
		{ UINT64_MAX, "18446744073.709551615s" },
	};
	char buf[HBM_FMT_BUFSZ];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		hbm_fmt_time(buf, sizeof(buf), c[i].in);
		ASSERT_STREQ(buf, c[i].want, c[i].want);
	}
}

static void test_fmt_truncate(void)
{
	char buf[6];

	memset(buf, 'x', sizeof(buf));
	hbm_fmt_rate(buf, sizeof(buf), 100000000);
	ASSERT_STREQ(buf, "100Mb", "rate truncated");

	memset(buf, 'x', sizeof(buf));
	hbm_fmt_time(buf, 3, 1500000);
	ASSERT_STREQ(buf, "1.", "time truncated");

	memset(buf, 'x', sizeof(buf));
	hbm_fmt_time(buf, 0, 1);
	ASSERT_EQ(buf[0], 'x', "len 0 untouched");
	hbm_fmt_rate(NULL, 0, 1);
}

/* Walk values of many magnitudes; each must print and parse back exactly. */
static void test_roundtrip(void)
{
	static const uint64_t mant[] = { 1, 3, 7, 12, 15, 99, 125, 1234, 5001 };
	char buf[HBM_FMT_BUFSZ];
	uint64_t v, back, p;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(mant); i++) {
		for (p = 1; p <= 1000000000000000ULL; p *= 10) {
			v = mant[i] * p;

			hbm_fmt_rate(buf, sizeof(buf), v);
			err = hbm_parse_rate(buf, &back);
			if (!ASSERT_OK(err, buf) ||
			    !ASSERT_U64_EQ(back, v, buf))
				return;

			hbm_fmt_time(buf, sizeof(buf), v);
			err = hbm_parse_time(buf, &back);
			if (!ASSERT_OK(err, buf) ||
			    !ASSERT_U64_EQ(back, v, buf))
				return;
		}
	}

	/* Pseudo-random values over the whole range. */
	v = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 20000; i++) {
		uint64_t x;

		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		x = v >> (i % 64);

		hbm_fmt_rate(buf, sizeof(buf), x);
		err = hbm_parse_rate(buf, &back);
		if (!ASSERT_OK(err, buf) || !ASSERT_U64_EQ(back, x, buf))
			return;

		hbm_fmt_time(buf, sizeof(buf), x);
		err = hbm_parse_time(buf, &back);
		if (!ASSERT_OK(err, buf) || !ASSERT_U64_EQ(back, x, buf))
			return;
	}

	/* tc-style strings parse and print back unchanged. */
	{
		static const char * const rates[] = {
			"800bit", "12Kbit", "100Mbit", "1Gbit", "1.5Gbit",
			"40Gbit", "1Tbit",
		};
		static const char * const times[] = {
			"120ns", "50us", "1.5ms", "10s", "100ms", "2.5s",
		};

		for (i = 0; i < ARRAY_SIZE(rates); i++) {
			ASSERT_OK(hbm_parse_rate(rates[i], &back), rates[i]);
			hbm_fmt_rate(buf, sizeof(buf), back);
			ASSERT_STREQ(buf, rates[i], rates[i]);
		}
		for (i = 0; i < ARRAY_SIZE(times); i++) {
			ASSERT_OK(hbm_parse_time(times[i], &back), times[i]);
			hbm_fmt_time(buf, sizeof(buf), back);
			ASSERT_STREQ(buf, times[i], times[i]);
		}
	}
}

HBM_TEST_MAIN(
	HBM_TEST(test_rate_units),
	HBM_TEST(test_rate_case),
	HBM_TEST(test_rate_fraction),
	HBM_TEST(test_rate_fraction_exact),
	HBM_TEST(test_rate_errors),
	HBM_TEST(test_time_units),
	HBM_TEST(test_time_fraction),
	HBM_TEST(test_time_errors),
	HBM_TEST(test_interval),
	HBM_TEST(test_size_units),
	HBM_TEST(test_parse_u32),
	HBM_TEST(test_fmt_rate),
	HBM_TEST(test_fmt_time),
	HBM_TEST(test_fmt_truncate),
	HBM_TEST(test_roundtrip),
)
