#!/bin/sh
# tests/analyzer/test-analyzer-selfcal.sh: self-calibration (flowcut analyze without --platform)
# never fits a rate above the capacity of the NICs that moved the trace's bytes, on hand-built
# traces whose capacity is known by construction: 100 MB/s (1e-8 s per byte). Times in
# microseconds (gen-trace; aligned time = local time).
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3" "python3 is needed to parse the JSON"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail_later "$gen_trace is not built"
[ -x "$flowcut" ] || fail_later "$flowcut is not built"

# An uneven split of one NIC, as TCP gives. Ranks 0 and 1 share node a (and its one core: the
# machine is oversubscribed, as the emulated cluster is); 2 is on b, 3 on c. Four times, 100 ms
# apart, ranks 0 and 1 each send 1 MB at once out of a, the receives posted 50 us before. While
# both run, one flow gets 70 MB/s and the other 30 MB/s, together the NIC's 100 MB/s: the fast one
# ends after 1e6 / 70e6 s = 14285.714 us; the slow one has then moved 30e6 x 0.014285714 = 428571
# B and moves the other 571429 B alone at 100 MB/s in 5714.286 us, ending at 20000 us. The
# direction a-out carries 2 MB in each of its busy periods of 20 ms: 100 MB/s. Which rank is fast
# alternates.
# No flow runs alone (each starts under an outgoing conflict), so the fit divides each time by
# the mean number of flows on its NIC (2 for the fast flow, (2 x 14285.714 + 5714.286) / 20000 =
# 1.714 for the slow one): 2 x 1e6 / 14285.714 us reads as 140 MB/s, 1.714 x 1e6 / 20000 us as
# 85.7 MB/s, and the bytes crossing a-out over the fast flow's time (its own and the slow one's at
# its mean 50 MB/s) as 1.714e6 B / 14285.714 us = 120 MB/s. All three are above the capacity.
# A fifth time (at 400100 us) both flows take 25000 us, ranks slowed by their shared core: a-out
# carries 2 MB in 25 ms, 80 MB/s, and still 0.8 of the time at 100 MB/s (a network flow). Each busy
# period counts on its own: over all of a-out's busy time the rate would be 10 MB / 105 ms =
# 95.2 MB/s, below what its other periods prove.
{
    echo "ranks 4"
    echo "node 0 a"; echo "node 1 a"; echo "node 2 b"; echo "node 3 c"
    echo "affinity 0 0"; echo "affinity 1 0"; echo "affinity 2 0"; echo "affinity 3 0"
    for k in 0 1 2 3; do
        t=$((100 + 100000 * k))
        if [ $((k % 2)) = 0 ]; then fast=0 slow=1; else fast=1 slow=0; fi
        echo "$fast $t $(awk -v t=$t 'BEGIN { printf "%.3f", t + 14285.714 }')" >>"$work/fast.times"
        echo "$slow $t $((t + 20000))" >>"$work/slow.times"
    done
    echo "0 400100 425100" >>"$work/slow.times"
    echo "1 400100 425100" >>"$work/slow.times"
    # Each rank's events in time order.
    for r in 0 1; do
        cat "$work/fast.times" "$work/slow.times" | awk -v r=$r '$1 == r' | sort -n -k2 |
            while read -r _ t0 t1; do echo "ev $r MPI_Send $t0 $t1 $((r + 2)) 0 1000000 0"; done
    done
    for r in 2 3; do
        cat "$work/fast.times" "$work/slow.times" | awk -v s=$((r - 2)) '$1 == s' | sort -n -k2 |
            while read -r _ t0 t1; do echo "ev $r MPI_Recv $((t0 - 50)) $t1 $((r - 2)) 0 1000000 0"; done
    done
} >"$work/uneven.spec" || fail_later "uneven: the spec"
mkdir -p "$work/uneven" && "$gen_trace" "$work/uneven" <"$work/uneven.spec" || fail_later "uneven: gen-trace"
"$flowcut" analyze --format json -o "$work/uneven.json" "$work/uneven" || fail_later "uneven: exit $?"
"$PYTHON3" - "$work/uneven.json" <<'EOF' || fail_later "uneven: the fitted rate is not the NIC's 100 MB/s"
import json, sys
j = json.load(open(sys.argv[1]))
# The trace is what the comment above builds: 10 flows of 1 MB.
obs = sorted(round(f["observed"] * 1e6, 3) for f in j["flows"])
assert obs == [14285.714] * 4 + [20000.0] * 4 + [25000.0] * 2, obs
p = j["platform"]
assert p is not None, j["observation"]["platform_note"]
rate = 1 / p["inter"][-1]["per_byte_s"]
# At most the capacity (to rounding), and not below it by more than the trace's rounding of times.
assert rate <= 100e6 * (1 + 1e-9), "fitted %.4g B/s, above the NIC's 100 MB/s" % rate
assert rate >= 100e6 * (1 - 1e-6), "fitted %.4g B/s, below the 100 MB/s the NIC carried" % rate
assert "too few ran alone" in p["note"] and "carried while busy (100 MB/s, a out)" in p["note"], p["note"]
EOF

[ "$failures" -eq 0 ] && echo "self-calibration: the rates fitted are the NICs' by construction"
finish
