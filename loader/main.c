// SPDX-License-Identifier: GPL-2.0
/*
 * bpf-hbm: load the bpf_hbm BPF qdisc, attach it to devices, configure
 * them and show their counters. This file dispatches the commands and
 * parses their options; see usage below for what they do.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "apply.h"
#include "options.h"
#include "units.h"

static const char hbm_help[] =
"Usage: bpf-hbm [-v] COMMAND [ARGUMENT...] [OPTION...]\n"
"       bpf-hbm -h|--help | --version\n"
"\n"
"bpf_hbm is a BPF qdisc (Linux 6.16+, CONFIG_NET_SCH_BPF) that shapes a\n"
"device's egress as HBM (Host Bandwidth Manager) does: every packet is\n"
"charged to the device's virtual queue at the configured rate and gets an\n"
"earliest departure time; when the virtual queue runs `mark` ahead of now,\n"
"packets are counted as marked and TCP senders told to slow down (CN),\n"
"beyond `drop` they are dropped (non-TCP packets already beyond `mark`).\n"
"With ECN on (the default), a marker on DEV's tc egress hook sets CE in\n"
"ECN-capable packets instead, and their senders get no CN.\n"
"\n"
"Commands:\n"
"  load [--flow-idle TIME] [--rate RATE]\n"
"                 load bpf_hbm and register the \"bpf_hbm\" qdisc kind (after\n"
"                 this, `tc qdisc add dev DEV root bpf_hbm` works too);\n"
"                 --flow-idle: how long an emptied flow stays cached before\n"
"                 the GC may free it (default 1s, 1ms..1h), for this load;\n"
"                 --rate: the rate of a device bpf-hbm has not configured\n"
"                 (a `tc qdisc add`'s: show says \"unconfigured\", JSON\n"
"                 \"configured\": false, and gives load's defaults as its\n"
"                 \"config\"), for this load (default 1gbit,\n"
"                 1mbit..400gbit)\n"
"  unload [--force]\n"
"                 unregister the kind and remove the pins (ECN markers\n"
"                 included). Refused while a device (in any network\n"
"                 namespace) has bpf_hbm attached;\n"
"                 --force first detaches every device of this network\n"
"                 namespace, as detach does; qdiscs in other namespaces keep\n"
"                 running until deleted there\n"
"  attach DEV [SHAPING OPTION...] [--ecn on|off] [--parent root|mq]\n"
"         [--replace]\n"
"                 attach bpf_hbm to DEV (loading it if needed), configured\n"
"                 with the defaults below and the options given; without\n"
"                 --rate, at DEV's link speed (as ethtool gives it), and\n"
"                 refused (exit 1) where DEV's driver reports none\n"
"  set DEV [SHAPING OPTION...] [--ecn on|off]\n"
"                 change DEV's configuration in place: the qdisc uses the\n"
"                 new values from the next packet on, nothing is re-attached\n"
"  show [DEV] [--json | --prometheus] [--watch INTERVAL]\n"
"                 configuration and counters of each device with bpf_hbm\n"
"                 (or DEV), as text, JSON or Prometheus metrics; --watch\n"
"                 prints each device's rates every INTERVAL instead\n"
"  detach DEV     delete DEV's bpf_hbm root (or its mq root with bpf_hbm\n"
"                 children), its ECN marker and its classes: the kernel\n"
"                 restores DEV's default qdisc\n"
"  class add DEV --cgroup PATH --rate RATE [CLASS OPTION...]\n"
"                 give the sockets of cgroup PATH (and of its descendants\n"
"                 without a class of their own) a rate of their own on DEV,\n"
"                 which has bpf_hbm attached\n"
"  class set DEV --cgroup PATH CLASS OPTION...\n"
"                 change a class's rate or thresholds in place\n"
"  class del DEV --cgroup PATH\n"
"                 delete DEV's class of PATH\n"
"  class list [DEV] [--json]\n"
"                 the classes of each device (or DEV), configured; show\n"
"                 gives their counters too\n"
"  apply [FILE] [--dry-run | --watch]\n"
"                 make the devices of this network namespace match FILE\n"
"                 (default " HBM_CONF_FILE "), and only it: attach, set,\n"
"                 re-attach and detach, add, set and delete classes,\n"
"                 printing one line per change; --watch then stays, and\n"
"                 shapes each device FILE names as it appears\n"
"  help           this text\n"
"\n"
"Shaping options (attach, set):\n"
"  --rate RATE          rate of DEV's virtual queue, L2 bytes\n"
"                       (default DEV's link speed, where its driver reports\n"
"                       one: veth's is 10gbit, a dummy's none; 1mbit..400gbit)\n"
"  --burst TIME         idle credit the virtual queue keeps (default 100us)\n"
"  --mark TIME          delay above which packets are marked and TCP senders\n"
"                       get CN, increasingly likely up to drop (default 50us)\n"
"  --drop TIME          delay above which packets are dropped (default 500us)\n"
"  --drop-large TIME    drop threshold of packets over 120 bytes (default\n"
"                       480us); when --drop is given without it, it keeps its\n"
"                       ratio to drop\n"
"  --limit N            packets queued per qdisc instance (default 10000,\n"
"                       at most 8388608)\n"
"  --flow-limit N       packets queued per flow (default 100)\n"
"  --horizon TIME       drop packets timestamped further ahead (default 10s)\n"
"  --cn on|off          on (default): a non-ECN TCP sender over `mark` gets\n"
"                       NET_XMIT_CN (it enters CWR), increasingly likely up\n"
"                       to drop; off: such packets are only counted as marked\n"
"  --late-credit on|off on (default): senders are not charged for the\n"
"                       shaper's own lateness. Where packets leave later\n"
"                       than `burst` after the time the watchdog was set for\n"
"                       (the envelope of that lateness over about a second,\n"
"                       up to 4ms: a hypervisor's timer jitter), the excess\n"
"                       is added to the idle credit; the thresholds stay;\n"
"                       on a host whose timers keep within `burst`, nothing\n"
"                       is added. off: HBM's fixed burst\n"
"  --quantum BYTES      deficit round robin among the flows whose head is\n"
"                       due, as tc-fq: a flow sends while its credit lasts,\n"
"                       then gets BYTES more and goes to the back of the\n"
"                       round (default auto (2 MTU): twice DEV's MTU plus\n"
"                       link-layer header, 3028 bytes on Ethernet)\n"
"  --initial-quantum BYTES\n"
"                       a new flow's first credit; new flows are served\n"
"                       before the others, as in tc-fq\n"
"                       (default auto (10 MTU): 15140 bytes on Ethernet)\n"
"  Rules: mark < drop-large <= drop; burst, horizon > 0; times at most 1h;\n"
"  0 < flow-limit <= limit; quantum, initial-quantum 1..1048576 or auto.\n"
"  attach starts from the defaults, set from DEV's current configuration.\n"
"\n"
"ECN option (attach, set):\n"
"  --ecn on|off         on (attach's default): the ECN marker (hbm_ce) runs\n"
"                       on DEV's tcx egress hook, first of its programs, and\n"
"                       sets CE in ECN-capable (ECT) packets while DEV's\n"
"                       virtual queue is over `mark`; ECN-capable TCP senders\n"
"                       then get CE instead of CN. off: no marker, every TCP\n"
"                       sender gets CN. set switches it live; detach and\n"
"                       unload remove the marker. Other programs on the hook\n"
"                       are left alone\n"
"\n"
"Class options (class add, set, del):\n"
"  --cgroup PATH        a cgroup v2 directory, absolute or relative to the\n"
"                       cgroup2 mount (/sys/fs/cgroup, as\n"
"                       /proc/self/mountinfo says). Its class covers the\n"
"                       sockets of that cgroup and of its descendants: the\n"
"                       nearest class up a socket's cgroup tree is the\n"
"                       socket's. A socket stays in the cgroup it was\n"
"                       created in, wherever its process moves later\n"
"  --rate RATE          the class's rate (class add: required;\n"
"                       1mbit..400gbit)\n"
"  --burst TIME, --mark TIME, --drop TIME, --drop-large TIME\n"
"                       the class's idle credit and thresholds, as DEV's\n"
"                       (class add: HBM's defaults, 100us, 50us, 500us and\n"
"                       480us; --drop alone scales drop-large; the same rules)\n"
"  A classified socket's packets are charged to its class's virtual queue\n"
"  and to DEV's, and leave at the later of the two clocks and their own\n"
"  timestamp; each level's delay is checked against its own thresholds and\n"
"  the most severe verdict (mark, CN, drop) wins; the 2-packet guard still\n"
"  applies, and the ECN marker sets CE from the class's delay too. Other\n"
"  packets (no socket, or no class) are charged to DEV's alone. Under mq a\n"
"  class is DEV's, not a tx queue's.\n"
"  Limits: 4096 classes, of all devices together; cgroup levels 0..31 (the\n"
"  cgroup2 root is 0, /sys/fs/cgroup/a/b is 2). A class whose cgroup is\n"
"  removed goes with it: the next class, show, set, attach or detach deletes\n"
"  it. detach deletes DEV's classes.\n"
"\n"
"Attach options:\n"
"  --parent root        one bpf_hbm as DEV's root qdisc\n"
"  --parent mq          an mq root with a bpf_hbm on each tx queue, sharing\n"
"                       DEV's rate (default when DEV has several tx queues)\n"
"  --replace            replace DEV's root qdisc if it has one (atomic swap);\n"
"                       without it, attach only replaces the kernel's default.\n"
"                       Where bpf_hbm is attached with the same --parent, the\n"
"                       qdiscs stay and only the configuration is rewritten\n"
"                       (from the defaults and the options, unlike set)\n"
"\n"
"Show options:\n"
"  --json               one JSON object (with --watch, see there):\n"
"                       {\"devices\": [{\"dev\" (null if in another netns),\n"
"                       \"ifindex\", \"netns\", \"instances\", \"configured\",\n"
"                       \"config\": {\"rate_bps\", \"burst_ns\", \"mark_ns\",\n"
"                       \"drop_ns\", \"drop_large_ns\", \"limit\", \"flow_limit\",\n"
"                       \"quantum\", \"initial_quantum\" (bytes, derived from\n"
"                       DEV's MTU when auto; 0 if that is unknown),\n"
"                       \"quantum_auto\", \"initial_quantum_auto\",\n"
"                       \"horizon_ns\", \"large_pkt\", \"flags\", \"ecn\", \"cn\",\n"
"                       \"late_credit\"},\n"
"                       \"stats\": {\"enqueued\", \"packets\", \"bytes\",\n"
"                       \"marks\", \"cn\", \"ce\", \"guard_saves\",\n"
"                       \"cn_spared\" (marks of thin flows: no CN), \"delayed\",\n"
"                       \"fastpath\" (due on arrival at an empty qdisc: sent\n"
"                       without a flow), \"drops\", \"vq_delay_ns\",\n"
"                       \"tstamp_tai\",\n"
"                       \"tstamp_realtime\" (SO_TXTIME stamps on those clocks:\n"
"                       converted, ignored)}, \"drops\": {\"threshold\",\n"
"                       \"nontcp\", \"horizon\", \"limit\", \"flow_limit\",\n"
"                       \"nomem\", \"total\"}, \"lateness\": {\"credit_ns\" (the\n"
"                       idle credit now), \"envelope_ns\", \"samples\" (watchdog\n"
"                       releases measured), \"mean_ns\",\n"
"                       \"p50_ns\", \"p90_ns\", \"p99_ns\" (bucket bounds, within\n"
"                       2x), \"hist_us\" (16 buckets: <1us, [1,2)us, [2,4)us,\n"
"                       ... >=16ms)}, \"qlen\", \"flows\",\n"
"                       \"idle_flows\", \"backlog\", \"classes\": [{\"cgroup\"\n"
"                       (its path; null if it cannot be found), \"cgroup_id\",\n"
"                       \"level\", \"config\": {\"rate_bps\", \"burst_ns\",\n"
"                       \"mark_ns\", \"drop_ns\", \"drop_large_ns\"}, \"stats\":\n"
"                       {\"enqueued\", \"packets\", \"bytes\", \"marks\", \"cn\",\n"
"                       \"ce\", \"guard_saves\", \"cn_spared\", \"delayed\",\n"
"                       \"vq_delay_ns\", \"drops\": {\"threshold\", \"nontcp\",\n"
"                       \"horizon\", \"limit\", \"flow_limit\", \"nomem\",\n"
"                       \"total\"}}}]}]}. Strings are UTF-8: a byte of a name\n"
"                       that is not valid UTF-8 becomes U+FFFD\n"
"  --prometheus         the counters in Prometheus's text exposition format,\n"
"                       for node_exporter's textfile collector (write it to\n"
"                       a temporary file, then rename it into the\n"
"                       collector's directory): families bpf_hbm_*, counters\n"
"                       ending in _total, gauges in seconds, bytes and\n"
"                       bits_per_second; labels dev (\"\" in another netns),\n"
"                       ifindex, netns, and on the bpf_hbm_class_* families\n"
"                       class (the cgroup's path) and cgroup_id. The README\n"
"                       lists them. Not with --json or --watch\n"
"  --watch INTERVAL     every INTERVAL (a TIME, 100ms..1h; a bare number is\n"
"                       seconds) until SIGINT or SIGTERM, print each\n"
"                       device's rates over the last interval, a line each:\n"
"                       TIME DEV pps N bit/s N drops/s N marks/s N cn/s N\n"
"                       ce/s N (TIME in ISO 8601, UTC, with milliseconds;\n"
"                       DEV ifindexN@netnsM in another netns). The first\n"
"                       line comes after one interval. With --json, one\n"
"                       object a line per interval: {\"time\",\n"
"                       \"interval_s\", \"devices\": [{\"dev\", \"ifindex\",\n"
"                       \"netns\", \"pps\", \"bps\", \"drops_per_s\",\n"
"                       \"marks_per_s\", \"cn_per_s\", \"ce_per_s\"}]}\n"
"\n"
"Apply options:\n"
"  --dry-run            print the changes apply would make, each line\n"
"                       marked \"dry run:\", and make none\n"
"  --watch              after applying FILE, run until SIGINT or SIGTERM\n"
"                       (exit 0), and apply FILE's line and classes to\n"
"                       each device it names as the device appears\n"
"                       (created, created again, renamed to the name,\n"
"                       moved into this network namespace), a burst of\n"
"                       its events coalesced into one apply; each change\n"
"                       printed as apply prints it, after the time (ISO\n"
"                       8601, UTC). A device that cannot be shaped is\n"
"                       reported (couldn't attach DEV) and tried again at\n"
"                       its next event; where the kernel dropped events,\n"
"                       all of FILE is applied again. SIGHUP reads FILE\n"
"                       again and applies it (with errors: reported,\n"
"                       FILE:LINE, and the old configuration kept). The\n"
"                       lock is held only while applying. What\n"
"                       bpf-hbm-watch.service runs\n"
"\n"
"Configuration file (apply):\n"
"  DEV [ATTACH OPTION...]  a device and attach's options for it: the\n"
"                       shaping options, --ecn, --parent; --replace lets\n"
"                       apply replace a root qdisc of DEV's own. Without\n"
"                       --rate, DEV's link speed as attach takes it (apply\n"
"                       sets it again where it changed; the lines say \"(link\n"
"                       speed)\"); where DEV has none, its line is a failed\n"
"                       change, DEV and its classes are left as they are\n"
"  DEV class --cgroup PATH --rate RATE [CLASS OPTION...]  a class of DEV\n"
"                       with class add's options; DEV has a line of its own\n"
"  # starts a comment, to the end of the line; blank lines are ignored.\n"
"  Words are split on whitespace, except in double quotes, which keep\n"
"  spaces and # (as in --cgroup \"/sys/fs/cgroup/my app\"; \\\" and \\\\\n"
"  inside are \" and \\). Options are spelled out in full (--rate 1gbit,\n"
"  or --rate=1gbit).\n"
"  apply compares each device's configuration (the defaults and its\n"
"  options, as attach makes it) and ECN with what DEV has, sets what\n"
"  differs, and re-attaches (attach --replace) where --parent differs; it\n"
"  detaches bpf_hbm from the other devices of this network namespace, and\n"
"  deletes the classes the file does not list from the devices it names.\n"
"  A device or cgroup that does not exist is skipped with a note (it is\n"
"  shaped when apply runs again, a device also as it appears under apply\n"
"  --watch). A bad file (FILE:LINE: the reason; exit 2) is refused whole,\n"
"  before anything changes. A second run changes nothing: \"nothing to\n"
"  change\".\n"
"\n"
"Class list options:\n"
"  --json               {\"classes\": [...]}: each class as in show's\n"
"                       \"classes\", with its device's \"dev\", \"ifindex\" and\n"
"                       \"netns\" first\n"
"\n"
"Every command takes -h/--help and -v/--verbose (libbpf's messages).\n"
"\n"
"Units, as tc writes them (case-insensitive, no space before the unit):\n"
"  RATE  bit/s: a bare number, bit, kbit, mbit, gbit, tbit (powers of 1000),\n"
"        kibit, mibit, gibit, tibit (powers of 1024); bytes/s: bps, kbps,\n"
"        mbps, gbps, tbps, kibps, mibps, gibps, tibps. 100mbit = 12.5mbps\n"
"  TIME  s, ms, us, ns (or sec, msec, usec, nsec); a bare number is in\n"
"        microseconds, as in tc\n"
"  N     a whole number of packets\n"
"  BYTES a bare number of bytes, or b, k/kb, m/mb (powers of 1024), as tc's\n"
"        sizes; or auto\n"
"\n"
"Files:\n"
"  " HBM_CONF_FILE "\n"
"      the configuration apply reads when given no FILE\n"
"  " HBM_PIN_DIR "/link\n"
"      the struct_ops link: bpf_hbm stays loaded while it is pinned\n"
"  " HBM_PIN_DIR "/hbm_config, hbm_dev_rates, hbm_instances,\n"
"  hbm_class_configs, hbm_class_rates\n"
"      its maps (configuration, per-device rate state and counters,\n"
"      instances; the classes' configuration, rate state and counters)\n"
"  " HBM_PIN_DIR "/" HBM_CE_PROG "\n"
"      the ECN marker program\n"
"  " HBM_PIN_DIR "/ce-NETNS-IFINDEX\n"
"      the tcx link that keeps the marker on a device (NETNS: the inode of\n"
"      its network namespace, as in show); a device that is gone leaves a\n"
"      stale one, which the next attach, detach or unload removes\n"
"  load mounts bpffs on " HBM_BPFFS " if it is not there. In a mount\n"
"  namespace without it (as under `ip netns exec`), PID 1's is used\n"
"  (/proc/1/root" HBM_BPFFS "), so pins outlive the command.\n"
"\n"
"Exit status: 0 success, 1 failure, 2 usage error (bad command, option or\n"
"value). Errors are one line on stderr:\n"
"  bpf-hbm: couldn't <verb> <object>: <reason>\n";

#define HBM_SHAPE_USAGE							\
"  --burst TIME       idle credit (default 100us)\n"			\
"  --mark TIME        mark/CN threshold (default 50us)\n"		\
"  --drop TIME        drop threshold (default 500us)\n"			\
"  --drop-large TIME  drop threshold over 120 bytes (default 480us;\n"	\
"                     keeps its ratio to drop when only --drop is given)\n" \
"  --limit N          packets per qdisc instance (default 10000)\n"	\
"  --flow-limit N     packets per flow (default 100)\n"			\
"  --horizon TIME     timestamp horizon (default 10s)\n"		\
"  --cn on|off        NET_XMIT_CN to TCP senders over mark (default on)\n" \
"  --late-credit on|off  the idle credit allows for the shaper's own\n" \
"                     release lateness (default on)\n" \
"  --quantum BYTES    DRR credit per round among due flows, as tc-fq\n"	\
"                     (default auto (2 MTU), 1..1048576)\n"		\
"  --initial-quantum BYTES\n"						\
"                     a new flow's credit (default auto (10 MTU))\n"	\
"  mark < drop-large <= drop; flow-limit <= limit. Rates: kbit, mbit,\n" \
"  gbit, mbps... Times: s, ms, us, ns; a bare number is microseconds.\n" \
"  Bytes: a bare number, or b, k, m (powers of 1024); or auto (DEV's MTU).\n"

#define HBM_CLASS_LIMITS						\
"  mark < drop-large <= drop. At most 4096 classes, of all devices, at\n"	\
"  cgroup levels 0..31 (the cgroup2 root is 0). Rates: kbit, mbit, gbit,\n" \
"  mbps...; times: s, ms, us, ns (a bare number is microseconds).\n"

#define HBM_CGROUP_USAGE						\
"  --cgroup PATH      the class's cgroup: a cgroup v2 directory, absolute\n" \
"                     or relative to the cgroup2 mount (/sys/fs/cgroup)\n"

static const char hbm_class_help[] =
"Usage: bpf-hbm class add DEV --cgroup PATH --rate RATE [OPTION...]\n"
"       bpf-hbm class set DEV --cgroup PATH OPTION...\n"
"       bpf-hbm class del DEV --cgroup PATH\n"
"       bpf-hbm class list [DEV] [--json]\n"
"Per-cgroup rate classes: the sockets of a cgroup and of its descendants\n"
"get a rate of their own on DEV, within DEV's. At most 4096 classes, of\n"
"all devices, at cgroup levels 0..31 (the cgroup2 root is 0). See\n"
"bpf-hbm class add -h (and set, del, list) for the options, bpf-hbm --help\n"
"for the rest.\n";

/* Every command's options, parsed. */
struct hbm_args {
	bool help;
	bool verbose;
	bool force;
	bool json;
	const char *dev;
	const char *cgroup;		/* the class commands' */
	const char *file;		/* apply's FILE, or NULL */
	bool dry_run;
	bool apply_watch;		/* apply --watch */
	struct hbm_conf *conf;		/* apply's, read by main() */
	bool prometheus;
	uint64_t watch_ns;		/* show --watch; 0: none */
	uint64_t flow_idle_ns;		/* load's; 0: the object's default */
	struct hbm_attach_args attach;	/* also set's dev and opts */
	char err[HBM_ERRSZ];		/* the first usage error */
};

struct hbm_cmd {
	const char *name;
	unsigned int mask;		/* HBM_CMD_*: its options (options.c) */
	bool dev_required;
	bool dev_allowed;
	const char *usage;
	int (*run)(const struct hbm_args *a);
};

static int hbm_run_load(const struct hbm_args *a)
{
	const struct hbm_opts *o = &a->attach.opts;

	return hbm_cmd_load(a->flow_idle_ns,
			    o->given & (1U << HBM_OPT_RATE) ?
			    o->val[HBM_OPT_RATE] : 0);
}

static int hbm_run_unload(const struct hbm_args *a)
{
	return hbm_cmd_unload(a->force);
}

static int hbm_run_attach(const struct hbm_args *a)
{
	return hbm_cmd_attach(&a->attach);
}

static int hbm_run_set(const struct hbm_args *a)
{
	if (!a->attach.opts.given && a->attach.ecn == HBM_ECN_KEEP) {
		hbm_error("set", a->dev,
			  "no option given (see bpf-hbm set --help)");
		return HBM_EXIT_USAGE;
	}
	return hbm_cmd_set(a->dev, &a->attach.opts, a->attach.ecn);
}

static int hbm_run_show(const struct hbm_args *a)
{
	struct hbm_show_args s = {
		.dev = a->dev,
		.json = a->json,
		.prometheus = a->prometheus,
		.watch_ns = a->watch_ns,
	};
	const char *obj = a->dev ? a->dev : HBM_KIND;

	if (a->prometheus && a->json) {
		hbm_error("show", obj, "--prometheus and --json exclude each other");
		return HBM_EXIT_USAGE;
	}
	/*
	 * A textfile collector reads whole files, written anew each time:
	 * a stream of expositions is nothing it can read. A timer that runs
	 * show --prometheus and renames its output into place is.
	 */
	if (a->prometheus && a->watch_ns) {
		hbm_error("show", obj, "--prometheus takes no --watch (run it from a timer, writing a file whole each time)");
		return HBM_EXIT_USAGE;
	}
	return hbm_cmd_show(&s);
}

static int hbm_run_detach(const struct hbm_args *a)
{
	return hbm_cmd_detach(a->dev);
}

/* The error verbs of the class commands: "couldn't add class X on DEV". */
static const char *hbm_class_verb(unsigned int mask)
{
	switch (mask) {
	case HBM_CMD_CLASS_ADD:
		return "add";
	case HBM_CMD_CLASS_SET:
		return "change";
	case HBM_CMD_CLASS_DEL:
		return "delete";
	default:
		return "list";
	}
}

static struct hbm_class_args hbm_class_args_of(const struct hbm_args *a)
{
	return (struct hbm_class_args){
		.dev = a->dev,
		.cgroup = a->cgroup,
		.opts = a->attach.opts,
		.json = a->json,
	};
}

/* What add, set and del require; returns an exit status, or -1. */
static int hbm_class_required(const struct hbm_args *a, unsigned int mask)
{
	const char *verb = hbm_class_verb(mask);
	char obj[512];

	hbm_class_obj(obj, sizeof(obj), a->cgroup, a->dev, false);
	if (!a->cgroup) {
		hbm_error(verb, obj, "missing --cgroup PATH (see bpf-hbm class %s --help)",
			  mask == HBM_CMD_CLASS_ADD ? "add" :
			  mask == HBM_CMD_CLASS_SET ? "set" : "del");
		return HBM_EXIT_USAGE;
	}
	if (mask == HBM_CMD_CLASS_ADD &&
	    !(a->attach.opts.given & (1U << HBM_OPT_RATE))) {
		hbm_error(verb, obj, "missing --rate RATE (a class has no default rate)");
		return HBM_EXIT_USAGE;
	}
	if (mask == HBM_CMD_CLASS_SET && !a->attach.opts.given) {
		hbm_error(verb, obj, "no option given (see bpf-hbm class set --help)");
		return HBM_EXIT_USAGE;
	}
	return -1;
}

static int hbm_run_class_add(const struct hbm_args *a)
{
	struct hbm_class_args c = hbm_class_args_of(a);
	int ret = hbm_class_required(a, HBM_CMD_CLASS_ADD);

	return ret >= 0 ? ret : hbm_cmd_class_add(&c);
}

static int hbm_run_class_set(const struct hbm_args *a)
{
	struct hbm_class_args c = hbm_class_args_of(a);
	int ret = hbm_class_required(a, HBM_CMD_CLASS_SET);

	return ret >= 0 ? ret : hbm_cmd_class_set(&c);
}

static int hbm_run_class_del(const struct hbm_args *a)
{
	struct hbm_class_args c = hbm_class_args_of(a);
	int ret = hbm_class_required(a, HBM_CMD_CLASS_DEL);

	return ret >= 0 ? ret : hbm_cmd_class_del(&c);
}

static int hbm_run_class_list(const struct hbm_args *a)
{
	struct hbm_class_args c = hbm_class_args_of(a);

	return hbm_cmd_class_list(&c);
}

static int hbm_run_apply(const struct hbm_args *a)
{
	if (a->apply_watch)
		return hbm_cmd_apply_watch(a->file, a->conf);
	return hbm_cmd_apply(a->conf, a->dry_run);
}

static const struct hbm_cmd hbm_cmds[] = {
	{ "load", HBM_CMD_LOAD, false, false,
	  "Usage: bpf-hbm load [-v] [--flow-idle TIME] [--rate RATE]\n"
	  "Load bpf_hbm, register the \"bpf_hbm\" qdisc kind and pin it in\n"
	  HBM_PIN_DIR " (mounting bpffs if needed). Does nothing if\n"
	  "it is loaded; stale pins are removed first.\n"
	  "  --flow-idle TIME   how long an emptied flow stays cached before\n"
	  "                     it may be freed (default 1s, 1ms..1h); only\n"
	  "                     when this command loads bpf_hbm\n"
	  "  --rate RATE        the rate of devices bpf-hbm has not configured,\n"
	  "                     as `tc qdisc add dev DEV root bpf_hbm` makes\n"
	  "                     them (default 1gbit, 1mbit..400gbit); only when\n"
	  "                     this command loads bpf_hbm\n",
	  hbm_run_load },
	{ "unload", HBM_CMD_UNLOAD, false, false,
	  "Usage: bpf-hbm unload [-v] [--force]\n"
	  "Unregister the \"bpf_hbm\" qdisc kind and remove the pins (and with\n"
	  "them the ECN markers on devices' tcx egress hooks). Refused\n"
	  "while a device has bpf_hbm attached.\n"
	  "  --force            detach every device of this network namespace\n"
	  "                     first; qdiscs in other namespaces keep running\n",
	  hbm_run_unload },
	{ "attach", HBM_CMD_ATTACH, true, true,
	  "Usage: bpf-hbm attach DEV [OPTION...]\n"
	  "Attach bpf_hbm to DEV, loading it if needed; the configuration is\n"
	  "the defaults overridden by the options.\n"
	  "  --rate RATE        rate (default DEV's link speed, as ethtool\n"
	  "                     gives it; refused where DEV has none, as a dummy;\n"
	  "                     1mbit..400gbit)\n"
	  HBM_SHAPE_USAGE
	  "  --ecn on|off       CE-mark ECN-capable packets over mark with a\n"
	  "                     marker on DEV's tcx egress hook (default on)\n"
	  "  --parent root|mq   bpf_hbm at the root, or an mq root with one\n"
	  "                     bpf_hbm per tx queue (default: mq if DEV has\n"
	  "                     several tx queues)\n"
	  "  --replace          replace DEV's root qdisc if it has one\n",
	  hbm_run_attach },
	{ "set", HBM_CMD_SET, true, true,
	  "Usage: bpf-hbm set DEV OPTION...\n"
	  "Change the configuration of DEV, which has bpf_hbm attached, in\n"
	  "place; options not given keep their current values.\n"
	  "  --rate RATE        rate (1mbit..400gbit)\n"
	  HBM_SHAPE_USAGE
	  "  --ecn on|off       add or remove the ECN marker on DEV's tcx\n"
	  "                     egress hook (CE instead of CN for ECN senders)\n",
	  hbm_run_set },
	{ "show", HBM_CMD_SHOW, false, true,
	  "Usage: bpf-hbm show [DEV] [--json | --prometheus] [--watch INTERVAL]\n"
	  "Configuration and counters of each device with bpf_hbm (or DEV).\n"
	  "  --json             as one JSON object (see bpf-hbm --help)\n"
	  "  --prometheus       for node_exporter's textfile collector: the\n"
	  "                     counters in Prometheus's text format; it takes\n"
	  "                     neither --json nor --watch\n"
	  "  --watch INTERVAL   every INTERVAL (100ms..1h, as 500ms or 2s; a bare\n"
	  "                     number is seconds) until interrupted, each\n"
	  "                     device's rates over it, a line each:\n"
	  "                     TIME DEV pps N bit/s N drops/s N marks/s N\n"
	  "                     cn/s N ce/s N; with --json, one object per interval\n",
	  hbm_run_show },
	{ "detach", HBM_CMD_DETACH, true, true,
	  "Usage: bpf-hbm detach DEV\n"
	  "Remove bpf_hbm from DEV (its root, or its mq root with bpf_hbm\n"
	  "children), its ECN marker and DEV's configuration; DEV gets its\n"
	  "default qdisc.\n",
	  hbm_run_detach },
	{ "class add", HBM_CMD_CLASS_ADD, true, true,
	  "Usage: bpf-hbm class add DEV --cgroup PATH --rate RATE [OPTION...]\n"
	  "Give the sockets of cgroup PATH, and of its descendants without a\n"
	  "class of their own, a rate of their own on DEV (which has bpf_hbm\n"
	  "attached): their packets are charged to the class's virtual queue\n"
	  "as well as to DEV's.\n"
	  HBM_CGROUP_USAGE
	  "  --rate RATE        the class's rate (required; 1mbit..400gbit)\n"
	  "  --burst TIME       its idle credit (default 100us)\n"
	  "  --mark TIME        its mark/CN threshold (default 50us)\n"
	  "  --drop TIME        its drop threshold (default 500us)\n"
	  "  --drop-large TIME  its drop threshold over 120 bytes\n"
	  "                     (default 480us; keeps its ratio to drop when\n"
	  "                     only --drop is given)\n"
	  HBM_CLASS_LIMITS,
	  hbm_run_class_add },
	{ "class set", HBM_CMD_CLASS_SET, true, true,
	  "Usage: bpf-hbm class set DEV --cgroup PATH OPTION...\n"
	  "Change DEV's class of PATH in place; options not given keep the\n"
	  "class's values.\n"
	  HBM_CGROUP_USAGE
	  "  --rate RATE        the class's rate (1mbit..400gbit)\n"
	  "  --burst TIME       its idle credit\n"
	  "  --mark TIME        its mark/CN threshold\n"
	  "  --drop TIME        its drop threshold (drop-large keeps its ratio\n"
	  "                     to it unless given)\n"
	  "  --drop-large TIME  its drop threshold over 120 bytes\n"
	  HBM_CLASS_LIMITS,
	  hbm_run_class_set },
	{ "class del", HBM_CMD_CLASS_DEL, true, true,
	  "Usage: bpf-hbm class del DEV --cgroup PATH\n"
	  "Delete DEV's class of PATH: its sockets are charged to DEV's virtual\n"
	  "queue alone again (or to an ancestor's class).\n"
	  HBM_CGROUP_USAGE,
	  hbm_run_class_del },
	{ "class list", HBM_CMD_CLASS_LIST, false, true,
	  "Usage: bpf-hbm class list [DEV] [--json]\n"
	  "The classes of each device (or DEV): cgroup, id, level and\n"
	  "configuration; bpf-hbm show gives their counters too.\n"
	  "  --json             as one JSON object (see bpf-hbm --help)\n",
	  hbm_run_class_list },
	{ "apply", HBM_CMD_APPLY, false, false,
	  "Usage: bpf-hbm apply [FILE] [--dry-run | --watch]\n"
	  "Make the devices of this network namespace match FILE (default\n"
	  HBM_CONF_FILE "), and only it: attach bpf_hbm as FILE says, set\n"
	  "what differs (attach --replace where --parent does), detach it from\n"
	  "the devices FILE does not name, and add, set and delete the classes\n"
	  "of those it names. One line per change, \"nothing to change\" if\n"
	  "none. A bad FILE is refused whole, each problem as FILE:LINE: and\n"
	  "the reason (exit 2), before anything changes; a device or cgroup\n"
	  "that does not exist is skipped with a note. The file's format is in\n"
	  "bpf-hbm --help.\n"
	  "  --dry-run          print the changes, marked \"dry run:\", and make\n"
	  "                     none\n"
	  "  --watch            then run until SIGINT or SIGTERM, applying\n"
	  "                     FILE's line and classes to each device it names\n"
	  "                     as the device appears (hotplug, a veth made\n"
	  "                     again), each change printed after the time;\n"
	  "                     SIGHUP reads FILE again and applies it (a bad\n"
	  "                     FILE is reported and the old one kept)\n",
	  hbm_run_apply },
};

static void __attribute__((format(printf, 2, 3)))
hbm_usage_err(struct hbm_args *a, const char *fmt, ...)
{
	va_list ap;

	if (a->err[0])
		return;		/* the first one is reported */
	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
}

static void hbm_parse_opt(struct hbm_args *a, int c, char **argv)
{
	char err[HBM_ERRSZ];
	uint64_t ns;

	switch (c) {
	case 'h':
		a->help = true;
		break;
	case 'v':
		a->verbose = true;
		break;
	case ':':
		hbm_usage_err(a, "option '%s' needs a value", argv[optind - 1]);
		break;
	case '?':
		if (optopt > 0 && optopt < 256)
			hbm_usage_err(a, "unrecognized option '-%c'", optopt);
		else
			hbm_usage_err(a, "unrecognized option '%s'",
				      argv[optind - 1]);
		break;
	case HBM_OPTV_PARENT:
		if (!strcmp(optarg, "root"))
			a->attach.parent = HBM_PARENT_ROOT;
		else if (!strcmp(optarg, "mq"))
			a->attach.parent = HBM_PARENT_MQ;
		else
			hbm_usage_err(a, "invalid parent '%s' (root or mq)",
				      optarg);
		break;
	case HBM_OPTV_REPLACE:
		a->attach.replace = true;
		break;
	case HBM_OPTV_ECN:
		if (!strcmp(optarg, "on"))
			a->attach.ecn = HBM_ECN_ON;
		else if (!strcmp(optarg, "off"))
			a->attach.ecn = HBM_ECN_OFF;
		else
			hbm_usage_err(a, "invalid ecn '%s' (on or off)",
				      optarg);
		break;
	case HBM_OPTV_FORCE:
		a->force = true;
		break;
	case HBM_OPTV_DRY_RUN:
		a->dry_run = true;
		break;
	case HBM_OPTV_APPLY_WATCH:
		a->apply_watch = true;
		break;
	case HBM_OPTV_JSON:
		a->json = true;
		break;
	case HBM_OPTV_CGROUP:
		if (!optarg[0])
			hbm_usage_err(a, "invalid cgroup path '' (a directory under the cgroup2 mount)");
		else
			a->cgroup = optarg;
		break;
	case HBM_OPTV_FLOW_IDLE:
		if (hbm_parse_time(optarg, &a->flow_idle_ns) ||
		    a->flow_idle_ns < HBM_MIN_FLOW_IDLE_NS ||
		    a->flow_idle_ns > HBM_MAX_FLOW_IDLE_NS)
			hbm_usage_err(a, "invalid flow idle time '%s' (1ms..1h)",
				      optarg);
		break;
	case HBM_OPTV_PROMETHEUS:
		a->prometheus = true;
		break;
	case HBM_OPTV_WATCH:
		if (hbm_parse_interval(optarg, &ns) ||
		    ns < HBM_MIN_WATCH_NS || ns > HBM_MAX_WATCH_NS)
			hbm_usage_err(a, "invalid interval '%s' (100ms..1h; a bare number is seconds)",
				      optarg);
		else
			a->watch_ns = ns;
		break;
	default:
		if (c < HBM_OPTV_SHAPE || c >= HBM_OPTV_SHAPE + HBM_OPT_MAX)
			break;
		if (hbm_opt_parse(&a->attach.opts, c - HBM_OPTV_SHAPE, optarg, err,
				  sizeof(err)))
			hbm_usage_err(a, "%s", err);
		break;
	}
}

/*
 * Whether @word is the name of one of @opts, without its dashes: tc's
 * syntax (`rate 10gbit`) is the likeliest slip, and the bare "unexpected
 * argument" would not say what to write instead.
 */
static bool hbm_is_long_opt(const struct option *opts, const char *word)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, word))
			return true;
	return false;
}

/* Returns an exit status, or -1 to go on and run the command. */
static int hbm_parse(const struct hbm_cmd *cmd, int argc, char **argv,
		     struct hbm_args *a)
{
	struct option opts[32];
	char obj[512];
	int c, i;

	if (hbm_getopt_table(cmd->mask, opts, sizeof(opts) / sizeof(opts[0])) < 0)
		return HBM_EXIT_FAIL;	/* the table outgrew opts: a bug */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":hv", opts, NULL)) != -1)
		hbm_parse_opt(a, c, argv);
	if (a->help) {
		fputs(cmd->usage, stdout);
		return HBM_EXIT_OK;
	}
	i = optind;
	if (i < argc && cmd->dev_allowed)
		a->dev = argv[i++];
	else if (i < argc && cmd->mask == HBM_CMD_APPLY)
		a->file = argv[i++];
	if (i < argc && hbm_is_long_opt(opts, argv[i]))
		hbm_usage_err(a, "unexpected argument '%s': did you mean --%s?",
			      argv[i], argv[i]);
	else if (i < argc)
		hbm_usage_err(a, "unexpected argument '%s'", argv[i]);
	if (!a->dev && cmd->dev_required)
		hbm_usage_err(a, "missing DEV (usage: bpf-hbm %s DEV ...)",
			      cmd->name);
	if (a->dry_run && a->apply_watch)
		hbm_usage_err(a, "--dry-run and --watch exclude each other");
	if (a->dev && (!a->dev[0] || strlen(a->dev) >= IFNAMSIZ ||
		       strchr(a->dev, '/')))
		hbm_usage_err(a, "invalid device name '%s'", a->dev);
	if (a->err[0] && (cmd->mask & HBM_CMD_CLASS)) {
		hbm_class_obj(obj, sizeof(obj), a->cgroup, a->dev,
			      cmd->mask == HBM_CMD_CLASS_LIST);
		hbm_error(hbm_class_verb(cmd->mask), obj, "%s", a->err);
		return HBM_EXIT_USAGE;
	}
	if (a->err[0]) {
		snprintf(obj, sizeof(obj), "%s",
			 a->dev && cmd->dev_allowed ? a->dev :
			 cmd->mask != HBM_CMD_APPLY ? HBM_KIND :
			 a->file ? a->file : HBM_CONF_FILE);
		hbm_error(cmd->name, obj, "%s", a->err);
		return HBM_EXIT_USAGE;
	}
	a->attach.dev = a->dev;
	return -1;
}

/*
 * Every command but show runs under the lock (hbm_lock(): one loader at a
 * time changes state), and, once it holds it, with SIGINT, SIGTERM and
 * SIGHUP held until it returns: an attach or detach cut short by ^C would
 * leave a device half-done, so it finishes, and the signal then takes
 * effect as usual. Waiting for the lock can still be interrupted: nothing
 * has changed yet. show locks each of its rounds itself, so that --watch
 * holds the lock only while it reads; apply --watch each of its applies,
 * and it reads the signals itself between them (watch.c).
 */
static int hbm_run(const struct hbm_cmd *cmd, const struct hbm_args *a)
{
	sigset_t hold, old;
	int ret;

	if (cmd->mask == HBM_CMD_SHOW || a->apply_watch)
		return cmd->run(a);
	if (hbm_lock()) {
		hbm_fail("lock", hbm_pin_dir());
		return HBM_EXIT_FAIL;
	}
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigaddset(&hold, SIGHUP);
	sigprocmask(SIG_BLOCK, &hold, &old);
	ret = cmd->run(a);
	hbm_unlock();
	/* What it printed (class list --json >f) must have been written. */
	if ((fflush(stdout) || ferror(stdout)) && ret == HBM_EXIT_OK) {
		hbm_error("write", "the output", "%s", strerror(errno));
		ret = HBM_EXIT_FAIL;
	}
	fflush(NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int main(int argc, char **argv)
{
	const struct hbm_cmd *cmd = NULL;
	struct hbm_conf conf = {};
	struct hbm_args a = {};
	bool verbose = false;
	char name[32];
	size_t j;
	int i, ret;

	/* Options before the command. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(hbm_help, stdout);
			return HBM_EXIT_OK;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("bpf-hbm %s (bpf_hbm ABI %d, libbpf %s)\n",
			       HBM_VERSION, HBM_ABI_VERSION,
			       libbpf_version_string());
			return HBM_EXIT_OK;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		hbm_error("parse", "arguments",
			  "unrecognized option '%s' (see bpf-hbm --help)",
			  argv[i]);
		return HBM_EXIT_USAGE;
	}
	if (i == argc) {
		hbm_error("parse", "arguments",
			  "no command given (see bpf-hbm --help)");
		return HBM_EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		fputs(hbm_help, stdout);
		return HBM_EXIT_OK;
	}
	/* class takes a sub-command: "class add" is the command's name. */
	if (snprintf(name, sizeof(name), "%s", argv[i]) >= (int)sizeof(name) ||
	    strchr(name, ' '))
		name[0] = '\0';
	if (!strcmp(argv[i], "class")) {
		if (i + 1 < argc && (!strcmp(argv[i + 1], "-h") ||
				     !strcmp(argv[i + 1], "--help"))) {
			fputs(hbm_class_help, stdout);
			return HBM_EXIT_OK;
		}
		if (i + 1 == argc || argv[i + 1][0] == '-') {
			hbm_error("parse", "arguments",
				  "missing class sub-command: add, set, del or list (see bpf-hbm class --help)");
			return HBM_EXIT_USAGE;
		}
		i++;
		if (snprintf(name, sizeof(name), "class %s", argv[i]) >=
		    (int)sizeof(name))
			name[0] = '\0';
	}
	for (j = 0; j < sizeof(hbm_cmds) / sizeof(hbm_cmds[0]); j++)
		if (!strcmp(name, hbm_cmds[j].name))
			cmd = &hbm_cmds[j];
	if (!cmd && !strncmp(name, "class ", 6)) {
		hbm_error("parse", "arguments",
			  "unknown class sub-command '%s' (add, set, del or list; see bpf-hbm class --help)",
			  argv[i]);
		return HBM_EXIT_USAGE;
	}
	if (!cmd) {
		hbm_error("parse", "arguments",
			  "unknown command '%s' (see bpf-hbm --help)", argv[i]);
		return HBM_EXIT_USAGE;
	}

	ret = hbm_parse(cmd, argc - i, argv + i, &a);
	if (ret >= 0)
		return ret;
	/*
	 * apply's file is read and checked whole before the lock: a bad one
	 * is refused without it (and without the rights it needs).
	 */
	if (cmd->mask == HBM_CMD_APPLY) {
		a.conf = &conf;
		ret = hbm_conf_load(a.file, &conf);
		if (ret != HBM_EXIT_OK) {
			hbm_conf_free(&conf);
			return ret;
		}
	}
	hbm_set_verbose(verbose || a.verbose);
	ret = hbm_run(cmd, &a);
	hbm_conf_free(&conf);
	return ret;
}
