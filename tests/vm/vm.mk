# In-VM test programs: every tests/vm/t_*.c becomes build/vmtests/t_*,
# run inside the VM by tests/vm/suite next to the tests/vm/t_*.sh scripts.
VMTEST_SRCS := $(wildcard tests/vm/t_*.c)
VMTEST_SRCS += $(wildcard tests/vm/w_*.c)   # helpers the t_*.sh tests run
VMTESTS := $(patsubst tests/vm/%.c,$(B)/vmtests/%,$(VMTEST_SRCS))

vm-tests: $(VMTESTS)

# t_report_more.sh names w_leak2's call sites: its frame chain must hold.
$(B)/vmtests/w_leak2: USER_CFLAGS += -fno-omit-frame-pointer

$(B)/vmtests/%: tests/vm/%.c tests/vm/vmtest.h uapi/linux/memmon.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -I uapi -I tests/vm -o $@ $< -lpthread

# t_ustack checks stack entries against dladdr(): frame pointers (GCC
# still leaves them out of leaves that need no stack), its
# functions in the dynamic symbol table, and no red zone under the inline
# asm that pushes.
$(B)/vmtests/t_ustack: USER_CFLAGS += -fno-omit-frame-pointer \
	-mno-red-zone -rdynamic
$(B)/vmtests/t_ustack: tests/vm/mmtest.h
