#!/bin/sh
# test-fuzz-replay.sh: every fuzz target, built with the build's compiler and driver.c, reads its
# seed corpus (seeds.sh) and every input of regress/TARGET/ (each a crash a fuzzer once found)
# without a crash or a sanitizer report.
set -u
: "${FC_FUZZ_BIN:?run through make check}" "${FC_FUZZ_SRC:?run through make check}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fc-fuzz-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
sh "$FC_FUZZ_SRC/seeds.sh" "$FC_FUZZ_SRC/../.." "$scratch/seeds" || { echo "FAIL: seeds.sh"; exit 1; }
# Debian's OTF2 library leaks the archive it fails to open (tests/otf2/lsan.supp), and asks calloc
# for whatever count a damaged anchor file gives (tens of GB), then fills it; a machine without
# that memory returns NULL, which the library reports as an error. ASan refuses any request over
# 1 GB the same way.
LSAN_OPTIONS="suppressions=$FC_FUZZ_SRC/../otf2/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=1024${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS ASAN_OPTIONS
status=0
for t in fuzz-trace fuzz-otf2 fuzz-profile fuzz-placement fuzz-cli; do
    [ -n "$(ls "$scratch/seeds/$t")" ] || [ "$t" = fuzz-otf2 ] || { echo "FAIL: no seeds for $t"; status=1; }
    # The commands under fuzz-cli print their usage; only the driver's last line matters.
    if ! (cd "$scratch" && "$FC_FUZZ_BIN/$t" "$scratch/seeds/$t" "$FC_FUZZ_SRC/regress/$t") >"$scratch/$t.log" 2>&1; then
        echo "FAIL: $t:"
        tail -n 30 "$scratch/$t.log"
        status=1
    else
        tail -n 1 "$scratch/$t.log"
    fi
done
exit $status
