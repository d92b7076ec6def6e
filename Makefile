# SPDX-License-Identifier: GPL-2.0
#
# bpf_hbm: `make` builds build/bpf-hbm and build/bpf_hbm.bpf.o; `make test`
# runs the host tests and boots the VM once for the VM tests. Where this
# machine's toolchain is too old (scripts/toolchain-ok.sh says why), every
# target runs inside the pinned environment (scripts/env.sh) by itself.
#
# Variables: V=1 (show commands), OUTPUT (build dir), CLANG, BPFTOOL, CC,
# KERNEL=7.3|7.2 (kernel the VM boots), T="name ..." (tests to run),
# BENCH_ARGS (passed to bench/run.sh or bench/rate.sh, e.g. "--repeat 1").

OUTPUT ?= build
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
KERNEL ?= 7.3
T ?=

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

GOALS := $(or $(MAKECMDGOALS),all)
HOST_ONLY_GOALS := clean help

ifeq ($(HBM_IN_ENV),)
ifneq ($(filter-out $(HOST_ONLY_GOALS),$(GOALS)),)
HBM_NATIVE := $(shell scripts/toolchain-ok.sh >/dev/null 2>&1 && echo 1)
ifeq ($(HBM_NATIVE),)
HBM_DELEGATE := 1
endif
endif
endif

ifeq ($(HBM_DELEGATE),1)
# One delegated make runs all the goals; the others do nothing here.
$(firstword $(GOALS)):
	@echo "make: host toolchain too old ($$(scripts/toolchain-ok.sh)): building in the pinned environment"
	$(Q)scripts/inenv.sh $(MAKE) --no-print-directory $(MAKECMDGOALS) \
		$(MAKEOVERRIDES)
$(wordlist 2,$(words $(GOALS)),$(GOALS)):
	@:
.PHONY: $(GOALS)
else

CC ?= cc
CFLAGS ?= -O2 -g
HBM_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Werror -MMD -MP -Iinclude -I$(OUTPUT)
BPF_CFLAGS := -g -O2 --target=bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
	-fms-extensions -Wno-microsoft-anon-tag \
	-MMD -MP -Ivmlinux -Iinclude -Iqdisc
LIBS := $(shell $(PKG_CONFIG) --libs libbpf libmnl 2>/dev/null || \
	echo -lbpf -lmnl) -lelf -lz

BPF_OBJ := $(OUTPUT)/bpf_hbm.bpf.o
SKEL := $(OUTPUT)/bpf_hbm.skel.h
LOADER := $(OUTPUT)/bpf-hbm
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(OUTPUT)/loader/%.o,$(LOADER_SRCS))
HOST_TESTS := $(patsubst selftests/host/%.c,$(OUTPUT)/tests/%, \
	$(wildcard selftests/host/test_*.c))
VM_TOOLS := $(patsubst selftests/vm/%.c,$(OUTPUT)/tools/%, \
	$(wildcard selftests/vm/*.c)) \
	$(patsubst bench/%.c,$(OUTPUT)/tools/%,$(filter-out %.bpf.c, \
	$(wildcard bench/*.c)))
BENCH_BPF := $(OUTPUT)/edt_stamp.bpf.o $(OUTPUT)/cgroup_cls.bpf.o

all: $(LOADER) $(BPF_OBJ) $(BENCH_BPF) $(HOST_TESTS) $(VM_TOOLS)

$(OUTPUT) $(OUTPUT)/loader $(OUTPUT)/tests $(OUTPUT)/tools:
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

test: all
	$(Q)selftests/run.sh --kernel $(KERNEL) $(T)

test-host: all
	$(Q)selftests/run.sh --host-only $(T)

demo: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 600 scripts/demo.sh

# QUICK=1: every arrangement once, short runs (the machinery, not numbers).
bench: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 7000 bench/run.sh \
		$(if $(QUICK),--quick --out $(OUTPUT)/bench-quick,--out bench/results) \
		$(BENCH_ARGS)

bench-rate: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 5000 bench/rate.sh --out bench/results \
		$(BENCH_ARGS)

bench-tenants: all
	$(Q)scripts/vmrun.sh -k $(KERNEL) -t 3000 bench/tenants.sh --out bench/results \
		$(BENCH_ARGS)

vmlinux:
	$(Q)KERNEL=$(KERNEL) scripts/gen-vmlinux.sh

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

help:
	@echo "make [V=1] [OUTPUT=dir]  build $(OUTPUT)/bpf-hbm and $(OUTPUT)/bpf_hbm.bpf.o"
	@echo "make test [T='names'] [KERNEL=7.3|7.2]"
	@echo "                         host tests, then all VM tests in one boot"
	@echo "make test-host           host tests only (no VM)"
	@echo "make demo                boot the VM and show traffic being shaped"
	@echo "make bench [QUICK=1]     bpf_hbm vs htb vs fq+EDT, results in bench/results/"
	@echo "make bench-rate          where the rate goes: bulk TCP at the defaults and variants"
	@echo "make bench-tenants       per-cgroup classes: bpf_hbm vs htb classified by cgroup"
	@echo "make vmlinux             regenerate vmlinux/vmlinux.h from KERNEL's BTF"
	@echo "make clean               remove $(OUTPUT)"

.PHONY: all test test-host demo bench bench-rate bench-tenants vmlinux clean help

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/loader/*.d $(OUTPUT)/tests/*.d \
	$(OUTPUT)/tools/*.d)

endif
