#!/bin/bash
# bench/remap-bench.sh: validates `flowcut remap` on the emulated cluster (4 nodes x 2 slots,
# 200 Mbit/s, full duplex) and prints the tables of the closing note:
#   1. the broadcast of Martinasso & Mehaut section 6.3 (10 MB, as in their Table 4) traced under
#      mapping B; remap's suggestion, mapping A and B are each re-run and timed;
#   2. a 2-D halo exchange (examples/halo2d, 8 ranks on a 4 x 2 periodic grid) traced under the
#      round-robin placement (rank r on node r mod 4); the suggestion is re-run, and ALL 105
#      placements of 8 ranks on 4 nodes of 2 slots are run and measured, with the replay's
#      prediction of each, to show the suggestion's observed communication time against the best.
# The platform is fitted to a ping-pong traced between two nodes first (--platform-trace): the
# halo trace has no uncontended flow to fit a bandwidth to. It asserts nothing (make bench); each
# stretch on the cluster holds /run/flowcut-cluster/test.lock for a few minutes (at most 35 halo
# runs, or 15 broadcasts).
#
# Usage: remap-bench.sh [-o DIR] [--quick] [--resume] BUILDDIR   (about 30 minutes on a loaded 2-core
# machine; --quick: fewer and smaller runs)
#   --resume  with -o DIR of an interrupted run: keeps the traces and the runs already measured
#   --tables  with -o DIR of a finished run: prints its tables again
set -u
out= quick=0 resume=0 tables=0
while [ $# -gt 1 ]; do
    case $1 in
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --resume) resume=1; shift ;;
    --tables) tables=1; shift ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: remap-bench.sh [-o DIR] [--quick] [--resume|--tables] BUILDDIR" >&2; exit 1; }
b=$(cd "$1" && pwd) || exit 1
name=remap-bench needs="bcast halo2d pingpong"
. "$(dirname "$0")/lib-remap.sh"

measure() {
bbytes=10000000 breps=5 hiters=8 hbytes=400000 rounds=3 sweeps=2
[ $quick = 1 ] && bbytes=4000000 breps=3 rounds=2 sweeps=1
run() { # run HOSTFILE OUTFILE PROGRAM ARGS...: one untraced run, appended to OUTFILE
    local hosts=$1 log=$2
    shift 2
    timeout 300 "$cluster" mpiexec -f "$hosts" -n 8 "$@" >>"$log" 2>&1 || { tail "$log" >&2; fail "run $* failed"; }
}
# done FILE N: with --resume, 1 when FILE already holds N result lines (bcast or halo2d output).
done_() {
    [ $resume = 1 ] && [ "$(grep -cE '^(bcast bytes|halo2d)' "$1" 2>/dev/null)" -ge "$2" ]
}
# The per-rank nodes of a Hydra output of flowcut remap (its rank-hosts line).
hydra_hosts() {
    sed -n 's/^# rank-hosts: //p' "$1" | tr ',' '\n'
}

# ---- 1. platform and broadcast ----------------------------------------------------------------
printf 'node0\nnode1\n' >"$work/pp.hosts"
"$ex/bcast" --hosts A >"$work/A.hosts"
"$ex/bcast" --hosts B >"$work/B.hosts"
if ! done_ "$work/bcastB.traced.out" 1; then
    echo "remap-bench: tracing a ping-pong (platform) and the broadcast under B"
    rm -rf "$work/pp.trace" "$work/bcastB.trace"
    lock
    timeout 300 "$flowcut" run -o "$work/pp.trace" -- "$cluster" mpiexec -f "$work/pp.hosts" -n 2 \
        "$ex/pingpong" 3 1000 100000 1000000 4000000 >"$work/pp.out" 2>&1 || fail "traced ping-pong"
    timeout 300 "$flowcut" run -o "$work/bcastB.trace" -- "$cluster" mpiexec -f "$work/B.hosts" -n 8 \
        "$ex/bcast" -s $bbytes -r $breps >"$work/bcastB.traced.out" 2>&1 || fail "traced broadcast"
    unlock
fi
plat=(--platform-trace "$work/pp.trace")
"$flowcut" remap "${plat[@]}" --placement "$work/A.hosts" --top 3 "$work/bcastB.trace" | tee "$work/bcast.remap.txt"
"$flowcut" remap "${plat[@]}" --placement "$work/A.hosts" --format json -o "$work/bcast.remap.json" \
    "$work/bcastB.trace" 2>/dev/null || fail "remap --format json (broadcast)"
"$flowcut" remap "${plat[@]}" --format hydra -o "$work/bcast.S.hydra" "$work/bcastB.trace" 2>/dev/null ||
    fail "remap --format hydra (broadcast)"
hydra_hosts "$work/bcast.S.hydra" >"$work/S.hosts"
if ! done_ "$work/bcast.run.S" $rounds; then
    echo "remap-bench: re-running the broadcast under B, A and the suggestion"
    rm -f "$work"/bcast.run.*
    lock
    for ((r = 0; r < rounds; r++)); do
        for m in B A S; do
            run "$work/$m.hosts" "$work/bcast.run.$m" "$ex/bcast" -s $bbytes -r $breps
        done
    done
    unlock
fi

# ---- 2. halo exchange ---------------------------------------------------------------------------
printf 'node0\nnode1\nnode2\nnode3\nnode0\nnode1\nnode2\nnode3\n' >"$work/rr.hosts"
if ! done_ "$work/haloRR.traced.out" 1; then
    echo "remap-bench: tracing the halo exchange under the round-robin placement"
    rm -rf "$work/haloRR.trace"
    lock
    timeout 300 "$flowcut" run -o "$work/haloRR.trace" -- "$cluster" mpiexec -f "$work/rr.hosts" -n 8 \
        "$ex/halo2d" $hiters $hbytes >"$work/haloRR.traced.out" 2>&1 || fail "traced halo"
    unlock
fi
"$flowcut" remap "${plat[@]}" --top 3 "$work/haloRR.trace" | tee "$work/halo.remap.txt"
"$flowcut" remap "${plat[@]}" --format hydra -o "$work/halo.S.hydra" "$work/haloRR.trace" 2>/dev/null ||
    fail "remap --format hydra (halo)"
hydra_hosts "$work/halo.S.hydra" >"$work/halo.S.hosts"

# The 105 placements: pairings of ranks 0..7, the pair of rank 0 first, as node0..node3; each
# also replayed (--placement) for its prediction.
mkdir -p "$work/pl"
python3 - "$work/pl" <<'PY'
import sys
def pairings(rest):
    if not rest:
        yield []
        return
    a = rest[0]
    for i in range(1, len(rest)):
        for p in pairings(rest[1:i] + rest[i + 1:]):
            yield [(a, rest[i])] + p
for k, p in enumerate(pairings(list(range(8)))):
    node = [0] * 8
    for g, (a, b) in enumerate(p):
        node[a] = node[b] = g
    open("%s/p%03d" % (sys.argv[1], k), "w").write("".join("node%d\n" % n for n in node))
PY
n=$(ls "$work/pl" | grep -c "^p[0-9]*$")
[ "$n" = 105 ] || fail "generated $n placements, expected 105"
echo "remap-bench: replaying the 105 placements"
for f in "$work"/pl/p[0-9][0-9][0-9]; do
    "$flowcut" remap "${plat[@]}" --local --budget 1 --top 1 --placement "$f" --format json -o "$f.json" \
        "$work/haloRR.trace" 2>/dev/null || fail "remap --placement $f"
done
# Measured: every placement once, in three locked stretches of 35 runs.
[ $resume = 1 ] || rm -f "$work"/pl/*.out
files=("$work"/pl/p[0-9][0-9][0-9])
for ((sw = 1; sw <= sweeps; sw++)); do
    for ((c = 0; c < 105; c += 35)); do
        todo=()
        for ((i = c; i < c + 35; i++)); do
            done_ "${files[i]}.out" $sw || todo+=("${files[i]}")
        done
        [ ${#todo[@]} -gt 0 ] || continue
        echo "remap-bench: sweep $sw of $sweeps, placements $c..$((c + 34)) (${#todo[@]} to run)"
        lock
        for f in "${todo[@]}"; do
            run "$f" "$f.out" "$ex/halo2d" $hiters $hbytes
        done
        unlock
    done
done
# The observed best of the 105 (by its fastest run), the suggestion and the round-robin placement,
# re-run (rounds times each, interleaved) so that one noisy run decides nothing.
best=$(for f in "${files[@]}"; do awk -v f="$f" '/^halo2d/ { print $11, f }' "$f.out"; done | sort -g | head -1 | cut -d' ' -f2)
[ -n "$best" ] || fail "no halo run was measured"
echo "$best" >"$work/best"
echo "remap-bench: re-running the round-robin placement, the suggestion and the observed best ($best)"
rm -f "$work/halo.rr.out" "$work/halo.S.out"
lock
for ((r = 0; r < rounds; r++)); do
    run "$work/rr.hosts" "$work/halo.rr.out" "$ex/halo2d" $hiters $hbytes
    run "$work/halo.S.hosts" "$work/halo.S.out" "$ex/halo2d" $hiters $hbytes
    run "$best" "$best.out" "$ex/halo2d" $hiters $hbytes
done
unlock

}
[ $tables = 1 ] || measure
[ $tables = 1 ] && best=$(cat "$work/best" 2>/dev/null)

# ---- tables -------------------------------------------------------------------------------------
python3 - "$work" "$best" <<'PY'
import glob, json, os, sys
work, best = sys.argv[1], sys.argv[2]

def times(path, key, col):
    return [float(l.split()[col]) for l in open(path) if l.startswith(key)] if os.path.exists(path) else []

def hosts(path):
    return [l.strip() for l in open(path) if l.strip()]

def canon(h):
    m, out = {}, []
    for x in h:
        m.setdefault(x, len(m))
        out.append(m[x])
    return tuple(out)

def med(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else float("nan")

r = json.load(open(os.path.join(work, "bcast.remap.json")))
c, g, s = r["current"], r["given"], r["suggestions"][r["judgement"]["fewest_moves"] - 1]
print()
print("Broadcast of 10 MB (section 6.3), 8 ranks on 4 nodes x 2, 200 Mbit/s; traced under B")
print("replay check (B): predicted %.3f s, observed %.3f s, error %+.1f %%" % (c["predicted_s"], c["observed_s"], c["check_error_pct"]))
print("%-12s %-34s %12s %14s %14s" % ("mapping", "ranks per node", "predicted s", "bcast median s", "bcast min s"))
for name, pl, pred in (("B (traced)", c["rank_to_node"], c["predicted_s"]), ("A", hosts(os.path.join(work, "A.hosts")), g["predicted_s"]),
                       ("suggestion", s["rank_to_node"], s["predicted_s"])):
    key = {"B (traced)": "B", "A": "A", "suggestion": "S"}[name]
    med_v = times(os.path.join(work, "bcast.run." + key), "rep ", 3)
    groups = {}
    for rank, n in enumerate(pl):
        groups.setdefault(n, []).append(rank)
    desc = " ".join("{%s}" % ",".join(map(str, v)) for v in groups.values())
    print("%-12s %-34s %12.3f %14.3f %14.3f" % (name, desc, pred, med(med_v), min(med_v) if med_v else float("nan")))

rows = []
for f in sorted(glob.glob(os.path.join(work, "pl", "p[0-9][0-9][0-9]"))):
    j = json.load(open(f + ".json"))
    obs = times(f + ".out", "halo2d", 10)
    rows.append(dict(file=f, hosts=canon(hosts(f)), pred=j["given"]["predicted_s"], pcomm=j["given"]["predicted_comm_s"], obs=obs))
rr = canon(hosts(os.path.join(work, "rr.hosts")))
sg = canon(hosts(os.path.join(work, "halo.S.hosts")))
bycanon = {x["hosts"]: x for x in rows}
# Every measurement of a placement counts: the re-runs of the current placement and of the
# suggestion join their sweep runs.
bycanon[rr]["obs"] += times(os.path.join(work, "halo.rr.out"), "halo2d", 10)
bycanon[sg]["obs"] += times(os.path.join(work, "halo.S.out"), "halo2d", 10)
print()
traced = [l for l in open(os.path.join(work, "haloRR.traced.out")) if l.startswith("halo2d")]
print("Halo exchange, 8 ranks on 4 nodes x 2, 200 Mbit/s, traced under round robin: %s" % (traced[0].strip() if traced else "?"))
tr = json.load(open(bycanon[rr]["file"] + ".json"))["current"]
print("replay check (round robin): predicted %.3f s, observed %.3f s, error %+.1f %%" % (tr["predicted_s"], tr["observed_s"], tr["check_error_pct"]))
def row(name, x):
    v = x["obs"]
    return "%-24s %-20s %11.3f %12.3f %10.3f %10.3f %4d" % (name, "".join(map(str, x["hosts"])), x["pred"], x["pcomm"], min(v), med(v), len(v))
print("%-24s %-20s %11s %12s %10s %10s %4s" % ("placement", "node of ranks 0..7", "pred run s", "pred comm s", "obs min s", "obs med s", "runs"))
b = min(rows, key=lambda x: min(x["obs"]))
print(row("current (round robin)", bycanon[rr]))
print(row("suggestion", bycanon[sg]))
print(row("best of 105 (observed)", b))
s_obs, b_obs = min(bycanon[sg]["obs"]), min(b["obs"])
print("suggestion / best observed communication time (fastest runs): %.3f (%s 5 %%)" % (s_obs / b_obs, "within" if s_obs <= 1.05 * b_obs else "NOT within"))
# Predicted against observed over all 105: rank correlation and the placements in order.
def ranks(v):
    o = sorted(range(len(v)), key=lambda i: v[i])
    r = [0] * len(v)
    for k, i in enumerate(o):
        r[i] = k
    return r
pr, ob = ranks([x["pred"] for x in rows]), ranks([min(x["obs"]) for x in rows])
n = len(rows)
rho = 1 - 6 * sum((a - c) ** 2 for a, c in zip(pr, ob)) / (n * (n * n - 1))
print("all %d placements: Spearman rank correlation of predicted run time and observed halo time %.2f" % (n, rho))
print("%-20s %11s %10s %10s" % ("node of ranks 0..7", "pred run s", "obs min s", "obs med s"))
for x in sorted(rows, key=lambda x: x["pred"]):
    print("%-20s %11.3f %10.3f %10.3f" % ("".join(map(str, x["hosts"])), x["pred"], min(x["obs"]), med(x["obs"])))
PY
