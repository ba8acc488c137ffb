# shellcheck shell=bash disable=SC2034 # n and failed are the test's
# tests/vm/tap.sh - the TAP helper of the shell tests in tests/vm, sourced
# as '. "$(dirname "$0")/tap.sh"'.
#
#   t DESCRIPTION CMD...   run CMD; print "ok N - DESCRIPTION" when it exits
#                          0, else "not ok N - DESCRIPTION" and set failed=1
#
# The test ends with "exit $failed"; tests/vm/suite counts the lines.
n=0
failed=0

t() {
	local what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=1
	fi
}
