#!/bin/sh
# test-otf2-clocks.sh: the clock rules of an export, over traces of random clocks (random-clocks.c:
# random start times, offsets of either sign up to seconds, drift): OTF2's Python reader finds no
# event before the global offset or past the trace length, and no time going back on a location
# (check-archive.py); otf2-print -Werror accepts each archive.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

need_python_otf2
[ -x "$abs_builddir/random-clocks" ] || fail "random-clocks not built"

: "${FC_CLOCK_SEEDS:=40}"
seed=1
while [ "$seed" -le "$FC_CLOCK_SEEDS" ]; do
    t=$work/r$seed
    "$abs_builddir/random-clocks" "$seed" "$t" || fail "seed $seed: random-clocks failed"
    "$flowcut" export --otf2 --no-symbols "$t" "$t.otf2" >"$t.export" 2>&1 ||
        fail "seed $seed: export failed: $(cat "$t.export")"
    "$OTF2_PRINT" --silent -Werror "$t.otf2/traces.otf2" >"$t.print" 2>&1 ||
        fail "seed $seed: otf2-print rejects the export: $(head -c 2000 "$t.print")"
    "$PYTHON3_OTF2" "$srcdir/check-archive.py" "$t.otf2/traces.otf2" >"$t.check" ||
        fail "seed $seed: $(cat "$t.check")"
    seed=$((seed + 1))
done
echo "$FC_CLOCK_SEEDS random traces: every event within the clock properties ($(cat "$t.check"))"
exit 0
