#!/bin/sh
# test-tracer-polling.sh: examples/polling on 3 ranks, a master taking results with MPI_Testany
# every 100 us and workers polling with MPI_Test and MPI_Iprobe, traced with polls folded (the
# default) and with FLOWCUT_FOLD_POLLS=0. Both runs print what the untraced one prints and the
# tracer says nothing; in both traces the calls of each polling function, and those that found
# something, add up to the program's own counts (polling-check.py, which also checks each folded
# run's count and busy time); the folded trace has no two alike unsuccessful polls in a row and is
# at least 10 times smaller. The two runs differ in their timing, so the analyses are compared on
# one run: `flowcut analyze` reports the same of the trace with each poll and of that trace folded
# by fold-polls, which applies format.h's definition of a folded run on its own. The folded trace
# exported to OTF2, read back with OTF2's Python bindings (polling-otf2.py), stands for the
# program's calls too: by default through the attribute flowcut::polls on each run's last call,
# with --expand-polls call by call; `flowcut info` counts the program's calls (polling-info.py).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example polling
rounds=30
run_untraced "$work/plain.out" 3 "$prog" $rounds
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "polling failed untraced: $(cat "$work/plain.out.err")"

for mode in folded each; do
    case $mode in
    folded) genv= ;;
    each) genv="-genv FLOWCUT_FOLD_POLLS 0" ;;
    esac
    FC_GENV=$genv run_traced "$work/$mode.out" "$work/$mode" 3 "$prog" $rounds "$work/$mode.counts"
    same_output "$work/plain.out" "$work/$mode.out"
    [ -s "$work/$mode.out.err" ] && fail "the tracer was not silent: $(head -c 2000 "$work/$mode.out.err")"
    "$flowcut" dump --no-sites "$work/$mode" >"$work/$mode.dump" 2>"$work/$mode.dump.err" ||
        fail "flowcut dump of the $mode trace failed: $(head -c 2000 "$work/$mode.dump.err")"
    "$PYTHON3" "$srcdir/polling-check.py" "$work/$mode.dump" "$work/$mode.counts" 3 $mode ||
        fail "the $mode trace does not count the program's calls"
    "$flowcut" info "$work/$mode" >"$work/$mode.info" && "$flowcut" info --json "$work/$mode" >"$work/$mode.info.json" ||
        fail "flowcut info of the $mode trace failed"
    "$PYTHON3" "$srcdir/polling-info.py" "$work/$mode.info.json" "$work/$mode.info" "$work/$mode.counts" 3 ||
        fail "flowcut info does not count the program's calls in the $mode trace"
done
# The OTF2 archives of the folded trace, read with OTF2's own reader.
py_otf2=
for p in "$PYTHON3" /usr/bin/python3; do
    if "$p" -c 'import otf2' 2>/dev/null; then
        py_otf2=$p
        break
    fi
done
if [ -n "$py_otf2" ]; then
    for how in folded expanded; do
        case $how in folded) flag= ;; expanded) flag=--expand-polls ;; esac
        # shellcheck disable=SC2086 # no flag is no word
        "$flowcut" export --otf2 $flag "$work/folded" "$work/otf2-$how" >/dev/null 2>"$work/otf2-$how.err" ||
            fail "flowcut export $flag failed: $(head -c 2000 "$work/otf2-$how.err")"
        "$py_otf2" "$srcdir/polling-otf2.py" "$work/otf2-$how/traces.otf2" "$work/folded.counts" 3 $how ||
            fail "the $how OTF2 export does not stand for the program's calls"
    done
else
    echo "OTF2's Python bindings are missing (Debian package python3-otf2): the export is not checked"
fi
folded=$(cat "$work"/folded/rank-*.fct | wc -c)
each=$(cat "$work"/each/rank-*.fct | wc -c)
echo "trace bytes: $folded folded, $each with each poll"
[ $((folded * 10)) -le "$each" ] || fail "the folded trace ($folded bytes) is not 10 times smaller than $each"
mkdir "$work/refolded"
"$abs_builddir/fold-polls" "$work/each" "$work/refolded" || fail "fold-polls failed"
for t in each refolded; do
    "$flowcut" analyze "$work/$t" 2>"$work/$t.analyze.err" | grep -v '^trace:' >"$work/$t.report" ||
        fail "flowcut analyze of the $t trace failed: $(head -c 2000 "$work/$t.analyze.err")"
done
grep -q "kind=POLLS" "$work/each.dump" && fail "the trace with each poll holds POLLS records"
"$flowcut" dump --no-sites "$work/refolded" | grep -q "kind=POLLS" || fail "fold-polls folded nothing"
if ! cmp -s "$work/refolded.report" "$work/each.report"; then
    diff "$work/each.report" "$work/refolded.report" | head -n 40 >&2
    fail "flowcut analyze reports differently on the folded trace"
fi
exit 0
