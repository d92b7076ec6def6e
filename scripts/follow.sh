#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run CMD and, while it runs, copy each line another process (the VM,
# through the shared filesystem) appends to FILE to stderr, as it comes;
# exit with CMD's status. FILE is emptied first. `make bench` follows the
# VM's progress lines with it.
#
#   scripts/follow.sh FILE CMD [ARG...]
#
# Sourced, it only defines follow_lines, which selftests/run.sh uses too.

# follow_lines PID FILE FUNC: until PID (a child of this shell) has exited,
# call FUNC LINE for each line of FILE, in order, every FOLLOW_POLL_S
# seconds (default 1); a line is read only once it ends in a newline (the
# writer may be half-way through it). After PID exits, FILE is read one
# last time. Returns PID's exit status.
follow_lines() {
	local pid=$1 file=$2 func=$3 n=0 alive line
	while :; do
		# Whether it still runs, before reading: what it wrote before
		# it ended is in the last read.
		alive=0
		kill -0 "$pid" 2>/dev/null && alive=1
		# read fails on a last line with no newline: left for later.
		while IFS= read -r line; do
			n=$((n + 1))
			"$func" "$line"
		done < <(tail -n "+$((n + 1))" "$file" 2>/dev/null)
		[ $alive = 1 ] || break
		sleep "${FOLLOW_POLL_S:-1}"
	done
	wait "$pid"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	[ $# -ge 2 ] || { sed -n '9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
	file=$1
	shift
	: >"$file" || exit 2
	"$@" &
	pid=$!
	# In the background, CMD ignores SIGINT: pass ^C and kill on.
	trap 'kill -TERM "$pid" 2>/dev/null; exit 130' INT
	trap 'kill -TERM "$pid" 2>/dev/null; exit 143' TERM
	to_stderr() { printf '%s\n' "$1" >&2; }
	follow_lines "$pid" "$file" to_stderr
fi
