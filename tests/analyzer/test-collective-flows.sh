#!/bin/sh
# tests/analyzer/test-collective-flows.sh: collectives in `flowcut analyze`. Each case writes a trace of
# 8 ranks on 4 nodes, 2 per node (rank r on node and host n(r / 2)), whose communication is
# collectives only, and checks the flows tagged with each collective against byte counts worked out
# by hand from the algorithm MPICH runs (MPICH sees the 4 hosts: its ch4 device's node-aware
# compositions for Allreduce, Bcast and Reduce, MPIR's algorithms for the others), the collective wait states against the ranks' entry times, and that every
# report (text, JSON, CSV, predictions, remap) has something to say.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
PY=$PYTHON3
need_command "$PY" "python3 is needed to parse the JSON"
FC_GEN=$abs_builddir/gen-trace
scratch=$work
MIB=1048576


# spec KIND BYTES BYTES2 ROOT [ENTER_OF_RANK0..7]: one call of KIND on every rank of 8 (rank r on
# node n(r/2)), entered at the given microseconds (10 + r by default), left at 5000 us.
spec() {
    kind=$1 bytes=$2 bytes2=$3 root=$4
    shift 4
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do echo "node $r n$((r / 2))"; done
    for r in 0 1 2 3 4 5 6 7; do
        enter=$((10 + r))
        [ $# -gt 0 ] && { enter=$1; shift; }
        echo "ev $r $kind $enter 5000 $root 0 $bytes 0 b2=$bytes2"
        echo "ev $r MPI_Finalize 6000 6001 -1 0 0 0"
    done
}

# gen NAME: the trace of the spec on standard input.
gen() {
    mkdir -p "$scratch/$1" && "$FC_GEN" "$scratch/$1" || fail_later "$1: gen-trace"
}

# check NAME COLLECTIVE INTER_BYTES INTER_FLOWS ALGORITHM [OPTIONS]: the JSON document of NAME has
# exactly these inter-node bytes and flows tagged with COLLECTIVE, all of ALGORITHM.
check() {
    name=$1 coll=$2 bytes=$3 flows=$4 alg=$5
    shift 5
    "$flowcut" analyze --format json "$@" -o "$scratch/$name.json" "$scratch/$name" 2>"$scratch/$name.err" ||
        { fail_later "$name: exit $? ($(cat "$scratch/$name.err"))"; return; }
    "$PY" - "$scratch/$name.json" "$coll" "$bytes" "$flows" "$alg" <<'EOF' || fail_later "$name: JSON checks"
import json, sys
j = json.load(open(sys.argv[1]))
coll, nbytes, nflows, alg = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
tagged = [f for f in j["flows"] if f["collective"] == coll]
assert all(f["collective"] is not None for f in j["flows"] + j["intra"]), "a flow without its collective"
assert sum(f["bytes"] for f in tagged) == nbytes, (sum(f["bytes"] for f in tagged), nbytes)
assert len(tagged) == nflows == j["messages"]["inter_node"], (len(tagged), nflows, j["messages"])
assert {f["algorithm"] for f in tagged} == {alg}, {f["algorithm"] for f in tagged}
assert all(f["src_node"] != f["dst_node"] for f in tagged)
k = [x for x in j["collectives"]["by_kind"] if x["collective"] == coll][0]
assert k["inter_node_bytes"] == nbytes and k["calls"] == 1, k
# Every flow lies inside the observed windows of its two ranks (entered at 10 + r us at the
# earliest, left at 5000 us).
for f in j["flows"] + j["intra"]:
    assert 10e-6 - 1e-12 <= f["start"] <= f["end"] <= 5000e-6 + 1e-12, f
assert len(j["intervals"]) > 0
for key in ("platform", "errors", "collectives", "warnings", "wait_states"):
    assert key in j, key
EOF
}

# ---- MPI_Alltoall of 1 MiB blocks: pairwise exchange (> 32768 bytes a peer). Each rank sends one
# block to each of the 8 - 2 = 6 ranks of the other nodes: 8 x 6 = 48 inter-node flows of 1 MiB.
# The ranks enter at 10 + r us, so in this N-to-N call rank r waits for rank 7: (7 - r) us.
spec MPI_Alltoall $((8 * MIB)) $((8 * MIB)) -1 | gen a2a
check a2a MPI_Alltoall $((48 * MIB)) 48 pairwise
"$PY" - "$scratch/a2a.json" <<'EOF' || fail_later "a2a: wait states, conflicts, predictions"
import json, sys
j = json.load(open(sys.argv[1]))
w = j["wait_states"]["wait_nxn_s"]
assert all(abs(w[r] - (7 - r) * 1e-6) < 1e-12 for r in range(8)), w
# The call's waits: 7 + 6 + ... + 0 = 28 us.
assert abs(j["collectives"]["calls"][0]["wait_s"] - 28e-6) < 1e-12, j["collectives"]["calls"][0]
assert j["totals"]["outgoing"]["flow_s"] > 0, j["totals"]
assert j["warnings"] == [], j["warnings"]
assert j["platform"] is not None and "flowcut" in j["errors"], j["errors"]
# The flow errors are over point-to-point messages (docs/json-schema.md): there are none here, so
# every model compares no flow and gives no figure, though the 48 steps are network flows.
assert j["observation"]["classes"]["network"]["flows"] == 48, j["observation"]["classes"]
assert j["observation"]["judged"] == 0 and not any(f["observation"]["judged"] for f in j["flows"])
for model, e in j["errors"].items():
    assert e["flows"] == 0 and e["mean_abs_pct"] is None and "collective calls" in e["withheld"], (model, e)
# The call's observed duration runs from the first entry (rank 0, 10 us) to the last exit (5000 us);
# every model predicts it, and the statistics over the one call are that call's error.
c = j["collectives"]["calls"][0]
assert abs(c["observed_s"] - 4990e-6) < 1e-12, c
assert abs(c["entry_skew_s"] - 7e-6) < 1e-12, c
for model, e in j["errors_collective"].items():
    err = abs(c["predicted"][model] - c["observed_s"]) / c["observed_s"] * 100
    assert e["calls"] == 1 and abs(e["mean_abs_pct"] - err) < 1e-3 and abs(e["max_abs_pct"] - err) < 1e-3, (model, e, err)
EOF
"$flowcut" analyze "$scratch/a2a" >"$scratch/a2a.txt" 2>&1 || fail_later "a2a: text exit $?"
grep -q "^  MPI_Alltoall .* 1 calls, .*48.0 MiB between nodes.*(pairwise)" "$scratch/a2a.txt" || fail_later "a2a: text lacks the collective's line"
grep -q "of which coll\." "$scratch/a2a.txt" || fail_later "a2a: traffic matrix lacks the collectives' column"
grep -q "^== predicted versus observed" "$scratch/a2a.txt" || fail_later "a2a: no predictions"
grep -q "^collective calls (1 predicted" "$scratch/a2a.txt" || fail_later "a2a: no predictions of the collective call"
# The ranks enter from 10 to 17 us and the call is observed from 10 to 5000 us: the skew the models
# are given is 7 / 4990 = 0.14 % of it, and 4983 us follow the last entry.
grep -q "^entry skew: *0\.1% of the observed time .* of the 0\.004983 s after the last rank entered" "$scratch/a2a.txt" ||
    fail_later "a2a: the entry skew's share of the observed time"
"$flowcut" analyze --format csv --model none "$scratch/a2a" | awk -F, 'NR > 1 && $11 == 0 && $17 == "MPI_Alltoall" { b += $6 } END { exit b != 48 * 1048576 }' ||
    fail_later "a2a: CSV inter-node bytes of MPI_Alltoall"
"$flowcut" remap "$scratch/a2a" >"$scratch/a2a.remap" 2>&1 || fail_later "a2a: remap exit $? ($(head -c 300 "$scratch/a2a.remap"))"

# ---- forced: MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=scattered moves the same blocks in one step.
{ spec MPI_Alltoall $((8 * MIB)) $((8 * MIB)) -1; for r in 0 1 2 3 4 5 6 7; do echo "env $r MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=scattered"; done; } | gen forced
check forced MPI_Alltoall $((48 * MIB)) 48 scattered
# An algorithm the expansion does not model is named in the warnings; MPICH's default stands in.
{ spec MPI_Alltoall $((8 * MIB)) $((8 * MIB)) -1; for r in 0 1 2 3 4 5 6 7; do echo "env $r MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=nb"; done; } | gen unmodelled
check unmodelled MPI_Alltoall $((48 * MIB)) 48 pairwise
grep -q "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=nb" "$scratch/unmodelled.json" || fail_later "unmodelled: not in the warnings"

# ---- MPI_Alltoall of 100-byte blocks: Bruck (8 ranks, <= 256 bytes). Step k = 1, 2, 4 sends 4
# blocks (400 bytes) to r + k: for k = 1 only the odd ranks' partner is on another node (4 flows),
# for k = 2 and 4 every rank's is (8 + 8): 20 flows, 20 x 400 = 8000 bytes.
spec MPI_Alltoall 800 800 -1 | gen bruck
check bruck MPI_Alltoall 8000 20 brucks

# ---- MPI_Allreduce of 8 bytes: the ch4 device's alpha composition: each node's second rank hands
# its 8 bytes to the node's leader (intra-node), the leaders 0, 2, 4, 6 run recursive doubling
# (0-2 and 4-6, then 0-4 and 2-6: 2 messages of 8 bytes each way per leader), and each leader
# hands the result back: 8 inter-node flows, 64 bytes.
spec MPI_Allreduce 8 8 -1 | gen allreduce
check allreduce MPI_Allreduce 64 8 composition_alpha
# With MPIR_CVAR_NOLOCAL=1 every rank is a node to MPICH, which runs MPIR's recursive doubling on
# all 8: partners r^1 (same node), r^2, r^4 (other nodes): 2 inter-node messages of 8 bytes per
# rank, 16 flows, 128 bytes.
{ spec MPI_Allreduce 8 8 -1; for r in 0 1 2 3 4 5 6 7; do echo "env $r MPIR_CVAR_NOLOCAL=1"; done; } | gen nolocal
check nolocal MPI_Allreduce 128 16 recursive_doubling

# ---- MPI_Bcast of 1000 bytes from rank 0: the alpha composition: the leaders' binomial tree
# 0>4, 0>2, 4>6 crosses nodes (3 flows, 3000 bytes), then each leader gives its node the buffer
# (0>1, 2>3, 4>5, 6>7). The root enters last (at 50 us, the others at 10 + r), so every other rank
# waits 50 - (10 + r) us for it (Late Broadcast).
spec MPI_Bcast 1000 1000 0 50 11 12 13 14 15 16 17 | gen bcast
check bcast MPI_Bcast 3000 3 composition_alpha
"$PY" - "$scratch/bcast.json" <<'EOF' || fail_later "bcast: late broadcast"
import json, sys
w = json.load(open(sys.argv[1]))["wait_states"]["late_broadcast_s"]
assert w[0] == 0 and all(abs(w[r] - (50 - 10 - r) * 1e-6) < 1e-12 for r in range(1, 8)), w
EOF

# ---- the timing rule (calls.h), worked by hand on the same broadcast with every rank in the call
# from 10 to 5000 us: rank 0 has 3 steps (sends to 4 and 2 among the leaders, then to 1) of
# 4990/3 us each; rank 2 has 2 (receive
# from 0, send to 3) of 2495 us, its first starting when rank 0's second (its input) does, at
# 10 + 4990/3; rank 3's one step starts with rank 2's second, at 10 + 4990/3 + 2495, and ends at the
# exit. So 0>4 spans [10, 10 + 4990/3], 0>2 [10 + 4990/3, 10 + 4990/3 + 2495], 2>3 [that, 5000].
spec MPI_Bcast 1000 1000 0 10 10 10 10 10 10 10 10 | gen timing
"$flowcut" analyze --format json --model none -o "$scratch/timing.json" "$scratch/timing" || fail_later "timing: exit $?"
"$PY" - "$scratch/timing.json" <<'EOF' || fail_later "timing: steps placed as the rule says"
import json, sys
j = json.load(open(sys.argv[1]))
f = {(x["src_rank"], x["dst_rank"]): x for x in j["flows"] + j["intra"]}
a = 10 + 4990 / 3
for (s, d), (t0, t1) in {(0, 4): (10, a), (0, 2): (a, a + 2495), (2, 3): (a + 2495, 5000)}.items():
    assert abs(f[s, d]["start"] - t0 * 1e-6) < 2e-9 and abs(f[s, d]["end"] - t1 * 1e-6) < 2e-9, (s, d, f[s, d])
assert [f[0, 4]["step"], f[0, 2]["step"], f[2, 3]["step"]] == [0, 1, 1]
EOF

# ---- MPI_Reduce of 1000 bytes to rank 0: the beta composition (<= 2048 bytes): nodes n1..n3
# reduce to their leaders (3>2, 5>4, 7>6), the leaders' binomial tree to rank 0's node (2>0, 6>4,
# 4>0: 3 inter-node flows, 3000 bytes), then rank 0's node to it (1>0). The root enters first, at
# 10 us, and the others at 30 + r: the root waits 30 + 1 - 10 = 21 us for the first of them
# (Early Reduce).
spec MPI_Reduce 1000 1000 0 10 31 32 33 34 35 36 37 | gen reduce
check reduce MPI_Reduce 3000 3 composition_beta
"$PY" - "$scratch/reduce.json" <<'EOF' || fail_later "reduce: early reduce"
import json, sys
w = json.load(open(sys.argv[1]))["wait_states"]["early_reduce_s"]
assert abs(w[0] - 21e-6) < 1e-12 and all(x == 0 for x in w[1:]), w
EOF

# ---- a rank file missing: rank 7's. The all-to-all is expanded for the 7 ranks present: ranks of
# n0, n1 and n2 send to the 5 present ranks of the other nodes, rank 6 to the 6 of n0..n2:
# 6 x 5 + 6 = 36 flows of 1 MiB. The call is named in the warnings; nothing else breaks.
spec MPI_Alltoall $((8 * MIB)) $((8 * MIB)) -1 | gen missing
rm -f "$scratch/missing/rank-000007.fct"
check missing MPI_Alltoall $((36 * MIB)) 36 pairwise
grep -q "collective call with members missing" "$scratch/missing.json" || fail_later "missing: not in the warnings"

# ---- records that disagree: rank 3 records an MPI_Bcast where the others record MPI_Allreduce.
# Its record is left out and the all-reduce (8 bytes, alpha) is expanded for the 7 others: rank 3's
# messages to and from its leader 2 are gone, the leaders' 8 inter-node messages of 8 bytes stay:
# 64 bytes.
spec MPI_Allreduce 8 8 -1 | sed 's/^ev 3 MPI_Allreduce .*/ev 3 MPI_Bcast 13 5000 0 0 8 0 b2=8/' | gen disagree
check disagree MPI_Allreduce 64 8 composition_alpha
grep -q "1 collective call with members missing or disagreeing.*1 records of another call left out" "$scratch/disagree.json" ||
    fail_later "disagree: not in the warnings"

# ---- a rank file cut: the run ends for rank 7 after the first of two all-to-alls (its file has no
# END block), then the same trace with rank 7's file cut in the middle of its events block (all
# its records lost). The first case expands the first call for all 8 (48 flows of 1 MiB, as a2a)
# and the second for the 7 present (36, as missing): 84 MiB; the second case expands both for 7:
# 72 MiB. The warnings name the partial rank and the calls with members missing.
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do echo "node $r n$((r / 2))"; done
    for r in 0 1 2 3 4 5 6 7; do
        echo "ev $r MPI_Alltoall $((10 + r)) 5000 -1 0 $((8 * MIB)) 0 b2=$((8 * MIB))"
        if [ $r = 7 ]; then echo "partial 7"; continue; fi
        echo "ev $r MPI_Alltoall 6000 9000 -1 0 $((8 * MIB)) 0 b2=$((8 * MIB))"
        echo "ev $r MPI_Finalize 9500 9501 -1 0 0 0"
    done
} | gen cut
spec MPI_Alltoall $((8 * MIB)) $((8 * MIB)) -1 |
    sed "s/^ev \([0-7]\) MPI_Finalize .*/ev \1 MPI_Alltoall 6000 9000 -1 0 $((8 * MIB)) 0 b2=$((8 * MIB))/" | gen cutblock
f=$scratch/cutblock/rank-000007.fct
[ -f "$f" ] && truncate -s $(($(wc -c <"$f") * 3 / 4)) "$f" || fail_later "cutblock: no rank 7 file"
for c in "cut 84 1" "cutblock 72 2"; do
    set -- $c
    "$flowcut" analyze --format json --model none -o "$scratch/$1.json" "$scratch/$1" 2>"$scratch/$1.err" ||
        { fail_later "$1: exit $? ($(cat "$scratch/$1.err"))"; continue; }
    "$PY" - "$scratch/$1.json" "$2" "$3" <<'EOF' || fail_later "$1: JSON checks"
import json, sys
j = json.load(open(sys.argv[1]))
mib, incomplete = int(sys.argv[2]), int(sys.argv[3])
a2a = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
assert sum(f["bytes"] for f in a2a) == mib * 1048576 and len(a2a) == mib, (sum(f["bytes"] for f in a2a), len(a2a))
assert [x["calls"] for x in j["collectives"]["by_kind"] if x["collective"] == "MPI_Alltoall"] == [2]
w = j["warnings"]
assert [x for x in w if x.startswith("rank 7 is partial")], w
assert [x for x in w if x.startswith("%d collective call" % incomplete) and "members missing" in x], w
EOF
done

# ---- MPI_Scan of 8 bytes on the 4 nodes of consecutive ranks: the ch4 device's composition alpha
# (MPIDI_Scan_intra_composition_alpha). The leaders 0, 2, 4, 6 run recursive doubling (0-2, 4-6,
# then 0-4, 2-6: 8 messages) and pass their prefix along 0 > 2 > 4 > 6 (3): 11 inter-node
# messages of 8 bytes; everything else stays inside the nodes.
spec MPI_Scan 8 8 -1 | gen scan
check scan MPI_Scan 88 11 composition_alpha

# ---- every rank on one node: no inter-node traffic, said in one line, every member present. The
# all-reduce is MPICH's shared-memory one (release-gather): ranks 1..3 to rank 0 and back, 6
# intra-node messages.
{ echo "ranks 4"; for r in 0 1 2 3; do echo "node $r only"; echo "ev $r MPI_Allreduce 10 20 -1 0 8 0 b2=8"; done; } | gen onenode
"$flowcut" analyze --format json --model none "$scratch/onenode" >"$scratch/onenode.json" 2>&1 || fail_later "onenode: exit $?"
"$PY" - "$scratch/onenode.json" <<'EOF' || fail_later "onenode: JSON checks"
import json, sys
j = json.load(open(sys.argv[1]))
assert [w for w in j["warnings"] if w.startswith("no inter-node traffic")], j["warnings"]
assert j["flows"] == [] and len(j["intra"]) == 6 and j["platform"] is None and j["errors"] is None
assert j["errors_collective"] is None
EOF
"$flowcut" analyze "$scratch/onenode" 2>&1 | grep -q "no inter-node traffic" || fail_later "onenode: text lacks the line"

# ---- non-blocking: MPI_Ialltoall posted at 10 + r us, completed by MPI_Wait at 400..500 us: the
# flows lie inside [post, completion], tagged MPI_Ialltoall.
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do
        echo "node $r n$((r / 2))"
        echo "ev $r MPI_Ialltoall $((10 + r)) $((11 + r)) -1 0 $((8 * MIB)) 0x40 b2=$((8 * MIB))"
        echo "ev $r MPI_Wait 400 500 -1 0 0 0x40"
        echo "ev $r COMPLETE 500 500 -1 0 0 0x40"
    done
} | gen nonblocking
check nonblocking MPI_Ialltoall $((48 * MIB)) 48 pairwise
"$PY" - "$scratch/nonblocking.json" <<'EOF' || fail_later "nonblocking: window"
import json, sys
j = json.load(open(sys.argv[1]))
assert max(f["end"] for f in j["flows"]) <= 500e-6 + 1e-12 and min(f["start"] for f in j["flows"]) >= 10e-6 - 1e-12
assert max(f["end"] for f in j["flows"]) > 11e-6 + 1e-9, "the window ends at the completion, not the post"
EOF

# ---- the flow errors count point-to-point messages only: the all-to-all above, 2 s long (its 48
# steps are network flows under the platform the trace calibrates for itself), then three 1 MiB
# messages between nodes of 400 ms each, 0 > 2, 2 > 4, 4 > 6: every model's errors are over those
# 3 flows of the 51 between nodes, with --flows network and --flows all alike.
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do
        echo "node $r n$((r / 2))"
        echo "ev $r MPI_Alltoall $((10 + r)) 2000000 -1 0 $((8 * MIB)) 0 b2=$((8 * MIB))"
        k=$((r / 2))
        # rank 2k receives from 2k - 2 (message k - 1), then sends to 2k + 2 (message k)
        [ $((r % 2)) = 0 ] && [ $k -ge 1 ] &&
            echo "ev $r MPI_Recv $((2100000 + (k - 1) * 500000)) $((2500000 + (k - 1) * 500000)) $((r - 2)) 7 $MIB 0 status"
        [ $((r % 2)) = 0 ] && [ $k -le 2 ] &&
            echo "ev $r MPI_Send $((2100000 + k * 500000)) $((2500000 + k * 500000)) $((r + 2)) 7 $MIB 0"
        echo "ev $r MPI_Finalize 4000000 4000001 -1 0 0 0"
    done
} | gen p2perrors
for fl in network all; do
    "$flowcut" analyze --format json --flows $fl -o "$scratch/p2perrors-$fl.json" "$scratch/p2perrors" \
        2>"$scratch/p2perrors.err" || { fail_later "p2perrors: exit $? ($(cat "$scratch/p2perrors.err"))"; continue; }
    "$PY" - "$scratch/p2perrors-$fl.json" <<'PYEOF' || fail_later "p2perrors ($fl): errors over the point-to-point flows"
import json, sys
j = json.load(open(sys.argv[1]))
p2p = [f for f in j["flows"] if f["collective"] is None]
assert len(p2p) == 3 and len(j["flows"]) == 51, (len(p2p), len(j["flows"]))
# The steps are network flows too: counting them would give 51.
assert j["observation"]["classes"]["network"]["flows"] == 51, j["observation"]["classes"]
assert j["observation"]["judged"] == 3, j["observation"]
assert [f["id"] for f in j["flows"] if f["observation"]["judged"]] == [f["id"] for f in p2p]
for model, e in j["errors"].items():
    assert e["flows"] == 3 and e["withheld"] is None and e["worst_flow"] in [f["id"] for f in p2p], (model, e)
PYEOF
done
"$flowcut" analyze "$scratch/p2perrors" >"$scratch/p2perrors.txt" 2>&1 || fail_later "p2perrors: text exit $?"
grep -q "^(each figure over the 3 network flows between point-to-point messages of 51 inter-node flows" "$scratch/p2perrors.txt" ||
    fail_later "p2perrors: the text report's errors are not over the 3 point-to-point flows"

# ---- the prediction of a call replays the messages MPICH sends, which follow the nodes MPICH sees
# (its host names), not the trace's: 8 ranks on the trace's 4 nodes but one host, so that MPICH's
# ch4 device sees one node, and a 1000-byte MPI_Bcast from rank 0 (composition alpha: one leader,
# which hands the buffer to the 7 others at once). Every rank enters at 10 us. Under the linear
# model of a profile whose inter-node messages take 10 us + 1 ns a byte and intra-node ones 1 us +
# 0.1 ns a byte, the call lasts as long as its slowest message: 10 + 1 = 11 us. (The 4-node
# composition would pass the buffer along the leaders' binomial tree 0 > 4 > 6, then 6 > 7:
# 10 + 1 + 10 + 1 + 1 + 0.1 = 23.1 us.)
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do
        echo "node $r n$((r / 2))"
        echo "host $r onehost"
        echo "ev $r MPI_Bcast 10 5000 0 0 1000 0 b2=1000"
        echo "ev $r MPI_Finalize 6000 6001 -1 0 0 0"
    done
} | gen onehost
cat >"$scratch/onehost.profile" <<'PEOF'
flowcut-profile 1.1
source calibrate
nodes 4
ranks-per-node 2
eager-threshold 32768
inter 0 inf 1e-05 1e-09 0.01
intra 0 inf 1e-06 1e-10 0.01
PEOF
"$flowcut" analyze --platform "$scratch/onehost.profile" --model linear --format json -o "$scratch/onehost.json" \
    "$scratch/onehost" 2>"$scratch/onehost.err" || fail_later "onehost: exit $? ($(cat "$scratch/onehost.err"))"
"$PY" - "$scratch/onehost.json" <<'PYEOF' || fail_later "onehost: the replay of the call follows MPICH's nodes"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["collectives"]["calls"][0]
assert c["algorithm"] == "composition_alpha" and c["messages"] == 7, c
assert sorted((f["src_rank"], f["dst_rank"]) for f in j["flows"] + j["intra"]) == [(0, r) for r in range(1, 8)]
assert abs(c["predicted"]["linear"] - 11e-6) < 1e-12, c["predicted"]
PYEOF

# ---- a neighbourhood exchange waits among the neighbours only: MPI_Neighbor_alltoall on a 1-D
# cartesian communicator of 4 ranks, not periodic (rank r's sources and destinations r - 1 and
# r + 1, MPI_PROC_NULL past the ends), 2 ranks a node, entered at 10, 20, 50, 15 us. A rank waits
# for the last of its sources to enter: rank 0 for rank 1 (20 - 10 = 10 us; a wait for every
# member would be 50 - 10 = 40), rank 1 for rank 2 (50 - 20 = 30), rank 2 for nobody (its sources
# 1 and 3 entered before it), rank 3 for rank 2 (50 - 15 = 35): 75 us in the call.
{
    echo "ranks 4"
    echo "env 0 MPIR_CVAR_NOLOCAL=1"
    set -- 10 20 50 15
    for r in 0 1 2 3; do
        echo "node $r n$((r / 2))"
        lo=$((r - 1)) hi=$((r + 1))
        [ $lo -ge 0 ] || lo=null
        [ $hi -le 3 ] || hi=null
        echo "topo $r cart $lo,$hi $lo,$hi"
        echo "ev $r MPI_Neighbor_alltoall $1 5000 -1 0 2000 0 b2=2000 comm=2"
        echo "ev $r MPI_Finalize 6000 6001 -1 0 0 0"
        shift
    done
} | gen neighbor
"$flowcut" analyze --format json --model none -o "$scratch/neighbor.json" "$scratch/neighbor" 2>"$scratch/neighbor.err" ||
    fail_later "neighbor: exit $? ($(cat "$scratch/neighbor.err"))"
"$PY" - "$scratch/neighbor.json" <<'PYEOF' || fail_later "neighbor: wait among the neighbours"
import json, sys
j = json.load(open(sys.argv[1]))
w = j["wait_states"]["wait_nxn_s"]
want = [10e-6, 30e-6, 0, 35e-6]
assert all(abs(a - b) < 1e-12 for a, b in zip(w, want)), w
calls = [c for c in j["collectives"]["calls"] if c["collective"] == "MPI_Neighbor_alltoall"]
assert len(calls) == 1 and calls[0]["present"] == 4 and abs(calls[0]["wait_s"] - 75e-6) < 1e-12, calls
PYEOF

[ "$failures" -eq 0 ] && echo "collectives: every case passed"
finish
