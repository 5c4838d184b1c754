#!/bin/sh
# tests/analyzer/test-analyzer-observe.sh: what each flow's observed time is made of, and its class, on
# hand-built event sequences (gen-trace; times in microseconds, aligned time = local time). The
# platform is a line of 10 us and 1e-8 s per byte (100 MB/s): a flow of B bytes has a data time of
# B / 100 us and a wire time of 10 + B / 100 us. Every expected part is worked out beside its case.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3" "python3 is needed to parse the JSON"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail_later "$gen_trace is not built"
[ -x "$flowcut" ] || fail_later "$flowcut is not built"

prof=$work/line.prof
line_profile "$prof" 1e-05 1e-08 1e-06 1e-09 1e8

# case NAME CLASS LATE NOPROG WIRE REST [OPTIONS] < SPEC: writes the trace, analyses it with the
# line profile and checks flow 0's class and parts (microseconds).
case_() {
    name=$1 cls=$2 late=$3 noprog=$4 wire=$5 rest=$6
    shift 6
    mkdir -p "$work/$name" && "$gen_trace" "$work/$name" || { fail_later "$name: gen-trace"; return; }
    "$flowcut" analyze --format json --platform "$prof" "$@" -o "$work/$name.json" "$work/$name" ||
        { fail_later "$name: exit $?"; return; }
    "$PYTHON3" - "$work/$name.json" "$cls" "$late" "$noprog" "$wire" "$rest" <<'EOF' || fail_later "$name: observation"
import json, sys
j = json.load(open(sys.argv[1]))
o = j["flows"][0]["observation"]
want = dict(zip(("late_peer_s", "no_progress_s", "wire_s", "rest_s"), (float(x) * 1e-6 for x in sys.argv[3:7])))
assert o["class"] == sys.argv[2], o
for k, v in want.items():
    assert abs(o[k] - v) < 1e-9, (k, o[k], v)
EOF
}

# Eager, the receiver late: the send leaves at 100, the receive is posted at 600 and completes at
# 610. Observed 510; the receiver was not there for 500 (late-peer); of the 10 left the wire takes
# them all (its time is 10 + 10 = 20).
case_ late late-peer 500 0 10 0 <<'EOF'
ranks 2
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 600 610 0 0 1000 0
EOF

# Rendezvous (--eager 500), both ends post at 100 and compute: the receiver waits from 400, the
# sender from 500, both complete at 800. Observed 700: nobody in MPI for 300 (no progress), one
# end for 100 (late-peer); of the 300 left the wire takes 20, the rest is 280. No progress is the
# larger part and the two reach half the time.
case_ noprog no-progress 100 300 20 280 --eager 500 <<'EOF'
ranks 2
ev 0 MPI_Isend 100 101 1 0 1000 0x10
ev 0 MPI_Wait 500 800 -1 0 0 0
ev 0 COMPLETE 800 800 1 0 1000 0x10
ev 1 MPI_Irecv 100 101 0 0 1000 0x20
ev 1 MPI_Wait 400 800 -1 0 0 0
ev 1 COMPLETE 800 800 0 0 1000 0x20 status
EOF

# The same rendezvous, the sender polling with MPI_Test: the Test that completes its request at 700
# is the only one the trace names, so its rank counts as present from the post (100). The receiver
# waits from 150. Observed 600: late-peer 50 (one end present), no progress 0, wire 20, rest 530:
# a network flow (data time 10, not below the latency).
case_ polled network 50 0 20 530 --eager 500 <<'EOF'
ranks 2
ev 0 MPI_Isend 100 101 1 0 1000 0x10
ev 0 MPI_Test 700 701 -1 0 0 0
ev 0 COMPLETE 701 701 1 0 1000 0x10
ev 1 MPI_Irecv 100 101 0 0 1000 0x20
ev 1 MPI_Wait 150 700 -1 0 0 0
ev 1 COMPLETE 700 700 0 0 1000 0x20 status
EOF

# 100000 B with both ends in MPI from the start: observed 1120 - 100 = 1020; the wire takes
# 10 + 1000 = 1010, the rest 10. The data time (1000) is above the latency: network.
case_ network network 0 0 1010 10 <<'EOF'
ranks 2
ev 0 MPI_Send 100 1120 1 0 100000 0
ev 1 MPI_Recv 50 1120 0 0 100000 0
EOF

# 8 B: observed 30, wire 10.08, rest 19.92; the data time, 0.08, is below the latency: latency.
case_ latency latency 0 0 10.08 19.92 <<'EOF'
ranks 2
ev 0 MPI_Send 100 105 1 0 8 0
ev 1 MPI_Recv 50 130 0 0 8 0
EOF

# 100000 B observed in 400, less than half their data time (1000): faster than twice the wire's
# rate, a clock problem. All 400 go to the wire. In 500, half the data time, it would not be: the
# data time (1000) is above the latency, so network.
case_ fast below-wire 0 0 400 0 <<'EOF'
ranks 2
ev 0 MPI_Send 100 110 1 0 100000 0
ev 1 MPI_Recv 50 500 0 0 100000 0
EOF
"$PYTHON3" - "$work/fast.json" <<'EOF' || fail_later "fast: the below-wire count"
import json, sys
c = json.load(open(sys.argv[1]))["clock"]
# One flow 600 us short of its 1000 us data time, 400 observed; no violation of the clock condition.
assert c["below_wire"] == 1 and c["below_wire_worst_flow"] == 0 and abs(c["below_wire_worst_s"] - 600e-6) < 1e-9, c
assert c["violations"] == 0 and c["send_violations"] == 0, c
EOF
case_ halfwire network 0 0 500 0 <<'EOF'
ranks 2
ev 0 MPI_Send 100 110 1 0 100000 0
ev 1 MPI_Recv 50 600 0 0 100000 0
EOF

# Two ranks, two nodes, one host whose ranks may run on CPU 0 only: 2 ranks on 1 core. 1000 B
# observed 2000 with both ends in MPI; the wire takes 20 and the rest is 1980, beyond half the
# time: oversubscribed.
case_ over oversubscribed 0 0 20 1980 <<'EOF'
ranks 2
node 0 n0
node 1 n1
host 0 box
host 1 box
affinity 0 0
affinity 1 0
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 50 2100 0 0 1000 0
EOF
grep -q '"name": "box", "ranks": 2, "nodes": 2, "cores": 1, "oversubscribed": true' "$work/over.json" ||
    fail_later "over: the host's ranks, nodes and cores"

# A latency-bound flow on the same oversubscribed machine keeps no NIC busy by nature: 8 B observed
# in 12 us, whose wire time is 10.08 (rest 1.92, below half the time): latency, not oversubscribed.
case_ overlat latency 0 0 10.08 1.92 <<'EOF'
ranks 2
node 0 n0
node 1 n1
host 0 box
host 1 box
affinity 0 0
affinity 1 0
ev 0 MPI_Send 100 101 1 0 8 0
ev 1 MPI_Recv 50 112 0 0 8 0
EOF

# The same with CPUs 0-1: 2 ranks on 2 cores, not oversubscribed; the data time (10) is not below
# the latency (10): network.
case_ cores network 0 0 20 1980 <<'EOF'
ranks 2
node 0 n0
node 1 n1
host 0 box
host 1 box
affinity 0 0-1
affinity 1 0-1
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 50 2100 0 0 1000 0
EOF

# Busy NICs on an oversubscribed machine (4 ranks on CPU 0): 100000 B flows observed in 2000 us,
# twice their data time (1000). Two of them leaving node n0 together move 200000 B through its
# outgoing direction in 2000 us: the NIC is busy all the time (share 1.0), network. One alone
# moves half that: a share of 0.5, below 0.75, oversubscribed. One leaving n0 while another enters
# it: 0.5 each way, which the line profile's mixed flow cut (0: full duplex) keeps apart, so
# oversubscribed; a half-duplex profile (mixed cut 1) adds the way in: 1.0, network.
busy_trace() {
    mkdir -p "$work/$1" && "$gen_trace" "$work/$1" || fail_later "$1: gen-trace"
}
busy_hosts='ranks 4
node 0 n0
node 1 n1
node 2 n0
node 3 n2
host 0 box
host 1 box
host 2 box
host 3 box
affinity 0 0
affinity 1 0
affinity 2 0
affinity 3 0
ev 0 MPI_Send 100 2110 1 0 100000 0
ev 1 MPI_Recv 50 2100 0 0 100000 0'
busy_trace busytwo <<EOF
$busy_hosts
ev 2 MPI_Send 100 2110 3 0 100000 0
ev 3 MPI_Recv 50 2100 2 0 100000 0
EOF
busy_trace busyone <<EOF
$busy_hosts
EOF
busy_trace busymixed <<EOF
$busy_hosts
ev 3 MPI_Send 100 2110 2 0 100000 0
ev 2 MPI_Recv 50 2100 3 0 100000 0
EOF
half=$work/half.prof
sed 's/^cut mixed-\(in\|out\) 2 0 0$/cut mixed-\1 2 1 1/' "$prof" >"$half"
grep -q '^cut mixed-in 2 1 1$' "$half" || fail_later "the half-duplex profile"
for c in "busytwo $prof network network 1.0" "busyone $prof oversubscribed - 0.5" \
    "busymixed $prof oversubscribed oversubscribed 0.5" "busymixed $half network network 1.0"; do
    set -- $c
    "$flowcut" analyze --format json --platform "$2" -o "$work/$1.json" "$work/$1" || { fail_later "$1: exit $?"; continue; }
    "$PYTHON3" - "$work/$1.json" "$3" "$4" "$5" <<'EOF' || fail_later "$1 with ${2##*/}: the busy NICs"
import json, sys
fl = json.load(open(sys.argv[1]))["flows"]
want = [c for c in sys.argv[2:4] if c != "-"]
got = [f["observation"]["class"] for f in fl]
assert got == want, (got, want)
assert all(abs(f["observation"]["nic_busy"] - float(sys.argv[4])) < 1e-6 for f in fl), [f["observation"] for f in fl]
EOF
done

# A rendezvous send (--eager 500) that completes at 200, before its receive is posted at 300: the
# clocks contradict the ends. Counted, its worst 100 us, and the flow is below-wire. The flow
# starts at the post (300) and lasts 100: the wire takes 20 of them, the rest is 80.
case_ sendclock below-wire 0 0 20 80 --eager 500 <<'EOF'
ranks 2
ev 0 MPI_Send 100 200 1 0 1000 0
ev 1 MPI_Recv 300 400 0 0 1000 0
EOF
"$PYTHON3" - "$work/sendclock.json" <<'EOF' || fail_later "sendclock: clock counts"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["clock"]
assert c["send_violations"] == 1 and c["send_violations_beyond_uncertainty"] == 1, c
assert abs(c["send_worst_s"] - 100e-6) < 1e-9, c
# A violation of the clock condition, not also a flow faster than the wire.
assert c["below_wire"] == 0, c
assert j["observation"]["judged"] == 0 and j["errors"]["linear"]["flows"] == 0, j["observation"]
# No flow compared: no figure, not an error of 0.
assert j["errors"]["linear"]["mean_abs_pct"] is None and j["errors"]["linear"]["max_abs_pct"] is None, j["errors"]
assert any("before the receive was posted" in w for w in j["warnings"]), j["warnings"]
EOF

# Ends that contradict the clocks, several kinds in one trace (--eager 500: all rendezvous), must be
# counted and the worst named, in every report, without failing the analysis. Flow 0: its receive
# completes at 60, before its send started at 100 (by 40 us). Flow 1: its send completes at 300,
# before its receive was posted at 400 (by 100). Flow 2: consistent. Flow 3: its receive completes
# at 1750, before its send started at 2000 (by 250), the worst. Three contradicting flows, all
# below-wire; two receive violations and one send violation.
mkdir -p "$work/clocks" && "$gen_trace" "$work/clocks" <<'EOF' || fail_later "clocks: gen-trace"
ranks 4
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 20 60 0 0 1000 0
ev 2 MPI_Send 200 300 3 0 1000 0
ev 3 MPI_Recv 400 500 2 0 1000 0
ev 0 MPI_Send 1000 1010 1 1 1000 0
ev 1 MPI_Recv 990 1030 0 1 1000 0
ev 2 MPI_Send 2000 2010 3 1 1000 0
ev 3 MPI_Recv 1700 1750 2 1 1000 0
EOF
for opts in "--platform $prof" "" "--model none" "--platform $prof --flows all"; do
    for fmt in text json csv html; do
        # shellcheck disable=SC2086
        "$flowcut" analyze --eager 500 --format $fmt $opts -o "$work/clocks.out" "$work/clocks" 2>"$work/clocks.err" ||
            { fail_later "clocks: --format $fmt $opts: exit $?"; cat "$work/clocks.err"; }
    done
done
"$flowcut" analyze --eager 500 --format json --platform "$prof" -o "$work/clocks.json" "$work/clocks" || fail_later "clocks: json"
"$PYTHON3" - "$work/clocks.json" <<'EOF' || fail_later "clocks: counted and named"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["clock"]
assert c["violations"] == 2 and c["send_violations"] == 1, c
assert c["contradicting_flows"] == 3 and c["contradicting_worst_flow"] == 3, c
assert abs(c["contradicting_worst_s"] - 250e-6) < 1e-9, c
assert [f["observation"]["class"] for f in j["flows"]] == ["below-wire", "below-wire", "network", "below-wire"], j["flows"]
assert [f["observation"]["clock"] for f in j["flows"]] == [True, True, False, True], j["flows"]
assert j["observation"]["judged"] == 1, j["observation"]
assert any(w.startswith("3 flows whose ends contradict the clocks") and "worst: flow 3 (2 -> 3, 1000 bytes), by 0.000250000 s" in w
           for w in j["warnings"]), j["warnings"]
EOF
"$flowcut" analyze --eager 500 --platform "$prof" "$work/clocks" | grep -q '3 flows whose ends contradict the clocks.*worst: flow 3 ' ||
    fail_later "clocks: the text report does not name the worst flow"

# The statistics count network flows by default, every class but below-wire with --flows all:
# the late-peer and network cases together.
mkdir -p "$work/two" && "$gen_trace" "$work/two" <<'EOF' || fail_later "two: gen-trace"
ranks 4
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 600 610 0 0 1000 0
ev 2 MPI_Send 100 1120 3 0 100000 0
ev 3 MPI_Recv 50 1120 2 0 100000 0
EOF
for flows in network all; do
    "$flowcut" analyze --format json --platform "$prof" --flows $flows "$work/two" >"$work/two.$flows.json" ||
        fail_later "two: --flows $flows exit $?"
done
"$PYTHON3" - "$work/two.network.json" "$work/two.all.json" <<'EOF' || fail_later "two: statistics over the classes"
import json, sys
n, a = (json.load(open(p)) for p in sys.argv[1:3])
assert n["observation"]["judged"] == 1 and n["errors"]["linear"]["flows"] == 1, n["errors"]
assert a["observation"]["judged"] == 2 and a["errors"]["linear"]["flows"] == 2, a["errors"]
# One network flow is too few to judge the models on, in JSON as in the text report: every figure
# null, the flow count kept, and the reason; no interval's error either.
FIGS = ("mean_abs_pct", "global_pct", "p95_abs_pct", "max_abs_pct", "best_flow", "worst_flow", "best_abs_pct")
for model, e in n["errors"].items():
    assert all(e[k] is None for k in FIGS), (model, e)
    assert e["withheld"] == "too few network flows (1) to judge the models on", (model, e)
assert all(v is None for iv in n["intervals"] for v in iv["predicted_error_pct"].values()), n["intervals"]
# --flows all counts both flows: figures. Linear predicts latency + bytes x per-byte: the network
# flow 10 + 1000 = 1010 us against 1020 observed (0.98 %), the late-peer one 10 + 10 = 20 against
# 510 (96.1 %).
e = a["errors"]["linear"]
assert e["withheld"] is None, e
assert abs(e["mean_abs_pct"] - 100 * (10 / 1020 + 490 / 510) / 2) < 1e-6, e
assert e["best_flow"] == 1 and e["worst_flow"] == 0, e
EOF

# The rule's edge: 3 network flows give figures, 2 do not (JSON as text). Three rendezvous flows on
# distinct nodes, one after another (no conflict), each sending 100000 B in 1020 us with both ends
# in MPI; linear predicts 10 + 1000 = 1010 us: 0.98 % each. Without the last, 2 flows.
for k in 3 2; do
    mkdir -p "$work/net$k"
    { echo "ranks 6"
      echo "ev 0 MPI_Send 100 1120 1 0 100000 0"; echo "ev 1 MPI_Recv 50 1120 0 0 100000 0"
      echo "ev 2 MPI_Send 2000 3020 3 0 100000 0"; echo "ev 3 MPI_Recv 1950 3020 2 0 100000 0"
      [ "$k" = 2 ] || { echo "ev 4 MPI_Send 4000 5020 5 0 100000 0"; echo "ev 5 MPI_Recv 3950 5020 4 0 100000 0"; }
    } | "$gen_trace" "$work/net$k" || fail_later "net$k: gen-trace"
    "$flowcut" analyze --format json --platform "$prof" -o "$work/net$k.json" "$work/net$k" || fail_later "net$k: exit $?"
    "$flowcut" analyze --platform "$prof" "$work/net$k" >"$work/net$k.txt" || fail_later "net$k: text exit $?"
done
"$PYTHON3" - "$work/net3.json" "$work/net2.json" <<'EOF' || fail_later "net3, net2: the error figures withheld below 3 network flows"
import json, sys
three, two = (json.load(open(p)) for p in sys.argv[1:3])
assert [f["observation"]["class"] for f in three["flows"]] == ["network"] * 3, three["flows"]
assert [f["observation"]["class"] for f in two["flows"]] == ["network"] * 2, two["flows"]
for model, e in three["errors"].items():
    assert e["flows"] == 3 and e["withheld"] is None, (model, e)
e = three["errors"]["linear"]
assert abs(e["mean_abs_pct"] - 100 * 10 / 1020) < 1e-6 and abs(e["max_abs_pct"] - 100 * 10 / 1020) < 1e-6, e
assert all(v is not None for iv in three["intervals"] for v in iv["predicted_error_pct"].values()), three["intervals"]
for model, e in two["errors"].items():
    assert e["flows"] == 2 and e["withheld"] == "too few network flows (2) to judge the models on", (model, e)
    assert all(e[k] is None for k in e if k not in ("flows", "withheld")), (model, e)
EOF
grep -Eq '^linear +3 +1\.0%' "$work/net3.txt" || fail_later "net3: no error figure over 3 network flows in the text report"
grep -q '^too few network flows (2) to judge the models on: no error figure' "$work/net2.txt" ||
    fail_later "net2: the text report gives an error figure over 2 network flows"
"$flowcut" analyze --platform "$prof" --eager 500 "$work/sendclock" | grep -q '^no network flow to judge the models on' ||
    fail_later "sendclock: error figures over no network flow"
"$flowcut" analyze --platform "$prof" "$work/two" >"$work/two.txt" || fail_later "two: text exit $?"
grep -Eq '^late-peer +1 +50\.0% +0\.000510 +98\.0% +0\.0% +2\.0% +0\.0%$' "$work/two.txt" ||
    fail_later "two: the late-peer row of the breakdown"
grep -q '^too few network flows (1) to judge the models on: no error figure' "$work/two.txt" ||
    fail_later "two: error figures over 1 network flow"
"$flowcut" analyze --platform "$prof" --flows all "$work/two" >"$work/two.all.txt" || fail_later "two: text exit $?"
grep -q 'each figure over the 2 flows of every class but below-wire of 2 inter-node flows' "$work/two.all.txt" ||
    fail_later "two: what the figures cover"

# The conflict flow-seconds count the flows the statistics count. Ranks 0 and 1 share node a: 0>2
# (100000 B, both ends in MPI, observed 2020: network) and 1>3 (1000 B, received at 1500: late-peer,
# 1410) leave a together on [100, 1510): outgoing k=2 for 1410 us each, then 0>2 alone for 610.
# Network flows: outgoing 1410, none 610, total 2020; every flow: outgoing 2820, total 3430.
mkdir -p "$work/conf" && "$gen_trace" "$work/conf" <<'EOF' || fail_later "conf: gen-trace"
ranks 4
node 0 a
node 1 a
node 2 b
node 3 c
ev 0 MPI_Send 100 2120 2 0 100000 0
ev 2 MPI_Recv 50 2120 0 0 100000 0
ev 1 MPI_Send 100 110 3 0 1000 0
ev 3 MPI_Recv 1500 1510 1 0 1000 0
EOF
"$flowcut" analyze --platform "$prof" "$work/conf" >"$work/conf.txt" || fail_later "conf: exit $?"
"$flowcut" analyze --platform "$prof" --flows all "$work/conf" >"$work/conf.all.txt" || fail_later "conf: exit $?"
grep -Eq '^  outgoing +2 +0\.001410000 ' "$work/conf.txt" && grep -Eq '^  total +0\.002020000 ' "$work/conf.txt" ||
    fail_later "conf: the network flows' conflict flow-seconds"
grep -q '^  counted: the 1 network flows of 2 inter-node flows' "$work/conf.txt" || fail_later "conf: what the figures count"
grep -Eq '^  outgoing +2 +0\.002820000 ' "$work/conf.all.txt" && grep -Eq '^  total +0\.003430000 ' "$work/conf.all.txt" ||
    fail_later "conf: every flow's conflict flow-seconds"
# One network flow is too few to judge the models: the text report gives no error figure (no row
# of per-cent errors, no worst flows or intervals), and says why; --flows all counts both flows.
grep -q '^too few network flows (1) to judge the models on: no error figure' "$work/conf.txt" ||
    fail_later "conf: no note on the missing error figures"
sed -n '/^== predicted versus observed/,/^== [^p]/p' "$work/conf.txt" >"$work/conf.pred.txt"
[ -s "$work/conf.pred.txt" ] || fail_later "conf: no predictions section"
if grep -Eq '%|part most|predicts worst' "$work/conf.pred.txt"; then
    fail_later "conf: an error figure over 1 network flow: $(cat "$work/conf.pred.txt")"
fi
grep -Eq '^flowcut +2 +[0-9.]+% ' "$work/conf.all.txt" || fail_later "conf: --flows all gives no error figure over the 2 flows"

# The tracer's own waits for a buffer chunk: rank 1 waits 300 and 200 us before its receive, rank 0
# 100 us after its send. One warning counts them: 3 waits, 600 us, rank 1 the longest with 500 us.
mkdir -p "$work/twait" && "$gen_trace" "$work/twait" <<'EOF' || fail_later "twait: gen-trace"
ranks 2
node 0 a
node 1 b
ev 0 MPI_Send 100 110 1 0 1000 0
ev 0 TRACER_WAIT 150 250 -1 0 0 0
ev 1 TRACER_WAIT 20 320 -1 0 0 0
ev 1 TRACER_WAIT 400 600 -1 0 0 0
ev 1 MPI_Recv 700 710 0 0 1000 0
EOF
"$flowcut" analyze --platform "$prof" "$work/twait" >"$work/twait.txt" || fail_later "twait: exit $?"
grep -q 'the tracer made its ranks wait 3 times for a free buffer chunk, 0\.000600000 s in all (rank 1 the longest, 0\.000500000 s)' \
    "$work/twait.txt" || fail_later "twait: the tracer's waits not counted: $(grep -i tracer "$work/twait.txt")"
if grep -q 'the tracer made' "$work/conf.txt"; then fail_later "conf: tracer waits warned of in a trace without any"; fi

# Self-calibration declines when too few network flows: no model, a note, exit 0; the warnings,
# text and JSON, say it too (a reader of the warnings alone learns why no model ran); with a
# platform given, no such warning.
"$flowcut" analyze "$work/two" >"$work/two.self.txt" || fail_later "two: self-calibrated exit $?"
grep -q '^no platform: .*not self-calibrated' "$work/two.self.txt" || fail_later "two: no note on the missing platform"
if grep -q '^== predicted versus observed' "$work/two.self.txt"; then fail_later "two: models fitted to 2 flows"; fi
sed -n '/^== warnings/,$p' "$work/two.self.txt" | grep -Eq '^  - not self-calibrated: [0-2] of 2 inter-node flows .*models left out' ||
    fail_later "two: the text warnings do not say self-calibration declined"
"$flowcut" analyze --format json "$work/two" >"$work/two.self.json" || fail_later "two: self-calibrated json exit $?"
"$PYTHON3" - "$work/two.self.json" "$work/two.network.json" <<'EOF' || fail_later "two: the JSON warnings of a declined self-calibration"
import json, re, sys
d, p = (json.load(open(x)) for x in sys.argv[1:3])
assert d["platform"] is None and d["errors"] is None, d["platform"]
w = [x for x in d["warnings"] if re.match(r"not self-calibrated: [0-2] of 2 inter-node flows .*models left out", x)]
assert len(w) == 1 and w[0] == d["observation"]["platform_note"], d["warnings"]
assert not any("self-calibrated" in x for x in p["warnings"]), p["warnings"]
EOF

[ "$failures" -eq 0 ] && echo "observation: every case classed and split as worked out by hand"
finish
