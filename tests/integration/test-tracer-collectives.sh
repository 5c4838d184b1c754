#!/bin/sh
# test-tracer-collectives.sh: the collective examples (fft, cg, bcastmix) on 8 ranks that the tracer places on
# 4 nodes of 2 (FLOWCUT_NODE per pair of ranks, through mpiexec's MPMD form): their output is the
# same traced and untraced, and the analysis tags their flows with their collectives, with the
# inter-node bytes that the algorithms' arithmetic gives (worked out here, independently of the
# analyzer), and an MPIR_CVAR_ that forces an algorithm is recorded and honoured. The ranks run
# with MPIR_CVAR_NOLOCAL=1, as on the emulated cluster: MPICH then takes each rank as a node of its
# own and runs MPIR's algorithms on all 8 (on one host it would otherwise see one node and move
# everything through shared memory, which the analysis follows).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

# traced NAME ARGS...: runs example NAME on 8 ranks, rank r on node n(r / 2), traced into
# $work/NAME; its output must be the untraced one's.
traced() {
    name=$1
    shift
    need_example "$name"
    run_untraced "$work/$name.plain" 8 "$prog" "$@"
    [ "$(cat "$work/$name.plain.rc")" = 0 ] || fail "$name failed untraced: $(cat "$work/$name.plain.err")"
    set -- "$prog" "$@"
    # shellcheck disable=SC2086
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/$name" \
        -genv MPIR_CVAR_NOLOCAL 1 ${FC_GENV-} \
        -n 2 -env FLOWCUT_NODE n0 "$@" : -n 2 -env FLOWCUT_NODE n1 "$@" : \
        -n 2 -env FLOWCUT_NODE n2 "$@" : -n 2 -env FLOWCUT_NODE n3 "$@" >"$work/$name.out" 2>"$work/$name.err" ||
        fail "$name failed traced: $(cat "$work/$name.err")"
    cmp -s "$work/$name.plain" "$work/$name.out" || fail "$name: output differs traced"
    "$flowcut" analyze --format json --model none -o "$work/$name.json" "$work/$name" 2>"$work/$name.aerr" ||
        fail "$name: analyze: $(cat "$work/$name.aerr")"
}

# fft -n 1024: blocks of 128 x 128 doubles = 131072 bytes to each peer, so MPI_Alltoall runs the
# pairwise exchange (> 32768 bytes); each rank sends 6 of its 8 blocks to other nodes, in each of
# the 2 repetitions: 2 x 8 x 6 x 131072 bytes. The MPI_Alltoallv of 1025 rows gives rank 0 129 rows
# and the others 128: rank s sends rank d rows(s) x rows(d) doubles (fft.c's own counts), which
# the tracer records per peer (COUNTS) and each of its flows carries exactly.
traced fft -n 1024 -r 2
"$PYTHON3" - "$work/fft.json" <<'PY' || fail "fft: collective flows"
import json, sys
j = json.load(open(sys.argv[1]))
a2a = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
assert sum(f["bytes"] for f in a2a) == 2 * 8 * 6 * 131072, sum(f["bytes"] for f in a2a)
assert {f["algorithm"] for f in a2a} == {"pairwise"}
rows = lambda r: 129 if r == 0 else 128
a2av = [f for f in j["flows"] if f["collective"] == "MPI_Alltoallv"]
assert len(a2av) == 2 * 8 * 6, len(a2av)  # the flows between nodes: 6 of each rank's 7 peers
bad = [f for f in a2av if f["bytes"] != 8 * rows(f["src_rank"]) * rows(f["dst_rank"])]
assert not bad, bad[:3]
assert all(f["collective"] is not None or f["tag"] >= 0 for f in j["flows"])
assert len(j["intervals"]) > 0
PY

# cg: every dot product is an 8-byte MPI_Allreduce, recursive doubling: partners r^1 (same node),
# r^2 and r^4 (other nodes), 2 x 8 inter-node bytes per rank: 128 bytes a call.
traced cg -x 64 -y 8 -i 50
"$PYTHON3" - "$work/cg.json" <<'PY' || fail "cg: allreduce flows"
import json, sys
j = json.load(open(sys.argv[1]))
calls = [c for c in j["collectives"]["calls"] if c["collective"] == "MPI_Allreduce" and c["bytes"] == 8]
assert len(calls) > 10 and all(c["inter_node_bytes"] == 128 and c["algorithm"] == "recursive_doubling" for c in calls), calls[:3]
assert any(f["collective"] is None for f in j["flows"]), "the halo exchange's messages are point-to-point flows"
PY

# bcastmix -s 64: the 64-byte broadcasts use the binomial tree from root t % 8. Its edges, relative
# to the root, are 0>4 0>2 0>1 2>3 4>6 4>5 6>7; shifted by the root they cross nodes where the two
# ranks' halves differ. The 1 MiB ones (power-of-two size, > 524288 bytes) scatter then ring.
traced bcastmix -b 1048576 -s 64 -r 4
"$PYTHON3" - "$work/bcastmix.json" <<'PY' || fail "bcastmix: broadcast flows"
import json, sys
j = json.load(open(sys.argv[1]))
edges = [(0, 4), (0, 2), (0, 1), (2, 3), (4, 6), (4, 5), (6, 7)]
small = [c for c in j["collectives"]["calls"] if c["collective"] == "MPI_Bcast" and c["bytes"] == 64]
big = [c for c in j["collectives"]["calls"] if c["collective"] == "MPI_Bcast" and c["bytes"] == 1048576]
assert len(small) == 4 and len(big) == 4, (len(small), len(big))
for t, c in enumerate(small):
    cross = sum(1 for a, b in edges if (a + t) % 8 // 2 != (b + t) % 8 // 2)
    assert c["algorithm"] == "binomial" and c["inter_node_bytes"] == 64 * cross, (t, c, cross)
assert all(c["algorithm"] == "scatter_ring_allgather" for c in big), big
PY

# A forced algorithm: MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=scattered is recorded and honoured.
rm -rf "$work/fft"
FC_GENV="-genv MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM scattered" traced fft -n 1024 -r 1
"$PYTHON3" - "$work/fft.json" <<'PY' || fail "fft forced: the algorithm"
import json, sys
j = json.load(open(sys.argv[1]))
a2a = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
assert {f["algorithm"] for f in a2a} == {"scattered"} and sum(f["bytes"] for f in a2a) == 8 * 6 * 131072
PY
echo "collectives: fft, cg and bcastmix analysed with their collectives"
