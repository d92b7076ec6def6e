/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing and printing of rates, times and sizes the way iproute2's tc
 * writes them (tc/tc_util.c get_rate64(), get_size(), lib/utils.c
 * get_time()/get_time64(), print_rate(), print_time64()).
 *
 * Numbers are decimal with an optional fraction and exponent ("1.5",
 * ".5", "2e6"); units are matched case-insensitively and must follow the
 * number directly ("10mbit", not "10 mbit"). No sign, whitespace, hex,
 * "inf" or "nan" is accepted. The result is computed with integer
 * arithmetic only: it is the exact value truncated towards zero (as tc's
 * cast from double truncates), so "1.1gbit" is exactly 1100000000.
 *
 * Parsers return 0 on success, -EINVAL on an empty, negative or otherwise
 * malformed string (including an unknown unit or trailing garbage) and
 * -ERANGE when the value does not fit; on error *out is left untouched.
 * Nothing is ever printed.
 */
#ifndef HBM_UNITS_H
#define HBM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Big enough for any hbm_fmt_rate() / hbm_fmt_time() output. */
#define HBM_FMT_BUFSZ 32

/*
 * Rate in bits per second. Bare number: bit/s. Units: bit, kbit, mbit,
 * gbit, tbit (powers of 1000), kibit, mibit, gibit, tibit (powers of 1024),
 * and the byte-per-second forms bps, kbps, mbps, gbps, tbps, kibps, mibps,
 * gibps, tibps (x8).
 */
int hbm_parse_rate(const char *s, uint64_t *bits_per_sec);

/*
 * Time in nanoseconds. Bare number: microseconds (as tc's get_time()).
 * Units: s/sec/secs, ms/msec/msecs, us/usec/usecs, ns/nsec/nsecs.
 */
int hbm_parse_time(const char *s, uint64_t *ns);

/*
 * An interval in nanoseconds (show --watch): a time as hbm_parse_time()
 * takes it, but a bare number is in seconds ("2" is 2s, "0.5" 500ms), as
 * --watch took whole seconds before it took units.
 */
int hbm_parse_interval(const char *s, uint64_t *ns);

/*
 * Size in bytes. Bare number: bytes. Units: b, k/kb, m/mb, g/gb (powers
 * of 1024), kbit, mbit, gbit (1024-based bits, i.e. divided by 8).
 */
int hbm_parse_size(const char *s, uint64_t *bytes);

/* Plain unsigned decimal ("0".."4294967295"): no sign, unit or fraction. */
int hbm_parse_u32(const char *s, uint32_t *v);

/*
 * "800bit", "12Kbit", "100Mbit", "1.5Gbit", "2Tbit": the largest of
 * bit/Kbit/Mbit/Gbit/Tbit (powers of 1000) not above the value, with as
 * many decimals as needed to be exact, so the output always parses back
 * to the same value. Truncated like snprintf() if len is too small.
 */
void hbm_fmt_rate(char *buf, size_t len, uint64_t bits_per_sec);

/* "120ns", "50us", "1.5ms", "10s"; exact like hbm_fmt_rate(); 0 is "0ns". */
void hbm_fmt_time(char *buf, size_t len, uint64_t ns);

#endif /* HBM_UNITS_H */
