// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for apply --watch's pure parts (loader/watch.c, netlink.c):
 * the coalescing of a device's events (a burst is one apply, quiet after
 * the last event, never later than the cap after the first), which link
 * events make a device of the file new (created, created again, renamed
 * to its name; not a change of state of one already applied), and the
 * parser of rtnetlink's link notifications, on messages made here.
 * Nothing on this host is looked at.
 */
#include <errno.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "../hbm_test.h"
#include "../../loader/apply.h"

#define MS 1000000ULL

static void test_debounce_burst(void)
{
	struct hbm_debounce d;
	int i;

	if (!ASSERT_OK(hbm_debounce_init(&d, 3, 250 * MS, 2000 * MS), "init"))
		return;
	ASSERT_TRUE(hbm_debounce_next(&d) == UINT64_MAX, "none pending");
	ASSERT_EQ(hbm_debounce_take(&d, 10000 * MS), -1, "nothing to take");

	/* Five events of device 1, 50ms apart: one apply, 250ms after the last. */
	for (i = 0; i < 5; i++)
		hbm_debounce_event(&d, 1, 1000 * MS + i * 50 * MS);
	ASSERT_U64_EQ(hbm_debounce_next(&d), 1450 * MS, "due 250ms after the last");
	ASSERT_EQ(hbm_debounce_take(&d, 1449 * MS), -1, "not before");
	ASSERT_EQ(hbm_debounce_take(&d, 1450 * MS), 1, "device 1 then");
	ASSERT_EQ(hbm_debounce_take(&d, 1450 * MS), -1, "once");
	ASSERT_TRUE(hbm_debounce_next(&d) == UINT64_MAX, "none left");

	/* Out of range: ignored. */
	hbm_debounce_event(&d, 3, 0);
	hbm_debounce_event(&d, -1, 0);
	ASSERT_TRUE(hbm_debounce_next(&d) == UINT64_MAX, "out of range");
	hbm_debounce_free(&d);
}

static void test_debounce_cap(void)
{
	struct hbm_debounce d;
	__u64 t;

	if (!ASSERT_OK(hbm_debounce_init(&d, 1, 250 * MS, 2000 * MS), "init"))
		return;
	/* A device that flaps every 100ms: applied 2s after its first event. */
	for (t = 0; t < 3000 * MS; t += 100 * MS) {
		if (hbm_debounce_take(&d, t) == 0)
			break;
		hbm_debounce_event(&d, 0, t);
	}
	ASSERT_U64_EQ(t, 2000 * MS, "applied at the cap, 2s after the first");
	/* Its next burst starts afresh. */
	hbm_debounce_event(&d, 0, 2100 * MS);
	ASSERT_U64_EQ(hbm_debounce_next(&d), 2350 * MS, "a new burst");
	hbm_debounce_clear(&d);
	ASSERT_TRUE(hbm_debounce_next(&d) == UINT64_MAX, "cleared");
	hbm_debounce_free(&d);
}

static void test_debounce_order(void)
{
	struct hbm_debounce d;

	if (!ASSERT_OK(hbm_debounce_init(&d, 3, 250 * MS, 2000 * MS), "init"))
		return;
	/* Two devices: each its own burst, taken in the order they settled. */
	hbm_debounce_event(&d, 2, 0);
	hbm_debounce_event(&d, 0, 100 * MS);
	hbm_debounce_event(&d, 2, 200 * MS);
	ASSERT_U64_EQ(hbm_debounce_next(&d), 350 * MS, "device 0's first");
	ASSERT_EQ(hbm_debounce_take(&d, 500 * MS), 0, "device 0");
	ASSERT_EQ(hbm_debounce_take(&d, 500 * MS), 2, "then device 2");
	ASSERT_EQ(hbm_debounce_take(&d, 500 * MS), -1, "then none");
	hbm_debounce_free(&d);
}

static struct hbm_link_ev ev(bool del, int ifindex, const char *name)
{
	struct hbm_link_ev e = { .del = del, .ifindex = ifindex };

	snprintf(e.name, sizeof(e.name), "%s", name);
	return e;
}

static int seen(const struct hbm_conf *c, int *known, bool del, int ifindex,
		const char *name)
{
	struct hbm_link_ev e = ev(del, ifindex, name);

	return hbm_watch_event(c, known, &e);
}

static void test_watch_event(void)
{
	struct hbm_conf c;
	int known[2] = {};

	if (!ASSERT_OK(hbm_conf_parse(&c, "t.conf",
				      "eth0 --rate 1gbit\nveth7 --rate 100mbit\n"),
		       "parse"))
		goto out;
	/* A name the file does not give: nothing. */
	ASSERT_EQ(seen(&c, known, false, 3, "wlan0"), -1, "not the file's");
	/* veth7 created: new, until applied (known). */
	ASSERT_EQ(seen(&c, known, false, 5, "veth7"), 1, "veth7 created");
	ASSERT_EQ(seen(&c, known, false, 5, "veth7"), 1, "veth7 up: still new");
	known[1] = 5;		/* applied */
	ASSERT_EQ(seen(&c, known, false, 5, "veth7"), -1, "a change of state");
	/* Deleted and created again: a new ifindex, new. */
	ASSERT_EQ(seen(&c, known, true, 5, ""), -1, "deleted");
	ASSERT_EQ(known[1], 0, "forgotten");
	ASSERT_EQ(seen(&c, known, false, 9, "veth7"), 1, "veth7 again");
	known[1] = 9;
	/* Created again with the same ifindex (moved out and back): new. */
	ASSERT_EQ(seen(&c, known, true, 9, "veth7"), -1, "gone");
	ASSERT_EQ(seen(&c, known, false, 9, "veth7"), 1, "same ifindex, new");
	known[1] = 9;
	/* Renamed away: forgotten; another device renamed to it: new. */
	ASSERT_EQ(seen(&c, known, false, 9, "old7"), -1, "renamed away");
	ASSERT_EQ(known[1], 0, "forgotten");
	ASSERT_EQ(seen(&c, known, false, 12, "veth7"), 1, "renamed to veth7");
	/* eth0, applied at the start: its events are nothing. */
	known[0] = 2;
	ASSERT_EQ(seen(&c, known, false, 2, "eth0"), -1, "eth0 flaps");
	ASSERT_EQ(known[0], 2, "eth0 still known");
out:
	hbm_conf_free(&c);
}

struct got {
	struct hbm_link_ev ev[8];
	int n;
};

static void collect(const struct hbm_link_ev *e, void *ctx)
{
	struct got *g = ctx;

	if (g->n < 8)
		g->ev[g->n++] = *e;
}

/* A link notification into @buf at @off: returns its end. */
static size_t put_link(char *buf, size_t off, __u16 type, int ifindex,
		       const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = type;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return off + nlh->nlmsg_len;
}

static void test_link_parse(void)
{
	static char buf[8192] __attribute__((aligned(4)));
	struct got g = {};
	size_t len = 0;

	len = put_link(buf, len, RTM_NEWLINK, 4, "veth7");
	len = put_link(buf, len, RTM_NEWLINK, 5, NULL);	/* nameless */
	len = put_link(buf, len, RTM_DELLINK, 4, "veth7");
	len = put_link(buf, len, RTM_NEWADDR, 4, "veth7");	/* not a link's */
	len = put_link(buf, len, RTM_DELLINK, 6, NULL);
	if (!ASSERT_OK(hbm_nl_link_parse(buf, len, collect, &g), "parse"))
		return;
	if (!ASSERT_EQ(g.n, 3, "three events"))
		return;
	ASSERT_FALSE(g.ev[0].del, "a NEWLINK");
	ASSERT_EQ(g.ev[0].ifindex, 4, "its ifindex");
	ASSERT_STREQ(g.ev[0].name, "veth7", "its name");
	ASSERT_TRUE(g.ev[1].del, "a DELLINK");
	ASSERT_EQ(g.ev[1].ifindex, 4, "its ifindex");
	ASSERT_TRUE(g.ev[2].del, "a DELLINK without a name");
	ASSERT_EQ(g.ev[2].ifindex, 6, "its ifindex");
	ASSERT_STREQ(g.ev[2].name, "", "no name");

	/* A name too long for IFNAMSIZ is cut, not overrun. */
	g.n = 0;
	len = put_link(buf, 0, RTM_NEWLINK, 7, "a-name-far-too-long-for-a-device");
	if (ASSERT_OK(hbm_nl_link_parse(buf, len, collect, &g), "parse") &&
	    ASSERT_EQ(g.n, 1, "one event"))
		ASSERT_EQ(strlen(g.ev[0].name), 15, "cut to 15");
	/* A message longer than the buffer: an error, not a read past it. */
	g.n = 0;
	len = put_link(buf, 0, RTM_NEWLINK, 7, "veth7");
	((struct nlmsghdr *)buf)->nlmsg_len = len + 64;
	hbm_nl_link_parse(buf, len, collect, &g);
	ASSERT_EQ(g.n, 0, "a truncated message is no event");
}

HBM_TEST_MAIN(
	HBM_TEST(test_debounce_burst),
	HBM_TEST(test_debounce_cap),
	HBM_TEST(test_debounce_order),
	HBM_TEST(test_watch_event),
	HBM_TEST(test_link_parse),
)
