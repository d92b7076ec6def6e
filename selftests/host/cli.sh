#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm's command line over the paths that touch nothing on this host:
# help, version and usage errors (exit 2), each of which returns before a
# command runs. selftests/run.sh runs it on the ASan+UBSan build, where a
# sanitizer's report ends the program with another status.
#
#   selftests/host/cli.sh BPF_HBM
set -uo pipefail

hbm=${1:?usage: cli.sh BPF_HBM}
fail=0

expect() { # STATUS PATTERN ARG... : exit status, and a line of the output
	local want=$1 pat=$2 out st
	shift 2
	out=$("$hbm" "$@" 2>&1)
	st=$?
	if [ "$st" != "$want" ] || ! grep -q -e "$pat" <<<"$out"; then
		echo "FAIL: bpf-hbm $* exited $st (want $want, output matching '$pat'):"
		sed 's/^/  /' <<<"$out"
		fail=1
	fi
}

expect 0 '^Usage: bpf-hbm' --help
expect 0 '^Usage: bpf-hbm' -h
expect 0 '^Usage: bpf-hbm' help
expect 0 '^bpf-hbm .*ABI' --version
expect 0 '^Usage: bpf-hbm class' class --help
for c in load unload attach set show detach apply; do
	expect 0 "^Usage: bpf-hbm $c" "$c" -h
	expect 0 "^Usage: bpf-hbm $c" "$c" --help
done
for c in add set del list; do
	expect 0 "^Usage: bpf-hbm class $c" class "$c" -h
done
# Every option's default as --help writes it parses (hbm_opt_default).
# attach's rate is DEV's link speed; load's is unconfigured devices'.
expect 0 "default DEV's link speed" attach -h
expect 0 'default 1gbit' load -h

# Usage errors: status 2, and nothing is done.
expect 2 'no command given'
expect 2 "unrecognized option '--bogus'" --bogus
expect 2 "unknown command 'bogus'" bogus
expect 2 'missing class sub-command' class
expect 2 "unknown class sub-command 'bogus'" class bogus
expect 2 'missing DEV' attach
expect 2 'missing DEV' detach
expect 2 "invalid device name 'a/b'" attach a/b
expect 2 'invalid device name' attach 0123456789abcdef
expect 2 "unexpected argument 'extra'" unload extra
expect 2 "couldn't load bpf_hbm: invalid rate 'fast'" load --rate fast
expect 2 "couldn't load bpf_hbm: rate 1kbit out of range" load --rate 1kbit
expect 2 "unrecognized option '--burst'" load --burst 1ms
# tc's syntax, a bare word naming one of the command's options: a hint.
expect 2 "unexpected argument 'rate': did you mean --rate?" attach eth0 rate 10gbit
expect 2 "unexpected argument 'ecn': did you mean --ecn?" set eth0 ecn off
expect 2 "unexpected argument 'parent': did you mean --parent?" attach eth0 --rate 1gbit parent mq
expect 2 "unexpected argument 'json': did you mean --json?" show eth0 json
expect 2 "unexpected argument 'force': did you mean --force?" unload force
# Not for another command's option, nor for a value.
expect 2 "unexpected argument 'rate'\$" show eth0 rate
expect 2 "unexpected argument '10gbit'\$" attach eth0 10gbit
expect 2 "unrecognized option '--bogus'" attach eth0 --bogus
expect 2 "needs a value" attach eth0 --rate
expect 2 "invalid rate 'fast'" attach eth0 --rate fast
expect 2 'out of range 1Mbit..400Gbit' attach eth0 --rate 1kbit
expect 2 'out of range 1Mbit..400Gbit' set eth0 --rate 99999999999999999999999tbit
expect 2 'out of range (at most 3600s)' attach eth0 --burst 3601s
expect 2 "invalid limit '-1'" attach eth0 --limit -1
expect 2 'out of range (1..' attach eth0 --quantum 0
expect 2 "invalid cn 'maybe'" attach eth0 --cn maybe
expect 2 "invalid parent 'foo'" attach eth0 --parent foo
expect 2 "invalid ecn 'maybe'" attach eth0 --ecn maybe
expect 2 'invalid flow idle time' load --flow-idle 0
expect 2 "invalid interval '0'" show --watch 0
expect 2 "invalid interval '50ms' (100ms..1h" show --watch 50ms
expect 2 "invalid interval '2h'" show --watch 2h
expect 2 "invalid interval '3601'" show --watch 3601
expect 2 "invalid interval '1min'" show --watch 1min
expect 0 '^Usage: bpf-hbm show' show --watch 500ms -h
expect 0 '^Usage: bpf-hbm show' show --watch 0.5 --help
expect 2 "couldn't show bpf_hbm: --prometheus and --json exclude each other" show --prometheus --json
expect 2 "couldn't show eth0: --prometheus and --json exclude each other" show eth0 --json --prometheus
expect 2 "couldn't show bpf_hbm: --prometheus takes no --watch" show --prometheus --watch 1
expect 2 "unexpected argument 'prometheus': did you mean --prometheus?" show eth0 prometheus
expect 2 'no option given' set eth0
expect 2 'missing --cgroup' class add eth0 --rate 10mbit
expect 2 'missing --rate' class add eth0 --cgroup /x
expect 2 'no option given' class set eth0 --cgroup /x
expect 2 "invalid cgroup path ''" class del eth0 --cgroup ''
expect 2 "unrecognized option '--limit'" class add eth0 --cgroup /x --rate 1mbit --limit 5

# apply: its usage errors, and a file refused whole (FILE:LINE, exit 2)
# or not read (1), all before the lock and before anything is looked at.
expect 2 "unexpected argument 'b'" apply a b
expect 2 "couldn't apply /etc/bpf-hbm.conf: unrecognized option '--bogus'" apply --bogus
expect 2 "unrecognized option '--rate'" apply --rate 1gbit
expect 1 "couldn't read /nonexistent/bpf-hbm.conf: No such file" apply /nonexistent/bpf-hbm.conf
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
printf '# bad\neth0 --rate fast\neth1 class --cgroup /x --rate 1gbit\n' >"$conf"
expect 2 "^bpf-hbm: couldn't apply $conf:2: invalid rate 'fast'\$" apply "$conf"
expect 2 "^bpf-hbm: couldn't apply $conf:3: a class of eth1, which has no line of its own" apply "$conf" --dry-run
printf 'eth0\neth0\n' >"$conf"
expect 2 "$conf:2: duplicate line for eth0 (first at line 1)" apply --dry-run "$conf"
printf 'eth0 --cgroup "/x\n' >"$conf"
expect 2 "$conf:1: a double quote is not closed" apply "$conf"
printf 'eth0\0\n' >"$conf"
expect 2 "couldn't read $conf: not a text file" apply "$conf"
# apply --watch: no value, not with --dry-run, and a bad file refused
# (exit 2) before it watches anything.
expect 2 "couldn't apply $conf: --dry-run and --watch exclude each other" apply "$conf" --watch --dry-run
expect 2 "unrecognized option '--watch=1s'" apply --watch=1s
expect 0 '^Usage: bpf-hbm apply \[FILE\] \[--dry-run | --watch\]' apply --watch -h
printf 'eth0 --rate fast\n' >"$conf"
expect 2 "^bpf-hbm: couldn't apply $conf:1: invalid rate 'fast'\$" apply "$conf" --watch
expect 1 "couldn't read /nonexistent/bpf-hbm.conf: No such file" apply /nonexistent/bpf-hbm.conf --watch

[ $fail = 0 ] && echo "bpf-hbm: all CLI checks passed"
exit $fail
