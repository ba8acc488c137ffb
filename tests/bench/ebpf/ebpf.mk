# tests/bench/ebpf/ebpf.mk - memmon's eBPF peer (config "ebpf" of make
# bench), included from tests/bench/bench.mk: the BPF object (clang -target
# bpf, CO-RE: no vmlinux.h, see memmon_peer.bpf.c), its skeleton (bpftool
# gen skeleton) and the consumer, linked statically against libbpf.a like
# the other bench programs (the VM runs it from the host's root over 9p).
#
# clang -target bpf knows no system include path: libbpf-tools' recipe
# takes the host compiler's (for <asm/types.h> under the multiarch dir).

EBPF_DIR	:= $(BENCH_DIR)/ebpf
EBPF_SRC	:= tests/bench/ebpf
BPF_CLANG	?= clang
BPF_STRIP	?= llvm-strip
BPFTOOL		?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
BPF_SYS_INCLUDES := $(shell $(BPF_CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS	:= -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 \
		   -I uapi -I $(EBPF_SRC) $(BPF_SYS_INCLUDES)
EBPF_LIBS	:= $(shell pkg-config --static --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

BENCH_PROGS	+= $(EBPF_DIR)/memmon_peer

$(EBPF_DIR)/memmon_peer.bpf.o: $(EBPF_SRC)/memmon_peer.bpf.c $(EBPF_SRC)/memmon_peer.h \
		uapi/linux/memmon.h
	@mkdir -p $(@D)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(BPF_STRIP) -g $@

$(EBPF_DIR)/memmon_peer.skel.h: $(EBPF_DIR)/memmon_peer.bpf.o
	$(BPFTOOL) gen skeleton $< name memmon_peer_bpf >$@.tmp
	mv $@.tmp $@

$(EBPF_DIR)/memmon_peer: $(EBPF_SRC)/memmon_peer.c $(EBPF_SRC)/memmon_peer.h \
		$(EBPF_DIR)/memmon_peer.skel.h uapi/linux/memmon.h
	$(CC) $(BENCH_CFLAGS) -I $(EBPF_SRC) -I $(EBPF_DIR) -static -o $@ $< $(EBPF_LIBS)
