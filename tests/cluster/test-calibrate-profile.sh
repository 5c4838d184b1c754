#!/bin/bash
# test-calibrate-profile.sh: flowcut-calibrate --quick on 4 emulated nodes x 2 ranks at 200 Mbit/s,
# full duplex: the profile reads back, its inter-node per-byte cost is the link's (8 / 200e6 s per
# byte), two flows out of or into one node share its link fairly (alpha near 1), and a node's
# incoming and outgoing flows do not disturb each other (mixed alphas near 0), and the IMB
# multi-mode ping-pong fitted with Hager & Wellein's model finds the link's bandwidth, its ranks
# napping when they outnumber the CPUs. A bad --max-k, and a --newcomer larger than --cut-size, are refused. Beyond the ranks per node (--max-k 8 by default), 8 flows
# out of or into one node share it fairly too (alpha near 7), and a flow joining flows already
# under way gets less than its fair share (the late-joiner record). Two messages sent at once from
# one rank to another end one after the other over MPICH's one connection per pair (the
# connection record: serial), the later one moving beside the earlier one (connection-ends). A message entering (leaving) a node whose other direction is full
# waits for its acknowledgements behind that direction's queue (the opposite record). Gropp's
# start-up is no less than an empty message's one-way time, and the chain 0>1>2>3, with no NIC
# direction carrying two flows, moves each flow at about its lone rate.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"

cal="$abs_top_builddir/calibrate/flowcut-calibrate"
reader="$abs_top_builddir/tests/cluster/read-profile"
[ -x "$cal" ] || skip "$cal is not built"
[ -x "$reader" ] || skip "$reader is not built (make check in tests/cluster builds it)"
prof=$work/profile

# A bad --max-k: one line naming it, exit status 2, no profile (one rank, no cluster needed).
msg=$(timeout 60 "$MPIEXEC" -n 1 "$cal" --max-k 1 -o "$prof" 2>&1)
rc=$?
[ $rc = 2 ] && [ "$msg" = "flowcut-calibrate: --max-k '1': expected a count from 2 to 32" ] && [ ! -e "$prof" ] ||
    fail_later "--max-k 1: exit $rc, message '$msg'"
# A newcomer larger than the conflict's flows it joins: refused the same way.
msg=$(timeout 60 "$MPIEXEC" -n 1 "$cal" --cut-size 64k --newcomer 1M -o "$prof" 2>&1)
rc=$?
[ $rc = 2 ] && [ "$msg" = "flowcut-calibrate: --newcomer 1048576: larger than the conflict size, 65536 bytes" ] &&
    [ ! -e "$prof" ] || fail_later "--newcomer 1M with --cut-size 64k: exit $rc, message '$msg'"
"$cluster" up --nodes 4 --rate 200mbit --duplex full || fail "cluster up"
timeout 240 "$cluster" mpiexec -n 8 "$cal" --quick -o "$prof" --network "emulated 200mbit full duplex" ||
    fail "flowcut-calibrate did not run"
out=$("$reader" "$prof") || fail "the profile does not read back"
echo "$out"

# range NAME VALUE LOW HIGH: passes when LOW <= VALUE <= HIGH.
range() {
    local v
    v=$(awk -v x="$2" -v lo="$3" -v hi="$4" 'BEGIN { print (x >= lo && x <= hi) ? "ok" : "FAIL" }')
    echo "$1: $2 (allowed $3..$4): $v"
    [ "$v" = ok ] || fail_later "$1: $2 outside $3..$4"
}
field() { awk -v k="$1" -v i="$2" '$1 == k { print $(i + 1) }' <<<"$out"; }

[ "$(field nodes 1)" = 4 ] || fail "nodes: expected 4, profile says $(field nodes 1)"
[ "$(field nodes 3)" = 2 ] || fail "ranks per node: expected 2, profile says $(field nodes 3)"
# The link moves 200e6 bits per second: 4e-8 s per byte; TCP/IP/Ethernet headers add 4.4 %
# (test-cluster-links.sh), and the fit of the largest sizes carries their noise: 15 % either way.
range "inter-node per-byte cost (s)" "$(field inter-per-byte 1)" 3.4e-8 4.6e-8
# tbf shares a link fairly: each of two flows moves at half rate, alpha = 1. The quick run stops
# at 10 % standard error, so 0.6 .. 1.4.
range "outgoing k=2 alpha 0" "$(field outgoing 1)" 0.6 1.4
range "outgoing k=2 alpha 1" "$(field outgoing 2)" 0.6 1.4
range "incoming k=2 alpha 0" "$(field incoming 1)" 0.6 1.4
range "incoming k=2 alpha 1" "$(field incoming 2)" 0.6 1.4
# Full duplex: the flow into the node and the flow out of it use different directions: alpha 0.
range "mixed-in alpha" "$(field mixed 1)" -0.25 0.3
range "mixed-out alpha" "$(field mixed 2)" -0.25 0.3
# 8 flows on one link share its rate, however unevenly TCP spreads it among them (one flow's
# alpha ranged 4.3 to 9.7 in quick runs, 7 for an even share): their speeds 1 / (1 + alpha) add
# up to the whole link, 1, within the quick run's 10-20 % standard errors.
[ "$(field outgoing8 2)" = 1 ] && [ "$(field incoming8 2)" = 1 ] || fail_later "no cut measured for k = 8"
range "outgoing k=8: sum of the speeds" "$(field outgoing8 1)" 0.8 1.3
range "incoming k=8: sum of the speeds" "$(field incoming8 1)" 0.8 1.3
# A newcomer weighs 1 / (1 + g n) against n older flows: over TCP it gets less than a fair share
# (g > 0; measured 0.35 in a quick run); the bounds catch a measurement that sees no effect or
# one that never gets the newcomer going. Measured beyond the 2 ranks per node: k = 4 at least
# (at k = 8 a slow newcomer may outlive the 7 old flows of a quick run, which the calibration
# then leaves out, saying so).
[ "$(field latejoin 1)" = 1 ] || fail_later "no late-joiner record"
range "late-joiner g" "$(field latejoin 2)" 0.05 3
[ "$(field latejoin 3)" -ge 4 ] || fail_later "late-joiner measured up to k = $(field latejoin 3), not 4 or more"
# One rank sends a message and at once a quarter of it to one peer: over UCX's one TCP connection
# the small one does not pass the large one (measured apart with MPI_Test polling: it ends with
# it), so the share of its time spent waiting is over 1/2 and the order serial.
[ "$(field connection 1)" = 1 ] || fail_later "no connection record"
[ "$(field connection 2)" = 1 ] || fail_later "connection measured parallel (waiting share $(field connection 3))"
range "connection waiting share" "$(field connection 3)" 0.5 1
# The large one alone ends a data time of the small one sooner than beside it: the small one moved
# beside it, taking its share of the path, and ended with it (measured: later by 1.12 and 1.01 of
# the small one's data time, clamped to 1, in a default full-duplex and a quick half-duplex run):
# the connection's messages move side by side and end in order. Had the small one waited behind
# the large one, the large one would end as alone (share 0).
[ "$(field connends 1)" = 1 ] || fail_later "no connection-ends record"
range "connection-ends share" "$(field connends 2)" 0.5 1
[ "$(field connends 3)" = 1 ] || fail_later "connection-ends: the profile does not read as ending in order"
# The opposite direction: a probe of 256 KiB into (out of) node 3 while k flows leave (enter) it.
# The cluster's tbf queue holds 20 ms of data (tools/flowcut-cluster: limit = rate x 0.020); with
# 4 flows it stays full, and each round trip of the probe's window growth (from 10 segments, about
# 1.5 times a round trip with delayed acknowledgements: 6-7 round trips for 256 KiB) waits up to
# that queue: between one and ten queue delays, 0.02 .. 0.2 s, each way. One flow keeps the queue
# full less of the time than four: its delay is no larger (quick runs measured 1-13 ms against
# 40-100 ms).
[ "$(field opposite 1)" -ge 3 ] && [ "$(field opposite 2)" = 1 ] ||
    fail_later "opposite record: $(field opposite 1) entries, k = 4 measured: $(field opposite 2)"
range "opposite k=4: delay in (s)" "$(field opposite 5)" 0.02 0.2
range "opposite k=4: delay out (s)" "$(field opposite 6)" 0.02 0.2
range "opposite k=1: delay in (s)" "$(field opposite 3)" 0 "$(field opposite 5)"
range "opposite k=1: delay out (s)" "$(field opposite 4)" 0 "$(field opposite 6)"
[ "$(field maxrate 1)" = 1 ] || fail_later "no max-rate parameters"
# Gropp's s is a message's start-up: no less than an empty message's one-way time, the first
# inter-node segment's latency. The lone flows' times alone put it below zero (the link's token
# bucket lets 1 ms of data through at once: tbf_params in tools/flowcut-cluster), which the fit
# would clamp to a start-up of nothing.
s_mr=$(awk '$1 == "maxrate" { print $2 }' "$prof")
s_pp=$(awk '$1 == "inter" && $2 == 0 { print $4 }' "$prof")
if [ -n "$s_mr" ] && [ -n "$s_pp" ]; then
    range "max-rate s against an empty message's one-way time $s_pp (s)" "$s_mr" "$s_pp" 0.01
else
    fail_later "no maxrate line or no inter segment from 0 in the profile"
fi
# The chain 0>1>2>3 with napping ranks: every NIC direction carries one flow, so on full-duplex
# links each moves at its lone rate (the calibration's note gives the longest against the mean of
# the lone flows out of and into node 3, which differ by a few percent): within the quick run's
# 10 % standard error either way, and 15 % above for the other tenants of the machine.
chain=$(sed -n 's/^# chain 0>1>2>3: .*(the longest \([-+0-9.]*\) % over their mean)$/\1/p' "$prof")
if [ -n "$chain" ]; then
    range "chain 0>1>2>3: its longest flow over a lone one (%)" "$chain" -10 25
else
    fail_later "no chain note in the profile"
fi
# IMB's multi-mode ping-pong, fitted with Hager & Wellein's model: its raw unidirectional bandwidth
# B_r is the link's payload rate, 200e6 / 8 bytes/s less the 4.4 % of headers, within 15 %. The
# other tenants of this 2-core machine can slow every transfer of a run (the lone flows measured
# 22.4 MB/s in a run whose B_r came out 20.0): then the lower bound follows the run's own lone
# flows, 15 % below their rate (1 / the per-byte cost, checked above); nothing moves data faster
# than the link, so the upper bound stays the link's.
[ "$(field imb 1)" = 1 ] || fail_later "no IMB multi-mode parameters"
br_lo=$(awk -v p="$(field inter-per-byte 1)" 'BEGIN { lo = 0.85 / p; printf "%.4g", lo < 2.03e7 ? lo : 2.03e7 }')
range "IMB multi-mode B_r (bytes/s)" "$(field imb 2)" "$br_lo" 2.75e7
# The 8 ranks run on this one host: with fewer CPUs than that the pairs must nap between polls
# (four polling ranks on two cores skewed the fit), with as many they poll as IMB does.
cpus=$(nproc)
if [ "$cpus" -lt 8 ]; then
    want="# imb: 8 ranks share a host of $cpus CPUs, so the pairs' ranks napped"
else
    want="# imb: the pairs' ranks polled busily, as IMB does"
fi
if grep -qF "$want" "$prof"; then
    echo "IMB waits for $cpus CPUs: ok"
else
    fail_later "IMB waits for $cpus CPUs: no line '$want' in the profile"
fi
finish
