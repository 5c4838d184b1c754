#!/bin/sh
# tests/analyzer/test-remap-launchers.sh: each launcher file `flowcut remap` writes (hydra, openmpi,
# slurm, cray), read back as its launcher reads it (launcher-check.py, after each launcher's
# documentation), places every rank where the JSON document's suggestion named by its judgement
# (the equivalent one that moves fewest ranks) puts it; on the golden traces with their own shape
# and with shapes that leave nodes part-filled. fewest-moves.py checks, by trying every renaming of
# nodes, that the placement a file expresses moves no more ranks than any suggestion predicted
# within the replay's own error of the best. A Cray file for a suggestion that leaves more than one
# node short of the fullest is refused with one line.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
golden=$srcdir/golden
gen_trace=$abs_builddir/gen-trace
bench_gen_trace=$abs_builddir/bench-gen-trace
for p in "$flowcut" "$gen_trace" "$bench_gen_trace"; do
    [ -x "$p" ] || fail "$p is not built"
done
need_command "$PYTHON3"
cd "$work" && mkdir halo chain || fail "mkdir in $work"
"$gen_trace" halo <"$golden/halo.spec" || fail "gen-trace halo"
"$gen_trace" chain <"$golden/chain.spec" || fail "gen-trace chain"
"$bench_gen_trace" -n 3000 -r 8 -N 4 -s 7 random >/dev/null 2>&1 || fail "bench-gen-trace"

checked=0 equiv=0
# check TRACE OPTIONS...: every format against the JSON of the same options.
check() {
    trace=$1
    shift
    "$flowcut" remap "$@" --format json -o "$trace.json" "$trace" 2>/dev/null || fail "$trace $*: remap --format json"
    for fmt in hydra openmpi slurm cray; do
        out=$trace.$fmt
        if ! "$flowcut" remap "$@" --format $fmt -o "$out" "$trace" 2>"$out.err"; then
            if [ $fmt = cray ] && "$PYTHON3" - "$trace.json" <<'PY'; then
import json, sys, collections
d = json.load(open(sys.argv[1]))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
per = collections.Counter(want).values()
sys.exit(0 if sum(1 for c in per if c < max(per)) > 1 else 1)
PY
                # Expected refusal: one line (after the check line) naming the format.
                grep -q "^flowcut remap: cray: the suggestion puts" "$out.err" ||
                    fail_later "$trace $*: cray refused without saying why: $(cat "$out.err")"
                checked=$((checked + 1))
                continue
            fi
            fail_later "$trace $*: remap --format $fmt failed: $(cat "$out.err")"
            continue
        fi
        "$PYTHON3" "$srcdir/launcher-check.py" "$trace.json" $fmt "$out" "$out.placed" || fail_later "$trace $*: $fmt"
        [ $fmt = cray ] || "$PYTHON3" "$srcdir/fewest-moves.py" "$trace.json" "$out.placed" >"$out.moves" ||
            fail_later "$trace $*: the $fmt file does not move fewest ranks: $(cat "$out.moves")"
        grep -q "^equivalent [2-9]" "$out.moves" 2>/dev/null && equiv=$((equiv + 1))
        "$flowcut" remap --check "$out" "$trace" >"$out.check" 2>&1
        st=$?
        "$PYTHON3" - "$trace.json" $fmt "$out.check" $st <<'PY' || fail_later "$trace $*: remap --check of the $fmt file"
import json, re, sys
doc, fmt, check, st = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = json.load(open(doc))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
now = d["current"]["rank_to_node"]
n = len(want)
if fmt == "cray":
    moved = [r for r in range(n) if any((now[q] == now[r]) != (want[q] == want[r]) for q in range(n) if q != r)]
else:
    moved = [r for r in range(n) if want[r] != now[r]]
named = sorted(int(m.group(1)) for m in (re.match(r"rank (\d+): ", l) for l in open(check)) if m)
if named != moved or st != (1 if moved else 0):
    print("--check named %s and exited %d; the suggestion moves %s" % (named, st, moved))
    print(open(check).read())
    sys.exit(1)
PY
        checked=$((checked + 1))
    done
}
check halo
check chain
check random --budget 300
check halo --nodes 3 --slots 2
check chain --nodes 4 --slots 2
check chain --nodes 2 --slots 3
check random --nodes 3 --slots 3 --budget 300
check random --nodes 5 --slots 2 --budget 300
[ "$failures" -eq 0 ] || fail "$failures launcher files do not place the ranks as suggested"
[ "$equiv" -gt 0 ] || fail "no case had equivalent suggestions: the fewest moves were not put to the test"
echo "ok: $checked launcher files read back as their launchers read them ($equiv chosen among equivalent suggestions)"
