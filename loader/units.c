// SPDX-License-Identifier: GPL-2.0
/*
 * tc-compatible unit parsing and printing; see units.h.
 *
 * tc parses with strtod() and scales a double. We accept the same decimal
 * number syntax (digits, optional '.' fraction, optional exponent) but
 * evaluate it exactly with 64-bit integers, then truncate towards zero
 * like tc's double-to-integer conversion, so there are no binary floating
 * point surprises ("1.1gbit" is 1100000000, "0.5us" is 500 ns).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "units.h"

struct hbm_unit {
	const char *name;
	uint64_t scale;
};

#define KI	1024ULL
#define MI	(KI * KI)
#define GI	(MI * KI)
#define TI	(GI * KI)

/*
 * tc/tc_util.c suffixes[]; scales here are bits per second. Names are
 * lower case: unit_eq() folds only the input.
 */
static const struct hbm_unit rate_units[] = {
	{ "bit",	1 },
	{ "kibit",	KI },
	{ "kbit",	1000ULL },
	{ "mibit",	MI },
	{ "mbit",	1000000ULL },
	{ "gibit",	GI },
	{ "gbit",	1000000000ULL },
	{ "tibit",	TI },
	{ "tbit",	1000000000000ULL },
	{ "bps",	8 },
	{ "kibps",	8 * KI },
	{ "kbps",	8000ULL },
	{ "mibps",	8 * MI },
	{ "mbps",	8000000ULL },
	{ "gibps",	8 * GI },
	{ "gbps",	8000000000ULL },
	{ "tibps",	8 * TI },
	{ "tbps",	8000000000000ULL },
	{ NULL,		0 }
};

/* lib/utils.c get_time64(); scales here are nanoseconds. */
static const struct hbm_unit time_units[] = {
	{ "s",		1000000000ULL },
	{ "sec",	1000000000ULL },
	{ "secs",	1000000000ULL },
	{ "ms",		1000000ULL },
	{ "msec",	1000000ULL },
	{ "msecs",	1000000ULL },
	{ "us",		1000ULL },
	{ "usec",	1000ULL },
	{ "usecs",	1000ULL },
	{ "ns",		1 },
	{ "nsec",	1 },
	{ "nsecs",	1 },
	{ NULL,		0 }
};

/* tc/tc_util.c get_size(); scales here are bytes. */
static const struct hbm_unit size_units[] = {
	{ "b",		1 },
	{ "k",		KI },
	{ "kb",		KI },
	{ "m",		MI },
	{ "mb",		MI },
	{ "g",		GI },
	{ "gb",		GI },
	{ "kbit",	KI / 8 },
	{ "mbit",	MI / 8 },
	{ "gbit",	GI / 8 },
	{ NULL,		0 }
};

/* Bare numbers: rate in bit/s, time in microseconds, size in bytes. */
#define RATE_BARE_SCALE	1ULL
#define TIME_BARE_SCALE	1000ULL
#define SIZE_BARE_SCALE	1ULL

/* Exponents beyond this cannot matter: every scale is below 10^14. */
#define EXP_CLAMP	100000

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ASCII-only strcasecmp() equality, independent of the locale. */
static bool unit_eq(const char *unit, const char *s)
{
	for (; *unit && *s; unit++, s++) {
		char c = *s;

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (c != *unit)
			return false;
	}
	return !*unit && !*s;
}

/* A decimal mantissa "int.frac" split into its two digit runs. */
struct hbm_num {
	const char *int_start;
	const char *frac_start;
	long long int_len;
	long long frac_len;
	long long exp;
};

static int num_digit(const struct hbm_num *n, long long i)
{
	if (i < 0 || i >= n->int_len + n->frac_len)
		return 0;
	if (i < n->int_len)
		return n->int_start[i] - '0';
	return n->frac_start[i - n->int_len] - '0';
}

/*
 * Scan "digits[.digits][e[+-]digits]" from s. Returns a pointer past the
 * number, or NULL if there is no digit in the mantissa.
 */
static const char *scan_number(const char *s, struct hbm_num *n)
{
	const char *p = s;

	n->int_start = p;
	while (is_digit(*p))
		p++;
	n->int_len = p - n->int_start;
	n->frac_start = p;
	n->frac_len = 0;
	if (*p == '.') {
		p++;
		n->frac_start = p;
		while (is_digit(*p))
			p++;
		n->frac_len = p - n->frac_start;
	}
	if (!n->int_len && !n->frac_len)
		return NULL;

	n->exp = 0;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		bool neg = false;

		if (*q == '+' || *q == '-')
			neg = *q++ == '-';
		/* Like strtod(), a bare 'e' is not part of the number. */
		if (is_digit(*q)) {
			while (is_digit(*q)) {
				if (n->exp < EXP_CLAMP)
					n->exp = n->exp * 10 + (*q - '0');
				q++;
			}
			if (neg)
				n->exp = -n->exp;
			p = q;
		}
	}
	return p;
}

/* floor(number * scale), exactly. */
static int num_scale(const struct hbm_num *n, uint64_t scale, uint64_t *out)
{
	long long len = n->int_len + n->frac_len;
	long long point = n->int_len + n->exp;
	long long first, i;
	uint64_t ipart = 0, fpart = 0;

	for (first = 0; first < len; first++)
		if (num_digit(n, first))
			break;
	if (first == len) {
		*out = 0;
		return 0;
	}

	/*
	 * Integer part: digits [first, point). The first one is non-zero,
	 * so this overflows within 20 steps however large point is.
	 */
	for (i = first; i < point; i++) {
		unsigned int d = num_digit(n, i);

		if (ipart > (UINT64_MAX - d) / 10)
			return -ERANGE;
		ipart = ipart * 10 + d;
	}

	/*
	 * Fractional part: floor(scale * 0.f1f2...fk) by Horner's rule from
	 * the last digit, using floor((a + y) / 10) == floor((a + floor(y)) /
	 * 10) for integer a; the running value stays below scale, so no
	 * overflow.
	 */
	for (i = len - 1; i >= 0 && i >= point; i--)
		fpart = (scale * num_digit(n, i) + fpart) / 10;
	for (i = point; i < 0 && fpart; i++)
		fpart /= 10;

	if (ipart > UINT64_MAX / scale)
		return -ERANGE;
	ipart *= scale;
	if (ipart > UINT64_MAX - fpart)
		return -ERANGE;
	*out = ipart + fpart;
	return 0;
}

static int parse_scaled(const char *s, const struct hbm_unit *units,
			uint64_t bare_scale, uint64_t *out)
{
	const struct hbm_unit *u;
	struct hbm_num n;
	uint64_t scale;
	const char *p;
	uint64_t v;
	int err;

	if (!s || !out)
		return -EINVAL;
	p = scan_number(s, &n);
	if (!p)
		return -EINVAL;

	if (!*p) {
		scale = bare_scale;
	} else {
		for (u = units; u->name; u++)
			if (unit_eq(u->name, p))
				break;
		if (!u->name)
			return -EINVAL;
		scale = u->scale;
	}

	err = num_scale(&n, scale, &v);
	if (err)
		return err;
	*out = v;
	return 0;
}

int hbm_parse_rate(const char *s, uint64_t *bits_per_sec)
{
	return parse_scaled(s, rate_units, RATE_BARE_SCALE, bits_per_sec);
}

int hbm_parse_time(const char *s, uint64_t *ns)
{
	return parse_scaled(s, time_units, TIME_BARE_SCALE, ns);
}

int hbm_parse_interval(const char *s, uint64_t *ns)
{
	return parse_scaled(s, time_units, 1000000000ULL, ns);
}

int hbm_parse_size(const char *s, uint64_t *bytes)
{
	return parse_scaled(s, size_units, SIZE_BARE_SCALE, bytes);
}

int hbm_parse_u32(const char *s, uint32_t *v)
{
	uint32_t r = 0;
	const char *p;

	if (!s || !v || !*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (!is_digit(*p))
			return -EINVAL;
	for (p = s; *p; p++) {
		unsigned int d = *p - '0';

		if (r > (UINT32_MAX - d) / 10)
			return -ERANGE;
		r = r * 10 + d;
	}
	*v = r;
	return 0;
}

struct hbm_fmt_unit {
	uint64_t scale;
	unsigned int decimals;	/* log10(scale) */
	const char *name;
};

/* units[] is ordered from largest to smallest; the last has scale 1. */
static void fmt_exact(char *buf, size_t len, uint64_t v,
		      const struct hbm_fmt_unit *units)
{
	const struct hbm_fmt_unit *u = units;
	char frac[24];
	uint64_t ip, fp;
	int n;

	if (!buf || !len)
		return;
	while (u->scale > 1 && v < u->scale)
		u++;
	ip = v / u->scale;
	fp = v % u->scale;
	if (!fp) {
		snprintf(buf, len, "%" PRIu64 "%s", ip, u->name);
		return;
	}
	n = snprintf(frac, sizeof(frac), "%0*" PRIu64, (int)u->decimals, fp);
	while (n > 1 && frac[n - 1] == '0')
		frac[--n] = '\0';
	snprintf(buf, len, "%" PRIu64 ".%s%s", ip, frac, u->name);
}

static const struct hbm_fmt_unit rate_fmt[] = {
	{ 1000000000000ULL,	12,	"Tbit" },
	{ 1000000000ULL,	9,	"Gbit" },
	{ 1000000ULL,		6,	"Mbit" },
	{ 1000ULL,		3,	"Kbit" },
	{ 1,			0,	"bit" },
};

static const struct hbm_fmt_unit time_fmt[] = {
	{ 1000000000ULL,	9,	"s" },
	{ 1000000ULL,		6,	"ms" },
	{ 1000ULL,		3,	"us" },
	{ 1,			0,	"ns" },
};

void hbm_fmt_rate(char *buf, size_t len, uint64_t bits_per_sec)
{
	fmt_exact(buf, len, bits_per_sec, rate_fmt);
}

void hbm_fmt_time(char *buf, size_t len, uint64_t ns)
{
	fmt_exact(buf, len, ns, time_fmt);
}
