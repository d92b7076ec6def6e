/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fq+edt arrangement's state (bench/edt_stamp.bpf.c's array map
 * hbm_stamp_state), shared with bench/stamp_config.c, which writes it:
 * one definition, so the two cannot disagree on its layout.
 */
#ifndef HBM_STAMP_H
#define HBM_STAMP_H

#include "hbm_edt.h"

struct hbm_stamp_state {
	struct bpf_spin_lock lock;
	struct hbm_vq vq;
	struct hbm_config cfg;
	__u64 packets;
	__u64 drops;
	__u64 ce;
};

#endif /* HBM_STAMP_H */
