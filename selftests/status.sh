# SPDX-License-Identifier: GPL-2.0
#
# The exit status a VM test uses to say it was skipped (hbm_skip in
# vm/lib.sh); vm/run.sh and run.sh report it as TAP's SKIP. Sourced.
HBM_SKIP=4
