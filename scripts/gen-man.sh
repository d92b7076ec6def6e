#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm(8) in roff on stdout, written from the binary's own `--help` and
# each command's `-h`: the man page says what the loader says, word for
# word, so the two cannot drift (selftests/host/man.sh checks that every
# command and option of the help is in the page).
#
#   scripts/gen-man.sh BPF_HBM > bpf-hbm.8
#
# The help is read as blank-line separated blocks, each headed by an
# unindented "Name:" line or not: "Usage" gives SYNOPSIS, the blocks before
# "Commands" DESCRIPTION, "Commands" the commands (each then gives its own
# -h, under COMMANDS), "Files" FILES, "Exit status" EXIT STATUS, the rest
# OPTIONS. In a block, a line at two spaces' indent that a deeper one
# continues (or that has two spaces inside) is a tagged paragraph: an
# option, a unit, a file; other lines are prose.
set -euo pipefail

hbm=${1:?usage: gen-man.sh BPF_HBM}
help=$("$hbm" --help)
version=$("$hbm" --version | awk '{ print $2; exit }')

# The commands as --help's Commands block lists them, at two spaces'
# indent ("class add" is two words; deeper lines describe them).
cmds=$(awk '/^Commands:/ { on = 1; next }
	on && /^$/ { exit }
	on && /^  [a-z]/ { print ($1 == "class" ? $1 " " $2 : $1) }' <<<"$help")

{
	printf '@@VERSION %s\n' "$version"
	printf '@@MAIN\n%s\n' "$help"
	group=
	while read -r cmd; do
		# "help" prints --help itself: nothing of its own to say.
		[ "$cmd" = help ] && continue
		# A group of sub-commands (class) first says what they share.
		if [ "${cmd% *}" != "$cmd" ] && [ "${cmd% *}" != "$group" ]; then
			group=${cmd% *}
			# shellcheck disable=SC2086 # the group is one word
			printf '@@GROUP %s\n%s\n' "$group" "$("$hbm" $group --help)"
		fi
		# shellcheck disable=SC2086 # "class add": two arguments
		printf '@@CMD %s\n%s\n' "$cmd" "$("$hbm" $cmd -h)"
	done <<<"$cmds"
	# The configuration file of `bpf-hbm apply`, where the loader has the
	# command and its --help does not already list the file.
	if ! grep -q /etc/bpf-hbm.conf <<<"$help" &&
	   "$hbm" apply -h >/dev/null 2>&1; then
		printf '@@CONF\n'
	fi
} | awk '
# Backslashes and dashes escaped (a dash in roff is a hyphen, not the
# minus of an option); a line cannot start with a control character.
# (gsub() would do, but awks disagree on backslashes in its replacement.)
function esc(s,	out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			c = "\\e"
		else if (c == "-")
			c = "\\-"
		out = out c
	}
	return out
}

function guard(s,	c) {
	c = substr(s, 1, 1)
	return c == "." || c == "\047" ? "\\&" s : s
}

# Option names bold, metavariables (DEV, RATE) italic: for tags and the
# synopsis.
function style(s,	out, pre, tok, before, after) {
	out = ""
	while (match(s, /--?[a-z][a-z0-9-]*|[A-Z]+/)) {
		pre = substr(s, 1, RSTART - 1)
		tok = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		before = substr(pre, length(pre))
		after = substr(s, 1, 1)
		if (before ~ /[A-Za-z0-9]/ || (tok !~ /^-/ && after ~ /[a-z0-9]/))
			out = out esc(pre tok)
		else if (tok ~ /^-/)
			out = out esc(pre) "\\fB" esc(tok) "\\fR"
		else
			out = out esc(pre) "\\fI" tok "\\fR"
	}
	return guard(out esc(s))
}

function indent(s) {
	return match(s, /[^ ]/) - 1
}

function trim(s) {
	sub(/^ +/, "", s)
	sub(/ +$/, "", s)
	return s
}

# Lines B[from..to] (one block) as roff paragraphs.
function block(from, to,	i, j, l, ind, text, mode, g, rest, at, len) {
	mode = ""
	for (i = from; i <= to; i++) {
		l = B[i]
		ind = indent(l)
		text = trim(l)
		if (text == "") {
			mode = ""
			continue
		}
		if (ind >= 5) {
			if (mode == "item" && tag != "" && text ~ /^\[/) {
				tag = tag " " text	# a synopsis wrapped
				continue
			}
			if (mode == "item" && tag != "") {
				print style(tag)
				tag = ""
			}
			if (mode == "")
				print ".PP"
			if (mode != "item")
				mode = "p"
			print guard(esc(text))
			continue
		}
		if (ind == 0) {
			flush_tag()
			if (mode != "p0")
				print ".PP"
			mode = "p0"
			print guard(esc(text))
			continue
		}
		flush_tag()
		# A tag, two spaces, its description: "detach DEV     delete".
		# (style() runs match() too: RSTART and RLENGTH are kept first.)
		if (match(text, /  +/)) {
			at = RSTART
			len = RLENGTH
			print ".TP"
			tag = substr(text, 1, at - 1)
			flush_tag()
			print guard(esc(substr(text, at + len)))
			mode = "item"
			continue
		}
		# An option and its argument, then maybe its description.
		if (match(text, /^--?[a-z][a-z0-9-]*( ([A-Z]+|[a-z]+(\|[a-z]+)+))?(, --?[a-z][a-z0-9-]*( [A-Z]+)?)*/)) {
			print ".TP"
			tag = substr(text, 1, RLENGTH)
			rest = trim(substr(text, RLENGTH + 1))
			mode = "item"
			if (rest != "") {
				flush_tag()
				print guard(esc(rest))
			}
			continue
		}
		# A metavariable described on the lines below: "BYTES a bare".
		if (i < to && indent(B[i + 1]) >= 5 && match(text, /^[A-Z]+ /)) {
			len = RLENGTH
			print ".TP"
			tag = substr(text, 1, len - 1)
			flush_tag()
			print guard(esc(substr(text, len + 1)))
			mode = "item"
			continue
		}
		# A tag that a comma carries on to the next line.
		g = text
		for (j = i; g ~ /,$/ && j < to && indent(B[j + 1]) >= 2 &&
			    indent(B[j + 1]) < 5; j++)
			g = g " " trim(B[j + 1])
		if (j < to && indent(B[j + 1]) >= 5) {
			print ".TP"
			tag = g
			mode = "item"
			i = j
			continue
		}
		if (mode != "p2")
			print ".PP"
		mode = "p2"
		print guard(esc(text))
	}
	flush_tag()
}

function flush_tag() {
	if (tag != "")
		print style(tag)
	tag = ""
}

# The blocks of one text, T[1..nt]: start, end, heading ("" if none).
function blocks(	i, k, h) {
	nb = 0
	for (i = 1; i <= nt; i++) {
		if (T[i] == "")
			continue
		nb++
		BS[nb] = i
		BH[nb] = ""
		for (k = i; k <= nt && T[k] != ""; k++)
			B[k] = T[k]
		BE[nb] = k - 1
		if (match(T[i], /^[A-Z][^:.]*:( |$)/)) {
			h = substr(T[i], 1, RLENGTH)
			sub(/: ?$/, "", h)
			BH[nb] = h
			B[i] = trim(substr(T[i], RLENGTH + 1))
			if (B[i] == "")
				BS[nb]++
		}
		i = k
	}
}

function section(name) {
	printf ".SH %s\n", name
}

# Usage lines: "Usage: bpf-hbm X" and those under it, one a line.
function synopsis(from, to,	i, s) {
	for (i = from; i <= to; i++) {
		s = trim(B[i])
		if (s !~ /^bpf-hbm( |$)/)
			return i
		print style(s)
	}
	return i
}

function read_text(name) {
	nt = split(TEXT[name], T, "\n")
}

/^@@VERSION / { version = $2; next }
/^@@CONF$/ { conf = 1; next }
/^@@/ {
	cur = substr($0, 3)
	order[++norder] = cur
	TEXT[cur] = ""
	next
}
{ TEXT[cur] = TEXT[cur] (TEXT[cur] == "" ? "" : "\n") $0 }

END {
	print ".\\\" Generated by scripts/gen-man.sh from bpf-hbm --help and each"
	print ".\\\" command'"'"'s -h: edit those (loader/main.c), not this file."
	printf ".TH BPF\\-HBM 8 \"\" \"bpf\\-hbm %s\" \"System Administration\"\n",
	       esc(version)
	section("NAME")
	print "bpf\\-hbm \\- load the bpf_hbm BPF qdisc, attach it to devices, configure them and show their counters"

	read_text("MAIN")
	blocks()
	section("SYNOPSIS")
	print ".nf"
	for (b = 1; b <= nb; b++)
		if (BH[b] == "Usage")
			synopsis(BS[b], BE[b])
	for (o = 1; o <= norder; o++) {
		if (order[o] !~ /^CMD /)
			continue
		nt = split(TEXT[order[o]], T, "\n")
		for (i = 1; i <= nt; i++)
			B[i] = T[i]
		sub(/^Usage: /, "", B[1])
		synopsis(1, nt)
	}
	print ".fi"

	read_text("MAIN")
	blocks()
	section("DESCRIPTION")
	for (b = 1; b <= nb && BH[b] != "Commands"; b++)
		if (BH[b] == "")
			block(BS[b], BE[b])

	section("COMMANDS")
	for (o = 1; o <= norder; o++) {
		if (order[o] !~ /^(CMD|GROUP) /)
			continue
		nt = split(TEXT[order[o]], T, "\n")
		for (i = 1; i <= nt; i++)
			B[i] = T[i]
		sub(/^Usage: /, "", B[1])
		print ".SS"
		# The usage lines head the command; a group'"'"'s, joined.
		s = ""
		for (i = 1; i <= nt && trim(B[i]) ~ /^bpf-hbm( |$)/; i++)
			s = s (s == "" ? "" : " | ") trim(B[i])
		if (order[o] ~ /^GROUP /)
			s = "bpf-hbm " substr(order[o], 7) " ..."
		print style(s)
		block(i, nt)
	}
	print ".SS"
	print "\\fBbpf\\-hbm help\\fR"
	print ".PP"
	print "The text of \\fBbpf\\-hbm \\-\\-help\\fR, from which this page is made."

	read_text("MAIN")
	blocks()
	section("OPTIONS")
	# Blocks without a heading say what all commands share: first.
	for (b = 1; b <= nb; b++)
		if (BH[b] == "" && seen_commands)
			block(BS[b], BE[b])
		else if (BH[b] == "Commands")
			seen_commands = 1
	for (b = 1; b <= nb; b++) {
		if (BH[b] ~ /^(Usage|Commands|Files|Exit status)$/ || BH[b] == "")
			continue
		print ".SS"
		print guard(esc(BH[b]))
		block(BS[b], BE[b])
	}

	section("EXIT STATUS")
	for (b = 1; b <= nb; b++)
		if (BH[b] == "Exit status")
			block(BS[b], BE[b])

	section("FILES")
	for (b = 1; b <= nb; b++)
		if (BH[b] == "Files")
			block(BS[b], BE[b])
	if (conf) {
		print ".TP"
		print "/etc/bpf\\-hbm.conf"
		print "the configuration \\fBbpf\\-hbm apply\\fR reads when given no FILE"
	}

	section("SEE ALSO")
	print ".BR tc (8),"
	print ".BR tc\\-fq (8),"
	print ".BR bpftool (8)"
}
'
