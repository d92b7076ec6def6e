// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests for loader/cgroup.c: mountinfo lines, paths under a mount,
 * levels, a class's PATH joined to the mount; and, where this host has
 * cgroup2 mounted, its root resolved and found by id both ways (file
 * handle and walk). Nothing is created or changed.
 */
#include <errno.h>
#include <sys/stat.h>

#include "../hbm_test.h"
#include "../../loader/cgroup.h"

static void test_mountinfo(void)
{
	const char *root, *mnt, *type;
	char l1[] = "41 31 0:38 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
	char l2[] = "41 31 0:38 /a\\040b /mnt/my\\040cg rw - cgroup2 none rw";
	char l3[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:2 - ext3 /dev/root rw";
	char l4[] = "36 35 98:0 / /x rw";
	char l5[] = "36 35";

	if (ASSERT_OK(hbm_mountinfo_parse(l1, &root, &mnt, &type), "l1")) {
		ASSERT_STREQ(root, "/", "l1 root");
		ASSERT_STREQ(mnt, "/sys/fs/cgroup", "l1 mount point");
		ASSERT_STREQ(type, "cgroup2", "l1 type");
	}
	if (ASSERT_OK(hbm_mountinfo_parse(l2, &root, &mnt, &type), "l2")) {
		ASSERT_STREQ(root, "/a b", "l2: \\040 is a space");
		ASSERT_STREQ(mnt, "/mnt/my cg", "l2 mount point");
		ASSERT_STREQ(type, "cgroup2", "l2: no optional field");
	}
	if (ASSERT_OK(hbm_mountinfo_parse(l3, &root, &mnt, &type), "l3"))
		ASSERT_STREQ(type, "ext3", "l3: two optional fields");
	ASSERT_EQ(hbm_mountinfo_parse(l4, &root, &mnt, &type), -EINVAL,
		  "no separator");
	ASSERT_EQ(hbm_mountinfo_parse(l5, &root, &mnt, &type), -EINVAL,
		  "too short");
}

static void test_path_under(void)
{
	ASSERT_STREQ(hbm_path_under("/sys/fs/cgroup", "/sys/fs/cgroup/a/b"),
		     "a/b", "below");
	ASSERT_STREQ(hbm_path_under("/sys/fs/cgroup", "/sys/fs/cgroup"), "",
		     "the mount itself");
	ASSERT_STREQ(hbm_path_under("/sys/fs/cgroup/", "/sys/fs/cgroup/a"),
		     "a", "a trailing slash");
	ASSERT_TRUE(!hbm_path_under("/sys/fs/cgroup", "/sys/fs/cgroupX/a"),
		    "a component boundary");
	ASSERT_TRUE(!hbm_path_under("/sys/fs/cgroup", "/sys/fs"), "above");
	ASSERT_TRUE(!hbm_path_under("/sys/fs/cgroup", "/tmp"), "elsewhere");
	ASSERT_STREQ(hbm_path_under("/", "/a/b"), "a/b", "under /");
	ASSERT_STREQ(hbm_path_under("/", "/"), "", "/ itself");
}

static void test_depth_level(void)
{
	ASSERT_EQ(hbm_path_depth(""), 0, "empty");
	ASSERT_EQ(hbm_path_depth("/"), 0, "/");
	ASSERT_EQ(hbm_path_depth("a"), 1, "a");
	ASSERT_EQ(hbm_path_depth("a/b"), 2, "a/b");
	ASSERT_EQ(hbm_path_depth("/a//b/"), 2, "/a//b/");
	ASSERT_EQ(hbm_cgroup_level("/", "/sys/fs/cgroup", "/sys/fs/cgroup"), 0,
		  "the root is level 0");
	ASSERT_EQ(hbm_cgroup_level("/", "/sys/fs/cgroup",
				   "/sys/fs/cgroup/a/b"), 2,
		  "/sys/fs/cgroup/a/b is 2");
	ASSERT_EQ(hbm_cgroup_level("/", "/sys/fs/cgroup",
				   "/sys/fs/cgroup/system.slice/tenant a.slice"),
		  2, "a space is no separator");
	ASSERT_EQ(hbm_cgroup_level("/system.slice", "/mnt/cg", "/mnt/cg/x"), 2,
		  "a mount of a subtree counts its root");
	ASSERT_EQ(hbm_cgroup_level("/", "/sys/fs/cgroup/unified",
				   "/sys/fs/cgroup/unified/a"), 1,
		  "the hybrid layout's mount");
	ASSERT_EQ(hbm_cgroup_level("/", "/sys/fs/cgroup", "/tmp/a"), -1,
		  "not under the mount");
}

static void test_join(void)
{
	char buf[64], tiny[8];

	ASSERT_OK(hbm_cgroup_join(buf, sizeof(buf), "/sys/fs/cgroup",
				  "system.slice/a.slice"), "relative");
	ASSERT_STREQ(buf, "/sys/fs/cgroup/system.slice/a.slice", "relative");
	ASSERT_OK(hbm_cgroup_join(buf, sizeof(buf), "/sys/fs/cgroup",
				  "/sys/fs/cgroup/x"), "absolute");
	ASSERT_STREQ(buf, "/sys/fs/cgroup/x", "absolute as is");
	ASSERT_OK(hbm_cgroup_join(buf, sizeof(buf), "/", "x"), "under /");
	ASSERT_STREQ(buf, "/x", "under /: one slash");
	ASSERT_EQ(hbm_cgroup_join(tiny, sizeof(tiny), "/sys/fs/cgroup", "a"),
		  -ENAMETOOLONG, "too long");
}

static void test_normalize(void)
{
	char buf[64], tiny[4];

	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf), "/sys/fs/cgroup/a"),
		  "plain");
	ASSERT_STREQ(buf, "/sys/fs/cgroup/a", "plain as is");
	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf),
				     "//sys/./fs/cgroup//a/b/../c/"), "messy");
	ASSERT_STREQ(buf, "/sys/fs/cgroup/a/c", "messy, cleaned");
	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf), "/a/b/c/../.."),
		  "two up");
	ASSERT_STREQ(buf, "/a", "two components up");
	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf),
				     "/sys/fs/cgroup/xx/y/../../z"), "up, on");
	ASSERT_STREQ(buf, "/sys/fs/cgroup/z", "up past a longer component");
	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf), "/a/../../.."), "up");
	ASSERT_STREQ(buf, "/", "nothing above /");
	ASSERT_OK(hbm_path_normalize(buf, sizeof(buf), "/a b/\"c\"/..."),
		  "odd names");
	ASSERT_STREQ(buf, "/a b/\"c\"/...", "odd names as is");
	ASSERT_EQ(hbm_path_normalize(tiny, sizeof(tiny), "/abcd"),
		  -ENAMETOOLONG, "too long");
}

/* The cgroup2 root of this host, if it has one: level 0, its own id. */
static void test_live(void)
{
	char path[PATH_MAX], at[PATH_MAX + 16];
	struct hbm_cgroups cgs;
	struct hbm_cgroup cg;
	struct stat st;

	if (hbm_cgroups_open(&cgs)) {
		printf("# no cgroup2 mount here: the live part skipped\n");
		return;
	}
	if (!ASSERT_OK(hbm_cgroup_resolve(".", &cg), "resolve \".\""))
		goto out;
	ASSERT_STREQ(cg.path, cgs.mnt, "\".\" is the mount");
	ASSERT_EQ(cg.level, 0, "the mount is the root");
	printf("# cgroup2 on %s%s\n", cgs.prefix, cgs.mnt);
	snprintf(at, sizeof(at), "%s%s", cgs.prefix, cgs.mnt);
	if (ASSERT_OK(stat(at, &st), "stat"))
		ASSERT_U64_EQ(cg.id, st.st_ino, "the id is the inode number");
	ASSERT_EQ(hbm_cgroup_resolve(cgs.mnt, &cg), 0, "absolute");
	ASSERT_STREQ(cg.path, cgs.mnt, "absolute: the mount");
	ASSERT_EQ(hbm_cgroup_resolve("/proc", &cg), -EMEDIUMTYPE,
		  "not cgroup2");
	ASSERT_EQ(hbm_cgroup_resolve("cgroup.procs", &cg), -ENOTDIR,
		  "a file");
	ASSERT_EQ(hbm_cgroup_resolve("no-such-cgroup-hbm", &cg), -ENOENT,
		  "missing");
	ASSERT_EQ(hbm_cgroups_exists(&cgs, st.st_ino), 1, "the root exists");
	if (ASSERT_OK(hbm_cgroups_path(&cgs, st.st_ino, path, sizeof(path)),
		      "its path"))
		ASSERT_STREQ(path, cgs.mnt, "its path is the mount");
	printf("# by file handle: %s\n", cgs.by_handle == 1 ? "yes" : "no");
	/* An id kernfs never gave: generation 0xffff, inode 1. */
	ASSERT_EQ(hbm_cgroups_exists(&cgs, 0xffff00000001ULL), 0, "gone");
	ASSERT_EQ(hbm_cgroups_path(&cgs, 0xffff00000001ULL, path,
				   sizeof(path)), -ENOENT, "gone: no path");
	/* The walk, as where open_by_handle_at is refused. */
	cgs.by_handle = 0;
	ASSERT_EQ(hbm_cgroups_exists(&cgs, st.st_ino), 1, "walk: exists");
	if (ASSERT_OK(hbm_cgroups_path(&cgs, st.st_ino, path, sizeof(path)),
		      "walk: its path"))
		ASSERT_STREQ(path, cgs.mnt, "walk: its path is the mount");
	ASSERT_EQ(hbm_cgroups_exists(&cgs, 0xffff00000001ULL), 0,
		  "walk: gone");
out:
	hbm_cgroups_close(&cgs);
}

HBM_TEST_MAIN(HBM_TEST(test_mountinfo), HBM_TEST(test_path_under),
	      HBM_TEST(test_depth_level), HBM_TEST(test_join),
	      HBM_TEST(test_normalize), HBM_TEST(test_live))
