#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Exit 0 when this machine can build bpf_hbm natively: clang >= 16 (BPF
# graph kfuncs, btf_decl_tag) with its libFuzzer and sanitizer runtimes,
# libbpf >= 1.6, libmnl, libelf, jansson >= 2.8 and bpftool.
# Otherwise the Makefile builds inside the pinned environment (env.sh).
CLANG=${CLANG:-clang}
BPFTOOL=${BPFTOOL:-bpftool}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

ver_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }

cv=$("$CLANG" -dumpversion 2>/dev/null) || { echo "no $CLANG"; exit 1; }
ver_ge "$cv" 16 || { echo "clang $cv < 16"; exit 1; }
# make test and make fuzz link clang's runtimes (per-target or old layout).
rd=$("$CLANG" -print-resource-dir 2>/dev/null)
[ -n "$(find "$rd/lib" -name 'libclang_rt.fuzzer*.a' 2>/dev/null | head -n 1)" ] ||
	{ echo "no libFuzzer runtime for $CLANG"; exit 1; }
lv=$("$PKG_CONFIG" --modversion libbpf 2>/dev/null) || { echo "no libbpf"; exit 1; }
ver_ge "$lv" 1.6 || { echo "libbpf $lv < 1.6"; exit 1; }
"$PKG_CONFIG" --exists libmnl libelf || { echo "no libmnl/libelf"; exit 1; }
# show --json writes through jansson (2.8: keys in the order they were set).
"$PKG_CONFIG" --exists 'jansson >= 2.8' || { echo "no jansson >= 2.8"; exit 1; }
"$BPFTOOL" version >/dev/null 2>&1 || { echo "no $BPFTOOL"; exit 1; }
exit 0
