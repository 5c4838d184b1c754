#!/bin/bash
# test-collective-bytes.sh: the bytes MPICH really puts on each node's link during a collective,
# counted by the kernel (tx_bytes of the node's eth0), against the inter-node bytes of flowcut's
# expansion of the same calls: an independent check of the algorithm MPICH 4.0.2 (ch4:ucx) selects
# and of the messages it sends. 8 ranks on 4 nodes of 2, each case REPS identical calls, the bytes
# of a run of the same program without them subtracted:
#   - as `flowcut cluster mpiexec` runs by default (MPIR_CVAR_NOLOCAL=1: every rank is its own node
#     to MPICH, which runs MPIR's algorithms on all 8): Alltoall of 64 KiB a peer (pairwise),
#     Allreduce of 64 KiB (Rabenseifner), Scan of 64 KiB (recursive doubling), Bcast of 8 KiB
#     (binomial), 256 KiB (scatter, recursive doubling) and 1 MiB (scatter, ring) from rank 1;
#   - with MPICH's cliques making the 4 nodes of 2 its own view (MPIR_CVAR_NOLOCAL=0,
#     MPIR_CVAR_NUM_CLIQUES=4 in blocks): the ch4 device's node-aware compositions, where the
#     small and medium broadcasts leave nodes 1 and 3 silent, the all-reduce runs on the 4 node
#     leaders, and the scan (its nodes' ranks consecutive) sends 11 of its 64 KiB messages between
#     nodes where recursive doubling on all 8 sends 16;
#   - on the inter-communicator between the even and the odd ranks (the first mode only, against
#     a run that creates it and does nothing else): Bcast of 256 KiB from rank 0
#     (remote_send_local_bcast: 0 > 1 inside node 0, then the odd group's binomial tree 1 > 5,
#     1 > 3, 5 > 7, so nodes 1 and 3 send nothing), and Alltoall of 64 KiB a peer
#     (pairwise_exchange: at step s even rank 2l sends to odd rank 2((l + s) mod 4) + 1 and back,
#     on another node at steps 1-3: each rank sends 3 x 64 KiB off its node, 6 x 64 KiB a node a call).
# The headers: a point-to-point run of 64 KiB messages in each mode gives the sender's bytes per
# payload byte (1 + h: TCP/IP and UCX headers, 0.6 % here) and the receiver's (a: its ACKs, 0.5 %).
# A node's expected count is out (1 + h) + in a, out and in the expansion's bytes leaving and
# entering it, within 3 % of out (the per-message headers of the 8 KiB broadcast add about 1 % to
# what the 64 KiB messages showed), plus a times in (the kernel acknowledges per coalesced receive,
# so the ACKs of larger messages take as little as half that rate: 0.23 % at 256 KiB), plus 8 KiB
# (the spread of the traffic of initialisation and finalisation between identical empty runs, a
# few KiB a node). A wrong algorithm moves whole messages (8 KiB and more per call, times REPS).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
[ -x "$ex/collbytes" ] || skip "$ex/collbytes is not built"

"$cluster" up --nodes 4 --rate 1gbit >/dev/null || fail "up"
printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/hosts"

# tx: the bytes each node's eth0 has sent so far, "n0 n1 n2 n3".
tx() {
    local i
    for i in 0 1 2 3; do
        ip -n "fcnode$i" -s -j link show eth0 | "$PYTHON3" -c \
            'import json, sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"], end=" ")'
    done
}

# run MODE NAME ARGS...: traces collbytes ARGS in MODE (flat or cliques) into $work/MODE-NAME and
# appends "NAME before after" (per-node tx) to $work/MODE.tx.
run() {
    local mode=$1 name=$2 before after genv=()
    shift 2
    [ "$mode" = cliques ] && genv=(-genv MPIR_CVAR_NOLOCAL 0 -genv MPIR_CVAR_NUM_CLIQUES 4 -genv MPIR_CVAR_CLIQUES_BY_BLOCK 1)
    before=$(tx)
    timeout 120 "$flowcut" run -o "$work/$mode-$name" -- "$flowcut" cluster mpiexec "${genv[@]}" -f "$work/hosts" \
        -n 8 "$ex/collbytes" "$@" >"$work/$mode-$name.out" 2>&1 </dev/null ||
        { cat "$work/$mode-$name.out"; fail "$mode $name: traced run"; }
    after=$(tx)
    grep -q "^collbytes .* ok$" "$work/$mode-$name.out" || { cat "$work/$mode-$name.out"; fail "$mode $name did not verify"; }
    echo "$name $before $after" >>"$work/$mode.tx"
}

for mode in flat cliques; do
    run $mode empty -c bcast -b 8 -r 0
    run $mode send -c send -b 65536 -r 50
    run $mode alltoall -c alltoall -b 65536 -r 10
    run $mode allreduce -c allreduce -b 65536 -r 20
    run $mode scan -c scan -b 65536 -r 20
    run $mode bcast8k -c bcast -b 8192 -r 50 -R 1
    run $mode bcast256k -c bcast -b 262144 -r 20 -R 1
    run $mode bcast1m -c bcast -b 1048576 -r 10 -R 1
    inter=
    if [ $mode = flat ]; then
        run $mode interempty -c inter-bcast -b 8 -r 0
        run $mode interbcast -c inter-bcast -b 262144 -r 20
        run $mode interalltoall -c inter-alltoall -b 65536 -r 10
        inter="interbcast interalltoall"
    fi
    for name in send alltoall allreduce scan bcast8k bcast256k bcast1m $inter; do
        "$flowcut" analyze --format json -o "$work/$mode-$name.json" "$work/$mode-$name" 2>"$work/err" ||
            { cat "$work/err"; fail "analyze $mode $name"; }
    done
done
"$cluster" down >/dev/null

"$PYTHON3" - "$work" <<'PY' || fail "bytes on the links"
import json, sys
work = sys.argv[1]
coll = {"send": None, "alltoall": "MPI_Alltoall", "allreduce": "MPI_Allreduce", "scan": "MPI_Scan", "bcast8k": "MPI_Bcast",
        "bcast256k": "MPI_Bcast", "bcast1m": "MPI_Bcast"}
# Which nodes send in each case of the cliques run (the compositions), by hand: the 8 KiB broadcast
# from rank 1 (alpha) goes 1 > 0 inside node 0, then leaders 0 > 4, 0 > 2, 4 > 6; the 256 KiB one
# (beta) the same between nodes; nodes 1 and 3 send nothing.
silent = {("cliques", "bcast8k"): (1, 3), ("cliques", "bcast256k"): (1, 3), ("flat", "interbcast"): (1, 3)}
inter = {"interbcast": "MPI_Bcast", "interalltoall": "MPI_Alltoall"}
bad = 0
for mode in ("flat", "cliques"):
    rows = {}
    for line in open("%s/%s.tx" % (work, mode)):
        v = line.split()
        rows[v[0]] = [int(v[5 + i]) - int(v[1 + i]) for i in range(4)]
    net = {k: [r[i] - rows["interempty" if k in inter else "empty"][i] for i in range(4)]
           for k, r in rows.items() if k not in ("empty", "interempty")}
    cases = dict(coll, **(inter if mode == "flat" else {}))
    flows = {}
    for name, c in cases.items():
        j = json.load(open("%s/%s-%s.json" % (work, mode, name)))
        out, inn = [0] * 4, [0] * 4
        for f in j["flows"]:
            if f["collective"] == c and f["src_node"] != f["dst_node"]:
                out[int(f["src_node"][4:])] += f["bytes"]
                inn[int(f["dst_node"][4:])] += f["bytes"]
        flows[name] = (out, inn, sorted({f["algorithm"] for f in j["flows"] if f["collective"] == c and c}))
    # The headers, from the point-to-point run: 50 messages from rank 0 (node 0) to rank 4 (node 2).
    out, inn, _ = flows["send"]
    assert out[0] == 50 * 65536 and inn[2] == 50 * 65536, (out, inn)
    h = net["send"][0] / out[0] - 1
    a = net["send"][2] / inn[2]
    print("%s: headers %.2f %% of the payload sent, ACKs %.2f %% of the payload received" % (mode, 100 * h, 100 * a))
    assert 0 <= h < 0.05 and 0 <= a < 0.05, (h, a)
    # The scan's messages between nodes, by hand (scan_composition of test-collective-algorithms.c):
    # 20 calls of 11 (cliques: the leaders' recursive doubling and their chain) or 16 (flat: the
    # steps at distances 2 and 4) messages of 64 KiB.
    out, inn, _ = flows["scan"]
    assert sum(out) == 20 * (11 if mode == "cliques" else 16) * 65536, (mode, out)
    if mode == "flat":
        # The inter-communicator cases' bytes by hand (the header of this file).
        assert flows["interbcast"][0] == [2 * 20 * 262144, 0, 20 * 262144, 0], flows["interbcast"][0]
        assert flows["interalltoall"][0] == [10 * 6 * 65536] * 4, flows["interalltoall"][0]
    for name in [x for x in cases if x != "send"]:
        out, inn, algs = flows[name]
        for i in range(4):
            want = out[i] * (1 + h) + inn[i] * a
            tol = 0.03 * out[i] + inn[i] * a + 8192
            ok = abs(net[name][i] - want) <= tol
            bad += not ok
            print("%s %-9s %-40s node%d: measured %9d bytes, expected %11.0f (out %9d, in %9d) %s" % (
                mode, name, ",".join(algs), i, net[name][i], want, out[i], inn[i], "ok" if ok else "FAIL"))
        for i in silent.get((mode, name), ()):
            if out[i] != 0:
                bad += 1
                print("%s %s: node%d sends %d bytes in the expansion, none by hand" % (mode, name, i, out[i]))
sys.exit(1 if bad else 0)
PY
echo "collective bytes on the emulated cluster's links agree with the expansions"
