#!/bin/sh
# tests/analyzer/test-analyzer-cases.sh: cases of `flowcut analyze` worked out by hand. Each case
# writes a small trace with gen-trace (times in microseconds, one rank per node unless stated,
# aligned time = local time), runs the command, and checks the JSON (parsed by python3) or CSV
# against flows, intervals, labels and totals worked out by hand in the comments beside them. A
# failed check does not stop the script (fail_later): every case runs.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3" "python3 is needed to parse the JSON"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"
[ -x "$flowcut" ] || fail "$flowcut is not built"

# A platform of 0.1 us and 100 GB/s (no flow below is faster than its wire), for the cases whose
# few flows give self-calibration too little to fit (it then leaves the models out) but whose
# reports are checked with predictions.
prof=$work/line.prof
line_profile "$prof" 1e-07 1e-11 1e-08 1e-12 1e11

# gen NAME < SPEC: writes the trace of SPEC into $work/NAME.
gen() {
    mkdir -p "$work/$1" && "$gen_trace" "$work/$1" || fail_later "$1: gen-trace"
}

# json NAME [OPTIONS]: analyses $work/NAME into $work/NAME.json; fails the case on exit != 0.
json() {
    name=$1
    shift
    "$flowcut" analyze --format json -o "$work/$name.json" "$@" "$work/$name" 2>"$work/$name.err" ||
        fail_later "$name: exit $? ($(cat "$work/$name.err"))"
}

# expect NAME < PYTHON: runs the assertions with j = the parsed JSON of NAME and helpers.
expect() {
    {
        cat <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
US = 1e-6
def near(a, b, what):
    assert a is not None and abs(a - b) < 1e-9, "%s: %r, expected %r" % (what, a, b)
def runs(fid):
    """A flow's label history as (start_us, end_us, kind, node, k) tuples."""
    f = [x for x in j["flows"] if x["id"] == fid][0]
    return [(round(c["start"] / US), round(c["end"] / US), c["kind"], c["node"], c["k"]) for x in [f] for c in x["conflict"]]
def ivs():
    """Intervals as (start_us, end_us, flows, [(node, kind, k, flows)])."""
    return [(round(i["start"] / US), round(i["end"] / US), i["flows"],
             [(c["node"], c["kind"], c["k"], c["flows"]) for c in i["conflicts"]]) for i in j["intervals"]]
def flow(src, dst):
    return [f for f in j["flows"] + j["intra"] if f["src_rank"] == src and f["dst_rank"] == dst][0]
def total(kind, k=None):
    t = j["totals"][kind]
    return t["flow_s"] if k is None else t["by_k"].get(str(k), 0.0)
EOF
        cat
    } >"$work/check.py"
    "$PYTHON3" "$work/check.py" "$work/$1.json" || fail_later "$1: JSON checks"
}

# ---- 0>1<2: two flows into node1; incoming k=2 on their overlap [200, 400) ----------------------
gen in <<'EOF'
ranks 3
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Irecv 50 51 0 0 1000 0x10
ev 1 MPI_Irecv 60 61 2 0 1000 0x20
ev 1 MPI_Waitall 70 500 -1 0 0 0
ev 1 COMPLETE 400 400 0 0 1000 0x10 status
ev 1 COMPLETE 500 500 2 0 1000 0x20 status
ev 2 MPI_Send 200 210 1 0 1000 0
EOF
json in
# Eager (1000 B < 256 KiB): a flow starts at its send and ends at its receive's completion.
# f0 = 0>1 [100, 400), f1 = 2>1 [200, 500). Intervals [100,200) {0}, [200,400) {0,1} incoming at
# node1, [400,500) {1}. none: 100 + 100 us; incoming k=2: 2 flows x 200 us.
expect in <<'EOF'
assert j["flowcut_analyze"] == 1 and j["ranks"] == 3 and j["partial"] is False
assert [n["name"] for n in j["nodes"]] == ["node0", "node1", "node2"]
assert j["eager_threshold"] == 262144 and j["eager_threshold_source"].startswith("default")
assert j["messages"] == {"matched": 2, "inter_node": 2, "intra_node": 0, "unmatched_sends": 0, "unmatched_recvs": 0}
f0, f1 = j["flows"]
assert (f0["id"], f0["src_rank"], f0["dst_rank"], f0["src_node"], f0["dst_node"]) == (0, 0, 1, "node0", "node1")
assert (f1["id"], f1["src_rank"], f1["dst_rank"]) == (1, 2, 1)
near(f0["start"], 100 * US, "f0 start"); near(f0["end"], 400 * US, "f0 end"); near(f0["observed"], 300 * US, "f0 obs")
assert f0["rendezvous"] is False and f0["bytes"] == 1000 and f0["send_site"] is None
assert runs(0) == [(100, 200, "none", None, 1), (200, 400, "incoming", "node1", 2)], runs(0)
assert runs(1) == [(200, 400, "incoming", "node1", 2), (400, 500, "none", None, 1)], runs(1)
assert ivs() == [(100, 200, [0], []), (200, 400, [0, 1], [("node1", "incoming", 2, [0, 1])]), (400, 500, [1], [])], ivs()
near(total("none"), 200 * US, "none"); near(total("incoming"), 400 * US, "incoming")
near(total("incoming", 2), 400 * US, "incoming k=2"); near(total("outgoing"), 0, "outgoing"); near(total("mixed"), 0, "mixed")
# Late Sender on rank 1: its Waitall (entered at 70) waited for the later send, at 200: 130 us.
near(j["wait_states"]["late_sender_s"][1], 130 * US, "late sender rank 1")
assert j["unmatched"] == [] and j["intra"] == []
# Two flows are too few to self-calibrate on: the one warning says so (its note).
assert j["platform"] is None and j["warnings"] == [j["observation"]["platform_note"]], j["warnings"]
EOF

# The text report of the same case, without predictions: of the 600 flow-us, 400 are incoming k=2
# (66.7 %); the worst interval is #1, [200, 400) with both flows; node1 is the one hot node, with
# 2 x 200 us incoming; flow 0 spent 200 of its 300 us in the conflict.
"$flowcut" analyze --model none "$work/in" >"$work/in.txt" || fail_later "in: text exit $?"
grep -Eq '^  incoming +2 +0\.000400000 +66\.7%$' "$work/in.txt" || fail_later "in: text time incoming k=2"
worst=$(sed -n '/^== worst intervals/,/^$/p' "$work/in.txt" | sed -n 3,4p | tr -s ' ' | tr '\n' '|')
[ "$worst" = " 1 0.000200000 0.000400000 0.000200000 2 | incoming@node1 k=2 flows 0,1|" ] ||
    fail_later "in: text worst interval: $worst"
grep -Eq '^  node1 +0\.000400000 +0\.000000000 +0\.000400000 +0\.000000000$' "$work/in.txt" ||
    fail_later "in: text hot node"
grep -Eq '^ +0 0@node0 +1@node1 +1000 B +0\.000300000 +3\.333 +66\.7%$' "$work/in.txt" || fail_later "in: text worst flow"
if grep -q '^== predicted versus observed' "$work/in.txt"; then fail_later "in: --model none predicted"; fi
# Two flows are too few to fit a platform to: the models are left out, and the report says why.
"$flowcut" analyze "$work/in" >"$work/in.default.txt" || fail_later "in: default exit $?"
if grep -q '^== predicted versus observed' "$work/in.default.txt"; then fail_later "in: models fitted to 2 flows"; fi
grep -q '^no platform: .*not self-calibrated: 0 of 2 inter-node flows are network flows' "$work/in.default.txt" ||
    fail_later "in: no note on the models left out"
"$flowcut" analyze --platform "$prof" "$work/in" | grep -q '^== predicted versus observed' ||
    fail_later "in: no predictions with --platform"

# ---- 1<0>2: two flows out of node0; outgoing k=2 on [200, 400) ----------------------------------
# Two call sites (in a module addr2line cannot open, so they read module+offset): rank 0's first
# Isend and rank 1's Recv.
gen out <<'EOF'
ranks 3
site 0 1 1a0
site 1 2 2b0
ev 0 MPI_Isend 100 101 1 0 1000 0x10 site=1
ev 0 MPI_Isend 200 201 2 0 1000 0x11
ev 0 MPI_Waitall 210 600 -1 0 0 0
ev 0 COMPLETE 600 600 1 0 0 0x10
ev 0 COMPLETE 600 600 2 0 0 0x11
ev 1 MPI_Recv 50 400 0 0 1000 0 site=2
ev 2 MPI_Recv 50 500 0 0 1000 0
EOF
json out
expect out <<'EOF'
assert runs(0) == [(100, 200, "none", None, 1), (200, 400, "outgoing", "node0", 2)], runs(0)
assert runs(1) == [(200, 400, "outgoing", "node0", 2), (400, 500, "none", None, 1)], runs(1)
assert ivs()[1] == (200, 400, [0, 1], [("node0", "outgoing", 2, [0, 1])]), ivs()
near(total("outgoing", 2), 400 * US, "outgoing k=2"); near(total("none"), 200 * US, "none")
f0, f1 = j["flows"]
assert (f0["send_site"], f0["recv_site"], f1["send_site"], f1["recv_site"]) == ("libapp.so+0x1a0", "libapp.so+0x2b0", None, None), (f0, f1)
EOF
# Rank 0's site sent one conflicted flow, outgoing for 200 us.
"$flowcut" analyze --platform "$prof" --flows all "$work/out" >"$work/out.txt" || fail_later "out: text exit $?"
grep -Eq "^ +0 send +1 +0.000200000 +0.000200000 .* libapp.so\+0x1a0$" "$work/out.txt" || fail_later "out: call site row"
for h in run nodes "inter-node traffic" "time in conflicts" "worst intervals" "worst flows" "hot nodes" \
    "call sites of the conflicted flows" "wait states" warnings; do
    grep -q "^== $h" "$work/out.txt" || fail_later "out: no section '$h'"
done
"$flowcut" analyze --format csv --platform "$prof" "$work/out" | grep -Eq '^0,0,1,node0,node1,1000,.*,outgoing,node0,2,libapp.so\+0x1a0,libapp.so\+0x2b0,,,(,[0-9.]+)+$' ||
    fail_later "out: CSV sites"

# ---- 0>1>2: a chain through node1; mixed on [200, 400): 0>1 mixed-in, 1>2 mixed-out ------------
gen mixed <<'EOF'
ranks 3
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Irecv 50 51 0 0 1000 0x10
ev 1 MPI_Isend 200 201 2 0 1000 0x11
ev 1 MPI_Waitall 210 400 -1 0 0 0
ev 1 COMPLETE 400 400 0 0 1000 0x10 status
ev 1 COMPLETE 400 400 2 0 0 0x11
ev 2 MPI_Recv 50 500 1 0 1000 0
EOF
json mixed
expect mixed <<'EOF'
assert runs(0) == [(100, 200, "none", None, 1), (200, 400, "mixed-in", "node1", 2)], runs(0)
assert runs(1) == [(200, 400, "mixed-out", "node1", 2), (400, 500, "none", None, 1)], runs(1)
assert ivs()[1] == (200, 400, [0, 1], [("node1", "mixed", 2, [0, 1])]), ivs()
near(total("mixed"), 400 * US, "mixed"); near(total("mixed", 2), 400 * US, "mixed k=2")
EOF

# ---- section 5.2: 0>1>2<3<4<5, all five flows on [100, 1000) ------------------------------------
# Ids by start then source rank: 0 = 0>1, 1 = 1>2, 2 = 3>2, 3 = 4>3, 4 = 5>4. The report's
# decomposition: 1>2 and 3>2 incoming at node2; 5>4 (in) and 4>3 (out) mixed at node4; 0>1 alone.
gen paper <<'EOF'
ranks 6
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Irecv 50 51 0 0 1000 0x10
ev 1 MPI_Isend 100 101 2 0 1000 0x11
ev 1 MPI_Waitall 110 1000 -1 0 0 0
ev 1 COMPLETE 1000 1000 0 0 1000 0x10 status
ev 1 COMPLETE 1000 1000 2 0 0 0x11
ev 2 MPI_Irecv 50 51 1 0 1000 0x10
ev 2 MPI_Irecv 60 61 3 0 1000 0x20
ev 2 MPI_Waitall 70 1000 -1 0 0 0
ev 2 COMPLETE 1000 1000 1 0 1000 0x10 status
ev 2 COMPLETE 1000 1000 3 0 1000 0x20 status
ev 3 MPI_Irecv 50 51 4 0 1000 0x10
ev 3 MPI_Isend 100 101 2 0 1000 0x11
ev 3 MPI_Waitall 110 1000 -1 0 0 0
ev 3 COMPLETE 1000 1000 4 0 1000 0x10 status
ev 3 COMPLETE 1000 1000 2 0 0 0x11
ev 4 MPI_Irecv 50 51 5 0 1000 0x10
ev 4 MPI_Isend 100 101 3 0 1000 0x11
ev 4 MPI_Waitall 110 1000 -1 0 0 0
ev 4 COMPLETE 1000 1000 5 0 1000 0x10 status
ev 4 COMPLETE 1000 1000 3 0 0 0x11
ev 5 MPI_Send 100 110 4 0 1000 0
EOF
json paper
expect paper <<'EOF'
assert [(f["id"], f["src_rank"], f["dst_rank"]) for f in j["flows"]] == [(0, 0, 1), (1, 1, 2), (2, 3, 2), (3, 4, 3), (4, 5, 4)]
assert runs(0) == [(100, 1000, "none", None, 1)], runs(0)
assert runs(1) == [(100, 1000, "incoming", "node2", 2)], runs(1)
assert runs(2) == [(100, 1000, "incoming", "node2", 2)], runs(2)
assert runs(3) == [(100, 1000, "mixed-out", "node4", 2)], runs(3)
assert runs(4) == [(100, 1000, "mixed-in", "node4", 2)], runs(4)
assert ivs() == [(100, 1000, [0, 1, 2, 3, 4], [("node2", "incoming", 2, [1, 2]), ("node4", "mixed", 2, [4, 3])])], ivs()
near(total("none"), 900 * US, "none"); near(total("incoming", 2), 1800 * US, "incoming"); near(total("mixed"), 1800 * US, "mixed")
EOF
# The text report of the same trace names the two conflicts of the one interval.
"$flowcut" analyze "$work/paper" >"$work/paper.txt" 2>&1 || fail_later "paper: text exit $?"
grep -q "incoming@node2 k=2 flows 1,2" "$work/paper.txt" || fail_later "paper: text lacks the incoming conflict"
grep -q "mixed@node4 k=2 flows 4,3" "$work/paper.txt" || fail_later "paper: text lacks the mixed conflict"

# ---- asynchronous: 0>1 [100,700), 2>1 [300,900), 3>1 [500,600) all into node1 -------------------
# Boundaries 100 300 500 600 700 900: intervals {0} none, {0,1} k=2, {0,1,2} k=3, {0,1} k=2, {1}.
gen async <<'EOF'
ranks 4
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Irecv 50 51 0 0 1000 0x10
ev 1 MPI_Irecv 51 52 2 0 1000 0x20
ev 1 MPI_Irecv 52 53 3 0 1000 0x30
ev 1 MPI_Waitall 60 900 -1 0 0 0
ev 1 COMPLETE 600 600 3 0 1000 0x30 status
ev 1 COMPLETE 700 700 0 0 1000 0x10 status
ev 1 COMPLETE 900 900 2 0 1000 0x20 status
ev 2 MPI_Send 300 310 1 0 1000 0
ev 3 MPI_Send 500 510 1 0 1000 0
EOF
json async
expect async <<'EOF'
assert [(round(i[0]), round(i[1]), i[2]) for i in ivs()] == [(100, 300, [0]), (300, 500, [0, 1]), (500, 600, [0, 1, 2]), (600, 700, [0, 1]), (700, 900, [1])], ivs()
assert ivs()[2][3] == [("node1", "incoming", 3, [0, 1, 2])]
inc = lambda a, b, k: (a, b, "incoming", "node1", k)
assert runs(0) == [(100, 300, "none", None, 1), inc(300, 500, 2), inc(500, 600, 3), inc(600, 700, 2)], runs(0)
assert runs(1) == [inc(300, 500, 2), inc(500, 600, 3), inc(600, 700, 2), (700, 900, "none", None, 1)], runs(1)
assert runs(2) == [inc(500, 600, 3)], runs(2)
# none: 200 + 200; k=2: 2 x 200 + 2 x 100; k=3: 3 x 100.
near(total("none"), 400 * US, "none"); near(total("incoming", 2), 600 * US, "k2"); near(total("incoming", 3), 300 * US, "k3")
near(total("incoming"), 900 * US, "incoming")
# A second method: the four totals add up to the flows' observed times (600 + 600 + 100 us).
near(sum(v["flow_s"] for v in j["totals"].values()), sum(f["observed"] for f in j["flows"]), "sum of totals")
near(sum(f["observed"] for f in j["flows"]), 1300 * US, "sum of observed")
EOF
# CSV: one row per flow; main_conflict is the label held longest: f0 incoming k=2 (300 us against
# 200 us of none and 100 us at k=3), f2 incoming k=3.
"$flowcut" analyze --format csv --platform "$prof" "$work/async" >"$work/async.csv" || fail_later "async: csv exit $?"
"$PYTHON3" - "$work/async.csv" <<'EOF' || fail_later "async: CSV checks"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
# The base columns, then one predicted duration per model (the line profile serves every model).
assert rows[0] == "id,src_rank,dst_rank,src_node,dst_node,bytes,start,end,observed,rendezvous,intra,main_conflict,main_node,main_k,send_site,recv_site,collective,algorithm,step,predicted_linear,predicted_flowcut,predicted_maxrate,predicted_fairshare".split(","), rows[0]
assert len(rows) == 4
r = {int(x[0]): x for x in rows[1:]}
assert r[0][1:6] == ["0", "1", "node0", "node1", "1000"] and r[0][9:14] == ["0", "0", "incoming", "node1", "2"], r[0]
assert abs(float(r[0][6]) - 100e-6) < 1e-9 and abs(float(r[0][7]) - 700e-6) < 1e-9 and abs(float(r[0][8]) - 600e-6) < 1e-9
assert r[1][11:14] == ["incoming", "node1", "2"] and r[2][11:14] == ["incoming", "node1", "3"], (r[1], r[2])
EOF

# ---- intra-node: ranks 0 and 1 on node "a", rank 2 on "b"; --eager 500 makes 1000 B rendezvous ---
# 0>1 is intra-node (kept apart); 0>2: send at 200, receive posted at 250, so with rendezvous the
# flow starts at 250 and lasts to the receive's end at 400.
gen intra <<'EOF'
ranks 3
node 0 a
node 1 a
node 2 b
ev 0 MPI_Send 100 110 1 0 1000 0
ev 0 MPI_Send 200 400 2 0 1000 0
ev 1 MPI_Recv 50 300 0 0 1000 0
ev 2 MPI_Recv 250 400 0 0 1000 0
EOF
json intra --eager 500
expect intra <<'EOF'
assert [n["name"] for n in j["nodes"]] == ["a", "b"] and j["nodes"][0]["ranks"] == [0, 1] and j["nodes"][1]["ranks"] == [2]
assert j["eager_threshold"] == 500 and j["eager_threshold_source"] == "--eager"
assert j["messages"]["inter_node"] == 1 and j["messages"]["intra_node"] == 1 and j["messages"]["matched"] == 2
f = j["flows"][0]
assert (f["id"], f["src_rank"], f["dst_rank"], f["rendezvous"]) == (0, 0, 2, True)
near(f["start"], 250 * US, "rendezvous start"); near(f["end"], 400 * US, "end")
i = j["intra"][0]
assert (i["id"], i["src_rank"], i["dst_rank"], i["src_node"], i["dst_node"]) == (1, 0, 1, "a", "a") and "conflict" not in i
assert ivs() == [(250, 400, [0], [])], ivs()
EOF
"$flowcut" analyze "$work/intra" >"$work/intra.txt" || fail_later "intra: text exit $?"
grep -q "a .*ranks 0,1 .*intra-node: 1 messages, 1000 B" "$work/intra.txt" || fail_later "intra: text lacks the intra-node total"
"$flowcut" analyze --format csv --platform "$prof" "$work/intra" | grep -q '^1,0,1,a,a,1000,.*,0,1,,,,,,,,,,,,$' || fail_later "intra: CSV row"

# ---- unmatched send and a partial rank: reported, exit 0 -----------------------------------------
gen unmatched <<'EOF'
ranks 2
ev 0 MPI_Send 100 110 1 3 8 0
partial 1
EOF
json unmatched
expect unmatched <<'EOF'
assert j["partial"] is True and [p["rank"] for p in j["partial_ranks"]] == [1], j["partial_ranks"]
assert j["messages"]["unmatched_sends"] == 1 and j["messages"]["matched"] == 0
u = j["unmatched"]
assert len(u) == 1 and (u[0]["rank"], u[0]["peer"], u[0]["tag"], u[0]["bytes"], u[0]["kind"]) == (0, 1, 3, 8, "send"), u
assert any("unmatched" in w for w in j["warnings"]) and any("rank 1 is partial" in w for w in j["warnings"]), j["warnings"]
assert j["flows"] == [] and j["intervals"] == []
EOF
"$flowcut" analyze "$work/unmatched" >"$work/unmatched.txt" || fail_later "unmatched: text exit $?"
grep -q "^partial: *yes" "$work/unmatched.txt" || fail_later "unmatched: no partial line"
grep -q "unmatched send: rank 0 peer 1 tag 3 bytes 8" "$work/unmatched.txt" || fail_later "unmatched: not listed"

# ---- bad input: one clear line and the right exit code -------------------------------------------
"$flowcut" analyze "$work/nothing-here" >/dev/null 2>"$work/e1"
st=$?
[ "$st" -eq 1 ] || fail_later "missing trace: exit $st, expected 1"
[ "$(wc -l <"$work/e1")" -eq 1 ] && grep -q "nothing-here" "$work/e1" || fail_later "missing trace: message '$(cat "$work/e1")'"
mkdir -p "$work/junk" && printf 'not a trace at all, just text\n' >"$work/junk/rank-000000.fct"
"$flowcut" analyze "$work/junk" >/dev/null 2>"$work/e2"
st=$?
[ "$st" -eq 1 ] && [ "$(wc -l <"$work/e2")" -eq 1 ] && grep -q "rank-000000.fct" "$work/e2" ||
    fail_later "corrupt trace: exit $st, message '$(cat "$work/e2")'"
for bad in "--bogus" "--format xml" "--top" "--eager -3"; do
    # shellcheck disable=SC2086 # the flag and its value are meant to split
    "$flowcut" analyze $bad "$work/in" >/dev/null 2>"$work/e3"
    st=$?
    [ "$st" -eq 2 ] && [ "$(wc -l <"$work/e3")" -eq 1 ] && grep -q "^flowcut analyze: .*(see flowcut analyze --help)$" "$work/e3" ||
        fail_later "bad flag '$bad': exit $st, message '$(cat "$work/e3")'"
done
"$flowcut" analyze >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "no TRACE: expected exit 2"
"$flowcut" analyze --top 1 "$work/async" | grep -q "more intervals (--top)" || fail_later "--top did not cut the list"

# ---- a random case for the comparison below ------------------------------------------------------
# 8 ranks on 4 nodes, 40 rounds: in each, every rank sends to a random other rank (Isend, 1 KB to
# 400 KB, so some are rendezvous) and receives from whoever sends to it (Irecv, a third of them
# MPI_ANY_SOURCE resolved by the status), then waits for both (Waitall) for a random time, so that
# flows overlap across nodes in changing conflicts.
"$PYTHON3" - >"$work/random.spec" <<'EOF'
import random
rnd = random.Random(7)
n = 8
print("ranks", n)
for i in range(n):
    print("node", i, "node%d" % (i // 2))
out = {i: [] for i in range(n)}
for k in range(40):
    base = 1000 + 1000 * k
    perm = list(range(n))
    while any(perm[i] == i for i in range(n)):
        rnd.shuffle(perm)
    size = [rnd.choice([1000, 50000, 400000]) for i in range(n)]
    for i in range(n):
        src = perm.index(i)
        recv_t = base + rnd.randrange(0, 200)
        send_t = base + 1 + rnd.randrange(0, 300)
        if send_t == recv_t:
            send_t += 2
        peer = -2 if rnd.random() < 0.33 else src
        posts = [(recv_t, "ev %d MPI_Irecv %d %d %d %d 400000 0x10" % (i, recv_t, recv_t + 1, peer, k)),
                 (send_t, "ev %d MPI_Isend %d %d %d %d %d 0x11" % (i, send_t, send_t + 1, perm[i], k, size[i]))]
        out[i] += [line for _, line in sorted(posts)]
        w0 = base + 400
        w1 = w0 + rnd.randrange(50, 550)
        out[i].append("ev %d MPI_Waitall %d %d -1 0 0 0" % (i, w0, w1))
        out[i].append("ev %d COMPLETE %d %d %d %d %d 0x10 status" % (i, w1, w1, src, k, size[src]))
        out[i].append("ev %d COMPLETE %d %d %d %d 0 0x11" % (i, w1, w1, perm[i], k))
for i in range(n):
    print("\n".join(out[i]))
EOF
gen random <"$work/random.spec"
# The predicted-versus-observed lists of a few rows are picked from hundreds of flows and intervals
# without sorting them all: their rows must be the first rows of the whole lists (--top 0).
"$flowcut" analyze --model fairshare --top 0 "$work/random" >"$work/random.all.txt" || fail_later "random: exit $?"
"$flowcut" analyze --model fairshare --top 3 "$work/random" >"$work/random.top3.txt" || fail_later "random: exit $?"
for what in "flows where" "intervals whose flows"; do
    all=$(sed -n "/^$what/,/^\$/p" "$work/random.all.txt" | grep -Ev '^$|more .*--top' | head -5)
    top=$(sed -n "/^$what/,/^\$/p" "$work/random.top3.txt" | grep -Ev '^$|more .*--top')
    rows=$(printf '%s\n' "$all" | wc -l)
    [ "$rows" -eq 5 ] && [ "$top" = "$(printf '%s\n' "$all" | head -n "$(printf '%s\n' "$top" | wc -l)")" ] &&
        [ "$(printf '%s\n' "$top" | wc -l)" -ge 4 ] || fail_later "random: --top 3 '$what' rows are not the first of --top 0's"
done

# ---- persistent sends started together --------------------------------------------------------
# A Startall's START records come at its exit (1500 us) but post their sends at its entry (500 us),
# after the first read window of the streamed analysis has ended (1 ms): the flow must still be
# ordered and swept, starting at 500 us.
gen startall <<'EOF'
ranks 2
ev 0 MPI_Send_init 100 110 1 5 100 0x10
ev 0 MPI_Startall 500 1500 -1 0 0 0
ev 0 START 1500 1500 -1 0 0 0x10
ev 0 MPI_Wait 1600 2000 -1 0 0 0x10
ev 0 COMPLETE 2000 2000 -1 0 0 0x10
ev 1 MPI_Recv 600 2100 0 5 100 0 status
EOF
"$flowcut" analyze --model none --format csv "$work/startall" >"$work/startall.csv" 2>&1 ||
    fail_later "startall: streamed CSV exit $?: $(cat "$work/startall.csv")"
grep -q '^0,0,1,node0,node1,100,0.000500000,0.002100000,' "$work/startall.csv" || fail_later "startall: flow 0 row"
# Three sends started by one Startall are alike in start, ranks, end and send start: ids follow the
# order of their pairing (tags 1, 2, 3: 100, 200, 300 bytes) in every analysis.
gen tie <<'EOF'
ranks 2
ev 0 MPI_Send_init 10 11 1 1 100 0x10
ev 0 MPI_Send_init 12 13 1 2 200 0x11
ev 0 MPI_Send_init 14 15 1 3 300 0x12
ev 0 MPI_Startall 50 51 -1 0 0 0
ev 0 START 51 51 -1 0 0 0x10
ev 0 START 51 51 -1 0 0 0x11
ev 0 START 51 51 -1 0 0 0x12
ev 0 MPI_Waitall 60 70 -1 0 0 0
ev 0 COMPLETE 70 70 -1 0 0 0x10
ev 0 COMPLETE 70 70 -1 0 0 0x11
ev 0 COMPLETE 70 70 -1 0 0 0x12
ev 1 MPI_Irecv 40 40.5 0 1 100 0x20
ev 1 MPI_Irecv 41 41.5 0 2 200 0x21
ev 1 MPI_Irecv 42 42.5 0 3 300 0x22
ev 1 MPI_Waitall 80 90 -1 0 0 0
ev 1 COMPLETE 90 90 0 1 100 0x20 status
ev 1 COMPLETE 90 90 0 2 200 0x21 status
ev 1 COMPLETE 90 90 0 3 300 0x22 status
EOF
[ "$("$flowcut" analyze --model none --format csv "$work/tie" | cut -d, -f1,6 | tr '\n' ' ')" = "id,bytes 0,100 1,200 2,300 " ] ||
    fail_later "tie: streamed ids"

# ---- many keys at once ------------------------------------------------------------------------
# One rank posts 512 receives of distinct tags to itself while two keys are used and released, so
# that the table of keys grows with released entries in it; every one of the 515 messages must
# still meet its partner.
"$PYTHON3" - >"$work/keys.spec" <<'EOF'
ev, t, h, reqs = [], 10.0, 0x100, {}
def e(kind, peer, tag, b, obj, extra=""):
    global t
    ev.append(("ev 0 %s %.3f %.3f %d %d %d %#x %s" % (kind, t, t + 0.5, peer, tag, b, obj, extra)).rstrip())
    t += 1
def post(side, tag):
    global h
    h += 1
    e("MPI_Isend" if side == "s" else "MPI_Irecv", 0, tag, 8, h)
    reqs[(side, tag)] = h
def wait(side, tag):
    o = reqs[(side, tag)]
    e("MPI_Wait", -1, 0, 0, o)
    if side == "r":
        ev.append("ev 0 COMPLETE %.3f %.3f 0 %d 8 %#x status" % (t - 0.5, t - 0.5, tag, o))
    else:
        ev.append("ev 0 COMPLETE %.3f %.3f -1 0 0 %#x" % (t - 0.5, t - 0.5, o))
post("s", 1); post("r", 1); post("s", 2); post("r", 2)
for tag in range(3, 513):
    post("r", tag)
for tag in (1, 2):
    wait("s", tag); wait("r", tag)
for tag in (1000, 1, 2000):
    post("s", tag)
for tag in (1000, 1, 2000):
    post("r", tag)
for tag in (1000, 1, 2000):
    wait("s", tag); wait("r", tag)
for tag in range(3, 513):
    post("s", tag)
for tag in range(3, 513):
    wait("s", tag); wait("r", tag)
print("ranks 1")
print("\n".join(ev))
EOF
gen keys <"$work/keys.spec"
json keys --model none
expect keys <<'EOF'
assert j["messages"] == {"matched": 515, "inter_node": 0, "intra_node": 515, "unmatched_sends": 0, "unmatched_recvs": 0}, j["messages"]
EOF

# ---- the streamed text report against the stored one ---------------------------------------------
# With --model none the text report, the CSV and the JSON document are built as the ranks are read
# (match, order, sweep, summary, rows or members, nothing stored); with a model they come from the
# stored flows and intervals. Apart from the predictions, the two must say the same, with every row (--top 0), on
# every case above.
compared=0
for d in "$work"/*/; do
    d=${d%/}
    [ -f "$d/rank-000000.fct" ] && [ "${d##*/}" != junk ] || continue
    "$flowcut" analyze --top 0 --model none "$d" >"$d.stream.txt" 2>/dev/null || { fail_later "${d##*/}: streamed text exit $?"; continue; }
    # A case without inter-node flows has nothing to fit a model to: only the streamed report runs.
    # With every class counted (--flows all; the line profile leaves no flow below the wire) the
    # sections the classes filter count every flow too, under a line saying so.
    "$flowcut" analyze --top 0 --model linear --flows all --platform "$prof" "$d" >"$d.model.txt" 2>/dev/null || continue
    awk '/^== (predicted versus observed|observed times)/ {skip = 1; next} /^== / {skip = 0} !skip && !/^  counted: /' \
        "$d.model.txt" >"$d.stored.txt"
    cmp -s "$d.stream.txt" "$d.stored.txt" || fail_later "${d##*/}: streamed and stored text reports differ"
    # The CSV likewise, less the stored one's last column (the model's prediction).
    "$flowcut" analyze --format csv --model none "$d" >"$d.stream.csv" 2>/dev/null || fail_later "${d##*/}: streamed CSV exit $?"
    "$flowcut" analyze --format csv --model linear --platform "$prof" "$d" 2>/dev/null | sed 's/,[^,]*$//' >"$d.stored.csv"
    cmp -s "$d.stream.csv" "$d.stored.csv" || fail_later "${d##*/}: streamed and stored CSV differ"
    # The JSON document likewise, less the stored one's predictions, member order included.
    "$flowcut" analyze --format json --model none "$d" >"$d.stream.json" 2>/dev/null || fail_later "${d##*/}: streamed JSON exit $?"
    "$flowcut" analyze --format json --model linear --platform "$prof" "$d" >"$d.stored.json" 2>/dev/null
    "$PYTHON3" - "$d.stream.json" "$d.stored.json" <<'PY' || fail_later "${d##*/}: streamed and stored JSON differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("platform", "errors", "errors_collective", "observation"):
    a.pop(k, None)
    b.pop(k, None)
for d in (a, b):
    for k in ("below_wire", "below_wire_worst_s", "below_wire_worst_flow", "contradicting_flows",
              "contradicting_worst_s", "contradicting_worst_flow"):
        d["clock"].pop(k, None)
    for f in d["flows"]:
        f.pop("predicted", None)
        f.pop("observation", None)
    for v in d["intervals"]:
        v.pop("predicted_error_pct", None)
sys.exit(0 if json.dumps(a) == json.dumps(b) else 1)
PY
    compared=$((compared + 1))
done
[ "$compared" -ge 9 ] || fail_later "streamed against stored: only $compared cases compared"
echo "streamed and stored text reports compared on $compared cases"

[ "$failures" -eq 0 ] && echo "flowcut analyze: every case as worked out by hand"
finish
