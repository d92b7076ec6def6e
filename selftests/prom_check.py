#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm show --prometheus, read by Prometheus's own parser
# (python3-prometheus-client, Debian's), from stdin:
#
#   prom_check.py check            the rules every exposition keeps (below)
#   prom_check.py sample           those, and the values of
#                                  `test_metrics --sample`'s made-up state
#   prom_check.py get NAME [LABEL=VALUE...]
#                                  the value of the one sample NAME with
#                                  those labels (after the rules); exit 1 if
#                                  none or several
#   prom_check.py count NAME [LABEL=VALUE...]
#                                  how many samples NAME with those labels
#
# The rules: it parses; every family is bpf_hbm_*, has help text and a
# type, and its samples; a counter's samples end in _total; no two samples
# have the same name and labels; every device sample has dev, ifindex and
# netns, a class family's samples class and cgroup_id too; a histogram's
# buckets are cumulative and end at +Inf, its count. A failure is a line
# "FAIL: ..." and exit 1; 2 where the parser is missing.
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("FAIL: no prometheus_client (python3-prometheus-client)")
    sys.exit(2)

failed = False


def fail(msg):
    global failed
    print("FAIL: " + msg)
    failed = True


def rules(families):
    seen = set()
    for fam in families:
        if not fam.name.startswith("bpf_hbm_"):
            fail("family %s: not bpf_hbm_*" % fam.name)
        if not fam.documentation:
            fail("family %s: no help" % fam.name)
        if fam.type not in ("counter", "gauge", "histogram"):
            fail("family %s: type %s" % (fam.name, fam.type))
        buckets = {}
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen:
                fail("duplicate sample %s%s" % key)
            seen.add(key)
            if fam.type == "counter" and not s.name.endswith("_total"):
                fail("counter sample %s: no _total" % s.name)
            if s.timestamp is not None:
                fail("sample %s: a timestamp" % s.name)
            want = ["dev", "ifindex", "netns"]
            if fam.name.startswith("bpf_hbm_class_"):
                want += ["class", "cgroup_id"]
            for lab in want:
                if lab not in s.labels:
                    fail("sample %s %s: no %s label" % (s.name, s.labels, lab))
            if fam.type == "histogram":
                dev = tuple(sorted((k, v) for k, v in s.labels.items()
                                   if k != "le"))
                buckets.setdefault(dev, {})[s.name[len(fam.name):]
                                            + s.labels.get("le", "")] = s.value
        for dev, b in buckets.items():
            les = sorted((float(k[len("_bucket"):]), v) for k, v in b.items()
                         if k.startswith("_bucket"))
            if not les or les[-1][0] != float("inf"):
                fail("histogram %s %s: no +Inf bucket" % (fam.name, dev))
                continue
            vals = [v for _, v in les]
            if vals != sorted(vals):
                fail("histogram %s %s: not cumulative" % (fam.name, dev))
            if b.get("_count") != vals[-1]:
                fail("histogram %s %s: count %s, +Inf %s" %
                     (fam.name, dev, b.get("_count"), vals[-1]))


def find(families, name, want):
    return [s for fam in families for s in fam.samples
            if s.name == name and
            all(s.labels.get(k) == v for k, v in want.items())]


def labels_of(args):
    want = {}
    for a in args:
        k, sep, v = a.partition("=")
        if not sep:
            print("prom_check.py: not LABEL=VALUE: %s" % a, file=sys.stderr)
            sys.exit(2)
        want[k] = v
    return want


def sample(families):
    dev0 = {"dev": "hbm0", "ifindex": "2", "netns": "4026531840"}
    dev1 = {"dev": "", "ifindex": "7", "netns": "4026532281"}
    # The made-up path, escapes undone; its byte 0xff is U+FFFD.
    cls0 = dict(dev0, **{"class": '/sys/fs/cgroup/a "b"\\c\nd\ufffd',
                        "cgroup_id": "1000"})
    cls1 = dict(dev0, **{"class": "", "cgroup_id": "1001"})
    want = [
        ("bpf_hbm_sent_packets_total", dev0, 1000),
        ("bpf_hbm_sent_bytes_total", dev0, 1514000),
        ("bpf_hbm_enqueued_packets_total", dev0, 1010),
        ("bpf_hbm_marked_packets_total", dev0, 40),
        ("bpf_hbm_cn_packets_total", dev0, 7),
        ("bpf_hbm_ce_packets_total", dev0, 20),
        ("bpf_hbm_guard_saves_total", dev0, 2),
        ("bpf_hbm_cn_spared_total", dev0, 3),
        ("bpf_hbm_delayed_packets_total", dev0, 900),
        ("bpf_hbm_fastpath_packets_total", dev0, 100),
        ("bpf_hbm_dropped_packets_total", dict(dev0, reason="threshold"), 5),
        ("bpf_hbm_dropped_packets_total", dict(dev0, reason="limit"), 1),
        ("bpf_hbm_txtime_packets_total", dict(dev0, clock="tai"), 4),
        ("bpf_hbm_vq_delay_seconds", dev0, 50e-6),
        ("bpf_hbm_vq_delay_seconds", dev1, 0),
        ("bpf_hbm_queue_packets", dev0, 10),
        ("bpf_hbm_backlog_bytes", dev0, 15140),
        ("bpf_hbm_flows", dev0, 2),
        ("bpf_hbm_idle_flows", dev0, 1),
        ("bpf_hbm_instances", dev1, 4),
        ("bpf_hbm_rate_bits_per_second", dev0, 400e6),
        ("bpf_hbm_mark_threshold_seconds", dev0, 50e-6),
        ("bpf_hbm_drop_threshold_seconds", dev0, 500e-6),
        ("bpf_hbm_drop_large_threshold_seconds", dev0, 480e-6),
        ("bpf_hbm_burst_seconds", dev0, 100e-6),
        ("bpf_hbm_idle_credit_seconds", dev0, 300e-6),
        ("bpf_hbm_release_lateness_seconds_count", dev0, 136),
        ("bpf_hbm_release_lateness_seconds_sum", dev0, 1.5e-3),
        ("bpf_hbm_release_lateness_seconds_bucket", dict(dev0, le="0.000002"), 3),
        ("bpf_hbm_class_sent_packets_total", cls0, 600),
        ("bpf_hbm_class_sent_bytes_total", cls0, 908400),
        ("bpf_hbm_class_marked_packets_total", cls0, 9),
        ("bpf_hbm_class_dropped_packets_total", dict(cls0, reason="nontcp"), 2),
        ("bpf_hbm_class_vq_delay_seconds", cls0, 1.234567e-3),
        ("bpf_hbm_class_drop_threshold_seconds", cls0, 1.5e-3),
        ("bpf_hbm_class_sent_packets_total", cls1, 0),
    ]
    for name, labels, value in want:
        got = find(families, name, labels)
        if len(got) != 1:
            fail("%s %s: %d samples" % (name, labels, len(got)))
        elif abs(got[0].value - value) > 1e-12 * max(1, abs(value)):
            fail("%s %s: %r, want %r" % (name, labels, got[0].value, value))
    types = {fam.name: fam.type for fam in families}
    for fam, typ in (("bpf_hbm_sent_packets", "counter"),
                     ("bpf_hbm_sent_packets_total", "counter"),
                     ("bpf_hbm_vq_delay_seconds", "gauge"),
                     ("bpf_hbm_release_lateness_seconds", "histogram")):
        if fam in types and types[fam] != typ:
            fail("family %s: type %s, want %s" % (fam, types[fam], typ))
    if len(types) < 40:
        fail("%d families" % len(types))


def main():
    if len(sys.argv) < 2:
        print("usage: prom_check.py check|sample|get|count [NAME LABEL=VALUE...]",
              file=sys.stderr)
        sys.exit(2)
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:
        print("FAIL: the parser refused it: %r" % e)
        sys.exit(1)
    rules(families)
    cmd = sys.argv[1]
    if cmd == "sample":
        sample(families)
    elif cmd in ("get", "count"):
        if len(sys.argv) < 3:
            print("usage: prom_check.py %s NAME [LABEL=VALUE...]" % cmd,
                  file=sys.stderr)
            sys.exit(2)
        got = find(families, sys.argv[2], labels_of(sys.argv[3:]))
        if cmd == "count":
            print(len(got))
        elif len(got) != 1:
            fail("%s %s: %d samples" % (sys.argv[2], sys.argv[3:], len(got)))
        else:
            v = got[0].value
            print(int(v) if v.is_integer() else repr(v))
    elif cmd != "check":
        print("prom_check.py: unknown command %s" % cmd, file=sys.stderr)
        sys.exit(2)
    if cmd in ("check", "sample") and not failed:
        print("prom_check.py: %d families, all checks passed" % len(families))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
