#!/bin/sh
# check.sh: the whole test suite from a clean clone: installs what is missing (as root), builds with
# AddressSanitizer and UndefinedBehaviorSanitizer, runs `make check`, and prints one summary line.
set -u
cd "$(dirname "$0")" || exit 1
. ./deps.sh
fc_install_deps || exit 1
build=${FLOWCUT_CHECK_BUILD:-build-check}
# Chromium is among the dependencies just installed: the HTML report tests fail rather than skip
# when it cannot start.
export FLOWCUT_REQUIRE_CHROMIUM="${FLOWCUT_REQUIRE_CHROMIUM-1}"
( fc_build "$build" --enable-sanitizers ) || { echo "flowcut: build failed" >&2; exit 1; }
cd "$build" || exit 1
make -j1 check >check.out 2>&1
status=$?
# Show the per-test results, then the log of each failed test, then one summary line.
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.out
for trs in $(find . -name '*.trs'); do
    if grep -qE ':test-result: (FAIL|ERROR|XPASS)' "$trs"; then
        log=${trs%.trs}.log
        echo "---- ${log#./} ----"
        tail -n 60 "$log"
    fi
done
[ $status -ne 0 ] && ! grep -qE '^(PASS|FAIL|SKIP|ERROR):' check.out && tail -n 40 check.out
pass=$(cat $(find . -name '*.trs') /dev/null | grep -c ':test-result: PASS')
fail=$(cat $(find . -name '*.trs') /dev/null | grep -cE ':test-result: (FAIL|ERROR|XPASS)')
skip=$(cat $(find . -name '*.trs') /dev/null | grep -c ':test-result: SKIP')
echo "$pass passed, $fail failed, $skip skipped"
[ $status -eq 0 ] && [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
