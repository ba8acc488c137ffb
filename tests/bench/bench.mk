# Benchmarks (`make bench`): not part of `make check`; they report, never
# pass or fail on speed. tests/bench/bench boots the test VMs of each kernel
# (6.1 and 6.12 in full, 6.12-rt for the fault loop) for everything that
# involves the kernel and runs the host-side measurements itself; see
# docs/benchmarks.md.
#
#   make bench          the full run (about 15-20 min idle): table on stdout,
#                       build/bench.json, log in build/bench/bench.log
#   make bench-quick    a smoke run (one short pass)
#   make bench-progs    only build the programs under build/bench/
#
# The workloads are linked statically: their own start-up then adds only a
# handful of mmaps and faults to what the tracers count.

BENCH_DIR	:= $(B)/bench
BENCH_CFLAGS	:= $(USER_CFLAGS) -I uapi
BENCH_PROGS	:= $(BENCH_DIR)/wl $(BENCH_DIR)/drain $(BENCH_DIR)/cputime

# The eBPF peer (config "ebpf"); adds to BENCH_PROGS, so before its use.
include tests/bench/ebpf/ebpf.mk

.PHONY: bench bench-quick bench-progs bench-hostbench

bench-progs: $(BENCH_PROGS)

# Host-side: libmemmon's drain, decode and trace writer (needs the library;
# tests/bench/host builds it and skips what needs it if it does not build).
# internal.h (-iquote) for the test hook that builds a session over a
# mapping laid out in memory.
bench-hostbench: $(BENCH_DIR)/hostbench

$(BENCH_DIR)/hostbench: tests/bench/hostbench.c $(B)/lib/libmemmon.a
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -I uapi -I libmemmon/include -iquote libmemmon \
		-o $@ $< $(B)/lib/libmemmon.a -ljansson -lzstd -lisal -lz -lpthread

$(BENCH_DIR)/wl: tests/bench/wl.c uapi/linux/memmon.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -fno-omit-frame-pointer -static -o $@ $< -lpthread

$(BENCH_DIR)/drain: tests/bench/drain.c uapi/linux/memmon.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -static -o $@ $<

$(BENCH_DIR)/cputime: tests/bench/cputime.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -static -o $@ $<

# The module, library and tool are built by the script, each on its own, so
# that a part that does not build yet only skips its configurations.
# The dependencies first: the eBPF peer's programs need clang and bpftool,
# which scripts/deps --bench installs.
bench:
	scripts/deps --bench
	$(MAKE) --no-print-directory bench-progs
	tests/bench/bench

bench-quick:
	scripts/deps --bench
	$(MAKE) --no-print-directory bench-progs
	tests/bench/bench -q
