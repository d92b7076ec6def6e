# SPDX-License-Identifier: GPL-2.0
#
# bpf_hbm: `make` builds build/bpf-hbm and build/bpf_hbm.bpf.o; `make test`
# runs the host tests and boots the VM once for the VM tests. Where this
# machine's toolchain is too old (scripts/toolchain-ok.sh says why), every
# target runs inside the pinned environment (scripts/env.sh) by itself.
#
# Variables: V=1 (show commands), OUTPUT (build dir), CLANG, BPFTOOL, CC,
# KERNEL=7.3|7.2 (kernel the VM boots), T="name ..." (tests to run),
# BENCH_ARGS (passed to bench/run.sh or bench/rate.sh, e.g. "--repeat 1"),
# FUZZ_S (seconds `make fuzz` runs each fuzz target, default 60);
# for `make install` and `make uninstall`: DESTDIR, PREFIX (/usr/local),
# SBINDIR ($(PREFIX)/sbin), MANDIR ($(PREFIX)/share/man), UNITDIR
# ($(PREFIX)/lib/systemd/system), BASHCOMPDIR
# ($(PREFIX)/share/bash-completion/completions).

OUTPUT ?= build
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
KERNEL ?= 7.3
T ?=
FUZZ_S ?= 60

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL ?= install

LOADER := $(OUTPUT)/bpf-hbm
MANPAGE := $(OUTPUT)/bpf-hbm.8
UNITS := bpf-hbm.service bpf-hbm-watch.service

# What make install installs: bpf-hbm (the BPF object is in it, through
# the skeleton), its man page, its bash completion and two systemd units,
# bpf-hbm.service (`bpf-hbm apply` at boot) and bpf-hbm-watch.service
# (`bpf-hbm apply --watch`, for the devices that appear later), each
# written from its template (scripts/UNIT.in) for SBINDIR. A recipe of its
# own, for where installing runs on the host while the build ran in the
# pinned environment (see below).
define hbm_install
	$(foreach u,$(UNITS),
	$(call msg,GEN,$(OUTPUT)/$(u))
	$(Q)sed 's|@SBINDIR@|$(SBINDIR)|g' scripts/$(u).in > $(OUTPUT)/$(u))
	$(call msg,INSTALL,$(DESTDIR)$(SBINDIR)/bpf-hbm)
	$(Q)$(INSTALL) -D -m 0755 $(LOADER) $(DESTDIR)$(SBINDIR)/bpf-hbm
	$(call msg,INSTALL,$(DESTDIR)$(MANDIR)/man8/bpf-hbm.8)
	$(Q)$(INSTALL) -D -m 0644 $(MANPAGE) $(DESTDIR)$(MANDIR)/man8/bpf-hbm.8
	$(call msg,INSTALL,$(DESTDIR)$(BASHCOMPDIR)/bpf-hbm)
	$(Q)$(INSTALL) -D -m 0644 scripts/bpf-hbm.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/bpf-hbm
	$(foreach u,$(UNITS),
	$(call msg,INSTALL,$(DESTDIR)$(UNITDIR)/$(u))
	$(Q)$(INSTALL) -D -m 0644 $(OUTPUT)/$(u) $(DESTDIR)$(UNITDIR)/$(u))
endef

define hbm_uninstall
	$(call msg,RM,$(DESTDIR)$(SBINDIR)/bpf-hbm and the others)
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/bpf-hbm \
		$(DESTDIR)$(MANDIR)/man8/bpf-hbm.8 \
		$(DESTDIR)$(BASHCOMPDIR)/bpf-hbm \
		$(foreach u,$(UNITS),$(DESTDIR)$(UNITDIR)/$(u))
endef

GOALS := $(or $(MAKECMDGOALS),all)
HOST_ONLY_GOALS := clean help uninstall

ifeq ($(HBM_IN_ENV),)
ifneq ($(filter-out $(HOST_ONLY_GOALS),$(GOALS)),)
HBM_NATIVE := $(shell scripts/toolchain-ok.sh >/dev/null 2>&1 && echo 1)
ifeq ($(HBM_NATIVE),)
HBM_DELEGATE := 1
endif
endif
endif

ifeq ($(HBM_DELEGATE),1)
# One delegated make runs all the goals; the others do nothing here. But
# installing is the host's (installed in the pinned environment, files
# would land in its rootfs, not on this machine): there, install only
# builds what it installs, and the host then copies it.
ENV_GOALS := $(patsubst install,installable,$(filter-out uninstall,$(GOALS)))
hbm-delegate:
	@echo "make: host toolchain too old ($$(scripts/toolchain-ok.sh)): building in the pinned environment"
	$(Q)scripts/inenv.sh $(MAKE) --no-print-directory $(ENV_GOALS) \
		$(MAKEOVERRIDES)
$(filter-out install uninstall,$(GOALS)): hbm-delegate
	@:
install: hbm-delegate
	$(hbm_install)
uninstall:
	$(hbm_uninstall)
.PHONY: $(GOALS) hbm-delegate
else

CC ?= cc
CFLAGS ?= -O2 -g
HBM_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Werror -MMD -MP -Iinclude -I$(OUTPUT) \
	$(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
BPF_CFLAGS := -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
	-fms-extensions -Wno-microsoft-anon-tag \
	-MMD -MP -Ivmlinux -Iinclude -Iqdisc
LIBS := $(shell $(PKG_CONFIG) --libs libbpf libmnl jansson 2>/dev/null || \
	echo -lbpf -lmnl -ljansson) -lelf -lz

BPF_OBJ := $(OUTPUT)/bpf_hbm.bpf.o
SKEL := $(OUTPUT)/bpf_hbm.skel.h
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(OUTPUT)/loader/%.o,$(LOADER_SRCS))
HOST_TESTS := $(patsubst selftests/host/%.c,$(OUTPUT)/tests/%, \
	$(wildcard selftests/host/test_*.c))
VM_TOOLS := $(patsubst selftests/vm/%.c,$(OUTPUT)/tools/%, \
	$(wildcard selftests/vm/*.c)) \
	$(patsubst bench/%.c,$(OUTPUT)/tools/%,$(filter-out %.bpf.c, \
	$(wildcard bench/*.c)))
BENCH_BPF := $(OUTPUT)/edt_stamp.bpf.o $(OUTPUT)/cgroup_cls.bpf.o \
	$(OUTPUT)/floor_qdisc.bpf.o

# The loader once more with clang, under ASan and UBSan (halting on the
# first error) and with libFuzzer's coverage: bpf-hbm and the host tests
# linked from it for make test, and the fuzz targets (selftests/fuzz).
SAN := $(OUTPUT)/asan
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
SAN_CFLAGS := $(HBM_CFLAGS) $(SAN_FLAGS)
SAN_LOADER := $(SAN)/bpf-hbm
SAN_OBJS := $(patsubst loader/%.c,$(SAN)/loader/%.o,$(LOADER_SRCS))
# Everything but main(): an archive, so that a fuzz target that includes
# a loader source (for its static functions) links the others alone.
SAN_LIB := $(SAN)/libhbm.a
SAN_TESTS := $(patsubst selftests/host/%.c,$(SAN)/tests/%, \
	$(wildcard selftests/host/test_*.c))
FUZZ_TARGETS := $(patsubst selftests/fuzz/%.c,$(OUTPUT)/fuzz/%, \
	$(wildcard selftests/fuzz/fuzz_*.c))
# What make test runs besides `all`.
TEST_BINS := $(SAN_LOADER) $(SAN_TESTS) $(FUZZ_TARGETS)

all: $(LOADER) $(MANPAGE) $(BPF_OBJ) $(BENCH_BPF) $(HOST_TESTS) $(VM_TOOLS)

$(OUTPUT) $(OUTPUT)/loader $(OUTPUT)/tests $(OUTPUT)/tools $(SAN)/loader \
		$(SAN)/tests $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(BPF_OBJ): qdisc/bpf_hbm.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $@.d -c $< -o $@

$(BENCH_BPF): $(OUTPUT)/%.bpf.o: bench/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $@.d -c $< -o $@

$(SKEL): $(BPF_OBJ)
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bpf_hbm > $@.tmp && mv $@.tmp $@

$(OUTPUT)/loader/%.o: loader/%.c $(SKEL) | $(OUTPUT)/loader
	$(call msg,CC,$@)
	$(Q)$(CC) $(HBM_CFLAGS) -Iloader -c $< -o $@

$(LOADER): $(LOADER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HBM_CFLAGS) $^ $(LIBS) -o $@

# The man page is written from the loader's own --help and its commands'
# -h, so that the two cannot say different things.
$(MANPAGE): $(LOADER) scripts/gen-man.sh
	$(call msg,GEN,$@)
	$(Q)scripts/gen-man.sh $(LOADER) > $@.tmp && mv $@.tmp $@

# Host tests link the loader's objects they test, never its main().
$(OUTPUT)/tests/test_%: selftests/host/test_%.c $(filter-out \
		$(OUTPUT)/loader/main.o,$(LOADER_OBJS)) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(HBM_CFLAGS) -Iloader $^ $(LIBS) -o $@

$(OUTPUT)/tools/%: selftests/vm/%.c | $(OUTPUT)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(HBM_CFLAGS) $< -o $@

$(OUTPUT)/tools/%: bench/%.c | $(OUTPUT)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(HBM_CFLAGS) $< -o $@

$(SAN)/loader/%.o: loader/%.c $(SKEL) | $(SAN)/loader
	$(call msg,CC-SAN,$@)
	$(Q)$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer-no-link -Iloader -c $< -o $@

$(SAN_LIB): $(filter-out $(SAN)/loader/main.o,$(SAN_OBJS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SAN_LOADER): $(SAN_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CLANG) $(SAN_CFLAGS) $^ $(LIBS) -o $@

$(SAN)/tests/test_%: selftests/host/test_%.c $(SAN_LIB) | $(SAN)/tests
	$(call msg,CC-SAN,$@)
	$(Q)$(CLANG) $(SAN_CFLAGS) -MF $@.d -Iloader $< $(SAN_LIB) $(LIBS) -o $@

$(OUTPUT)/fuzz/fuzz_%: selftests/fuzz/fuzz_%.c $(SAN_LIB) | $(OUTPUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(SAN_CFLAGS) -fsanitize=fuzzer -MF $@.d -Iloader $< \
		$(SAN_LIB) $(LIBS) -o $@

# OUTPUT tells selftests/run.sh where the binaries are.
test: all $(TEST_BINS)
	$(Q)OUTPUT=$(OUTPUT) selftests/run.sh --kernel $(KERNEL) $(T)

# Issue 13's counts of the churn and fault tests (make test runs 40 and
# 15), in one boot of KERNEL, the kernel's log judged after them: about
# 35 minutes under TCG (389 + 452 + 1240 s on 7.3).
SOAK_CHURN_N ?= 200
SOAK_FAULT_N ?= 100
soak: all $(TEST_BINS)
	$(Q)CHURN_N=$(SOAK_CHURN_N) FAULT_N=$(SOAK_FAULT_N) TEST_TIMEOUT=1500 \
		OUTPUT=$(OUTPUT) selftests/run.sh --kernel $(KERNEL) \
		churn faults_link faults_dev kernel_log

test-host: all $(TEST_BINS)
	$(Q)OUTPUT=$(OUTPUT) selftests/run.sh --host-only $(T)

# Each fuzz target for FUZZ_S seconds from its corpus; finds and crashes
# land in $(OUTPUT)/fuzz/<target>/, never in the committed corpus.
fuzz: $(FUZZ_TARGETS)
	$(Q)selftests/fuzz/run.sh -t $(FUZZ_S) -o $(OUTPUT)/fuzz $(FUZZ_TARGETS)

demo: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 600 scripts/demo.sh

# The VM writes a line per run to BENCH_PROGRESS (in OUTPUT, which it
# sees), and the host prints each as it comes (scripts/follow.sh).
BENCH_PROGRESS := $(OUTPUT)/bench.progress
# QUICK=1: every arrangement once, short runs (the machinery, not numbers).
bench: all
	$(Q)scripts/follow.sh $(BENCH_PROGRESS) \
		scripts/vmrun.sh -k $(KERNEL) -t 7000 bench/run.sh \
		$(if $(QUICK),--quick --out $(OUTPUT)/bench-quick,--out bench/results) \
		--progress $(BENCH_PROGRESS) $(BENCH_ARGS)

bench-rate: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 5000 bench/rate.sh --out bench/results \
		$(BENCH_ARGS)

bench-tenants: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 3000 bench/tenants.sh --out bench/results \
		$(BENCH_ARGS)

bench-conform: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 1500 bench/conform.sh --out bench/results \
		$(BENCH_ARGS)

bench-isolation: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 1500 bench/isolation.sh --out bench/results \
		$(BENCH_ARGS)

vmlinux:
	$(Q)KERNEL=$(KERNEL) scripts/gen-vmlinux.sh

# What install installs, built (the pinned environment's part of it).
installable: $(LOADER) $(MANPAGE)

install: installable
	$(hbm_install)

uninstall:
	$(hbm_uninstall)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

help:
	@echo "make [V=1] [OUTPUT=dir]  build $(OUTPUT)/bpf-hbm and $(OUTPUT)/bpf_hbm.bpf.o"
	@echo "make test [T='names'] [KERNEL=7.3|7.2]"
	@echo "                         host tests, then all VM tests in one boot"
	@echo "make test-host           host tests only (no VM): unit tests, the same under"
	@echo "                         ASan+UBSan, bpf-hbm's CLI under them, fuzz corpora"
	@echo "make soak [KERNEL=7.3]   churn and faults at issue 13's counts (200, 100),"
	@echo "                         one boot, about 35 minutes"
	@echo "make fuzz [FUZZ_S=60]    run each fuzz target FUZZ_S seconds (selftests/fuzz)"
	@echo "make demo                boot the VM and show traffic being shaped"
	@echo "make bench [QUICK=1]     bpf_hbm vs htb vs fq+EDT, results in bench/results/"
	@echo "make bench-rate          where the rate goes: bulk TCP at the defaults and variants"
	@echo "make bench-tenants       per-cgroup classes: bpf_hbm vs htb classified by cgroup"
	@echo "make bench-conform       where class B's rate goes in issue 12's conformance setup"
	@echo "make bench-isolation     where class B's RPC tail goes while A is loaded (issue 12)"
	@echo "make vmlinux             regenerate vmlinux/vmlinux.h from KERNEL's BTF"
	@echo "make install [DESTDIR=] [PREFIX=/usr/local] [SBINDIR=] [MANDIR=] [UNITDIR=]"
	@echo "                         install bpf-hbm, bpf-hbm(8), its bash completion,"
	@echo "                         bpf-hbm.service (runs bpf-hbm apply at boot) and"
	@echo "                         bpf-hbm-watch.service (apply --watch: devices that"
	@echo "                         appear later)"
	@echo "make uninstall           remove what make install installed (same variables)"
	@echo "make clean               remove $(OUTPUT)"

.PHONY: all test soak test-host fuzz demo bench bench-rate bench-tenants bench-conform bench-isolation vmlinux \
	installable install uninstall clean help

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/loader/*.d $(OUTPUT)/tests/*.d \
	$(OUTPUT)/tools/*.d $(SAN)/loader/*.d $(SAN)/tests/*.d $(OUTPUT)/fuzz/*.d)

endif
