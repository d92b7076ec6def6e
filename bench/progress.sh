# SPDX-License-Identifier: GPL-2.0
#
# How far a benchmark is, a line per run (sourced by bench/run.sh):
#
#   bench: [12/48] fqedt cubic 2 flows 200mbit rep 3/3: 14s, 5m in, ~9m left
#
# the run's time, the time since progress_begin and an estimate of what is
# left: the runs to come of each kind at the mean of that kind's runs so
# far, a kind not run yet at the others' mean per second of traffic
# (progress_kind's SECONDS). The lines go to PROGRESS_FILE where it is set
# (from the VM, to a file the host follows: scripts/follow.sh, make
# bench), else to stderr. PROGRESS_DRY=1 runs nothing, each run 0 s.

# progress_begin: no runs yet, the clock starts
progress_begin() {
	declare -gA prog_left=() prog_len=() prog_n=() prog_s=()
	prog_t0=$(date +%s) prog_done=0 prog_total=0
}

# progress_kind KIND RUNS SECONDS: RUNS runs of KIND to come, each
# SECONDS of traffic
progress_kind() {
	prog_left[$1]=$2 prog_len[$1]=$3 prog_n[$1]=0 prog_s[$1]=0
	prog_total=$((prog_total + $2))
}

# progress_fmt SECONDS: 42s, 9m, 1h05m
progress_fmt() {
	local s=$1
	if [ "$s" -lt 100 ]; then
		echo "${s}s"
	elif [ "$s" -lt 3570 ]; then
		echo "$(( (s + 30) / 60 ))m"
	else
		s=$(( (s + 30) / 60 ))
		printf '%dh%02dm\n' $((s / 60)) $((s % 60))
	fi
}

# progress_eta: seconds the runs to come should take
progress_eta() {
	local k eta=0 s=0 traffic=0
	for k in "${!prog_n[@]}"; do
		s=$((s + prog_s[$k]))
		traffic=$((traffic + prog_n[$k] * prog_len[$k]))
	done
	for k in "${!prog_left[@]}"; do
		[ "${prog_left[$k]}" -gt 0 ] || continue
		if [ "${prog_n[$k]}" -gt 0 ]; then
			eta=$((eta + prog_left[$k] * prog_s[$k] / prog_n[$k]))
		elif [ "$traffic" -gt 0 ]; then
			eta=$((eta + prog_left[$k] * prog_len[$k] * s / traffic))
		fi
	done
	echo "$eta"
}

# progress_say LINE
progress_say() {
	if [ -n "${PROGRESS_FILE:-}" ]; then
		echo "$1" >>"$PROGRESS_FILE"
	else
		echo "$1" >&2
	fi
}

# progress_run KIND WHAT CMD...: one run of KIND (CMD, its stdout the
# caller's), then its line; CMD's status
progress_run() {
	local kind=$1 what=$2 t0 rc=0 secs
	shift 2
	t0=$(date +%s)
	[ "${PROGRESS_DRY:-0}" = 1 ] || { "$@"; rc=$?; }
	secs=$(( $(date +%s) - t0 ))
	prog_done=$((prog_done + 1))
	prog_n[$kind]=$((prog_n[$kind] + 1))
	prog_s[$kind]=$((prog_s[$kind] + secs))
	prog_left[$kind]=$((prog_left[$kind] - 1))
	progress_say "bench: [$prog_done/$prog_total] $what: ${secs}s$([ $rc = 0 ] || echo " (failed: $rc)"), $(progress_fmt $(( $(date +%s) - prog_t0 ))) in, ~$(progress_fmt "$(progress_eta)") left"
	return $rc
}

# progress_end: the last line
progress_end() {
	progress_say "bench: $prog_done runs in $(progress_fmt $(( $(date +%s) - prog_t0 )))"
}
