#!/bin/bash
# test-remap-apply.sh: a Hydra file with its rank order, used as the README shows (flowcut run
# --rank-order FILE -- flowcut cluster mpiexec -f FILE), runs every rank of an unmodified program on
# the node it names for it. First mapping B of Martinasso & Mehaut section 6.3 (ranks 0,3 | 1,6 |
# 2,5 | 4,7 on 4 emulated nodes of 2 slots), written by this test as node:n lines and the rank order
# 0,3,1,6,2,5,4,7, places the broadcast: each rank's node, read from its trace, must be B's. Then
# `flowcut remap` of that trace writes its suggestion's Hydra file, which is applied to the
# broadcast and to the CG solver (halo exchange with busy-polled waits, Allreduce), each traced
# again: each rank's node must be the JSON suggestion's and the slot the Hydra file gives it (Hydra
# fills node:n lines in blocks; the rank order gives each slot its rank), and `flowcut remap
# --check` must agree: 0 on these traces, 1 naming exactly the ranks the suggestion moves on the
# trace under B. Hydra itself (mpiexec.mpich -f with its fork launcher) reads the file into
# shared-memory nodes that hold the ranks the suggestion puts together. A file naming a node the
# cluster does not have is refused before anything runs.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
[ -x "$abs_top_builddir/analyzer/flowcut-remap" ] || skip "flowcut-remap is not built"
[ -x "$ex/bcast" ] || skip "$ex/bcast is not built"
[ -x "$ex/cg" ] || skip "$ex/cg is not built"
need_command "$PYTHON3"

"$cluster" up --nodes 4 --rate 200mbit >/dev/null || fail "cluster up"
"$ex/bcast" --hosts B >"$work/B" || fail "bcast --hosts B"
# B as Hydra places it: each node once as node:n, in order of first use, and the rank order.
awk 'NF { n[$1]++; if (!($1 in seen)) { seen[$1] = 1; nodes[++k] = $1 } r[$1] = r[$1] (r[$1] == "" ? "" : ",") NR - 1 }
     END { for (i = 1; i <= k; i++) o = o (i > 1 ? "," : "") r[nodes[i]]; print "# rank-order: " o
           for (i = 1; i <= k; i++) print nodes[i] ":" n[nodes[i]] }' "$work/B" >"$work/B.hydra"
grep -qx '# rank-order: 0,3,1,6,2,5,4,7' "$work/B.hydra" || fail "B as node:n lines: $(cat "$work/B.hydra")"
timeout 300 "$flowcut" run -o "$work/t" --rank-order "$work/B.hydra" -- "$flowcut" cluster mpiexec -f "$work/B.hydra" -n 8 \
    "$ex/bcast" -s 2000000 -r 2 >"$work/traced.out" 2>&1 || { cat "$work/traced.out"; fail "traced run under B"; }
"$flowcut" info --json "$work/t" >"$work/t.info" || fail "flowcut info"
"$PYTHON3" - "$work/t.info" "$work/B" <<'PY' || fail "the ranks did not run where B puts them"
import json, sys
want = [l.strip() for l in open(sys.argv[2]) if l.strip()]
got = {r["rank"]: r["node"] for r in json.load(open(sys.argv[1]))["rank_info"]}
bad = [(k, got.get(k), want[k]) for k in range(len(want)) if got.get(k) != want[k]]
print("under B: %d ranks where B puts them%s" % (len(want) - len(bad), "" if not bad else ", wrong (rank, ran, B): %s" % bad))
sys.exit(1 if bad else 0)
PY
"$flowcut" remap "$work/t" --format json -o "$work/r.json" 2>/dev/null || fail "remap --format json"
"$flowcut" remap "$work/t" --format hydra -o "$work/s.hydra" 2>/dev/null || fail "remap --format hydra"
cat "$work/s.hydra"

# placed TRACE: every rank of TRACE ran on the suggestion's node, and in the slot the Hydra file
# gives it.
placed() {
    "$flowcut" info --json "$1" >"$1.info" || fail "flowcut info $1"
    "$PYTHON3" - "$1.info" "$work/r.json" "$work/s.hydra" <<'PY'
import json, sys
info, rj, hydra = sys.argv[1:]
d = json.load(open(rj))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
order, slots = None, []
for line in open(hydra):
    if line.startswith("# rank-order:"):
        order = [int(x) for x in line.split(":", 1)[1].split(",")]
    elif line.strip() and not line.startswith("#"):
        node, n = line.strip().split(":")
        slots += [node] * int(n)
slot_of = {r: s for s, r in enumerate(order)}
bad = []
ranks = json.load(open(info))["rank_info"]
if sorted(r["rank"] for r in ranks) != list(range(len(want))):
    bad.append("the trace has ranks %s" % sorted(r["rank"] for r in ranks))
for r in ranks:
    k = r["rank"]
    if r["node"] != want[k]:
        bad.append("rank %d ran on %s, the suggestion says %s" % (k, r["node"], want[k]))
    if r["slot"] != slot_of[k] or slots[r["slot"]] != r["node"]:
        bad.append("rank %d ran in slot %d on %s; the Hydra file gives it slot %d on %s"
                   % (k, r["slot"], r["node"], slot_of[k], slots[slot_of[k]]))
for b in bad:
    print("FAIL:", b)
print("%d ranks checked" % len(ranks))
sys.exit(1 if bad else 0)
PY
}

for prog in bcast cg; do
    case $prog in
    bcast) args="-s 2000000 -r 2" ;;
    cg) args="-x 256 -y 32 -i 200" ;;
    esac
    # shellcheck disable=SC2086
    timeout 300 "$flowcut" run -o "$work/$prog.next" --rank-order "$work/s.hydra" -- \
        "$flowcut" cluster mpiexec -f "$work/s.hydra" -n 8 "$ex/$prog" $args >"$work/$prog.out" 2>&1 ||
        { cat "$work/$prog.out"; fail "$prog with the suggestion"; }
    placed "$work/$prog.next" || fail_later "$prog: ranks not where the suggestion puts them"
    "$flowcut" remap --check "$work/s.hydra" "$work/$prog.next" >"$work/$prog.check" ||
        fail_later "$prog: remap --check says no: $(cat "$work/$prog.check")"
done

# Hydra's own reading of the file: mpiexec.mpich -f FILE with Hydra's fork launcher (its proxies
# started on this machine in place of ssh, so the file's node names need not resolve) gives each
# line's slots to one proxy, and MPICH makes each proxy's ranks one shared-memory node. With the
# rank order, the ranks that share a node must be those the suggestion puts together.
shm=$abs_builddir/shm-groups
[ -x "$shm" ] || fail "$shm is not built"
FLOWCUT_TRACE=0 timeout 300 "$flowcut" run --rank-order "$work/s.hydra" -- \
    mpiexec.mpich -launcher fork -f "$work/s.hydra" -n 8 "$shm" >"$work/shm.out" 2>&1 ||
    { cat "$work/shm.out"; fail "shm-groups under Hydra's fork launcher"; }
"$PYTHON3" - "$work/shm.out" "$work/r.json" <<'PY' || fail_later "Hydra's nodes are not the suggestion's"
import json, re, sys
out, rj = sys.argv[1:3]
d = json.load(open(rj))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
got = {int(m.group(1)): [int(x) for x in m.group(2).split(",")]
       for m in (re.match(r"rank (\d+): ([\d,]+)$", l.strip()) for l in open(out)) if m}
bad = [(r, got.get(r), [q for q in range(len(want)) if want[q] == want[r]]) for r in range(len(want))
       if got.get(r) != [q for q in range(len(want)) if want[q] == want[r]]]
print("Hydra (fork launcher): %d ranks share memory with those the suggestion puts on their node%s"
      % (len(want) - len(bad), "" if not bad else "; wrong (rank, shared with, suggested): %s" % bad))
sys.exit(1 if bad else 0)
PY

# The trace under B: --check names the ranks B places elsewhere than the suggestion, and only them.
"$flowcut" remap --check "$work/s.hydra" "$work/t" >"$work/B.check"
st=$?
[ $st = 1 ] || fail_later "remap --check on the trace under B exits $st, expected 1"
"$PYTHON3" - "$work/B.check" "$work/r.json" <<'PY' || fail_later "remap --check names the wrong ranks"
import json, re, sys
check, rj = sys.argv[1:3]
d = json.load(open(rj))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
now = json.load(open(rj))["current"]["rank_to_node"]
moved = sorted(r for r in range(len(want)) if want[r] != now[r])
named = sorted(int(m.group(1)) for m in (re.match(r"rank (\d+): ran on", l) for l in open(check)) if m)
if named != moved or not moved:
    print("named %s, the suggestion moves %s" % (named, moved))
    sys.exit(1)
PY

# A machinefile naming a node the cluster lacks: one line, non-zero, nothing run.
sed 's/^node3:/node7:/' "$work/s.hydra" >"$work/bad.hydra"
"$flowcut" run -o "$work/bad" --rank-order "$work/bad.hydra" -- \
    "$flowcut" cluster mpiexec -f "$work/bad.hydra" -n 8 "$ex/bcast" -s 1000 -r 1 >"$work/bad.out" 2>"$work/bad.err"
st=$?
[ $st != 0 ] || fail_later "a machinefile naming node7 ran"
grep -q "node7 does not exist" "$work/bad.err" || fail_later "no clear message for node7: $(cat "$work/bad.err")"
[ "$(grep -vc '^flowcut: trace written' "$work/bad.err")" = 1 ] || fail_later "more than one line for node7: $(cat "$work/bad.err")"
ls "$work/bad"/rank-*.fct >/dev/null 2>&1 && fail_later "a rank ran under a machinefile naming node7"

[ "$failures" -eq 0 ] || fail "$failures checks failed"
echo "the suggestion's Hydra file with its rank order placed every rank of bcast and cg where suggested"
