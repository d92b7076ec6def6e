#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-layers.sh OBJDIR SRCDIR: the loader is in layers (loader/util.h
# says which), each file using only the files below it. Fails, naming the
# loop, when a file calls into one that calls back into it, directly or
# around a longer loop (from the objects' symbols: nm), or when the
# headers include each other in a loop (from their #include lines).
# tsort finds the loops.
set -euo pipefail

objdir=${1:?usage: check-layers.sh OBJDIR SRCDIR}
srcdir=${2:?usage: check-layers.sh OBJDIR SRCDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# First, that a loop is found: two files that call each other.
if [ -z "${HBM_LAYERS_SELFTEST:-}" ]; then
	mkdir "$tmp/loop"
	printf 'int b(void);\nint a(void) { return b(); }\n' >"$tmp/loop/a.c"
	printf 'int a(void);\nint b(void) { return a(); }\n' >"$tmp/loop/b.c"
	${CC:-cc} -c "$tmp/loop/a.c" -o "$tmp/loop/a.o"
	${CC:-cc} -c "$tmp/loop/b.c" -o "$tmp/loop/b.o"
	if HBM_LAYERS_SELFTEST=1 "$0" "$tmp/loop" "$tmp/loop" >/dev/null; then
		echo "check-layers: a known loop (a.c <-> b.c) was not found" >&2
		exit 1
	fi
fi

objs=("$objdir"/*.o)
[ -e "${objs[0]}" ] || { echo "check-layers: no objects in $objdir" >&2; exit 1; }

# Who defines each global symbol, then who uses whose.
for o in "${objs[@]}"; do
	nm --defined-only -g "$o" | awk -v f="$(basename "$o" .o)" \
		'NF == 3 { print $3, f }'
done | sort >"$tmp/defs"
for o in "${objs[@]}"; do
	nm -u "$o" | awk -v f="$(basename "$o" .o)" '{ print $NF, f }'
done | sort >"$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' |
	sort -u >"$tmp/calls"
[ -s "$tmp/calls" ] || { echo "check-layers: no calls between files found" >&2; exit 1; }

# Which local header each file includes.
for f in "$srcdir"/*.[ch]; do
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		if [ -e "$srcdir/$h" ]; then echo "$(basename "$f") $h"; fi
	done
done | sort -u >"$tmp/includes"

st=0
for g in calls includes; do
	if ! tsort "$tmp/$g" >/dev/null 2>"$tmp/$g.err"; then
		echo "check-layers: a loop in the $g between $srcdir files:"
		sed 's/^tsort: //' "$tmp/$g.err"
		st=1
	fi
done
[ $st = 0 ] && echo "REPORT: $(wc -l <"$tmp/calls") calls and $(wc -l <"$tmp/includes") includes between $srcdir files, no loop"
exit $st
