#!/bin/sh
# test-tracer-intercoll.sh: collectives on an inter-communicator (intercoll.c), between the even
# and odd ranks of 4, ranks 0 and 1 on node n0, 2 and 3 on n1, traced and analysed: each becomes
# the messages of MPICH 4.0.2's inter-communicator algorithm for it (the non-blocking ones its
# MPIR_I<coll>_inter_sched_* schedules), whose flows and inter-node bytes are worked out below by
# hand, and none is named in the warnings as left out. The groups are {0, 2} (the low one: its
# first member has the lower world rank) and {1, 3}; each group's member 0 (world 0 and 1) is the
# one the algorithms go through. MPICH runs all 4 on one host, so it takes each group's members as
# sharing a node (for 2 members its node-aware steps have the messages of the flat ones). Between
# nodes: 0-2, 0-3, 1-2, 1-3; inside them: 0-1, 2-3.
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
# The other non-blocking ones (6 messages where not said):
#   MPI_Iallreduce of 2048 bytes (remote_reduce_local_bcast): the odd group reduces to 1 (3 > 1),
#     1 > 0; the even group to 0 (2 > 0), 0 > 1; each first member broadcasts in its group, 0 > 2
#     and 1 > 3: 4 flows between nodes, 8192 bytes.
#   MPI_Ireduce of 512 bytes to rank 3 (local_reduce_remote_send): 2 > 0, 0 > 3: 2 messages, both
#     between nodes, 1024 bytes.
#   MPI_Igather to rank 0 of 64-byte blocks (short: the odd group's 128 bytes are below 2048):
#     3 > 1 (64), 1 > 0 (128): 1 flow, 64 bytes; of 4096-byte blocks (long): 1 > 0, 3 > 0: 1
#     flow, 4096 bytes. 2 messages each.
#   MPI_Iscatter from rank 1 of 64-byte blocks (remote_send_local_scatter): 1 > 0 (128), 0 > 2
#     (64): 1 flow, 64 bytes; of 4096-byte blocks (linear): 1 > 0, 1 > 2: 1 flow, 4096 bytes.
#   MPI_Igatherv to rank 3 of 32 bytes from 0 and 64 from 2 (linear): 0 > 3 between nodes, 2 > 3
#     inside n1: 2 messages, 1 flow, 32 bytes.
#   MPI_Iscatterv from rank 2 of 64 bytes to 1 and 128 to 3 (linear): 2 > 1: 2 messages, 1 flow,
#     64 bytes.
#   MPI_Iallgather of 32 bytes (local_gather_remote_bcast): 2 > 0, 3 > 1 (32 each), 0 > 1 and 1 > 0
#     (64, inside n0), 0 > 2 and 1 > 3 (64 each): 4 flows, 192 bytes.
#   MPI_Iallgatherv of 16, 32 bytes (ranks 0, 2) and 48, 64 (ranks 1, 3) (remote_gather_local_bcast):
#     1 > 0 (48), 3 > 0 (64), 0 > 1 (16), 2 > 1 (32); 0 > 2 the odd group's 112 bytes, 1 > 3 the
#     even group's 48: 4 flows, 64 + 32 + 112 + 48 = 256 bytes.
#   MPI_Ialltoall of 4096 bytes a peer (pairwise_exchange): as MPI_Alltoall, 4 flows, 16384 bytes
#     (8 messages).
#   MPI_Ialltoallv and MPI_Ialltoallw of 4 x (1 + j + 2 k + c) ints from member j of group c to
#     member k of the other, none from 2 to 1 (pairwise_exchange, the empty block skipped): 0 > 3
#     48 bytes, 1 > 2 64, 3 > 0 48: 3 flows, 160 bytes (7 messages).
#   MPI_Ireduce_scatter and MPI_Ireduce_scatter_block of 8 ints a member, 64 bytes
#     (remote_reduce_local_scatterv): the reduces of MPI_Iallreduce, 3 > 1 and 2 > 0 (64 each),
#     then 0 > 2 and 1 > 3 (a 32-byte block each): 4 flows, 192 bytes.
# The persistent ones, started 3 times, are built by MPICH 4.0.2 with the non-blocking schedules:
# each Start of MPI_Bcast_init (512 bytes from rank 0) is one call with MPI_Ibcast's 2 messages
# and 1 flow of 512 bytes, each Start of MPI_Allreduce_init (2048 bytes) one with MPI_Iallreduce's
# 6 messages, 4 flows and 8192 bytes between nodes; each call spans the members' Start-to-completion
# windows (the dump's START and COMPLETE records).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$MPIEXEC"
prog=$abs_builddir/intercoll
[ -x "$prog" ] || fail "$prog not built"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/t" \
    -n 2 -env FLOWCUT_NODE n0 "$prog" : -n 2 -env FLOWCUT_NODE n1 "$prog" >"$work/out" 2>&1 ||
    fail "intercoll traced: $(cat "$work/out")"
grep -q "^intercoll ok$" "$work/out" || fail "intercoll did not verify: $(cat "$work/out")"
"$flowcut" analyze --format json --model none -o "$work/r.json" "$work/t" 2>"$work/err" || fail "analyze: $(cat "$work/err")"
"$flowcut" dump --no-sites "$work/t" >"$work/dump" 2>"$work/err" || fail "dump: $(cat "$work/err")"
"$PYTHON3" - "$work/r.json" "$work/dump" <<'PY' || fail "the inter-communicator collectives' flows"
import json, sys
from collections import defaultdict
j = json.load(open(sys.argv[1]))
errors = []
ITERS = 3
# (collective, algorithm): (bytes between nodes, flows between nodes) over the run.
want = {("MPI_Bcast", "remote_send_local_bcast"): (512, 1), ("MPI_Allreduce", "reduce_exchange_bcast"): (32, 4),
        ("MPI_Alltoall", "pairwise_exchange"): (16, 4), ("MPI_Barrier", "bcast"): (4, 6),
        ("MPI_Ibarrier", "bcast"): (2, 6), ("MPI_Ibcast", "remote_send_local_bcast"): (512, 1),
        ("MPI_Iallreduce", "remote_reduce_local_bcast"): (8192, 4),
        ("MPI_Ireduce", "local_reduce_remote_send"): (1024, 2),
        ("MPI_Igather", "short"): (64, 1), ("MPI_Igather", "long"): (4096, 1),
        ("MPI_Iscatter", "remote_send_local_scatter"): (64, 1), ("MPI_Iscatter", "linear"): (4096, 1),
        ("MPI_Igatherv", "linear"): (32, 1), ("MPI_Iscatterv", "linear"): (64, 1),
        ("MPI_Iallgather", "local_gather_remote_bcast"): (192, 4),
        ("MPI_Iallgatherv", "remote_gather_local_bcast"): (256, 4),
        ("MPI_Ialltoall", "pairwise_exchange"): (16384, 4),
        ("MPI_Ialltoallv", "pairwise_exchange"): (160, 3), ("MPI_Ialltoallw", "pairwise_exchange"): (160, 3),
        ("MPI_Ireduce_scatter", "remote_reduce_local_scatterv"): (192, 4),
        ("MPI_Ireduce_scatter_block", "remote_reduce_local_scatterv"): (192, 4),
        ("MPI_Bcast_init", "remote_send_local_bcast"): (ITERS * 512, ITERS),
        ("MPI_Allreduce_init", "remote_reduce_local_bcast"): (ITERS * 8192, ITERS * 4)}
# All the messages of each non-blocking and persistent one (inside the nodes too).
messages = {"MPI_Iallreduce": 6, "MPI_Ireduce": 2, "MPI_Igather": 4, "MPI_Iscatter": 4, "MPI_Igatherv": 2,
            "MPI_Iscatterv": 2, "MPI_Iallgather": 6, "MPI_Iallgatherv": 6, "MPI_Ialltoall": 8, "MPI_Ialltoallv": 7,
            "MPI_Ialltoallw": 7, "MPI_Ireduce_scatter": 6, "MPI_Ireduce_scatter_block": 6,
            "MPI_Bcast_init": ITERS * 2, "MPI_Allreduce_init": ITERS * 6}
got = defaultdict(lambda: [0, 0])
for f in j["flows"]:
    if f["collective"] is not None and f["src_node"] != f["dst_node"]:
        got[(f["collective"], f["algorithm"])][0] += f["bytes"]
        got[(f["collective"], f["algorithm"])][1] += 1
for k, v in want.items():
    if tuple(got[k]) != v:
        errors.append("%s with %s: %r bytes and flows between nodes, want %r" % (k[0], k[1], tuple(got[k]), v))
colls = {k[0] for k in want}
for k in got:
    if k[0] in colls and k not in want:
        errors.append("%s: unexpected algorithm %s (%r)" % (k[0], k[1], got[k]))
by_kind = {s["collective"]: s for s in j["collectives"]["by_kind"]}
for k, n in messages.items():
    if by_kind.get(k, {}).get("messages") != n:
        errors.append("%s: %r messages, want %d" % (k, by_kind.get(k, {}).get("messages"), n))
inter = [w for w in j["warnings"] if "on an inter-communicator" in w]
if inter:
    errors.append("warnings: %r" % inter)
if "MPI_Reduce" not in {c["collective"] for c in j["collectives"]["calls"]}:
    errors.append("the final MPI_Reduce of MPI_COMM_WORLD is missing")

# Each Start of a persistent one is one call over the members' Start-to-completion windows.
INIT = {"MPI_Bcast_init": ("remote_send_local_bcast", 512), "MPI_Allreduce_init": ("remote_reduce_local_bcast", 8192)}
kind_of = defaultdict(dict)
windows = defaultdict(lambda: defaultdict(list))
open_, startall = {}, {}
for line in open(sys.argv[2]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    r, k, t, req = int(f["rank"]), f["kind"], float(f["time"]), f.get("req")
    if k in INIT:
        kind_of[r][req] = k
    elif k == "MPI_Startall":
        startall[r] = t
    elif k in ("MPI_Start", "START") and req in kind_of[r]:
        w = [startall[r] if k == "START" else t, None]
        windows[kind_of[r][req]][r].append(w)
        open_[(r, req)] = w
    elif k == "COMPLETE" and (r, req) in open_:
        open_.pop((r, req))[1] = t
for k, (alg, per_call) in INIT.items():
    calls = [c for c in j["collectives"]["calls"] if c["collective"] == k]
    if len(calls) != ITERS or any(c["algorithm"] != alg or c["inter_node_bytes"] != per_call or c["present"] != 4
                                  for c in calls):
        errors.append("%s: calls %r, want %d of %s with %d bytes between nodes" % (k, calls, ITERS, alg, per_call))
        continue
    if {r: len(v) for r, v in windows[k].items()} != {r: ITERS for r in range(4)}:
        errors.append("%s: Starts per rank %r" % (k, {r: len(v) for r, v in windows[k].items()}))
        continue
    for i, c in enumerate(calls):
        ws = [windows[k][r][i] for r in range(4)]
        d = [e - s for s, e in ws]
        exp = (min(s for s, _ in ws), sum(d) / 4, max(d))
        if any(abs(g - e) > 2e-6 for g, e in zip((c["enter"], c["observed_mean_s"], c["observed_max_s"]), exp)):
            errors.append("%s call %d: enter, mean, longest %r, want the Starts' windows %r" % (k, i, c, exp))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
PY
# The remap replay expands the same calls with the same expansion: on each rank the 15
# non-blocking collectives, 3 Starts of each of the 2 persistent ones, the 4 blocking ones, the
# Ibcast and the Ibarrier on the inter-communicator (27), the MPI_Comm_split (a barrier of
# MPI_COMM_WORLD) and the final MPI_Reduce: 4 x 29 = 116 calls. Every rank expands its part
# alone, so a member that took another root than its peers, or another algorithm, would leave
# sends or receives without a partner.
line_profile "$work/line.prof" 1e-05 1e-08 1e-06 1e-09 1e8
"$flowcut" remap --platform "$work/line.prof" "$work/t" >"$work/remap" 2>&1 ||
    fail "remap: $(head -c 300 "$work/remap")"
grep -q '^replay: [0-9]* messages paired, 116 collective calls expanded, 0 sends and receives without a partner' \
    "$work/remap" || fail "remap: $(grep '^replay:' "$work/remap" | head -1), want 116 collective calls, all paired"
# The same run with MPIR_CVAR_IGATHER_INTER_ALGORITHM=sched_long and
# MPIR_CVAR_ISCATTER_INTER_ALGORITHM=sched_linear (values of MPICH 4.0.2's variables): both
# gathers are long, the 64-byte one now 3 > 0 (64) between nodes and 1 > 0 inside n0, and both
# scatters linear, the 64-byte one 1 > 2 (64) and 1 > 0: 2 flows, 4160 bytes each. The barrier's
# MPIR_CVAR_BARRIER_INTER_ALGORITHM=nb (MPICH's blocking-over-non-blocking path, not modelled) is
# named in the warnings, and the default bcast stands in for it.
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/f" \
    -genv MPIR_CVAR_IGATHER_INTER_ALGORITHM sched_long -genv MPIR_CVAR_ISCATTER_INTER_ALGORITHM sched_linear \
    -genv MPIR_CVAR_BARRIER_INTER_ALGORITHM nb \
    -n 2 -env FLOWCUT_NODE n0 "$prog" : -n 2 -env FLOWCUT_NODE n1 "$prog" >"$work/out" 2>&1 ||
    fail "intercoll traced with forced algorithms: $(cat "$work/out")"
grep -q "^intercoll ok$" "$work/out" || fail "intercoll did not verify with forced algorithms: $(cat "$work/out")"
"$flowcut" analyze --format json --model none -o "$work/f.json" "$work/f" 2>"$work/err" || fail "analyze: $(cat "$work/err")"
"$PYTHON3" - "$work/f.json" <<'PY' || fail "the forced inter-communicator algorithms"
import json, sys
from collections import defaultdict
j = json.load(open(sys.argv[1]))
got = defaultdict(lambda: [0, 0])
for f in j["flows"]:
    if f["collective"] in ("MPI_Igather", "MPI_Iscatter", "MPI_Barrier") and f["src_node"] != f["dst_node"]:
        got[(f["collective"], f["algorithm"])][0] += f["bytes"]
        got[(f["collective"], f["algorithm"])][1] += 1
want = {("MPI_Igather", "long"): [4160, 2], ("MPI_Iscatter", "linear"): [4160, 2], ("MPI_Barrier", "bcast"): [4, 6]}
assert dict(got) == want, dict(got)
w = [x for x in j["warnings"] if "MPIR_CVAR_BARRIER_INTER_ALGORITHM" in x and "does not model" in x]
assert len(w) == 1, j["warnings"]
PY
echo "inter-communicator collectives: MPICH's algorithms' bytes, blocking, non-blocking and persistent, forced ones too"
