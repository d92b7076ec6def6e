#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The bash completion (scripts/bpf-hbm.bash-completion) against the
# bpf-hbm it completes: sourced into this shell, its function is called as
# bash would (COMP_WORDS, COMP_CWORD) and what it offers (COMPREPLY)
# checked: the commands, class's sub-commands, every option each
# command's -h gives, option values, devices and cgroup directories.
# Only help is run: nothing on this host is touched.
#
#   selftests/host/completion.sh BPF_HBM COMPLETION
set -uo pipefail

hbm=${1:?usage: completion.sh BPF_HBM COMPLETION}
comp=${2:?usage: completion.sh BPF_HBM COMPLETION}
fail=0

# shellcheck source=/dev/null # the completion under test
. "$comp" || { echo "FAIL: couldn't source $comp"; exit 1; }
complete -p bpf-hbm | grep -q -- '-F _bpf_hbm' ||
	{ echo "FAIL: bpf-hbm is not completed by _bpf_hbm"; fail=1; }

# Completes WORD... (the last one the word under the cursor), bpf-hbm as
# the first, and prints COMPREPLY sorted, one a line.
complete_words() {
	COMP_WORDS=("$hbm" "$@")
	COMP_CWORD=$#
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_bpf_hbm bpf-hbm "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}"
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | sort
}

expect() { # WANT (words, one a line, sorted) WORD...
	local want=$1 got
	shift
	got=$(complete_words "$@")
	if [ "$got" != "$want" ]; then
		echo "FAIL: bpf-hbm $* <TAB> offered:"
		sed 's/^/  /' <<<"$got"
		echo " wanted:"
		sed 's/^/  /' <<<"$want"
		fail=1
	fi
}

lines() { printf '%s\n' "$@" | sort; }

expect "$(lines apply attach class detach help load set show unload)" ''
expect "$(lines set show)" s
expect "$(lines attach)" -v at
expect "$(lines --dry-run)" apply --d
# apply --watch takes no value (show's takes an INTERVAL): FILE follows.
expect "$(lines --watch)" apply /etc/bpf-hbm.conf --w
expect "$(compgen -f -- /etc/host | sort)" apply --watch /etc/host
# apply's FILE: a file name, and only where FILE goes.
expect "$(compgen -f -- /etc/host | sort)" apply /etc/host
expect '' apply /etc/bpf-hbm.conf ''

expect "$(lines --help --verbose --version)" --
expect "$(lines add del list set)" class ''
expect "$(lines --rate --replace)" attach eth0 --r
expect "$(lines --rate --replace)" attach --r
expect "$(lines on off)" attach eth0 --ecn ''
expect "$(lines on off)" set eth0 --rate 1gbit --late-credit ''
expect "$(lines mq)" attach eth0 --parent m
expect '' attach eth0 --rate ''
expect "$(lines --json)" show --j
expect "$(lines --prometheus)" show eth0 --p
expect "" show --watch ""
expect "$(lines --cgroup)" class add eth0 --c
expect '' class list eth0 --cg
expect '' unload ''
# DEV: the devices of /sys/class/net, and only where DEV goes.
devs=$(ls /sys/class/net 2>/dev/null | sort)
expect "$devs" attach ''
expect "$devs" class add ''
expect "$devs" set -v ''
expect '' attach eth0 ''
expect '' attach eth0 --rate 1gbit ''
# --cgroup: a directory, absolute or relative to the cgroup2 mount.
expect "$(cd / && compgen -d -- /u | sed 's|$|/|' | sort)" \
	class add eth0 --cgroup /u
if [ -d /sys/fs/cgroup ]; then
	expect "$(cd /sys/fs/cgroup && compgen -d | sed 's|$|/|' | sort)" \
		class del eth0 --cgroup ''
fi

# Every long option each command's -h gives is offered, and nothing else
# but -h, --help, -v and --verbose.
for c in load unload attach set show detach 'class add' 'class set' \
	 'class del' 'class list' apply; do
	# shellcheck disable=SC2086 # "class add": two words
	want=$( ("$hbm" $c -h | grep -oE -- '^ +--[a-z][a-z0-9-]*' |
		 sed 's/^ *//'; printf '%s\n' --help --verbose) | sort -u)
	# shellcheck disable=SC2086
	expect "$want" $c eth0 --
done

[ $fail = 0 ] && echo "bpf-hbm completion: all checks passed"
exit $fail
