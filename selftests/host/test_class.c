// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/class.c's helpers, on maps of the pinned maps'
 * layout created here (unpinned; no qdisc, nothing loaded): the levels of
 * a device, its classes deleted with it, the prune (a device that is gone,
 * a cgroup that is gone where cgroup2 is mounted, a rate state without a
 * class) and the classes as show and class list print them. Skipped
 * without the right to create BPF maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <unistd.h>
#include <sys/stat.h>

#include <bpf/bpf.h>

#include "../hbm_test.h"
#include "../../loader/cmds.h"

/* An ifindex no device has, and a cgroup id kernfs never gave. */
#define GONE_IFINDEX	0x7ffffff0
#define GONE_CGROUP	0xffff00000001ULL

static struct hbm_maps maps = HBM_MAPS_INIT;
static __u32 own;

static bool setup(void)
{
	hbm_maps_close(&maps);
	if (hbm_own_netns(&own))
		return false;
	maps.config = bpf_map_create(BPF_MAP_TYPE_HASH, "t_config",
				     sizeof(struct hbm_dev_key),
				     sizeof(struct hbm_config), HBM_MAX_DEVS,
				     NULL);
	maps.class_configs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_cls_cfg",
					    sizeof(struct hbm_class_key),
					    sizeof(struct hbm_class_config),
					    HBM_MAX_CLASSES, NULL);
	maps.class_rates = bpf_map_create(BPF_MAP_TYPE_HASH, "t_cls_rate",
					  sizeof(struct hbm_class_key),
					  sizeof(struct hbm_class_rate),
					  HBM_MAX_CLASSES, NULL);
	if (maps.config < 0 || maps.class_configs < 0 || maps.class_rates < 0) {
		printf("# can't create BPF maps here (%s): skipped\n",
		       strerror(errno));
		hbm_maps_close(&maps);
		return false;
	}
	return true;
}

static void put(__u32 ifindex, __u32 netns, __u64 cgroup, __u32 level,
		__u64 rate)
{
	struct hbm_class_key k = { ifindex, netns, cgroup };
	struct hbm_class_config c = {
		.rate_bps = rate, .burst_ns = HBM_DEF_BURST_NS,
		.mark_ns = HBM_DEF_MARK_NS, .drop_ns = HBM_DEF_DROP_NS,
		.drop_large_ns = HBM_DEF_DROP_LARGE_NS, .level = level,
	};
	struct hbm_class_rate r = { .packets = rate / 1000000 };

	bpf_map_update_elem(maps.class_configs, &k, &c, BPF_ANY);
	bpf_map_update_elem(maps.class_rates, &k, &r, BPF_ANY);
}

static bool has(int fd, __u32 ifindex, __u32 netns, __u64 cgroup)
{
	struct hbm_class_key k = { ifindex, netns, cgroup };
	struct hbm_class_rate v;	/* the larger of the two values */

	return !bpf_map_lookup_elem(fd, &k, &v);
}

static void test_levels(void)
{
	struct hbm_dev_key lo = { 1, 0 }, other;
	struct hbm_class_key skip;
	__u32 levels;

	if (!setup())
		return;
	lo.netns = own;
	other = (struct hbm_dev_key){ 1, own + 1 };
	put(1, own, 100, 1, 10000000);
	put(1, own, 101, 3, 20000000);
	put(1, own, 102, 3, 30000000);
	put(1, own + 1, 103, 5, 40000000);
	ASSERT_OK(hbm_class_levels(&maps, &lo, NULL, &levels), "levels");
	ASSERT_EQ(levels, (1U << 1) | (1U << 3), "lo: levels 1 and 3");
	ASSERT_OK(hbm_class_levels(&maps, &other, NULL, &levels), "other");
	ASSERT_EQ(levels, 1U << 5, "the other netns' device: level 5");
	skip = (struct hbm_class_key){ 1, own, 101 };
	ASSERT_OK(hbm_class_levels(&maps, &lo, &skip, &levels), "skip");
	ASSERT_EQ(levels, (1U << 1) | (1U << 3),
		  "without one of level 3: another keeps it");
	skip.cgroup = 100;
	ASSERT_OK(hbm_class_levels(&maps, &lo, &skip, &levels), "skip");
	ASSERT_EQ(levels, 1U << 3, "without the one of level 1");
}

static void test_del_dev(void)
{
	struct hbm_dev_key lo = { 1, 0 };

	if (!setup())
		return;
	lo.netns = own;
	put(1, own, 100, 1, 10000000);
	put(1, own, 101, 2, 10000000);
	put(1, own + 1, 100, 1, 10000000);
	put(2, own, 100, 1, 10000000);
	ASSERT_OK(hbm_classes_del_dev(&maps, &lo), "delete lo's");
	ASSERT_FALSE(has(maps.class_configs, 1, own, 100), "lo's config");
	ASSERT_FALSE(has(maps.class_rates, 1, own, 101), "lo's rate");
	ASSERT_TRUE(has(maps.class_configs, 1, own + 1, 100),
		    "another netns' ifindex 1 stays");
	ASSERT_TRUE(has(maps.class_rates, 2, own, 100), "ifindex 2 stays");
}

/* The cgroup2 root's id, or 0 where cgroup2 is not mounted. */
static __u64 root_cgroup(char *path, size_t len)
{
	char at[PATH_MAX + 16];
	struct hbm_cgroups cgs;
	struct stat st;
	__u64 id = 0;

	if (!hbm_cgroups_open(&cgs)) {
		snprintf(at, sizeof(at), "%s%s", cgs.prefix, cgs.mnt);
		if (stat(at, &st))
			goto out;
		id = st.st_ino;
		snprintf(path, len, "%s", cgs.mnt);
	}
out:
	hbm_cgroups_close(&cgs);
	return id;
}

static void test_prune(void)
{
	struct hbm_dev_key gone = { GONE_IFINDEX, 0 }, lo = { 1, 0 };
	struct hbm_dev_key other = { GONE_IFINDEX, 0 };
	struct hbm_class_key orphan = { 1, 0, 4242 };
	struct hbm_class_rate r = {};
	struct hbm_config cfg;
	char path[PATH_MAX];
	__u64 root = root_cgroup(path, sizeof(path));

	if (!setup())
		return;
	gone.netns = lo.netns = orphan.netns = own;
	/* A device of ours that is gone, its configuration saying level 1. */
	hbm_config_default(&cfg);
	cfg.class_levels = 1U << 1;
	bpf_map_update_elem(maps.config, &gone, &cfg, BPF_ANY);
	put(GONE_IFINDEX, own, root ? root : 100, 1, 10000000);
	/* One of another netns: its devices can't be seen from here. */
	put(GONE_IFINDEX, own + 1, root ? root : 100, 1, 10000000);
	other.netns = own + 1;
	bpf_map_update_elem(maps.config, &other, &cfg, BPF_ANY);
	/* lo: the root's class stays, a gone cgroup's goes (if known). */
	cfg.class_levels = (1U << 0) | (1U << 2);
	bpf_map_update_elem(maps.config, &lo, &cfg, BPF_ANY);
	put(1, own, root ? root : 100, 0, 10000000);
	put(1, own, GONE_CGROUP, 2, 10000000);
	bpf_map_update_elem(maps.class_rates, &orphan, &r, BPF_ANY);

	hbm_classes_prune(&maps);
	ASSERT_FALSE(has(maps.class_configs, GONE_IFINDEX, own,
			 root ? root : 100), "a gone device's class");
	ASSERT_FALSE(has(maps.class_rates, GONE_IFINDEX, own,
			 root ? root : 100), "a gone device's rate");
	ASSERT_ERR(bpf_map_lookup_elem(maps.config, &gone, &cfg),
		   "a gone device's configuration");
	ASSERT_OK(bpf_map_lookup_elem(maps.config, &other, &cfg),
		  "another netns' configuration stays");
	ASSERT_TRUE(has(maps.class_configs, GONE_IFINDEX, own + 1,
			root ? root : 100), "another netns' class stays");
	ASSERT_FALSE(has(maps.class_rates, 1, own, 4242),
		     "a rate state without a class");
	ASSERT_TRUE(has(maps.class_configs, 1, own, root ? root : 100),
		    "lo's class of a cgroup that exists (or may)");
	if (!root) {
		printf("# no cgroup2 mount here: cgroups are kept\n");
		ASSERT_TRUE(has(maps.class_configs, 1, own, GONE_CGROUP),
			    "a cgroup that can't be looked up is kept");
		return;
	}
	ASSERT_FALSE(has(maps.class_configs, 1, own, GONE_CGROUP),
		     "a gone cgroup's class");
	ASSERT_FALSE(has(maps.class_rates, 1, own, GONE_CGROUP),
		     "a gone cgroup's rate");
	if (ASSERT_OK(bpf_map_lookup_elem(maps.config, &lo, &cfg), "lo"))
		ASSERT_EQ(cfg.class_levels, 1U << 0, "lo keeps level 0 only");
}

/* Class @e's JSON object, as hbm_json_write() writes it, into @buf. */
static void class_json(const struct hbm_class_ent *e, bool with_dev,
		       char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	buf[0] = '\0';
	if (!f)
		return;
	if (hbm_json_write(f, hbm_class_json(e, with_dev, own)))
		snprintf(buf, len, "(failed: %s)", hbm_reason());
	fclose(f);
}

static void test_get_print(void)
{
	struct hbm_dev_key lo = { 1, 0 };
	struct hbm_class_ent *e = NULL;
	char path[PATH_MAX], out[2048], want[2048];
	__u64 root = root_cgroup(path, sizeof(path));
	int n = 0;

	if (!setup())
		return;
	lo.netns = own;
	put(1, own, GONE_CGROUP, 2, 10000000);
	put(1, own + 1, 7, 1, 30000000);
	put(2, own, 8, 1, 40000000);
	if (root)
		put(1, own, root, 0, 20000000);
	if (!ASSERT_OK(hbm_classes_get(&maps, &lo, &e, &n), "lo's"))
		return;
	if (!ASSERT_EQ(n, root ? 2 : 1, "lo's classes"))
		goto out;
	if (root) {
		ASSERT_STREQ(e[0].path, path, "the root's path, first");
		ASSERT_U64_EQ(e[0].rate.packets, 20, "its rate state");
	}
	ASSERT_TRUE(!e[n - 1].path, "an unknown path: NULL, last");
	class_json(&e[n - 1], true, out, sizeof(out));
	snprintf(want, sizeof(want),
		 "{\"dev\":\"lo\",\"ifindex\":1,\"netns\":%u,\"cgroup\":null,\"cgroup_id\":%llu,\"level\":2,\"config\":{\"rate_bps\":10000000,\"burst_ns\":100000,\"mark_ns\":50000,\"drop_ns\":500000,\"drop_large_ns\":480000},\"stats\":{\"enqueued\":0,\"packets\":10,\"bytes\":0,\"marks\":0,\"cn\":0,\"ce\":0,\"guard_saves\":0,\"cn_spared\":0,\"delayed\":0,\"vq_delay_ns\":0,\"drops\":{\"threshold\":0,\"nontcp\":0,\"horizon\":0,\"limit\":0,\"flow_limit\":0,\"nomem\":0,\"total\":0}}}\n",
		 own, GONE_CGROUP);
	ASSERT_STREQ(out, want, "class list's object");
	class_json(&e[n - 1], false, out, sizeof(out));
	ASSERT_TRUE(!strncmp(out, "{\"cgroup\":null,", 15),
		    "show's object starts with the cgroup");
	hbm_classes_free(e, n);
	e = NULL;
	n = 0;
	ASSERT_OK(hbm_classes_get(&maps, NULL, &e, &n), "all");
	if (ASSERT_EQ(n, root ? 4 : 3, "every device's")) {
		ASSERT_EQ(e[n - 1].key.netns, own + 1, "ours first");
		ASSERT_EQ(e[n - 2].key.ifindex, 2, "then by ifindex");
	}
out:
	hbm_classes_free(e, n);
}

HBM_TEST_MAIN(HBM_TEST(test_levels), HBM_TEST(test_del_dev),
	      HBM_TEST(test_prune), HBM_TEST(test_get_print))
