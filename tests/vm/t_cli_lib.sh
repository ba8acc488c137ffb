#!/usr/bin/env bash
# libmemmon against the real module: build/libunit/test_lib_device (from
# tests/unit/test_lib_device.c, built by "make vm-tests"), its cmocka cases
# as TAP lines. Runs in the VM with a fresh memmon.ko loaded.
set -u
bin=build/libunit/test_lib_device
if [ ! -x "$bin" ]; then
	echo "not ok 1 - $bin is built (make vm-tests)"
	exit 1
fi
CMOCKA_MESSAGE_OUTPUT=TAP "$bin"
