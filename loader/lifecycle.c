// SPDX-License-Identifier: GPL-2.0
/*
 * The load and unload commands: bpf_hbm's kind registered and pinned, or
 * gone (with --force, after detaching it from this namespace's devices).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "cmds.h"

int hbm_cmd_load(__u64 flow_idle_ns, __u64 rate_bps)
{
	bool fresh;

	if (hbm_bpf_load(flow_idle_ns, rate_bps, &fresh)) {
		hbm_fail("load", HBM_KIND);
		return HBM_EXIT_FAIL;
	}
	if (!fresh && (flow_idle_ns || rate_bps)) {
		hbm_error("load", HBM_KIND,
			  "already loaded: %s applies to a fresh load (bpf-hbm unload first)",
			  flow_idle_ns && rate_bps ? "--flow-idle and --rate" :
			  flow_idle_ns ? "--flow-idle" : "--rate");
		return HBM_EXIT_FAIL;
	}
	if (fresh)
		printf(HBM_PROG ": loaded bpf_hbm (pinned in %s)\n",
		       hbm_pin_dir());
	else
		printf(HBM_PROG ": bpf_hbm already loaded (pinned in %s)\n",
		       hbm_pin_dir());
	return HBM_EXIT_OK;
}

/* "eth0, ifindex 7 (netns 4026532281)" into @buf. */
static void hbm_dev_list(char *buf, size_t len, const struct hbm_dev_key *k,
			 int n, __u32 own)
{
	char label[64];
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		hbm_dev_label(label, sizeof(label), &k[i], own);
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				label);
	}
}

/* --force: detach every device of this netns; others are left running. */
static int hbm_force_detach(const struct hbm_maps *maps,
			    const struct hbm_dev_key *k, int n, __u32 own)
{
	char label[64];
	struct hbm_nl nl;
	bool attached;
	int i, err;

	err = hbm_nl_open(&nl);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (k[i].netns != own)
			continue;
		hbm_dev_label(label, sizeof(label), &k[i], own);
		err = hbm_dev_detach(&nl, k[i].ifindex, maps, &attached);
		if (err) {
			err = hbm_set_reason(err, "couldn't detach %s: %s",
					     label, hbm_reason());
			break;
		}
		if (attached)
			hbm_note("detached %s", label);
	}
	hbm_nl_close(&nl);
	return err;
}

int hbm_cmd_unload(bool force)
{
	struct hbm_maps maps = HBM_MAPS_INIT;
	struct hbm_dev_key *keys = NULL;
	int n = 0, ret = HBM_EXIT_FAIL;
	enum hbm_state state;
	char list[1024];
	__u32 own;
	int err;

	if (hbm_own_netns(&own) || hbm_bpf_state(&state))
		goto fail;
	if (state == HBM_ABSENT) {
		printf(HBM_PROG ": bpf_hbm not loaded\n");
		return HBM_EXIT_OK;
	}
	if (state == HBM_LOADED) {
		err = hbm_maps_open(&maps);
		if (err == -EPROTO && force) {
			/*
			 * Another bpf-hbm's pins (its ABI): its maps cannot be
			 * read, so its devices cannot be found. Remove the
			 * pins, as the error that sent the user here says;
			 * its qdiscs keep running until deleted.
			 */
			hbm_note("the pins in %s are another version's (not ABI %d): removing them without detaching; its qdiscs run until deleted (tc qdisc del)",
				 hbm_pin_dir(), HBM_ABI_VERSION);
			goto unpin;
		}
		if (err || hbm_dev_keys(maps.rates, &keys, &n))
			goto fail;
		hbm_dev_list(list, sizeof(list), keys, n, own);
		if (n && !force) {
			hbm_error("unload", HBM_KIND,
				  "still attached to %s (detach first, or --force)",
				  list);
			goto out;
		}
		if (n && hbm_force_detach(&maps, keys, n, own))
			goto fail;
		free(keys);
		keys = NULL;
		if (n && hbm_dev_keys(maps.rates, &keys, &n))
			goto fail;
		if (n) {
			hbm_dev_list(list, sizeof(list), keys, n, own);
			/* They lose HBM_F_ECN with the markers (bpf.c). */
			hbm_note("still used by %s; their qdiscs keep running until deleted",
				 list);
		}
	}
unpin:
	hbm_maps_close(&maps);
	if (hbm_bpf_unload())
		goto fail;
	if (state != HBM_STALE)
		printf(HBM_PROG ": unloaded bpf_hbm\n");
	else
		printf(HBM_PROG ": removed stale pins in %s\n", hbm_pin_dir());
	ret = HBM_EXIT_OK;
	goto out;
fail:
	hbm_fail("unload", HBM_KIND);
out:
	free(keys);
	hbm_maps_close(&maps);
	return ret;
}
