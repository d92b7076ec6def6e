#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm show --prometheus and show --watch, on a device with traffic and
# a class:
# - --prometheus parses with Prometheus's own parser
#   (selftests/prom_check.py, python3-prometheus-client) and keeps the
#   format's rules; its packets counter is show --json's stats.packets
#   (read just before and after it, traffic over), the labels are the
#   device's (dev, ifindex, netns), the configured rate and mark are
#   there in bit/s and seconds, and the class is there with its cgroup's
#   path as its class label and its packets as show --json has them;
# - exit statuses: 1 for a device without bpf_hbm, 2 with --json;
# - --watch 500ms over ~3 s of TCP at 100 Mbit/s: at least 4 lines, each
#   "TIME hbm0 pps N bit/s N drops/s N marks/s N cn/s N ce/s N" with an
#   ISO 8601 UTC time in milliseconds, now and about 500 ms apart; some
#   interval's pps and bit/s non-zero and bit/s never much above the rate;
#   SIGTERM ends it with status 0;
# - --watch --json: one JSON object a line, with the same rates.
. "$(dirname "$0")/lib.sh"

prom() { python3 "$HBM_REPO/selftests/prom_check.py" "$@"; }
python3 -c 'import prometheus_client' 2>/dev/null ||
	hbm_skip "no python3-prometheus-client in the VM"

hbm_veth_setup || hbm_fatal "veth setup"
CG=$(hbm_cg a)
assert_ok "attach at 100mbit" inA "$HBM" attach "$DEV_A" --rate 100mbit \
	--parent root || hbm_done
assert_ok "class add at 50mbit" inA "$HBM" class add "$DEV_A" \
	--cgroup "$CG" --rate 50mbit || hbm_done

# Traffic through the class, and some outside it; then quiet.
hbm_cg_iperf_start "$CG" 5201 "/tmp/$HBM_TEST.cls" 2
inA ping -q -c 20 -i 0.05 "$ADDR_B" >/dev/null
wait
hbm_iperf_result "/tmp/$HBM_TEST.cls" >/dev/null ||
	hbm_fatal "iperf3 from the class failed: $(tail -n 5 "/tmp/$HBM_TEST.cls")"
sleep 0.3

## --prometheus against show --json, read around it.
j1=$(inA "$HBM" show "$DEV_A" --json) || hbm_fatal "show --json failed"
prom=$(inA "$HBM" show "$DEV_A" --prometheus)
st=$?
j2=$(inA "$HBM" show "$DEV_A" --json) || hbm_fatal "show --json failed"
assert_eq "$st" 0 "show --prometheus: exit 0"
echo "$prom" >"/tmp/$HBM_TEST.prom"
assert_ok "the exposition parses and keeps the format's rules" \
	prom check <"/tmp/$HBM_TEST.prom"

p1=$(jq -r '.devices[0].stats.packets' <<<"$j1")
p2=$(jq -r '.devices[0].stats.packets' <<<"$j2")
ifx=$(jq -r '.devices[0].ifindex' <<<"$j1")
ns=$(jq -r '.devices[0].netns' <<<"$j1")
dev=(dev="$DEV_A" ifindex="$ifx" netns="$ns")
pp=$(prom get bpf_hbm_sent_packets_total "${dev[@]}" <<<"$prom")
hbm_report "packets: show --json $p1, --prometheus $pp, show --json $p2"
assert_gt "$pp" 1000 "packets were counted"
assert_between "$pp" "$p1" "$p2" \
	"bpf_hbm_sent_packets_total{dev,ifindex,netns} is show --json's stats.packets"
e1=$(jq -r '.devices[0].stats.enqueued' <<<"$j1")
e2=$(jq -r '.devices[0].stats.enqueued' <<<"$j2")
pe=$(prom get bpf_hbm_enqueued_packets_total "${dev[@]}" <<<"$prom")
assert_between "$pe" "$e1" "$e2" "enqueued: show --json's"
assert_eq "$(prom get bpf_hbm_rate_bits_per_second "${dev[@]}" <<<"$prom")" \
	100000000 "the rate in bit/s"
assert_eq "$(prom get bpf_hbm_mark_threshold_seconds "${dev[@]}" <<<"$prom")" \
	0.00005 "the mark threshold in seconds"
assert_eq "$(prom count bpf_hbm_dropped_packets_total "${dev[@]}" <<<"$prom")" \
	6 "drops: a series per reason"
assert_eq "$(prom count bpf_hbm_sent_packets_total <<<"$prom")" 1 \
	"show DEV: DEV's series only"

# The class: its cgroup's path as show --json gives it is its label.
path=$(jq -r '.devices[0].classes[0].cgroup' <<<"$j1")
cid=$(jq -r '.devices[0].classes[0].cgroup_id' <<<"$j1")
echo "class: $path (cgroup id $cid)"
assert_ok "show --json names the class's cgroup" \
	test "${path##*/}" = "${CG##*/}"
cls=("${dev[@]}" class="$path" cgroup_id="$cid")
assert_eq "$(prom count bpf_hbm_class_sent_packets_total "${cls[@]}" <<<"$prom")" \
	1 "the class's series, with its class label"
c1=$(jq -r '.devices[0].classes[0].stats.packets' <<<"$j1")
c2=$(jq -r '.devices[0].classes[0].stats.packets' <<<"$j2")
cp=$(prom get bpf_hbm_class_sent_packets_total "${cls[@]}" <<<"$prom")
hbm_report "class packets: show --json $c1, --prometheus $cp"
assert_gt "$cp" 100 "the class's packets were counted"
assert_between "$cp" "$c1" "$c2" "the class's packets: show --json's"
assert_lt "$cp" "$pp" "the class's packets are some of the device's"
assert_eq "$(prom get bpf_hbm_class_rate_bits_per_second "${cls[@]}" <<<"$prom")" \
	50000000 "the class's rate in bit/s"
assert_eq "$(prom count bpf_hbm_class_dropped_packets_total "${cls[@]}" <<<"$prom")" \
	6 "the class's drops: a series per reason"

## Exit statuses.
inB "$HBM" show "$DEV_B" --prometheus >/dev/null 2>&1
assert_eq "$?" 1 "--prometheus on a device without bpf_hbm: exit 1"
inA "$HBM" show "$DEV_A" --prometheus --json >/dev/null 2>&1
assert_eq "$?" 2 "--prometheus --json: exit 2"
inA "$HBM" show "$DEV_A" --prometheus --watch 1 >/dev/null 2>&1
assert_eq "$?" 2 "--prometheus --watch: exit 2"

## --watch 500ms over TCP at the device's rate (unclassified).
W=/tmp/$HBM_TEST.watch
hbm_cg_iperf_start - 5202 "/tmp/$HBM_TEST.dev" 5
sleep 1
# Not through inA: $! must be bpf-hbm itself (ip netns exec execs it),
# not a subshell that a signal would end without it.
ip netns exec "$NS_A" "$HBM" show "$DEV_A" --watch 500ms >"$W" 2>"$W.err" &
wpid=$!
sleep 3.2
kill -TERM "$wpid"
wait "$wpid"
assert_eq "$?" 0 "--watch: SIGTERM ends it with exit 0"
now=$(date -u +%s.%N)
wait
echo "show $DEV_A --watch 500ms:"
sed 's/^/  /' "$W"
[ -s "$W.err" ] && sed 's/^/  stderr: /' "$W.err"
n=$(wc -l <"$W")
assert_ge "$n" 4 "--watch 500ms for 3.2 s: at least 4 lines"
re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z hbm0 pps [0-9]+\.[0-9] bit/s [0-9]+ drops/s [0-9]+\.[0-9] marks/s [0-9]+\.[0-9] cn/s [0-9]+\.[0-9] ce/s [0-9]+\.[0-9]$'
bad=$(grep -cvE "$re" "$W")
assert_eq "$bad" 0 "every line: TIME DEV pps N bit/s N drops/s N marks/s N cn/s N ce/s N"
# The times: now, and an interval apart.
first=$(date -u -d "$(head -n 1 "$W" | cut -d' ' -f1)" +%s.%N)
last=$(date -u -d "$(tail -n 1 "$W" | cut -d' ' -f1)" +%s.%N)
hbm_figure "first time" "$first"
hbm_figure "last time" "$last"
assert_between "$(awk -v a="$last" -v b="$now" 'BEGIN { print b - a }')" \
	0 1.5 "the last line's time is now (UTC)"
assert_between "$(awk -v a="$first" -v b="$last" -v n="$n" \
	'BEGIN { printf "%.3f", (b - a) / (n - 1) }')" 0.4 0.7 \
	"lines about 500 ms apart"
maxpps=$(awk '{ if ($4 > m) m = $4 } END { print m + 0 }' "$W")
maxbps=$(awk '{ if ($6 > m) m = $6 } END { print m + 0 }' "$W")
hbm_report "--watch 500ms: max $maxpps pps, $maxbps bit/s"
assert_gt "$maxpps" 100 "some interval's pps is not 0"
assert_gt "$maxbps" 10000000 "some interval's bit/s is over 10 Mbit/s"
assert_le "$maxbps" 115000000 "no interval's bit/s much above the 100 Mbit/s rate"

## --watch --json: an object a line, the same rates.
J=/tmp/$HBM_TEST.wjson
hbm_cg_iperf_start - 5203 "/tmp/$HBM_TEST.dev2" 3
sleep 0.5
ip netns exec "$NS_A" "$HBM" show "$DEV_A" --watch 0.5 --json >"$J" 2>&1 &
wpid=$!
sleep 1.8
kill -TERM "$wpid"
wait "$wpid"
assert_eq "$?" 0 "--watch --json: exit 0"
wait
sed 's/^/  /' "$J"
n=$(wc -l <"$J")
assert_ge "$n" 2 "--watch 0.5 --json for 1.8 s: at least 2 lines"
ok=$(jq -c 'select((.time | test("^[0-9-]{10}T[0-9:]{8}\\.[0-9]{3}Z$")) and
	.interval_s > 0.3 and .interval_s < 0.8 and
	(.devices | length) == 1 and .devices[0].dev == "hbm0" and
	(.devices[0] | has("pps") and has("bps") and has("drops_per_s") and
	 has("marks_per_s") and has("cn_per_s") and has("ce_per_s")))' "$J" |
	wc -l)
assert_eq "$ok" "$n" "each line: {time, interval_s, devices: [{dev, pps, bps, ...}]}"
maxpps=$(jq -s 'map(.devices[0].pps) | max' "$J")
assert_gt "$maxpps" 100 "--json: some interval's pps is not 0"

hbm_done
