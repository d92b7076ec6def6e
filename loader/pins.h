/* SPDX-License-Identifier: GPL-2.0 */
/* The pins (pins.c): where they are, their state, the pinned maps. */
#ifndef HBM_PINS_H
#define HBM_PINS_H

#include "util.h"

enum hbm_state {
	HBM_ABSENT,	/* nothing pinned */
	HBM_STALE,	/* pins, but no valid struct_ops link among them */
	HBM_BROKEN,	/* a valid link, but a map pin is missing */
	HBM_LOADED,
};

struct hbm_maps {
	int config;
	int rates;
	int instances;
	int class_configs;	/* hbm_class_configs */
	int class_rates;	/* hbm_class_rates */
};

#define HBM_MAPS_INIT { .config = -1, .rates = -1, .instances = -1,	\
			.class_configs = -1, .class_rates = -1 }

/* The maps pinned beside the link, by name. */
#define HBM_PIN_MAPS		5
extern const char *const hbm_pin_maps[HBM_PIN_MAPS];

const char *hbm_pin_dir(void);
const char *hbm_link_file(void);
void hbm_pin_path(char *buf, size_t len, const char *name);
int hbm_bpffs_ensure(void);
/* Serialize the commands that change state (pins.c says how). */
int hbm_lock(void);
void hbm_unlock(void);
bool hbm_link_valid(int fd);
int hbm_bpf_state(enum hbm_state *state);
int hbm_maps_open(struct hbm_maps *maps);
void hbm_maps_close(struct hbm_maps *maps);
int hbm_dev_keys(int rates_fd, struct hbm_dev_key **keys, int *n);

/*
 * Call @fn(key, @ctx) on each key of map @fd (named @name in errors, keys
 * of @key_size bytes, at most HBM_MAX_KEY) until it returns non-zero,
 * which is returned; 0 at the end, or a negative errno if the map cannot
 * be read. A key deleted meanwhile may be missed, as with any walk.
 */
#define HBM_MAX_KEY		64
/*
 * Call @fn for each instance in use in hbm_instances (@fd, an array of
 * slots), until it returns non-zero, which is returned.
 */
int hbm_inst_each(int fd, int (*fn)(const struct hbm_inst_info *info,
				    void *ctx), void *ctx);

int hbm_map_each_key(int fd, size_t key_size, const char *name,
		     int (*fn)(const void *key, void *ctx), void *ctx);

/*
 * Every key of map @fd (as hbm_map_each_key) into a malloc'd array of *@n
 * keys of @key_size bytes, in *@keys (NULL when there are none). Returns 0
 * or a negative errno, the reason set.
 */
int hbm_map_keys(int fd, size_t key_size, const char *name, void **keys,
		 int *n);

#endif /* HBM_PINS_H */
