// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the HBM-EDT arithmetic in include/hbm_edt.h: the exact same
 * code the BPF qdisc runs, compiled natively.
 */
#include <stdint.h>
#include "../hbm_test.h"
#include "hbm_edt.h"

static const struct hbm_config def_cfg = HBM_CONFIG_DEFAULT;

/* 1500 bytes at 1 Gbit/s take 12 us; the clock starts from now - burst. */
static void test_charge_basic(void)
{
	struct hbm_vq vq = {};
	uint64_t now = 1000000000ULL;
	__u64 dep;
	int64_t delta;

	delta = hbm_vq_charge(&vq, now, 1500, 1000000000ULL, 100000, &dep);
	ASSERT_EQ(delta, -100000, "idle queue gives the burst credit");
	ASSERT_U64_EQ(dep, now - 100000, "first departure is in the past");
	ASSERT_U64_EQ(vq.time, now - 100000 + 12000, "clock advanced 12us");
	ASSERT_U64_EQ(vq.rem, 0, "no remainder");

	delta = hbm_vq_charge(&vq, now, 1500, 1000000000ULL, 100000, &dep);
	ASSERT_EQ(delta, -88000, "second packet sees less credit");
	ASSERT_U64_EQ(dep, now - 88000, "departs after the first");
}

/*
 * Over a full second of back-to-back packets the clock must advance by
 * exactly one second per rate's worth of bytes, at every rate from 1 Mbit/s
 * to 400 Gbit/s and for every packet size: the remainder carries what a
 * per-packet division would lose.
 */
static void test_charge_exact_across_rates(void)
{
	static const uint64_t rates[] = {
		1000000ULL, 1500000ULL, 7000001ULL, 100000000ULL,
		999999937ULL, 1000000000ULL, 10000000000ULL, 25000000000ULL,
		100000000000ULL, 333333333333ULL, 400000000000ULL,
	};
	static const uint32_t lens[] = { 64, 66, 1514, 9014, 65536 };
	unsigned int r, l;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			struct hbm_vq vq = { .time = 0 };
			uint64_t rate = rates[r], len = lens[l], i, n;
			__u64 dep;
			uint64_t start, bits, expect_ns;
			long double err;

			/* About 10 ms worth of packets, at least 1000. */
			n = rate / 100 / (len * 8);
			if (n < 1000)
				n = 1000;
			if (n > 2000000)
				n = 2000000;
			vq.time = 1ULL << 40;
			start = vq.time;
			for (i = 0; i < n; i++)
				hbm_vq_charge(&vq, vq.time, len, rate, 0, &dep);
			bits = n * len * 8;
			/* exact: floor(bits * 1e9 / rate) */
			expect_ns = (uint64_t)((unsigned __int128)bits *
					       HBM_NSEC_PER_SEC / rate);
			if (!ASSERT_U64_EQ(vq.time - start, expect_ns,
					   "clock advance is exact"))
				printf("# rate %llu len %llu n %llu\n",
				       (unsigned long long)rate,
				       (unsigned long long)len,
				       (unsigned long long)n);
			err = ((long double)(vq.time - start) - (long double)bits *
			       1e9L / rate) / ((long double)bits * 1e9L / rate);
			ASSERT_TRUE(err < 0.001L && err > -0.001L,
				    "error below 0.1%");
		}
	}
}

/* The largest packet at the fastest rate with the largest remainder. */
static void test_charge_no_overflow(void)
{
	struct hbm_vq vq = { .time = 5, .rem = HBM_MAX_RATE_BPS - 1 };
	__u64 dep;
	uint64_t t0 = vq.time;

	hbm_vq_charge(&vq, 0, HBM_MAX_PKT_LEN, HBM_MAX_RATE_BPS, 0, &dep);
	ASSERT_U64_EQ(vq.time - t0, (uint64_t)(((unsigned __int128)
		HBM_MAX_PKT_LEN * 8 * HBM_NSEC_PER_SEC + HBM_MAX_RATE_BPS - 1) /
		HBM_MAX_RATE_BPS), "max len, max rate");
	ASSERT_LT(vq.rem, HBM_MAX_RATE_BPS, "remainder below rate");

	/* Lengths past the cap are charged as the cap, not wrapped. */
	vq = (struct hbm_vq){ .time = 0 };
	hbm_vq_charge(&vq, 0, UINT32_MAX, HBM_MIN_RATE_BPS, 0, &dep);
	ASSERT_U64_EQ(vq.time, (uint64_t)HBM_MAX_PKT_LEN * 8 * 1000,
		      "4 GB at 1 Mbit/s clamps to the cap");
}

/* A refund undoes a charge exactly, remainder included. */
static void test_refund_inverse(void)
{
	static const uint64_t rates[] = { 1000000ULL, 3000000007ULL,
					  400000000000ULL };
	unsigned int r;

	for (r = 0; r < 3; r++) {
		struct hbm_vq vq = { .time = 1ULL << 32, .rem = 0 }, before;
		__u64 dep;
		int i;

		for (i = 0; i < 7; i++)
			hbm_vq_charge(&vq, vq.time, 1000 + i, rates[r], 0, &dep);
		before = vq;
		hbm_vq_charge(&vq, vq.time, 1514, rates[r], 0, &dep);
		hbm_vq_refund(&vq, 1514, rates[r]);
		ASSERT_U64_EQ(vq.time, before.time, "time restored");
		ASSERT_U64_EQ(vq.rem, before.rem, "remainder restored");
	}
}

/* A busy queue is not clamped: delta grows as packets pile up. */
static void test_burst_bound(void)
{
	struct hbm_vq vq = { .time = 0 };
	uint64_t now = 10000000;
	__u64 dep;
	int64_t delta;
	int i;

	/* Long idle: credit never exceeds the burst. */
	delta = hbm_vq_charge(&vq, now, 100, 1000000000ULL, 50000, &dep);
	ASSERT_EQ(delta, -50000, "credit bounded by burst");
	for (i = 0; i < 100; i++)
		delta = hbm_vq_charge(&vq, now, 1500, 1000000000ULL, 50000,
				      &dep);
	/* 100 packets = 1.2 ms of queue minus 50us credit, minus the first. */
	ASSERT_EQ(delta, -50000 + 800 + 99 * 12000, "queue delay accumulates");
}

static void test_drop_thresh_by_size(void)
{
	ASSERT_U64_EQ(hbm_drop_thresh(&def_cfg, 120), HBM_DEF_DROP_NS,
		      "120 bytes is small");
	ASSERT_U64_EQ(hbm_drop_thresh(&def_cfg, 121), HBM_DEF_DROP_LARGE_NS,
		      "121 bytes is large");
}

static void test_cn_probability(void)
{
	uint64_t hits = 0, n = 0;
	uint32_t rnd;

	ASSERT_EQ(hbm_cn_roll(50000, 50000, 500000, 0), 0, "at mark: never");
	ASSERT_EQ(hbm_cn_roll(500000, 50000, 500000, UINT32_MAX), 1,
		  "at drop: always");
	ASSERT_EQ(hbm_cn_roll(700000, 50000, 500000, UINT32_MAX), 1,
		  "past drop: always");
	/* Halfway between mark and drop: half of all rnd values. */
	for (rnd = 0; rnd < UINT32_MAX - 65537; rnd += 65537, n++)
		hits += hbm_cn_roll(275000, 50000, 500000, rnd);
	ASSERT_TRUE(hits * 1000 / n >= 499 && hits * 1000 / n <= 501,
		    "P(CN) = 0.5 halfway");
	/* A quarter of the way. */
	for (hits = 0, n = 0, rnd = 0; rnd < UINT32_MAX - 65537;
	     rnd += 65537, n++)
		hits += hbm_cn_roll(162500, 50000, 500000, rnd);
	ASSERT_TRUE(hits * 1000 / n >= 249 && hits * 1000 / n <= 251,
		    "P(CN) = 0.25 a quarter of the way");
}

/*
 * Over every span the loader accepts (thresholds up to 1 h), the roll
 * agrees with the exact 128-bit comparison rnd * span < over * 2^32 to
 * within the scaling's rounding: P(CN) never off by more than 2^-30, and
 * 0 at mark, 1 at drop. Before the scaling, a span over 2^32 ns (4.3 s)
 * overflowed over << 32 and rolled CN at random.
 */
static void test_cn_probability_wide(void)
{
	static const uint64_t spans[] = {
		1, 1000, 450000, (1ULL << 32) - 1, 1ULL << 32,
		(1ULL << 32) + 12345, 10ULL * 1000000000, 1ULL << 40,
		3600ULL * 1000000000 - 1, 3600ULL * 1000000000,
	};
	static const uint32_t rnds[] = {
		0, 1, 0x7fffffff, 0x80000000, 0xc0000000, UINT32_MAX - 1,
		UINT32_MAX,
	};
	unsigned int i, k, f, bad = 0;

	for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		uint64_t mark = 50000, span = spans[i], drop = mark + span;

		for (f = 0; f <= 64; f++) {
			/* over from 0 to span in 64ths, and just around each */
			uint64_t over = (uint64_t)((unsigned __int128)span * f / 64);

			for (k = 0; k < sizeof(rnds) / sizeof(rnds[0]); k++) {
				uint32_t r = rnds[k];
				unsigned __int128 lhs = (unsigned __int128)r * span;
				unsigned __int128 rhs = (unsigned __int128)over << 32;
				/* slack: the scaling's rounding, 2^-30 of span */
				unsigned __int128 slack = ((unsigned __int128)span << 32) >> 30;
				int want, got;

				got = hbm_cn_roll((int64_t)(mark + over), mark,
						  drop, r);
				if (over == 0) {
					bad += got != 0;
					continue;
				}
				if (over >= span) {
					bad += got != 1;
					continue;
				}
				want = lhs < rhs;
				if (lhs + slack < rhs || lhs > rhs + slack)
					bad += got != want;
			}
		}
	}
	ASSERT_EQ(bad, 0, "CN roll matches the 128-bit oracle on every span");
	/* The overflow itself: 4.3 s of span, a quarter of the way, rnd 1. */
	ASSERT_EQ(hbm_cn_roll(50000 + (1ULL << 32) / 4 + 1, 50000,
			      50000 + (1ULL << 32) + 8, 1), 1,
		  "a quarter of a 4.3 s span rolls CN for a small rnd");
	ASSERT_EQ(hbm_cn_roll(50000 + (1ULL << 32) / 4, 50000,
			      50000 + (1ULL << 32) + 8, UINT32_MAX), 0,
		  "... and not for the largest");
}

static enum hbm_verdict decide(const struct hbm_config *cfg, uint32_t len,
			       int tcp, int ecn, uint32_t pout, int64_t delta,
			       uint32_t rnd, int *guarded)
{
	struct hbm_pkt pkt = { .len = len, .is_tcp = tcp, .ecn = ecn,
			       .packets_out = pout };

	return hbm_decide(cfg, &pkt, delta, rnd, guarded);
}

static void test_decide(void)
{
	struct hbm_config nocn = def_cfg;
	int g;

	nocn.flags = HBM_F_NO_CN;
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 10, 50000, 0, &g), HBM_PASS,
		  "at mark passes");
	ASSERT_EQ(decide(&def_cfg, 1500, 0, 0, 0, 50001, 0, &g), HBM_DROP,
		  "non-TCP over mark drops");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 1, 10, 400000, 0, &g), HBM_MARK,
		  "ECN TCP over mark is marked, no CN");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 10, 400000, 0, &g), HBM_CN,
		  "non-ECN TCP, lucky roll: CN");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 10, 60000, UINT32_MAX, &g),
		  HBM_MARK, "non-ECN TCP, unlucky roll: mark only");
	ASSERT_EQ(decide(&nocn, 1500, 1, 0, 10, 400000, 0, &g), HBM_MARK,
		  "no-cn flag suppresses CN");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 10, 480001, 0, &g), HBM_DROP,
		  "large TCP over 480us drops");
	ASSERT_EQ(g, 0, "not guarded with 10 in flight");
	ASSERT_EQ(decide(&def_cfg, 100, 1, 0, 10, 490000, UINT32_MAX, &g),
		  HBM_MARK, "small TCP under 500us is not dropped");
	ASSERT_EQ(decide(&def_cfg, 100, 1, 1, 10, 500001, 0, &g), HBM_DROP,
		  "ECN TCP over drop drops");
}

/*
 * A thin sender (no more unacknowledged bytes than an initial quantum) is
 * marked but gets no CN between the thresholds; over drop it is dropped,
 * and the 2-packet guard still turns that drop into CN.
 */
static void test_thin(void)
{
	struct hbm_pkt pkt = { .len = 1514, .is_tcp = 1, .packets_out = 7,
			       .unacked = 10240 };
	struct hbm_pkt bulk = pkt, udp = { .len = 1514 };
	int g;

	bulk.unacked = 15141;
	ASSERT_EQ(hbm_is_thin(&pkt, 15140), 1, "a 10 KB RPC is thin");
	ASSERT_EQ(hbm_is_thin(&bulk, 15140), 0,
		  "a byte over the initial quantum is not");
	ASSERT_EQ(hbm_is_thin(&udp, 15140), 0, "non-TCP is never thin");
	pkt.thin = 1;

	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 400000, 0, &g), HBM_MARK,
		  "thin, lucky roll: marked, no CN");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 40000, 0, &g), HBM_PASS,
		  "thin under mark passes");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 480001, 0, &g), HBM_DROP,
		  "thin over drop is dropped");
	pkt.packets_out = 1;
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 480001, 0, &g), HBM_CN,
		  "thin, 1 in flight, over drop: the guard's CN");
	ASSERT_EQ(g, 1, "counted as a guard save");
	pkt.thin = 0;
	pkt.packets_out = 7;
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 400000, 0, &g), HBM_CN,
		  "the same packet of a bulk flow: CN");
}

static void test_guard(void)
{
	int g;

	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 1, 900000, 0, &g), HBM_CN,
		  "1 in flight: CN instead of drop");
	ASSERT_EQ(g, 1, "counted as a guard save");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 0, 900000, 0, &g), HBM_CN,
		  "0 in flight: CN instead of drop");
	ASSERT_EQ(decide(&def_cfg, 1500, 1, 0, 2, 900000, 0, &g), HBM_DROP,
		  "2 in flight: dropped");
	ASSERT_EQ(g, 0, "no guard with 2 in flight");
	ASSERT_EQ(decide(&def_cfg, 1500, 0, 0, 0, 900000, 0, &g), HBM_DROP,
		  "no guard for non-TCP");
	{
		struct hbm_config nocn = def_cfg;

		nocn.flags = HBM_F_NO_CN;
		ASSERT_EQ(decide(&nocn, 1500, 1, 0, 1, 900000, 0, &g),
			  HBM_MARK, "guarded, no-cn: kept, no CN");
		ASSERT_EQ(g, 1, "still a guard save");
	}
}

static void test_horizon(void)
{
	ASSERT_FALSE(hbm_beyond_horizon(0, 1000, 10), "zero tstamp");
	ASSERT_FALSE(hbm_beyond_horizon(500, 1000, 10), "past tstamp");
	ASSERT_FALSE(hbm_beyond_horizon(1010, 1000, 10), "at horizon");
	ASSERT_TRUE(hbm_beyond_horizon(1011, 1000, 10), "past horizon");
	ASSERT_TRUE(hbm_beyond_horizon(UINT64_MAX, 1000, HBM_DEF_HORIZON_NS),
		    "far future");
}

/* Lateness buckets: [2^(b-1), 2^b) us, 0 under 1 us, the last open. */
static void test_late_bucket(void)
{
	uint64_t us;
	__u32 b;

	ASSERT_EQ(hbm_late_bucket(0), 0, "0 ns");
	ASSERT_EQ(hbm_late_bucket(999), 0, "under 1 us");
	ASSERT_EQ(hbm_late_bucket(1000), 1, "1 us");
	ASSERT_EQ(hbm_late_bucket(1999), 1, "just under 2 us");
	ASSERT_EQ(hbm_late_bucket(2000), 2, "2 us");
	ASSERT_EQ(hbm_late_bucket(1023999), 10, "just under 1024 us");
	ASSERT_EQ(hbm_late_bucket(1024000), 11, "1024 us");
	ASSERT_EQ(hbm_late_bucket(UINT64_MAX), HBM_LATE_BUCKETS - 1,
		  "the largest lateness lands in the last bucket");
	/* Every bucket below the last holds exactly its range. */
	for (b = 1; b < HBM_LATE_BUCKETS - 1; b++) {
		us = 1ULL << (b - 1);
		ASSERT_EQ(hbm_late_bucket(us * 1000), b, "bucket's low bound");
		ASSERT_EQ(hbm_late_bucket(2 * us * 1000 - 1), b,
			  "bucket's high bound");
	}
}

/*
 * The envelope jumps to a stall and decays with time, not with samples:
 * about 1/e of the gap per HBM_LATE_MEMORY_NS however many samples it
 * took, so a stall is remembered as long at 100 Mbit/s as at 10 Gbit/s.
 */
static void test_late_envelope(void)
{
	const __u64 ms = 1000 * 1000;
	__u64 env = 0, fast, slow;
	int i;

	env = hbm_late_track(env, 20000, ms);
	ASSERT_U64_EQ(env, 20000, "jumps to the first sample");
	env = hbm_late_track(env, ms, ms);
	ASSERT_U64_EQ(env, ms, "jumps to a stall");
	env = hbm_late_track(env, 0, HBM_LATE_MEMORY_NS / 16);
	ASSERT_U64_EQ(env, ms - ms / 16, "decays by the time passed");
	ASSERT_U64_EQ(hbm_late_track(ms, 0, 0), ms, "no time, no decay");
	ASSERT_U64_EQ(hbm_late_track(ms, 10000, HBM_LATE_MEMORY_NS), 10000,
		      "forgotten after the memory");

	/* 100 ms of samples, one every 10 us or one every 1 ms. */
	fast = slow = ms;
	for (i = 0; i < 10000; i++)
		fast = hbm_late_track(fast, 10000, 10000);
	for (i = 0; i < 100; i++)
		slow = hbm_late_track(slow, 10000, ms);
	ASSERT_GT(fast, 850000, "remembered at a high sample rate");
	ASSERT_LT(fast, 950000, "but decaying");
	ASSERT_LT(fast > slow ? fast - slow : slow - fast, 5000,
		  "as at a low one");

	/* 3 s of 10 us lateness with a 2 ms stall every 300 ms. */
	for (i = 0, env = 0; i < 3000; i++)
		env = hbm_late_track(env, i % 300 ? 10000 : 2 * ms, ms);
	ASSERT_GT(env, ms, "recurring stalls keep it up");
	ASSERT_U64_EQ(hbm_late_track(UINT64_MAX, UINT64_MAX, UINT64_MAX),
		      HBM_LATE_MEMORY_NS, "samples beyond the memory are capped");
	ASSERT_U64_EQ(hbm_late_track(UINT64_MAX, 0, HBM_LATE_MEMORY_NS - 1),
		      1, "no overflow at the extremes");
}

/*
 * The allowance is the lateness beyond the burst, up to the cap, and none
 * when the switch is off: on a host whose timers keep within the burst the
 * credit is HBM's.
 */
static void test_late_allowance(void)
{
	ASSERT_U64_EQ(hbm_late_allowance(100000, 0, 0), 0, "no lateness");
	ASSERT_U64_EQ(hbm_late_allowance(100000, 60000, 0), 0,
		      "lateness within the burst");
	ASSERT_U64_EQ(hbm_late_allowance(100000, 100000, 0), 0,
		      "lateness equal to the burst");
	ASSERT_U64_EQ(hbm_late_allowance(100000, 900000, 0), 800000,
		      "the excess over the burst");
	ASSERT_U64_EQ(hbm_late_allowance(100000, UINT64_MAX, 0),
		      HBM_LATE_CREDIT_MAX_NS - 100000, "capped");
	ASSERT_U64_EQ(hbm_late_allowance(100000, 900000, HBM_F_FIXED_BURST),
		      0, "late-credit off");
	ASSERT_U64_EQ(hbm_late_allowance(HBM_LATE_CREDIT_MAX_NS * 2,
					 UINT64_MAX, 0), 0,
		      "a burst above the cap needs none");
}

/*
 * The allowance widens the idle credit only: after an idle spell a burst
 * of burst + allowance leaves at once without a mark, and past that the
 * queue is judged at HBM's own thresholds.
 */
static void test_late_allowance_in_decide(void)
{
	struct hbm_pkt pkt = { .len = 1514, .is_tcp = 1, .packets_out = 10 };
	__u64 allow = hbm_late_allowance(def_cfg.burst_ns, 1000000, 0);
	const __u64 rate = 200000000ULL;	/* 60.56 us per 1514 bytes */
	struct hbm_vq vq = {};
	uint64_t now = 5000000000ULL;
	int64_t delta, first;
	int guarded, n = 0;
	__u64 dep;

	first = hbm_vq_charge(&vq, now, 1514, rate, def_cfg.burst_ns + allow,
			      &dep);
	ASSERT_EQ(first, -1000000, "credit is the lateness envelope");
	do {
		delta = hbm_vq_charge(&vq, now, 1514, rate,
				      def_cfg.burst_ns + allow, &dep);
		n++;
	} while (delta <= 0 && n < 100);
	ASSERT_EQ(n, 1000000 / 60560 + 1, "a millisecond's burst is credit");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, delta, 0, &guarded), HBM_PASS,
		  "the packet after the credit is below mark");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 600000, 0, &guarded), HBM_DROP,
		  "600us is a drop, allowance or not");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 40000, UINT32_MAX, &guarded),
		  HBM_PASS, "40us passes, as in HBM");
}

/*
 * A class's packet: its delay judged against the class's thresholds with
 * the device's packet size rule and flags, and the worse of the two
 * levels' verdicts wins.
 */
static void test_class_levels(void)
{
	struct hbm_class_config cc = {
		.rate_bps = 100000000, .burst_ns = 200000, .mark_ns = 1000000,
		.drop_ns = 4000000, .drop_large_ns = 3000000,
	};
	struct hbm_config dev = def_cfg, c;
	struct hbm_pkt pkt = { .len = 1514, .is_tcp = 1, .packets_out = 10 };
	int guarded;

	dev.flags = HBM_F_NO_CN;
	hbm_class_cfg(&c, &dev, &cc);
	ASSERT_EQ(c.rate_bps, cc.rate_bps, "the class's rate");
	ASSERT_EQ(c.mark_ns, cc.mark_ns, "the class's mark");
	ASSERT_EQ(hbm_drop_thresh(&c, 1514), cc.drop_large_ns,
		  "the class's drop-large over the device's large_pkt");
	ASSERT_EQ(hbm_drop_thresh(&c, 100), cc.drop_ns,
		  "the class's drop for small packets");
	ASSERT_EQ(c.flags, HBM_F_NO_CN, "the device's flags");
	ASSERT_EQ(c.limit, dev.limit, "the device's limit");
	cc.rate_bps = 0;
	hbm_class_cfg(&c, &dev, &cc);
	ASSERT_EQ(c.rate_bps, HBM_MIN_RATE_BPS, "a zero rate cannot divide");

	/* 600 us: over the device's drop, under the class's mark. */
	ASSERT_EQ(hbm_decide(&c, &pkt, 600000, 0, &guarded), HBM_PASS,
		  "600us passes the class");
	ASSERT_EQ(hbm_verdict_worst(HBM_PASS, HBM_DROP), HBM_DROP,
		  "the device's drop wins over the class's pass");
	ASSERT_EQ(hbm_verdict_worst(HBM_CN, HBM_MARK), HBM_CN,
		  "CN wins over a mark");
	ASSERT_EQ(hbm_verdict_worst(HBM_MARK, HBM_PASS), HBM_MARK,
		  "a class's mark wins over the device's pass");
	ASSERT_EQ(hbm_verdict_worst(HBM_DROP, HBM_CN), HBM_DROP,
		  "drop wins over CN");

	/*
	 * A class holding its packet 300 us under a device 350 us ahead:
	 * the device adds 50 us, under its mark; a class not behind holds
	 * nothing.
	 */
	ASSERT_EQ(350000 - hbm_class_held(300000), 50000,
		  "the device's delay beyond the class's");
	ASSERT_EQ(hbm_decide(&def_cfg, &pkt, 350000 - hbm_class_held(300000),
			     0, &guarded), HBM_PASS,
		  "a class's own queue is no device congestion");
	ASSERT_EQ(hbm_class_held(-100000), 0, "an idle class holds nothing");
}

/*
 * hbm_vq_judge: the device's and a class's path through one queue. A
 * passed packet moves the clock by its time at the rate and says so in
 * its charge; a dropped one leaves the clock exactly as it found it.
 */
static void test_vq_judge(void)
{
	struct hbm_pkt tcp = { .len = 1500, .is_tcp = 1, .packets_out = 10 };
	struct hbm_pkt udp = { .len = 1500 };
	__u64 now = 1000000000ULL;
	struct hbm_vq vq = { now, 0 }, before;
	struct hbm_judged j;

	ASSERT_EQ(hbm_vq_judge(&vq, &def_cfg, &tcp, now, def_cfg.burst_ns, 0,
			       0, &j), HBM_PASS, "an idle queue passes");
	ASSERT_EQ(j.delta, 0, "... with no delay");
	ASSERT_EQ(j.departure, now, "... leaving now");
	ASSERT_EQ(j.charge, 12000, "... charged 12 us (1500 B at 1 Gbit/s)");
	ASSERT_EQ(vq.time, now + 12000, "... which the clock moved");

	/* 60 us ahead: over mark, a datagram is dropped and refunded. */
	vq.time = now + 60000;
	vq.rem = 7;
	before = vq;
	ASSERT_EQ(hbm_vq_judge(&vq, &def_cfg, &udp, now, def_cfg.burst_ns, 0,
			       0, &j), HBM_DROP, "non-TCP 60 us over mark drops");
	ASSERT_EQ(j.charge, 0, "... charged nothing");
	ASSERT_EQ(vq.time, before.time, "... the clock as it was");
	ASSERT_EQ(vq.rem, before.rem, "... to the remainder");
	ASSERT_EQ(hbm_drop_reason(&def_cfg, &udp, j.delta), HBM_DROP_NONTCP,
		  "... for being non-TCP over mark");

	/* What a class holds is not the device's delay. */
	ASSERT_EQ(hbm_vq_judge(&vq, &def_cfg, &udp, now, def_cfg.burst_ns,
			       20000, 0, &j), HBM_PASS,
		  "60 us less 20 us a class holds: under mark, passes");
	ASSERT_EQ(j.delta, 60000, "... its delta is the queue's own");
	ASSERT_EQ(j.departure, now + 60000, "... it leaves when the clock says");

	/* Over drop: a TCP packet with packets in flight is dropped. */
	vq.time = now + 600000;
	ASSERT_EQ(hbm_vq_judge(&vq, &def_cfg, &tcp, now, def_cfg.burst_ns, 0,
			       0, &j), HBM_DROP, "TCP 600 us ahead drops");
	ASSERT_EQ(hbm_drop_reason(&def_cfg, &tcp, j.delta), HBM_DROP_THRESH,
		  "... over the drop threshold");
	ASSERT_EQ(hbm_drop_reason(&def_cfg, &udp, j.delta), HBM_DROP_THRESH,
		  "a datagram that far ahead is over the threshold too");
	tcp.packets_out = 1;
	ASSERT_EQ(hbm_vq_judge(&vq, &def_cfg, &tcp, now, def_cfg.burst_ns, 0,
			       0, &j), HBM_CN, "... unless the guard spares it");
	ASSERT_EQ(j.guarded, 1, "... and says so");
	ASSERT_EQ(j.charge, 12000, "a guarded packet is charged");
}

HBM_TEST_MAIN(
	HBM_TEST(test_charge_basic),
	HBM_TEST(test_charge_exact_across_rates),
	HBM_TEST(test_charge_no_overflow),
	HBM_TEST(test_refund_inverse),
	HBM_TEST(test_burst_bound),
	HBM_TEST(test_drop_thresh_by_size),
	HBM_TEST(test_cn_probability),
	HBM_TEST(test_cn_probability_wide),
	HBM_TEST(test_decide),
	HBM_TEST(test_thin),
	HBM_TEST(test_guard),
	HBM_TEST(test_horizon),
	HBM_TEST(test_late_bucket),
	HBM_TEST(test_late_envelope),
	HBM_TEST(test_late_allowance),
	HBM_TEST(test_late_allowance_in_decide),
	HBM_TEST(test_class_levels),
	HBM_TEST(test_vq_judge),
)
