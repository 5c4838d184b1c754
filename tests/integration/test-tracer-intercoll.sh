#!/bin/sh
# test-tracer-intercoll.sh: collectives on an inter-communicator (intercoll.c: MPI_Bcast,
# MPI_Allreduce, MPI_Alltoall, MPI_Barrier, MPI_Ibcast and MPI_Ibarrier between the even and odd ranks of 4,
# ranks 0 and 1 on node n0, 2 and 3 on n1), traced and analysed: each becomes the messages of
# MPICH's inter-communicator algorithm for it, whose inter-node bytes are worked out below by hand,
# and none is named in the warnings as left out. The groups are {0, 2} (the low one: its first member has the
# lower world rank) and {1, 3}; MPICH runs all 4 on one host, so it takes each group's members as
# sharing a node.
#   MPI_Bcast of 512 bytes from rank 0 (remote_send_local_bcast): 0 > 1 (the other group's first
#     member, inside n0), then 1's broadcast in its group, 1 > 3: 512 bytes, 1 flow between nodes.
#   MPI_Allreduce of 8 bytes (reduce_exchange_bcast): 2 > 0 and 3 > 1 (each group's reduce), 0 and
#     1 exchange (inside n0), 0 > 2 and 1 > 3 (each group's broadcast): 4 flows, 32 bytes.
#   MPI_Alltoall of 4 bytes a peer (pairwise_exchange, 2 steps): step 0 pairs 0-1 and 2-3 (inside
#     the nodes), step 1 sends 0 > 3, 2 > 1, 1 > 2, 3 > 0: 4 flows, 16 bytes.
#   MPI_Barrier (bcast): each group's barrier is MPICH's node-aware one (its 2 members on one host):
#     2 > 0 (0 bytes), 0 > 2 (1 byte), 3 > 1, 1 > 3 likewise; then 1 byte 0 > 1 (inside n0), 1 > 3,
#     and back 1 > 0, 0 > 2: 6 flows, 4 bytes.
#   MPI_Ibcast, the same 512 bytes from rank 0 (remote_send_local_bcast, MPIR_Ibcast_inter_sched_flat:
#     rank 1's group broadcasts from its member 0): 1 > 3, 512 bytes, 1 flow between nodes.
#   MPI_Ibarrier (bcast, MPIR_Ibarrier_inter_sched_bcast): each group's barrier is the non-blocking
#     recursive doubling, whatever the nodes: 0 > 2, 2 > 0, 1 > 3, 3 > 1 of 0 bytes; then the same
#     1-byte broadcasts: 6 flows, 2 bytes.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$MPIEXEC"
prog=$abs_builddir/intercoll
[ -x "$prog" ] || fail "$prog not built"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/t" \
    -n 2 -env FLOWCUT_NODE n0 "$prog" : -n 2 -env FLOWCUT_NODE n1 "$prog" >"$work/out" 2>&1 ||
    fail "intercoll traced: $(cat "$work/out")"
grep -q "^intercoll ok$" "$work/out" || fail "intercoll did not verify: $(cat "$work/out")"
"$flowcut" analyze --format json --model none -o "$work/r.json" "$work/t" 2>"$work/err" || fail "analyze: $(cat "$work/err")"
"$PYTHON3" - "$work/r.json" <<'PY' || fail "the inter-communicator collectives' flows"
import json, sys
j = json.load(open(sys.argv[1]))
want = {"MPI_Bcast": ("remote_send_local_bcast", 512, 1), "MPI_Allreduce": ("reduce_exchange_bcast", 32, 4),
        "MPI_Alltoall": ("pairwise_exchange", 16, 4), "MPI_Barrier": ("bcast", 4, 6),
        "MPI_Ibarrier": ("bcast", 2, 6), "MPI_Ibcast": ("remote_send_local_bcast", 512, 1)}
for coll, (alg, nbytes, nflows) in want.items():
    fl = [f for f in j["flows"] if f["collective"] == coll]
    assert {f["algorithm"] for f in fl} == {alg}, (coll, {f["algorithm"] for f in fl})
    assert sum(f["bytes"] for f in fl) == nbytes and len(fl) == nflows, (coll, sum(f["bytes"] for f in fl), len(fl))
    assert all(f["src_node"] != f["dst_node"] for f in fl)
inter = [w for w in j["warnings"] if "on an inter-communicator" in w]
assert not inter, inter
assert "MPI_Reduce" in {c["collective"] for c in j["collectives"]["calls"]}
PY
echo "inter-communicator collectives: MPICH's algorithms' bytes, the non-blocking barrier's and broadcast's too"
