/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 directories (cgroup.c), for the classes: a PATH as `class`
 * takes it resolved to its cgroup id and level, and ids back to paths, or
 * found gone.
 *
 * A cgroup's id, the one the kernel gives its sockets (bpf_sk_cgroup_id),
 * is the inode number of its directory. kernfs ids are 64 bits: the inode
 * number in the low half, and in the high half a generation that grows
 * each time the inode numbers wrap around, so an id is never another
 * cgroup's later and a class can be kept by id alone.
 *
 * The cgroup2 mount is found in /proc/self/mountinfo (/sys/fs/cgroup
 * usually). Levels count from the hierarchy's root (level 0), as the
 * kernel's do: the root of the mount is taken from mountinfo, so a mount
 * of a subtree counts right. A cgroup namespace's root is not the
 * hierarchy's, and bpf-hbm is meant to run in the initial one.
 *
 * In a mount namespace without cgroup2 (`ip netns exec` remounts /sys,
 * and /sys/fs/cgroup goes with it), PID 1's is used, as pins.c does for
 * bpffs: its mountinfo, and its paths reached through /proc/1/root. Paths
 * are PID 1's then, given and shown alike ("/sys/fs/cgroup/a").
 */
#ifndef HBM_CGROUP_H
#define HBM_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct hbm_cgroup {
	char path[PATH_MAX];	/* canonical: realpath() */
	__u64 id;		/* the directory's inode number */
	__u32 level;		/* below the hierarchy's root, which is 0 */
};

/* A cgroup directory found by walking the tree: see hbm_cgroups. */
struct hbm_cgroup_ino {
	__u64 id;
	char *path;
};

/*
 * Ids to paths, through the cgroup2 mount: open_by_handle_at() on it
 * (needs CAP_DAC_READ_SEARCH), or where that is refused, one walk of the
 * tree (nftw), looked up by id.
 */
struct hbm_cgroups {
	int mnt_fd;		/* the cgroup2 mount, or -1 */
	char mnt[PATH_MAX];	/* its path, as shown */
	char prefix[16];	/* "/proc/1/root" where it is PID 1's, or "" */
	char mnt_seen[PATH_MAX];	/* mnt_fd's, as the kernel says it */
	int by_handle;		/* 1: works, 0: refused (walk), -1: ? */
	bool walked;		/* walk[] holds the tree, or walk_err */
	int walk_err;		/* the walk's error, if it failed */
	struct hbm_cgroup_ino *walk;	/* sorted by id */
	size_t n;
};

/*
 * Split a line of /proc/self/mountinfo in place: the root of the mount
 * within its filesystem, the mount point and the filesystem type, their
 * octal escapes ("\040" for a space) undone. Returns 0, or -EINVAL if the
 * line is not one.
 */
int hbm_mountinfo_parse(char *line, const char **root, const char **mnt,
			const char **fstype);

/*
 * @path relative to @dir, without a leading '/' ("" for @dir itself), if
 * @path is @dir or below it; else NULL. Both absolute, without "." or
 * ".." components; @dir may be "/" and may end with '/'.
 */
const char *hbm_path_under(const char *dir, const char *path);

/*
 * @path (absolute) without "." and ".." components or repeated slashes,
 * into @buf: what realpath() gives on a filesystem without symlinks, as
 * cgroupfs is. Returns 0, or -ENAMETOOLONG.
 */
int hbm_path_normalize(char *buf, size_t len, const char *path);

/* The components of @rel ("a/b" and "/a//b/" are 2; "" and "/" are 0). */
unsigned int hbm_path_depth(const char *rel);

/*
 * The level of the cgroup at @path (canonical) under the cgroup2 mount at
 * @mnt, whose root in the hierarchy is @root (mountinfo's: "/" for the
 * whole of it): its depth below @mnt plus @root's. -1 if @path is not
 * under @mnt. /sys/fs/cgroup/a/b is at level 2 where /sys/fs/cgroup is the
 * whole hierarchy.
 */
int hbm_cgroup_level(const char *root, const char *mnt, const char *path);

/*
 * @path as a cgroup PATH means it: itself if absolute, else @mnt + "/" +
 * @path. Returns 0, or -ENAMETOOLONG if @buf cannot hold it.
 */
int hbm_cgroup_join(char *buf, size_t len, const char *mnt, const char *path);

/*
 * Resolve PATH (absolute, or relative to the cgroup2 mount) to an existing
 * cgroup v2 directory. Returns 0, -ENOENT (it does not exist, or no
 * cgroup2 is mounted), -ENOTDIR (a file), -EMEDIUMTYPE (not on cgroup2)
 * or another negative errno, with a reason.
 */
int hbm_cgroup_resolve(const char *path, struct hbm_cgroup *cg);

int hbm_cgroups_open(struct hbm_cgroups *cgs);
void hbm_cgroups_close(struct hbm_cgroups *cgs);

/* 1: the cgroup @id exists; 0: it is gone; a negative errno: can't tell. */
int hbm_cgroups_exists(struct hbm_cgroups *cgs, __u64 id);

/* The path of cgroup @id into @buf: 0, -ENOENT if gone, or an errno. */
int hbm_cgroups_path(struct hbm_cgroups *cgs, __u64 id, char *buf,
		     size_t len);

#endif /* HBM_CGROUP_H */
