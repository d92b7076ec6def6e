// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: loader/units.c's parsers of rates, times, sizes and
 * counts as tc spells them, and their printers.
 *
 * The input is parsed whole as each kind of value. Oracles, each an
 * abort(): a value parsed prints (hbm_fmt_rate(), hbm_fmt_time(), "%u")
 * to text that parses back to the same value; a failed parse leaves the
 * output alone; units fold case, so the input upper-cased parses the same;
 * a bare number means bit/s, us and bytes, so naming that unit changes
 * nothing. The input's first 8 bytes, as a value, must print and parse
 * back too: the printers see every 64-bit value, not only those a short
 * string can spell.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

typedef int (*parse_fn)(const char *s, uint64_t *out);
typedef void (*fmt_fn)(char *buf, size_t len, uint64_t v);

static void check(int ok, const char *what, const char *in)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_units: %s (input '%s')\n", what, in);
	abort();
}

/* Print @v and parse it back: the same value, within the buffer. */
static void round_trip(parse_fn parse, fmt_fn fmt, uint64_t v, const char *in)
{
	char buf[HBM_FMT_BUFSZ];
	uint64_t w = SENTINEL;

	memset(buf, 'x', sizeof(buf));
	fmt(buf, sizeof(buf), v);
	/* Truncation would lose digits: the output must fit. */
	check(memchr(buf, '\0', sizeof(buf) - 1) != NULL, "output truncated", in);
	check(parse(buf, &w) == 0, "printed value does not parse", buf);
	check(w == v, "printed value parses to another", buf);
}

static int parse_u32_64(const char *s, uint64_t *out)
{
	uint32_t v;
	int err = hbm_parse_u32(s, &v);

	if (!err)
		*out = v;
	return err;
}

static void fmt_u32(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%" PRIu32, (uint32_t)v);
}

/* Sizes have no printer of their own; "%" PRIu64 "b" is what tc takes. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%" PRIu64 "b", v);
}

/* A number and nothing else: what a bare value is for each kind. */
static int bare(const char *s)
{
	return *s && strspn(s, "0123456789.eE+-") == strlen(s);
}

static void check_kind(const char *s, const char *upper, parse_fn parse,
		       fmt_fn fmt, const char *unit, char *with_unit,
		       size_t with_len)
{
	uint64_t v = SENTINEL, u = SENTINEL, w = SENTINEL;
	int err, uerr, werr;

	err = parse(s, &v);
	check(err == 0 || err == -EINVAL || err == -ERANGE, "unexpected error", s);
	check(err == 0 || v == SENTINEL, "output changed on error", s);
	if (!err)
		round_trip(parse, fmt, v, s);

	uerr = parse(upper, &u);
	check(uerr == err, "case changes the result", s);
	check(err || u == v, "case changes the value", s);

	if (unit && bare(s)) {
		snprintf(with_unit, with_len, "%s%s", s, unit);
		werr = parse(with_unit, &w);
		check(werr == err, "the default unit changes the result", s);
		check(err || w == v, "the default unit changes the value", s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *upper, *with_unit;
	size_t i, with_len = size + 8;
	uint64_t raw = 0;

	s = malloc(size + 1);
	upper = malloc(size + 1);
	with_unit = malloc(with_len);
	if (!s || !upper || !with_unit)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	for (i = 0; i <= size; i++)
		upper[i] = s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i];

	check_kind(s, upper, hbm_parse_rate, hbm_fmt_rate, "bit", with_unit,
		   with_len);
	check_kind(s, upper, hbm_parse_time, hbm_fmt_time, "us", with_unit,
		   with_len);
	check_kind(s, upper, hbm_parse_size, fmt_size, "b", with_unit,
		   with_len);
	check_kind(s, upper, parse_u32_64, fmt_u32, NULL, with_unit, with_len);

	memcpy(&raw, data, size < sizeof(raw) ? size : sizeof(raw));
	round_trip(hbm_parse_rate, hbm_fmt_rate, raw, "(raw bytes)");
	round_trip(hbm_parse_time, hbm_fmt_time, raw, "(raw bytes)");
	round_trip(hbm_parse_size, fmt_size, raw, "(raw bytes)");

	free(s);
	free(upper);
	free(with_unit);
	return 0;
}
