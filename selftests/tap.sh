# SPDX-License-Identifier: GPL-2.0
#
# TAP lines for selftests/run.sh, and run_vm, which boots the VM and
# reports each VM test as it ends. Sourced after status.sh, with repo,
# here (selftests/) and out (build/selftests) set; HBM_VMRUN (default
# scripts/vmrun.sh) boots the VM (selftests/host/tap_stream.sh fakes it).
. "$repo/scripts/follow.sh"

num=0 pass=0 fail=0 skip=0

# report STATUS NAME LOG [NOTE [SECONDS]]: a TAP line, numbered on; a
# failure's LOG follows as comments, a pass's REPORT: lines. How long the
# test took (SECONDS) ends the line as a comment, and a skip's reason.
report() {
	local note=${4:-} t=${5:+${5}s}
	num=$((num + 1))
	case $1 in
	0)
		pass=$((pass + 1))
		echo "ok $num - $2${t:+ # $t}"
		# Measurements a test reports are shown even when it passes.
		[ -s "$3" ] && sed -n 's/^REPORT: /# /p' "$3"
		;;
	"$HBM_SKIP")
		skip=$((skip + 1))
		echo "ok $num - $2 # SKIP $note${t:+${note:+ }($t)}"
		;;
	*)
		fail=$((fail + 1))
		note=$note${t:+${note:+ }($t)}
		echo "not ok $num - $2${note:+ # $note}"
		[ -s "$3" ] && sed 's/^/# /' "$3"
		;;
	esac
}

# The VM (selftests/vm/run.sh) appends one "STATUS NAME SECONDS [NOTE]"
# line per test to a results file in the build directory, which the host
# sees: each is reported as it comes. The VM's console output (boot noise
# included) goes to a log, shown for the tests it never ran.
run_vm() { # KERNEL PREFIX TEST...
	local k=$1 res log t v vm_env=()
	vm_prefix=$2
	shift 2
	# The counts and the per-test timeout cross into the VM (make soak).
	for v in CHURN_N FAULT_N TEST_TIMEOUT; do
		[ -n "${!v:-}" ] && vm_env+=("$v=${!v}")
	done
	res=$out/vm-$k.results
	log=$out/vm-$k.console
	vm_dir=$out/$k
	: >"$res"
	mkdir -p "$vm_dir"
	vm_want=" $* " vm_seen=" "
	"${HBM_VMRUN:-$repo/scripts/vmrun.sh}" -k "$k" -t "${VM_TIMEOUT:-4500}" \
		env "${vm_env[@]}" "$here/vm/run.sh" --out "$vm_dir" \
		--results "$res" "$@" \
		>"$log" 2>&1 &
	# In the background, the VM ignores SIGINT: ^C stops it from here.
	vm_pid=$!
	trap 'kill -TERM "$vm_pid" 2>/dev/null; exit 130' INT
	trap 'kill -TERM "$vm_pid" 2>/dev/null; exit 143' TERM
	follow_lines "$vm_pid" "$res" vm_result
	trap - INT TERM
	for t in "$@"; do
		case $vm_seen in *" $t "*) continue ;; esac
		report 1 "$vm_prefix$t" "$log" "the VM did not run it"
	done
}

# vm_result LINE: one line of the results file; a test not asked for, or
# already reported, is not reported again.
vm_result() {
	local st name secs note
	read -r st name secs note <<<"$1"
	[ -n "$name" ] || return 0
	case $vm_want in *" $name "*) ;; *) return 0 ;; esac
	case $vm_seen in *" $name "*) return 0 ;; esac
	vm_seen+="$name "
	# A line with no time (an older vm/run.sh): its third word is a note's.
	[[ $secs =~ ^[0-9]+$ ]] || { note=$secs${note:+ $note}; secs=; }
	report "$st" "$vm_prefix$name" "$vm_dir/$name.log" "$note" "$secs"
}
