#!/bin/bash
# test-cluster-links.sh: the emulated links are real: a lone transfer between two nodes runs at the
# set rate, two transfers out of one node or into one node share it, traffic inside a node is not
# shaped, and a node's incoming and outgoing transfers are independent with --duplex full but share
# one budget with --duplex half. Expected times come from the rate alone: t = bytes * 8 / rate.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"

rate_bits=200000000            # --rate 200mbit
bytes=4194304                  # 4 MiB: about 170 ms per message, far above start-up and CPU noise
reps=5                         # medians of 5 timed repetitions resist scheduling noise
tx=$(awk -v b=$bytes -v r=$rate_bits 'BEGIN { printf "%.6f", b * 8 / r }')
echo "set rate 200 Mbit/s, message $bytes bytes: expected lone transfer $tx s"

# Runs `pattern` for pattern $1 (options after it) on the placement it asks for; prints its output.
run() {
    "$ex/pattern" --hosts "$1" >"$hosts" || fail "pattern --hosts $1"
    local n
    n=$(wc -l <"$hosts")
    timeout "$FC_TEST_TIMEOUT" "$cluster" mpiexec -f "$hosts" -n "$n" "$ex/pattern" -s $bytes -r $reps "${@:2}" "$1" ||
        fail "pattern $1 did not run"
}
hosts=$work/hosts

"$cluster" up --nodes 3 --rate 200mbit --duplex full || fail "cluster up"

# Ping-pong (half a round trip): TCP/IP/Ethernet headers take 66 of every 1514 bytes on the wire
# (4.4 %), so the steady rate gives 1.045 tx (measured 1.04-1.05 on an idle machine, medians up to
# 1.25 while other jobs loaded both cores). Load only adds time, so the rate is judged on the fastest
# of the repetitions (measured 1.04-1.10 under that load), in the 10 % window asked for.
out=$(run '0>1' -p)
check "ping-pong 0>1 (fastest)" "$(min_of "$out" 0)" "$tx" 0.95 1.10

# The other cases time one-way transfers on the receiver, which also pay MPICH/UCX's rendezvous
# start-up after the barrier: a lone one-way 4 MiB transfer measured 1.21-1.24 tx (about 35 ms more).
# So a fair share of a link gives about 2 tx + 35 ms = 2.2 tx, and an undisturbed transfer 1.2 tx;
# the windows below keep 0.2 tx of noise on either side and still never overlap (<= 1.45 vs >= 1.7).

# Outgoing conflict: two ranks of node 0 send at once, each gets half of node 0's link: 2 tx.
out=$(run '1<0>2')
check "outgoing 0>1 (with 0>2)" "$(median_of "$out" 0)" "$tx" 1.80 2.60
check "outgoing 0>2 (with 0>1)" "$(median_of "$out" 1)" "$tx" 1.80 2.60

# Incoming conflict: nodes 0 and 2 send to node 1 at once, node 1's incoming link is shared: 2 tx.
out=$(run '0>1<2')
check "incoming 0>1 (with 2>1)" "$(median_of "$out" 0)" "$tx" 1.70 2.60
check "incoming 2>1 (with 0>1)" "$(median_of "$out" 1)" "$tx" 1.70 2.60

# Inside a node the ranks talk over the node's loopback, which is not shaped: measured 0.006 tx on
# an idle machine, 0.25 tx with both cores busy with other jobs; shaped, it could not beat 1 tx.
out=$(run '0>0')
check "inside node 0" "$(median_of "$out" 0)" "$tx" 0 0.50

# Full duplex: node 1 receives from node 0 while it sends to node 2; the directions do not mix.
out=$(run '0>1>2')
check "full duplex 0>1 (with 1>2)" "$(median_of "$out" 0)" "$tx" 0.95 1.45
check "full duplex 1>2 (with 0>1)" "$(median_of "$out" 1)" "$tx" 0.95 1.45

# Half duplex: the same two transfers share node 1's one budget, so each takes about 2 tx.
"$cluster" up --nodes 3 --rate 200mbit --duplex half || fail "cluster up --duplex half"
# Half duplex, lone: the returning TCP ACKs (66 bytes per two 1514-byte frames, 2 %) now share
# the data's budget, so about 1.07 tx; measured 1.12 fastest under load, hence 1.20.
out=$(run '0>1' -p)
check "half duplex ping-pong 0>1 (fastest)" "$(min_of "$out" 0)" "$tx" 0.95 1.20
out=$(run '0>1>2')
check "half duplex 0>1 (with 1>2)" "$(median_of "$out" 0)" "$tx" 1.70 2.60
check "half duplex 1>2 (with 0>1)" "$(median_of "$out" 1)" "$tx" 1.70 2.60

finish
