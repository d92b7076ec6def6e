#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm(8) against the bpf-hbm it was made from: it is what
# scripts/gen-man.sh writes from that binary now (not a stale page), it
# names every command of --help and every long option of --help and of
# each command's -h, it has the sections an operator looks for, and its
# roff is plain: known macros only, no stray escapes (and no warning from
# groff, where groff is installed). Only help is run.
#
#   selftests/host/man.sh BPF_HBM MANPAGE
set -uo pipefail

hbm=${1:?usage: man.sh BPF_HBM MANPAGE}
man=${2:?usage: man.sh BPF_HBM MANPAGE}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail=0

bad() { echo "FAIL: $*"; fail=1; }

[ -s "$man" ] || { echo "FAIL: no $man"; exit 1; }
if ! diff -u "$man" <("$here/../../scripts/gen-man.sh" "$hbm") >/dev/null; then
	bad "$man is not what scripts/gen-man.sh writes from $hbm now"
fi

# The page as text: fonts dropped, escapes undone.
text=$(sed -e 's/\\f[BIR]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' \
	   -e 's/\\&//g' "$man")

help=$("$hbm" --help)
cmds=$(awk '/^Commands:/ { on = 1; next }
	on && /^$/ { exit }
	on && /^  [a-z]/ { print ($1 == "class" ? $1 " " $2 : $1) }' <<<"$help")
[ -n "$cmds" ] || bad "no commands in bpf-hbm --help"
all=$help
while read -r c; do
	grep -qF -- "bpf-hbm $c" <<<"$text" || bad "command '$c' is not in the page"
	[ "$c" = help ] && continue
	# shellcheck disable=SC2086 # "class add": two arguments
	h=$("$hbm" $c -h) || { bad "bpf-hbm $c -h failed"; continue; }
	all+=$'\n'$h
done <<<"$cmds"
for o in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$all" | sort -u); do
	grep -qF -- "$o" <<<"$text" || bad "option $o is not in the page"
done

for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS 'EXIT STATUS' FILES \
	 'SEE ALSO'; do
	grep -qx "\\.SH $s" "$man" || bad "no $s section"
done
grep -q '^0 success, 1 failure, 2 usage error' <<<"$text" ||
	bad "EXIT STATUS does not give 0, 1 and 2"
grep -q '^/sys/fs/bpf/bpf_hbm/link' <<<"$text" || bad "FILES: no pins"
if ! grep -q '^\.BR tc (8),' "$man" || ! grep -q '^\.BR tc\\-fq (8),' "$man"; then
	bad "SEE ALSO: no tc(8), tc-fq(8)"
fi

# The roff: the macros gen-man.sh writes, and escapes of its own.
if grep -vE '^\.(TH|SH|SS|PP|TP|nf|fi|BR|\\") ?' "$man" | grep -q "^[.']"; then
	bad "a line starts with a control character:"
	grep -vE '^\.(TH|SH|SS|PP|TP|nf|fi|BR|\\") ?' "$man" | grep "^[.']"
fi
if grep -v '^\.\\"' "$man" | sed -E 's/\\(f[BIR]|-|e|&)//g' | grep -q '\\'; then
	bad "an escape gen-man.sh does not write:"
	grep -v '^\.\\"' "$man" | sed -E 's/\\(f[BIR]|-|e|&)//g' | grep '\\'
fi
if command -v groff >/dev/null; then
	w=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$w" ] || bad "groff: $w"
else
	echo "note: no groff here, the page was not rendered"
fi

[ $fail = 0 ] && echo "bpf-hbm(8): all checks passed"
exit $fail
