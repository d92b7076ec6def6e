#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# show --prometheus's writer (loader/metrics.c) read by Prometheus's own
# parser: test_metrics --sample prints the exposition of a made-up pair of
# devices and classes, and selftests/prom_check.py parses it with
# python3-prometheus-client and checks the format's rules and the values.
# Skipped (status 4) where that parser is not installed.
#
#   selftests/host/prom.sh BUILD_DIR
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../status.sh"
build=${1:?usage: prom.sh BUILD_DIR}

if ! python3 -c 'import prometheus_client' 2>/dev/null; then
	echo "no python3-prometheus-client here"
	exit "$HBM_SKIP"
fi
sample=$("$build/tests/test_metrics" --sample) ||
	{ echo "FAIL: test_metrics --sample failed"; exit 1; }
python3 "$here/../prom_check.py" sample <<<"$sample"
