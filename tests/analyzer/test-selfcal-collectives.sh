#!/bin/sh
# tests/analyzer/test-selfcal-collectives.sh: self-calibration and the models' predictions of
# point-to-point flows on traces that mix them with an MPI_Alltoall, and on lone flows, and on
# traces all in collectives (on an oversubscribed machine: no rate fitted to the steps), against
# figures worked out by hand. The network of every trace is 100 MB/s (1e-8 s per byte) with a
# latency of 50 us, full duplex: a message of B bytes that has both directions of its NICs to itself
# takes 50 + B / 100 us. Times in microseconds (gen-trace; aligned time = local time). Ranks r and
# r + 1 (r even) share node n(r / 2); but in the last case no affinity is recorded, so no machine
# counts as oversubscribed.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3" "python3 is needed to parse the JSON"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail_later "$gen_trace is not built"
[ -x "$flowcut" ] || fail_later "$flowcut is not built"

# pair T A B C D BYTES: rank A sends BYTES to rank B and rank C to rank D, both from T us, both
# received at T + 50 + BYTES / 100 us, the receives posted 20 us before. Lines are prefixed with the
# rank, for the sort that puts each rank's events in time order.
pair() {
    e=$(($1 + 50 + $6 / 100))
    echo "$2 ev $2 MPI_Send $1 $e $3 0 $6 0"
    echo "$3 ev $3 MPI_Recv $(($1 - 20)) $e $2 0 $6 0"
    echo "$4 ev $4 MPI_Send $1 $e $5 0 $6 0"
    echo "$5 ev $5 MPI_Recv $(($1 - 20)) $e $4 0 $6 0"
}
nodes() {
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do echo "node $r n$((r / 2))"; done
}
# alltoall: every rank in one MPI_Alltoall of 16e6 bytes a peer, entered at 200010 + r us, left at
# 2200000 us. MPICH's pairwise exchange sends each rank's 6 blocks for the other nodes, so each NIC
# direction carries 12 x 16e6 B = 192 MB: 1.92 s at 100 MB/s, inside the call's 2 s.
alltoall() {
    for r in 0 1 2 3 4 5 6 7; do
        echo "$r ev $r MPI_Alltoall $((200010 + r)) 2200000 -1 0 128000000 0 b2=128000000"
    done
}
finalize() {
    for r in 0 1 2 3 4 5 6 7; do echo "$r ev $r MPI_Finalize 2500000 2500001 -1 0 0 0"; done
}
gen() {
    mkdir -p "$work/$1" && "$gen_trace" "$work/$1" <"$work/$1.spec" || fail_later "$1: gen-trace"
    "$flowcut" analyze --format json -o "$work/$1.json" "$work/$1" 2>"$work/$1.err" ||
        fail_later "$1: analyze exit $? ($(cat "$work/$1.err"))"
}

# ---- mixed: before and after the call, pairs of flows cross one another between two nodes at once
# (node n0 -> n1 and n1 -> n0: a mixed conflict, which a full-duplex NIC does not slow), each
# taking 50 + B / 100 us for 1, 2 and 4 MB. No point-to-point flow ran alone, so the fit is over
# every network flow, each time divided by the flows sharing its NIC direction (1 in a mixed
# conflict): latency 50 us and 1e-8 s per byte exactly, the NIC bound (each busy period moves 1e6,
# 2e6 or 4e6 B from 50 us after its start to its end) is 100 MB/s, and the mixed flow cuts are 0.
# Every model then predicts every point-to-point flow at its observed time: a flow sharing no NIC
# direction with another moves at the link's rate under each of them. The all-to-all's steps,
# whose times the expansion infers (a rank's 2 s split evenly among its 7 steps), must neither
# enter the fit nor, where a model cannot finish one inside its step, load the NICs of the flows
# after the call.
{
    nodes
    {
        pair 1000 0 2 3 1 1000000
        pair 30000 0 2 3 1 2000000
        pair 80000 0 2 3 1 4000000
        alltoall
        pair 2300000 4 6 7 5 1000000
        pair 2330000 4 6 7 5 2000000
        pair 2380000 4 6 7 5 4000000
        finalize
    } | sort -s -n -k1,1 | cut -d' ' -f2-
} >"$work/mixed.spec"
gen mixed
"$PYTHON3" - "$work/mixed.json" <<'EOF' || fail_later "mixed: the fit or the predictions are not the network's"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["platform"]
assert p is not None, j["observation"]["platform_note"]
seg = p["inter"]
assert len(seg) == 1, seg
assert abs(seg[0]["latency_s"] - 50e-6) <= 50e-6 * 1e-9, seg
assert abs(seg[0]["per_byte_s"] - 1e-8) <= 1e-8 * 1e-9, seg
assert "point-to-point only" in p["note"], p["note"]
p2p = [f for f in j["flows"] if f["collective"] is None]
steps = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
# 12 point-to-point flows; 8 ranks x 6 blocks for other nodes = 48 steps between nodes.
assert len(p2p) == 12 and len(steps) == 48, (len(p2p), len(steps))
for f in p2p:
    want = 50e-6 + f["bytes"] * 1e-8
    assert abs(f["observed"] - want) <= 1e-9, f
    for model, t in f["predicted"].items():
        assert abs(t - want) <= want * 1e-9, (model, f["id"], t, want)
for model, e in j["errors"].items():
    assert e["flows"] == 12 and e["mean_abs_pct"] < 1e-6 and e["max_abs_pct"] < 1e-6, (model, e)
# A step is never predicted past the end of its step: finished inside it, or cut at its end.
for f in steps:
    for model, t in f["predicted"].items():
        assert t is not None and t <= f["observed"] + 1e-9, (model, f["id"], t, f["observed"])
EOF

# ---- alone: eager flows of 10, 50 and 100 kB, each alone on the network (twice each, n0 -> n1
# then n2 -> n3, 10 ms apart), and no collective. They ran alone, so the fit is to them: latency
# 50 us and 1e-8 s per byte. A lone flow's bytes cross in its time less the latency: 1e5 B in 1000
# us, 100 MB/s, which no cap at the rates the NICs reached may lower (over its whole 1050 us the
# flow would read 95.2 MB/s).
{
    nodes
    {
        t=1000
        for b in 10000 50000 100000; do
            e=$((t + 50 + b / 100))
            echo "0 ev 0 MPI_Send $t $e 2 0 $b 0"
            echo "2 ev 2 MPI_Recv $((t - 20)) $e 0 0 $b 0"
            t=$((t + 10000))
            e=$((t + 50 + b / 100))
            echo "4 ev 4 MPI_Send $t $e 6 0 $b 0"
            echo "6 ev 6 MPI_Recv $((t - 20)) $e 4 0 $b 0"
            t=$((t + 10000))
        done
        finalize
    } | sort -s -n -k1,1 | cut -d' ' -f2-
} >"$work/alone.spec"
gen alone
"$PYTHON3" - "$work/alone.json" <<'EOF' || fail_later "alone: the fit or the predictions are not the network's"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["platform"]
assert p is not None, j["observation"]["platform_note"]
seg = p["inter"]
assert len(seg) == 1, seg
assert abs(seg[0]["latency_s"] - 50e-6) <= 50e-6 * 1e-9, seg
assert abs(seg[0]["per_byte_s"] - 1e-8) <= 1e-8 * 1e-9, seg
assert "capped" not in p["note"], p["note"]
p2p = [f for f in j["flows"] if f["collective"] is None]
assert len(p2p) == 6, len(p2p)
for f in p2p:
    want = 50e-6 + f["bytes"] * 1e-8
    for model, t in f["predicted"].items():
        assert abs(t - want) <= want * 1e-9, (model, f["id"], t, want)
EOF

# ---- collectives only: the call alone has no point-to-point flow, so its steps are all the fit
# has, and the note says their times are inferred.
{
    nodes
    { alltoall; finalize; } | sort -s -n -k1,1 | cut -d' ' -f2-
} >"$work/coll.spec"
gen coll
"$PYTHON3" - "$work/coll.json" <<'EOF' || fail_later "coll: the note does not say the fit is to inferred times"
import json, re, sys
j = json.load(open(sys.argv[1]))
p = j["platform"]
assert p is not None, j["observation"]["platform_note"]
m = re.search(r"from (\d+) network flows \(of 48\), (\d+) of them collectives' steps, whose times are inferred", p["note"])
assert m and m.group(1) == m.group(2), p["note"]
EOF

# ---- oversubscribed: the same kind of trace, all in collectives, but the 8 ranks ran on one
# machine (host m) with 2 cores between them (affinity 0-1 each), as on the emulated cluster: 5
# MPI_Alltoall calls of 1 MiB a peer, each 1 s long, 1.5 s apart, the ranks entering 3 ms apart.
# 5 calls x 8 ranks x 6 blocks for other nodes = 240 steps between nodes, every one at or above the
# eager threshold. A step's time is a share of its call, which the ranks' waits for a core fill as
# much as the network: no rate is fitted to them, the note says the machine was oversubscribed, and
# no step is called a network flow.
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do
        echo "node $r n$((r / 2))"
        echo "host $r m"
        echo "affinity $r 0-1"
    done
    for r in 0 1 2 3 4 5 6 7; do
        for k in 0 1 2 3 4; do
            t=$((100000 + k * 1500000))
            echo "ev $r MPI_Alltoall $((t + 10 + r * 3000)) $((t + 1000000 + r * 500)) -1 0 8388608 0 b2=8388608"
        done
        echo "ev $r MPI_Finalize 9000000 9000001 -1 0 0 0"
    done
} >"$work/over.spec"
gen over
"$PYTHON3" - "$work/over.json" <<'EOF' || fail_later "over: a rate fitted to, or a network flow made of, steps on an oversubscribed machine"
import json, sys
j = json.load(open(sys.argv[1]))
steps = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
assert len(steps) == len(j["flows"]) == 240, (len(steps), len(j["flows"]))
assert j["platform"] is None, j["platform"]
note = j["observation"]["platform_note"]
assert note.startswith("not self-calibrated: 240 of the flows to fit are collectives' steps on machines with more "
                       "ranks than cores (m ran 8 ranks on 2 cores)"), note
assert note in j["warnings"], j["warnings"]
assert j["observation"]["hosts"] == [{"name": "m", "ranks": 8, "nodes": 4, "cores": 2, "oversubscribed": True}]
classes = {f["observation"]["class"] for f in j["flows"]}
assert classes == {"oversubscribed"}, classes
EOF

[ "$failures" -eq 0 ] && echo "self-calibration and predictions: point-to-point flows beside a collective as worked out"
finish
