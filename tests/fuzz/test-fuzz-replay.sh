#!/bin/sh
# test-fuzz-replay.sh: every fuzz target, built with the build's compiler and driver.c, reads its
# seed corpus (seeds.sh) and every input of regress/TARGET/ (each a crash a fuzzer once found)
# without a crash or a sanitizer report.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3"

FC_GEN=$abs_top_builddir/tests/analyzer/gen-trace
[ -x "$FC_GEN" ] || fail "tests/analyzer/gen-trace is not built"
export FC_GEN PYTHON3
sh "$srcdir/seeds.sh" "$abs_top_srcdir" "$work/seeds" || fail "seeds.sh"
# Debian's OTF2 library leaks the archive it fails to open (tests/otf2/lsan.supp), and asks calloc
# for whatever count a damaged anchor file gives (tens of GB), then fills it; a machine without
# that memory returns NULL, which the library reports as an error. ASan refuses any request over
# 1 GB the same way.
LSAN_OPTIONS="suppressions=$abs_top_srcdir/tests/otf2/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=1024${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS ASAN_OPTIONS
for t in fuzz-trace fuzz-otf2 fuzz-profile fuzz-placement fuzz-cli; do
    [ -n "$(ls "$work/seeds/$t")" ] || fail_later "no seeds for $t"
    # The commands under fuzz-cli print their usage; only the driver's last line matters.
    if ! (cd "$work" && "$abs_builddir/$t" "$work/seeds/$t" "$srcdir/regress/$t") >"$work/$t.log" 2>&1; then
        tail -n 30 "$work/$t.log" >&2
        fail_later "$t crashed or reported (log above)"
    else
        tail -n 1 "$work/$t.log"
    fi
done
finish
