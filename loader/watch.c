// SPDX-License-Identifier: GPL-2.0
/*
 * apply --watch: apply the file, then keep applying it to the devices it
 * names as they appear (a hotplugged NIC, a VF, a veth a container makes
 * or makes again), until SIGINT or SIGTERM. bpf-hbm.service applies the
 * file once at boot, before the network; bpf-hbm-watch.service runs this
 * for the devices that come later.
 *
 * The events are rtnetlink's (RTMGRP_LINK), subscribed to before the
 * first apply, so that no device appears unseen between the two. A
 * device is new when a NEWLINK shows a name the file names on an ifindex
 * the watcher has not applied under that name (hbm_watch_event()); its
 * events are coalesced (hbm_debounce_*), and then its line and classes
 * are applied alone (hbm_apply_run() of that device: the plan makes it
 * match the file, and prints one line per change, with the time). A
 * device that cannot be shaped is reported and the watcher goes on; it
 * is tried again at its next event. Where the kernel dropped events
 * (ENOBUFS: the socket overran), what happened meanwhile is unknown:
 * the whole file is applied again. SIGHUP reads the file again and
 * applies it whole; a file with errors is reported (FILE:LINE) and the
 * configuration read before is kept.
 *
 * The lock (pins.c) is held only while applying, never while waiting,
 * as show --watch holds it only while it reads: the other commands run
 * meanwhile. SIGINT, SIGTERM and SIGHUP are blocked throughout and read
 * from a signalfd between applies: an apply is never cut short, and the
 * watcher stops (exit 0) or reloads after it. While it waits for the
 * lock, SIGINT and SIGTERM end it as they end any other command then.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "apply.h"

int hbm_debounce_init(struct hbm_debounce *d, int n, __u64 quiet_ns,
		      __u64 max_ns)
{
	memset(d, 0, sizeof(*d));
	d->quiet_ns = quiet_ns;
	d->max_ns = max_ns < quiet_ns ? quiet_ns : max_ns;
	d->e = calloc(n > 0 ? n : 1, sizeof(*d->e));
	if (!d->e)
		return -ENOMEM;
	d->n = n;
	return 0;
}

void hbm_debounce_free(struct hbm_debounce *d)
{
	free(d->e);
	d->e = NULL;
	d->n = 0;
}

void hbm_debounce_event(struct hbm_debounce *d, int k, __u64 now)
{
	struct hbm_debounce_ent *e;

	if (k < 0 || k >= d->n)
		return;
	e = &d->e[k];
	if (!e->pending) {
		e->pending = true;
		e->first = now;
	}
	/* Quiet for quiet_ns, but a device that never stops is applied. */
	e->due = now + d->quiet_ns;
	if (e->due > e->first + d->max_ns)
		e->due = e->first + d->max_ns;
}

__u64 hbm_debounce_next(const struct hbm_debounce *d)
{
	__u64 next = UINT64_MAX;
	int k;

	for (k = 0; k < d->n; k++)
		if (d->e[k].pending && d->e[k].due < next)
			next = d->e[k].due;
	return next;
}

int hbm_debounce_take(struct hbm_debounce *d, __u64 now)
{
	int k, best = -1;

	/* The earliest due first: the order the devices settled in. */
	for (k = 0; k < d->n; k++)
		if (d->e[k].pending && d->e[k].due <= now &&
		    (best < 0 || d->e[k].due < d->e[best].due))
			best = k;
	if (best >= 0)
		d->e[best].pending = false;
	return best;
}

void hbm_debounce_clear(struct hbm_debounce *d)
{
	int k;

	for (k = 0; k < d->n; k++)
		d->e[k].pending = false;
}

int hbm_watch_event(const struct hbm_conf *c, int *known,
		    const struct hbm_link_ev *ev)
{
	int k, hit = -1;

	for (k = 0; k < c->ndev; k++) {
		/* Gone, or renamed away from the name the file gives it. */
		if (known[k] == ev->ifindex &&
		    (ev->del || strcmp(c->dev[k].name, ev->name)))
			known[k] = 0;
		if (!ev->del && !strcmp(c->dev[k].name, ev->name))
			hit = k;
	}
	if (hit < 0 || known[hit] == ev->ifindex)
		return -1;
	return hit;
}

/* The watcher's state. */
struct hbm_watch {
	const char *file;		/* as given: NULL for HBM_CONF_FILE */
	struct hbm_conf *c;
	int *known;			/* c->dev's ifindex when applied */
	struct hbm_debounce db;
	struct hbm_nl ev;		/* subscribed to RTMGRP_LINK */
	int sfd;			/* signalfd: SIGINT, SIGTERM, SIGHUP */
	sigset_t sigs;
	bool stop, reload, resync;
};

static __u64 hbm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A line of the watcher's own, on stdout with the time, as apply's. */
static void __attribute__((format(printf, 1, 2)))
hbm_watch_say(const char *fmt, ...)
{
	char when[HBM_ISO_BUFSZ];
	struct timespec now;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &now);
	hbm_fmt_iso8601(when, sizeof(when), &now);
	printf("%s " HBM_PROG ": ", when);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The signals received since last asked, without waiting. */
static void hbm_watch_signals(struct hbm_watch *w)
{
	struct signalfd_siginfo si;

	while (read(w->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			w->reload = true;
		else
			w->stop = true;
	}
}

static void hbm_watch_event_cb(const struct hbm_link_ev *ev, void *ctx)
{
	struct hbm_watch *w = ctx;
	int k = hbm_watch_event(w->c, w->known, ev);

	if (k >= 0)
		hbm_debounce_event(&w->db, k, hbm_now_ns());
}

/*
 * Take the lock for an apply; false if the watcher is to stop instead.
 * A SIGINT or SIGTERM while another bpf-hbm holds it ends the watcher
 * there, before it changed anything (main.c's rule for every command).
 */
static bool hbm_watch_lock(struct hbm_watch *w)
{
	sigset_t term;
	int err;

	hbm_watch_signals(w);
	if (w->stop)
		return false;
	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &term, NULL);
	err = hbm_lock();
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (err) {
		hbm_fail("lock", hbm_pin_dir());
		return false;
	}
	return true;
}

/*
 * The whole file, as apply does; then every device of it is known under
 * the ifindex it had before the apply, if that succeeded, and none is
 * otherwise (its next event tries it again). Before: a device that
 * appears during the apply, too late for it, then has an ifindex its
 * event does not find known.
 */
static void hbm_watch_apply_all(struct hbm_watch *w)
{
	int k, ret;

	hbm_debounce_clear(&w->db);
	w->resync = false;
	for (k = 0; k < w->c->ndev; k++)
		w->known[k] = 0;
	if (!hbm_watch_lock(w))
		return;
	for (k = 0; k < w->c->ndev; k++)
		w->known[k] = if_nametoindex(w->c->dev[k].name);
	ret = hbm_apply_run(w->c, -1, false, true);
	hbm_unlock();
	if (ret != HBM_EXIT_OK)
		for (k = 0; k < w->c->ndev; k++)
			w->known[k] = 0;
}

/* Device @k of the file, which has appeared. */
static void hbm_watch_apply_dev(struct hbm_watch *w, int k)
{
	const char *name = w->c->dev[k].name;
	int ifindex = if_nametoindex(name), ret;

	if (!ifindex) {
		w->known[k] = 0;	/* gone again meanwhile */
		return;
	}
	if (!hbm_watch_lock(w))
		return;
	ret = hbm_apply_run(w->c, k, false, true);
	hbm_unlock();
	w->known[k] = ret == HBM_EXIT_OK ? ifindex : 0;
}

/* SIGHUP: the file again, applied whole; with errors, the old one kept. */
static void hbm_watch_reload(struct hbm_watch *w)
{
	struct hbm_debounce db;
	struct hbm_conf nc;
	int *known;

	w->reload = false;
	if (hbm_conf_load(w->file, &nc) != HBM_EXIT_OK) {
		hbm_conf_free(&nc);
		hbm_watch_say("%s not reloaded (see above): the configuration read before stays",
			      w->file ? w->file : HBM_CONF_FILE);
		return;
	}
	known = calloc(nc.ndev > 0 ? nc.ndev : 1, sizeof(*known));
	if (!known || hbm_debounce_init(&db, nc.ndev, w->db.quiet_ns,
					w->db.max_ns)) {
		free(known);
		hbm_conf_free(&nc);
		hbm_error("reload", w->file ? w->file : HBM_CONF_FILE, "%s",
			  strerror(ENOMEM));
		return;
	}
	hbm_conf_free(w->c);
	*w->c = nc;
	free(w->known);
	w->known = known;
	hbm_debounce_free(&w->db);
	w->db = db;
	hbm_watch_say("%s reloaded", w->file ? w->file : HBM_CONF_FILE);
	hbm_watch_apply_all(w);
}

/* Read the queued link events; an overrun asks for a full apply. */
static int hbm_watch_read(struct hbm_watch *w)
{
	int err = hbm_nl_link_read(&w->ev, hbm_watch_event_cb, w);

	if (err == -ENOBUFS) {
		hbm_watch_say("link events were lost (the netlink socket overran): applying all of %s again",
			      w->file ? w->file : HBM_CONF_FILE);
		w->resync = true;
		return 0;
	}
	return err;
}

int hbm_cmd_apply_watch(const char *file, struct hbm_conf *c)
{
	struct hbm_watch w = { .file = file, .c = c, .sfd = -1 };
	const char *obj = file ? file : HBM_CONF_FILE;
	struct pollfd pfd[2];
	int ret = HBM_EXIT_FAIL, k, timeout;
	__u64 next, now;

	sigemptyset(&w.sigs);
	sigaddset(&w.sigs, SIGINT);
	sigaddset(&w.sigs, SIGTERM);
	sigaddset(&w.sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &w.sigs, NULL);
	w.sfd = signalfd(-1, &w.sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (w.sfd < 0) {
		hbm_error("watch", obj, "signalfd: %s", strerror(errno));
		goto out;
	}
	w.known = calloc(c->ndev > 0 ? c->ndev : 1, sizeof(*w.known));
	if (!w.known || hbm_debounce_init(&w.db, c->ndev, HBM_WATCH_QUIET_NS,
					  HBM_WATCH_MAX_NS)) {
		hbm_error("watch", obj, "%s", strerror(ENOMEM));
		goto out;
	}
	/* Subscribed first: a device that appears during the apply is seen. */
	if (hbm_nl_link_open(&w.ev)) {
		hbm_fail("watch", obj);
		goto out;
	}
	hbm_watch_apply_all(&w);
	if (!w.stop)
		hbm_watch_say("watching for the devices of %s", obj);
	while (!w.stop) {
		hbm_watch_signals(&w);
		if (w.stop)
			break;
		if (w.reload)
			hbm_watch_reload(&w);
		if (w.resync)
			hbm_watch_apply_all(&w);
		now = hbm_now_ns();
		while (!w.stop && (k = hbm_debounce_take(&w.db, now)) >= 0) {
			hbm_watch_apply_dev(&w, k);
			hbm_watch_signals(&w);
		}
		if (w.stop || w.reload)
			continue;
		next = hbm_debounce_next(&w.db);
		now = hbm_now_ns();
		if (next == UINT64_MAX)
			timeout = -1;
		else if (next <= now)
			timeout = 0;
		else	/* rounded up: woken no earlier than due */
			timeout = (next - now + 999999) / 1000000;
		pfd[0] = (struct pollfd){ .fd = hbm_nl_fd(&w.ev), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = w.sfd, .events = POLLIN };
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			hbm_error("watch", obj, "poll: %s", strerror(errno));
			goto out;
		}
		if ((pfd[0].revents & (POLLIN | POLLERR)) && hbm_watch_read(&w)) {
			hbm_fail("watch", obj);
			goto out;
		}
	}
	hbm_watch_say("stopped");
	ret = HBM_EXIT_OK;
out:
	hbm_nl_close(&w.ev);
	hbm_debounce_free(&w.db);
	free(w.known);
	if (w.sfd >= 0)
		close(w.sfd);
	return ret;
}
