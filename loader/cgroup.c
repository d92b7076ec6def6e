// SPDX-License-Identifier: GPL-2.0
/* cgroup v2 directories: paths to ids and levels, ids to paths (cgroup.h). */
#define _GNU_SOURCE		/* open_by_handle_at(), nftw() */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include "cgroup.h"
#include "util.h"

/* include/linux/exportfs.h's, which is not in the uapi: kernfs's u64 id. */
#define HBM_FILEID_KERNFS	0xfe

#define HBM_MOUNTINFO		"/proc/self/mountinfo"
#define HBM_INIT_MOUNTINFO	"/proc/1/mountinfo"
#define HBM_INIT_ROOT		"/proc/1/root"

/* Undo mountinfo's octal escapes ("\040") in place. */
static void hbm_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 |
			       (s[3] - '0');
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/*
 * "36 35 98:0 /root /mnt rw,noatime shared:1 - cgroup2 cgroup2 rw": the
 * optional fields before " - " vary in number, so the type is found after
 * the separator.
 */
int hbm_mountinfo_parse(char *line, const char **root, const char **mnt,
			const char **fstype)
{
	char *f[6], *p = line, *save = NULL;
	int i;

	line[strcspn(line, "\n")] = '\0';
	for (i = 0; i < 6; i++) {
		f[i] = strtok_r(i ? NULL : p, " ", &save);
		if (!f[i])
			return -EINVAL;
	}
	/* f[5] is the mount options; then optional fields up to "-". */
	while ((p = strtok_r(NULL, " ", &save)) && strcmp(p, "-"))
		;
	if (!p)
		return -EINVAL;
	p = strtok_r(NULL, " ", &save);
	if (!p)
		return -EINVAL;
	hbm_unescape(f[3]);
	hbm_unescape(f[4]);
	*root = f[3];
	*mnt = f[4];
	*fstype = p;
	return 0;
}

const char *hbm_path_under(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		n = 0;		/* everything is under "/" */
	if (strncmp(dir, path, n) || (path[n] && path[n] != '/'))
		return NULL;
	path += n;
	while (*path == '/')
		path++;
	return path;
}

int hbm_path_normalize(char *buf, size_t len, const char *path)
{
	size_t n = 0, c;

	if (len < 2)
		return -ENAMETOOLONG;
	while (*path) {
		path += strspn(path, "/");
		c = strcspn(path, "/");
		if (!c || (c == 1 && path[0] == '.')) {
			path += c;
			continue;
		}
		if (c == 2 && path[0] == '.' && path[1] == '.') {
			/* Back to the last component's '/' (buf[n] is past it). */
			if (n)
				n--;
			while (n > 0 && buf[n] != '/')
				n--;
			path += c;
			continue;
		}
		if (n + 1 + c >= len)
			return -ENAMETOOLONG;
		buf[n++] = '/';
		memcpy(buf + n, path, c);
		n += c;
		path += c;
	}
	if (!n)
		buf[n++] = '/';
	buf[n] = '\0';
	return 0;
}

unsigned int hbm_path_depth(const char *rel)
{
	unsigned int n = 0;

	while (*rel) {
		rel += strspn(rel, "/");
		if (!*rel)
			break;
		n++;
		rel += strcspn(rel, "/");
	}
	return n;
}

int hbm_cgroup_level(const char *root, const char *mnt, const char *path)
{
	const char *rel = hbm_path_under(mnt, path);

	if (!rel)
		return -1;
	return hbm_path_depth(root) + hbm_path_depth(rel);
}

int hbm_cgroup_join(char *buf, size_t len, const char *mnt, const char *path)
{
	int n;

	if (path[0] == '/')
		n = snprintf(buf, len, "%s", path);
	else
		n = snprintf(buf, len, "%s%s%s", mnt,
			     mnt[0] && mnt[strlen(mnt) - 1] == '/' ? "" : "/",
			     path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The cgroup2 mounts of /proc/self/mountinfo (or PID 1's). */
struct hbm_mounts {
	struct {
		char *root;	/* in the hierarchy: "/" for all of it */
		char *mnt;
	} *m;
	int n;
	const char *prefix;	/* "" or HBM_INIT_ROOT: see cgroup.h */
};

static void hbm_mounts_free(struct hbm_mounts *ms)
{
	int i;

	for (i = 0; i < ms->n; i++) {
		free(ms->m[i].root);
		free(ms->m[i].mnt);
	}
	free(ms->m);
	ms->m = NULL;
	ms->n = 0;
}

static bool hbm_own_mntns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/mnt", &self) || stat("/proc/1/ns/mnt", &init))
		return true;	/* can't tell: assume the usual */
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

static int hbm_mounts_parse(struct hbm_mounts *ms, const char *file)
{
	const char *root, *mnt, *type;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	void *tmp;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return hbm_set_reason(-errno, "couldn't read %s: %s", file,
				      strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		if (hbm_mountinfo_parse(line, &root, &mnt, &type) ||
		    strcmp(type, "cgroup2"))
			continue;
		tmp = realloc(ms->m, (ms->n + 1) * sizeof(*ms->m));
		if (!tmp) {
			err = hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
			break;
		}
		ms->m = tmp;
		ms->m[ms->n].root = strdup(root);
		ms->m[ms->n].mnt = strdup(mnt);
		ms->n++;
		if (!ms->m[ms->n - 1].root || !ms->m[ms->n - 1].mnt) {
			err = hbm_set_reason(-ENOMEM, "%s", strerror(ENOMEM));
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

static int hbm_mounts_read(struct hbm_mounts *ms)
{
	int err;

	ms->m = NULL;
	ms->n = 0;
	ms->prefix = "";
	err = hbm_mounts_parse(ms, HBM_MOUNTINFO);
	if (!err && !ms->n && !hbm_own_mntns() &&
	    !hbm_mounts_parse(ms, HBM_INIT_MOUNTINFO) && ms->n)
		ms->prefix = HBM_INIT_ROOT;
	if (err)
		hbm_mounts_free(ms);
	return err;
}

/*
 * The mount a relative PATH is under: /sys/fs/cgroup if it is a mount of
 * the whole hierarchy, else the first such mount, else the first of any.
 * -1 if there is none.
 */
static int hbm_mounts_default(const struct hbm_mounts *ms)
{
	int i, first = -1;

	for (i = 0; i < ms->n; i++) {
		if (strcmp(ms->m[i].root, "/"))
			continue;
		if (!strcmp(ms->m[i].mnt, "/sys/fs/cgroup"))
			return i;
		if (first < 0)
			first = i;
	}
	return first >= 0 ? first : ms->n ? 0 : -1;
}

/* Where @path, canonical, is: the mount with the longest mount point. */
static int hbm_mounts_of(const struct hbm_mounts *ms, const char *path)
{
	size_t best_len = 0;
	int i, best = -1;

	for (i = 0; i < ms->n; i++) {
		if (!hbm_path_under(ms->m[i].mnt, path) ||
		    (best >= 0 && strlen(ms->m[i].mnt) < best_len))
			continue;
		best = i;
		best_len = strlen(ms->m[i].mnt);
	}
	return best;
}

int hbm_cgroup_resolve(const char *path, struct hbm_cgroup *cg)
{
	char joined[PATH_MAX], at[PATH_MAX + 16];
	struct hbm_mounts ms;
	struct statfs sfs;
	struct stat st;
	int err, def, m;

	err = hbm_mounts_read(&ms);
	if (err)
		return err;
	def = hbm_mounts_default(&ms);
	if (path[0] != '/' && def < 0) {
		err = hbm_set_reason(-ENOENT, "no cgroup2 hierarchy is mounted (none in %s) for %s to be relative to",
				     HBM_MOUNTINFO, path);
		goto out;
	}
	err = hbm_cgroup_join(joined, sizeof(joined),
			      def >= 0 ? ms.m[def].mnt : "/", path);
	if (err) {
		hbm_set_reason(err, "%s: %s", path, strerror(-err));
		goto out;
	}
	/* realpath() would read /proc/1/root as "/": ours. */
	if (ms.prefix[0]) {
		err = hbm_path_normalize(cg->path, sizeof(cg->path), joined);
		if (err) {
			hbm_set_reason(err, "%s: %s", path, strerror(-err));
			goto out;
		}
	} else if (!realpath(joined, cg->path)) {
		cg->path[0] = '\0';
	}
	snprintf(at, sizeof(at), "%s%s", ms.prefix, cg->path);
	if (!cg->path[0] || stat(at, &st)) {
		err = -errno;
		if (err == -ENOENT)
			hbm_set_reason(err, "%s does not exist", joined);
		else
			hbm_set_reason(err, "%s: %s", joined, strerror(-err));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = hbm_set_reason(-ENOTDIR, "%s is not a directory (a cgroup is one)",
				     cg->path);
		goto out;
	}
	if (statfs(at, &sfs)) {
		err = hbm_set_reason(-errno, "%s: %s", cg->path,
				     strerror(errno));
		goto out;
	}
	m = hbm_mounts_of(&ms, cg->path);
	if (sfs.f_type != CGROUP2_SUPER_MAGIC || m < 0) {
		if (def >= 0)
			err = hbm_set_reason(-EMEDIUMTYPE, "%s is not a cgroup v2 directory (cgroup2 is mounted on %s)",
					     cg->path, ms.m[def].mnt);
		else
			err = hbm_set_reason(-EMEDIUMTYPE, "%s is not a cgroup v2 directory (no cgroup2 is mounted)",
					     cg->path);
		goto out;
	}
	cg->id = st.st_ino;
	cg->level = hbm_cgroup_level(ms.m[m].root, ms.m[m].mnt, cg->path);
out:
	hbm_mounts_free(&ms);
	return err;
}

/* What /proc/self/fd says @fd is, or "". */
static int hbm_fd_path(int fd, char *buf, size_t len)
{
	char link[32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? 0 : -errno;
}

int hbm_cgroups_open(struct hbm_cgroups *cgs)
{
	char path[PATH_MAX + 16];
	struct hbm_mounts ms;
	int err, def;

	memset(cgs, 0, sizeof(*cgs));
	cgs->mnt_fd = -1;
	cgs->by_handle = -1;
	err = hbm_mounts_read(&ms);
	if (err)
		return err;
	def = hbm_mounts_default(&ms);
	if (def < 0) {
		err = hbm_set_reason(-ENOENT, "no cgroup2 hierarchy is mounted (none in %s)",
				     HBM_MOUNTINFO);
		goto out;
	}
	snprintf(cgs->mnt, sizeof(cgs->mnt), "%s", ms.m[def].mnt);
	snprintf(cgs->prefix, sizeof(cgs->prefix), "%s", ms.prefix);
	/* A walk of a subtree cannot tell that a cgroup outside it is gone. */
	if (strcmp(ms.m[def].root, "/")) {
		cgs->walked = true;
		cgs->walk_err = -EOPNOTSUPP;
	}
	snprintf(path, sizeof(path), "%s%s", cgs->prefix, cgs->mnt);
	cgs->mnt_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgs->mnt_fd < 0)
		err = hbm_set_reason(-errno, "couldn't open %s: %s", cgs->mnt,
				     strerror(errno));
	else
		hbm_fd_path(cgs->mnt_fd, cgs->mnt_seen, sizeof(cgs->mnt_seen));
out:
	hbm_mounts_free(&ms);
	return err;
}

void hbm_cgroups_close(struct hbm_cgroups *cgs)
{
	size_t i;

	if (cgs->mnt_fd >= 0)
		close(cgs->mnt_fd);
	for (i = 0; i < cgs->n; i++)
		free(cgs->walk[i].path);
	free(cgs->walk);
	memset(cgs, 0, sizeof(*cgs));
	cgs->mnt_fd = -1;
}

/*
 * The cgroup's directory, opened by its id: the id is the kernfs file
 * handle (FILEID_KERNFS, 8 bytes). Returns an fd, or a negative errno:
 * -ENOENT or -ESTALE when no such cgroup exists.
 */
static int hbm_open_id(int mnt_fd, __u64 id)
{
	char buf[sizeof(struct file_handle) + sizeof(id)]
		__attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)buf;
	int fd;

	fh->handle_bytes = sizeof(id);
	fh->handle_type = HBM_FILEID_KERNFS;
	memcpy(fh->f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mnt_fd, fh, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* nftw() takes no context: the walk in progress and its array's size. */
static struct hbm_cgroups *hbm_walking;
static size_t hbm_walk_cap;

static int hbm_walk_one(const char *fpath, const struct stat *sb, int type,
			struct FTW *ftw)
{
	struct hbm_cgroups *cgs = hbm_walking;
	struct hbm_cgroup_ino *tmp;

	/*
	 * A directory that cannot be read hides its descendants: the walk
	 * cannot tell that they are gone.
	 */
	if (type == FTW_DNR)
		return -EIO;
	if (type != FTW_D)
		return 0;	/* the cgroups' interface files */
	if (cgs->n == hbm_walk_cap) {
		hbm_walk_cap = hbm_walk_cap ? 2 * hbm_walk_cap : 64;
		tmp = realloc(cgs->walk, hbm_walk_cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		cgs->walk = tmp;
	}
	cgs->walk[cgs->n].id = sb->st_ino;
	cgs->walk[cgs->n].path = strdup(fpath + strlen(cgs->prefix));
	if (!cgs->walk[cgs->n].path)
		return -ENOMEM;
	cgs->n++;
	return 0;
}

static int hbm_ino_cmp(const void *a, const void *b)
{
	const struct hbm_cgroup_ino *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every cgroup of the tree, once, where open_by_handle_at is refused. */
static int hbm_cgroups_walk(struct hbm_cgroups *cgs)
{
	char path[PATH_MAX + 16];
	int ret;

	if (cgs->walked)
		return cgs->walk_err;
	cgs->walked = true;
	hbm_walking = cgs;
	hbm_walk_cap = 0;
	snprintf(path, sizeof(path), "%s%s", cgs->prefix, cgs->mnt);
	ret = nftw(path, hbm_walk_one, 16, FTW_PHYS | FTW_MOUNT);
	hbm_walking = NULL;
	if (ret) {
		/*
		 * Never -ENOENT, which would say every cgroup is gone: nftw
		 * gives up with ENOENT when a cgroup goes while it walks, and
		 * an incomplete walk tells nothing (prune deletes nothing).
		 */
		cgs->walk_err = ret < 0 && ret != -1 ? ret : -errno;
		if (!cgs->walk_err || cgs->walk_err == -ENOENT)
			cgs->walk_err = -EIO;
		return cgs->walk_err;
	}
	if (cgs->n)
		qsort(cgs->walk, cgs->n, sizeof(*cgs->walk), hbm_ino_cmp);
	return 0;
}

/* The cgroup @id: 0 (its path in @buf, unless NULL), -ENOENT, an errno. */
static int hbm_cgroups_find(struct hbm_cgroups *cgs, __u64 id, char *buf,
			    size_t len)
{
	struct hbm_cgroup_ino want = { .id = id }, *found;
	char seen[PATH_MAX];
	const char *rel;
	int fd, err;

	if (cgs->mnt_fd < 0)
		return -EBADF;
	if (cgs->by_handle) {
		fd = hbm_open_id(cgs->mnt_fd, id);
		if (fd == -ENOENT || fd == -ESTALE)
			return -ENOENT;
		if (fd >= 0) {
			cgs->by_handle = 1;
			err = buf ? hbm_fd_path(fd, seen, sizeof(seen)) : 0;
			close(fd);
			if (!buf || err)
				return err;
			/*
			 * The kernel says it from the root of all mounts, not
			 * PID 1's where the mount is PID 1's: rebased on the
			 * mount's own, it is as the mount is shown.
			 */
			rel = cgs->mnt_seen[0] ?
			      hbm_path_under(cgs->mnt_seen, seen) : NULL;
			if (!rel)
				snprintf(buf, len, "%s", seen);
			else if (!rel[0])
				snprintf(buf, len, "%s", cgs->mnt);
			else
				snprintf(buf, len, "%s%s%s", cgs->mnt,
					 strcmp(cgs->mnt, "/") ? "/" : "", rel);
			return 0;
		}
		/* Refused (no CAP_DAC_READ_SEARCH, or no handles): walk. */
		cgs->by_handle = 0;
	}
	err = hbm_cgroups_walk(cgs);
	if (err)
		return err;
	found = cgs->n ? bsearch(&want, cgs->walk, cgs->n, sizeof(want),
				 hbm_ino_cmp) : NULL;
	if (!found)
		return -ENOENT;
	if (buf)
		snprintf(buf, len, "%s", found->path);
	return 0;
}

int hbm_cgroups_exists(struct hbm_cgroups *cgs, __u64 id)
{
	int err = hbm_cgroups_find(cgs, id, NULL, 0);

	if (!err)
		return 1;
	return err == -ENOENT ? 0 : err;
}

int hbm_cgroups_path(struct hbm_cgroups *cgs, __u64 id, char *buf,
		     size_t len)
{
	return hbm_cgroups_find(cgs, id, buf, len);
}
