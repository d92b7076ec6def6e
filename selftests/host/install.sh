#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall, into DESTDIRs under the build directory
# (seen alike inside the pinned environment and out of it): the exact
# files installed for the default PREFIX, for PREFIX=/usr and for
# directories given one by one, each a copy of what was built with its
# mode; the systemd units written for SBINDIR (their ExecStart) with the
# ordering the boot needs (bpf-hbm.service, oneshot, before the network;
# bpf-hbm-watch.service, apply --watch, after it), each passing
# `systemd-analyze verify` as installed (their ExecStart pointed at the
# bpf-hbm installed under DESTDIR; systemd-analyze must be there, it is
# in the pinned environment); and uninstall leaving no file behind.
#
#   selftests/host/install.sh BUILD_DIR
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:?usage: install.sh BUILD_DIR}
case $build in /*) ;; *) build=$repo/$build ;; esac
# The Makefile's targets are named relative to the repository.
out=${build#"$repo"/}
dest=$build/install-test
fail=0

bad() { echo "FAIL: $*"; fail=1; }

# make in the repository, its own: none of the make that runs the tests'
# flags or variables (MAKEFLAGS) carry over.
hbm_make() { # LOG ARG...
	local log=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$repo" --no-print-directory OUTPUT="$out" "$@" \
		>"$log" 2>&1 && return 0
	bad "make $* failed:"
	sed 's/^/  /' "$log"
	return 1
}

# The files and links under DIR, relative to it, sorted.
files() { (cd "$1" && find . ! -type d | sed 's|^\./||' | sort); }

# systemd-analyze verify of both units as installed, from copies whose
# only change is ExecStart's path: SBINDIR under DESTDIR, where bpf-hbm
# was installed (a unit whose binary is missing fails; --root DESTDIR
# would also look for systemd's own units, sysinit.target and the rest,
# under DESTDIR). What systemd would only warn about (an unknown key, a
# bad value: "ignoring") fails here too: any output is a failure.
# --man=no: there is no man(1) to look bpf-hbm(8) up with here (the
# page's install is checked above).
verify() { # NAME DESTDIR SBINDIR UNITDIR
	local name=$1 d=$2 sbin=$3 unit=$4 v=$2.verify out st u

	if ! command -v systemd-analyze >/dev/null; then
		bad "$name: no systemd-analyze to verify the units with (it is in the pinned environment: run make test-host there)"
		return
	fi
	rm -rf "$v"
	mkdir -p "$v"
	for u in bpf-hbm.service bpf-hbm-watch.service; do
		sed "s|^ExecStart=$sbin/|ExecStart=$d$sbin/|" "$d$unit/$u" >"$v/$u"
		grep -q "^ExecStart=$d$sbin/bpf-hbm " "$v/$u" ||
			bad "$name: $u: no ExecStart=$sbin/bpf-hbm to verify"
	done
	out=$(systemd-analyze verify --man=no "$v/bpf-hbm.service" \
		"$v/bpf-hbm-watch.service" 2>&1)
	st=$?
	rm -rf "$v"
	if [ $st != 0 ] || [ -n "$out" ]; then
		bad "$name: systemd-analyze verify (status $st):"
		sed 's/^/  /' <<<"$out"
	fi
}

check() { # NAME SBINDIR MANDIR COMPDIR UNITDIR [MAKE VARIABLE...]
	local name=$1 sbin=$2 man=$3 comp=$4 unit=$5 d=$dest/$1 want got l
	shift 5
	rm -rf "$d"
	hbm_make "$dest/$name.log" install DESTDIR="$d" "$@" || return
	want=$(printf '%s\n' "${sbin#/}/bpf-hbm" "${man#/}/man8/bpf-hbm.8" \
		"${comp#/}/bpf-hbm" "${unit#/}/bpf-hbm.service" \
		"${unit#/}/bpf-hbm-watch.service" | sort)
	got=$(files "$d")
	if [ "$got" != "$want" ]; then
		bad "$name: installed"
		sed 's/^/  /' <<<"$got"
		echo " wanted"
		sed 's/^/  /' <<<"$want"
		return
	fi
	cmp -s "$build/bpf-hbm" "$d$sbin/bpf-hbm" || bad "$name: bpf-hbm is not the one built"
	cmp -s "$build/bpf-hbm.8" "$d$man/man8/bpf-hbm.8" || bad "$name: bpf-hbm.8 is not the one built"
	cmp -s "$repo/scripts/bpf-hbm.bash-completion" "$d$comp/bpf-hbm" ||
		bad "$name: the completion is not scripts/bpf-hbm.bash-completion"
	[ "$(stat -c %a "$d$sbin/bpf-hbm")" = 755 ] || bad "$name: bpf-hbm not mode 755"
	for l in "$man/man8/bpf-hbm.8" "$comp/bpf-hbm" "$unit/bpf-hbm.service" \
		 "$unit/bpf-hbm-watch.service"; do
		[ "$(stat -c %a "$d$l")" = 644 ] || bad "$name: $l not mode 644"
	done
	# The unit: bpf-hbm apply from SBINDIR, once, before the network.
	for l in "ExecStart=$sbin/bpf-hbm apply" Type=oneshot RemainAfterExit=yes \
		 DefaultDependencies=no Before=network-pre.target \
		 Wants=network-pre.target \
		 'After=sys-fs-bpf.mount local-fs.target' \
		 ConditionPathExists=/etc/bpf-hbm.conf \
		 WantedBy=multi-user.target; do
		grep -qxF -- "$l" "$d$unit/bpf-hbm.service" ||
			bad "$name: bpf-hbm.service has no line '$l'"
	done
	# The watcher: apply --watch, after it, restarted if it fails,
	# reloaded by SIGHUP.
	for l in "ExecStart=$sbin/bpf-hbm apply --watch" Type=simple \
		 'After=bpf-hbm.service sys-fs-bpf.mount' Restart=on-failure \
		 'ExecReload=kill -HUP $MAINPID' \
		 ConditionPathExists=/etc/bpf-hbm.conf \
		 WantedBy=multi-user.target; do
		grep -qxF -- "$l" "$d$unit/bpf-hbm-watch.service" ||
			bad "$name: bpf-hbm-watch.service has no line '$l'"
	done
	for l in bpf-hbm.service bpf-hbm-watch.service; do
		[ "$(grep -c '^ExecStart=' "$d$unit/$l")" = 1 ] ||
			bad "$name: $l has more than one ExecStart"
		grep -q @ "$d$unit/$l" && bad "$name: $l has a @VAR@ left"
	done
	verify "$name" "$d" "$sbin" "$unit"
	# And uninstall, with the same variables, removes every file.
	hbm_make "$dest/$name-un.log" uninstall DESTDIR="$d" "$@" || return
	got=$(files "$d")
	[ -z "$got" ] || bad "$name: uninstall left $got"
}

rm -rf "$dest"
mkdir -p "$dest"
check default /usr/local/sbin /usr/local/share/man \
	/usr/local/share/bash-completion/completions \
	/usr/local/lib/systemd/system
check usr /usr/sbin /usr/share/man /usr/share/bash-completion/completions \
	/usr/lib/systemd/system PREFIX=/usr
check dirs /sbin /opt/man /usr/share/bash-completion/completions \
	/etc/systemd/system PREFIX=/usr SBINDIR=/sbin MANDIR=/opt/man \
	UNITDIR=/etc/systemd/system

[ $fail = 0 ] && rm -rf "$dest" && echo "make install: all checks passed"
exit $fail
