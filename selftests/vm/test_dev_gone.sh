#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A device deleted with bpf_hbm attached takes its configuration with it:
# a new device that gets the same ifindex in the same namespace (as a
# container's veth often does) starts from the defaults, not from the
# deleted device's rate. `tc qdisc del` alone keeps the configuration for
# the next `tc qdisc add`; a device deleted after it, bpf_hbm no longer on
# it, loses its configuration and classes at the next loader command.
. "$(dirname "$0")/lib.sh"

cfg() { inA "$HBM" show "$DEV_A" --json | jq -r ".devices[0].$1 // empty"; }

hbm_veth_setup || hbm_fatal "veth setup"
idx=$(inA cat "/sys/class/net/$DEV_A/ifindex")
assert_ok "attach --rate 7mbit" inA "$HBM" attach "$DEV_A" --rate 7mbit \
	--parent root || hbm_done

assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root
assert_ok "tc qdisc add ... bpf_hbm" inA tc qdisc add dev "$DEV_A" root bpf_hbm
assert_eq "$(cfg config.rate_bps)" 7000000 "the configuration outlives tc qdisc del"

assert_ok "delete the device" inA ip link del "$DEV_A"
assert_ok "a new device with ifindex $idx" ip link add "$DEV_A" index "$idx" \
	netns "$NS_A" type veth peer name "$DEV_B" netns "$NS_B"
assert_eq "$(inA cat "/sys/class/net/$DEV_A/ifindex")" "$idx" "the same ifindex"
inA ip link set "$DEV_A" up
assert_ok "tc qdisc add ... bpf_hbm" inA tc qdisc add dev "$DEV_A" root bpf_hbm
assert_eq "\"$(cfg 'configured | tostring')\"" '"false"' "no configuration left for it"
assert_eq "$(cfg config.rate_bps)" 1000000000 "the default rate, not the deleted device's"
inA "$HBM" show "$DEV_A"

# Deleted without bpf_hbm on it (tc qdisc del first): the qdisc cannot see
# the device go, and the next loader command drops what it left, the
# configuration and its class, so that a device given the same ifindex
# starts from the defaults again.
# hbm_config's and hbm_class_configs' entries for ifindex $idx in A's
# namespace (other tests' namespaces had devices of that ifindex too)
ns=$(inA stat -L -c %i /proc/self/ns/net)
entries() {
	bpftool -j map dump pinned "/sys/fs/bpf/bpf_hbm/$1" |
		jq -e --argjson i "$idx" --argjson n "$ns" \
			'[.[] | select(.formatted.key.ifindex == $i and .formatted.key.netns == $n)] | length'
}
CG=$(hbm_cg c)
assert_ok "set --rate 9mbit" inA "$HBM" set "$DEV_A" --rate 9mbit
assert_ok "class add" inA "$HBM" class add "$DEV_A" --cgroup "$CG" --rate 5mbit
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root
assert_eq "$(entries hbm_config)" 1 "the configuration outlives tc qdisc del"
assert_ok "delete the device, bpf_hbm not on it" inA ip link del "$DEV_A"
assert_eq "$(entries hbm_config)" 1 "the configuration is still there"
assert_ok "show (a loader command)" inA "$HBM" show
assert_eq "$(entries hbm_config)" 0 "the loader dropped the gone device's configuration"
assert_eq "$(entries hbm_class_configs)" 0 "and its class"
assert_ok "a new device with ifindex $idx" ip link add "$DEV_A" index "$idx" \
	netns "$NS_A" type veth peer name "$DEV_B" netns "$NS_B"
inA ip link set "$DEV_A" up
assert_ok "tc qdisc add ... bpf_hbm" inA tc qdisc add dev "$DEV_A" root bpf_hbm
assert_eq "$(cfg config.rate_bps)" 1000000000 "the default rate, not the deleted device's 9 Mbit/s"
hbm_done
