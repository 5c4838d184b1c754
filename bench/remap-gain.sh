#!/bin/bash
# bench/remap-gain.sh: the gain of an applied suggestion, predicted against measured, on the emulated
# cluster (4 nodes x 2 slots, 200 Mbit/s, full duplex), for two unmodified example codes traced
# under a poor placement (round robin: rank r on node r mod 4, so every neighbour is on another
# node):
#   cg      the CG solver: halo exchange of one grid row with MPI_Irecv/MPI_Isend and busy-polled
#           MPI_Wait, two MPI_Allreduce per iteration (cg -x 20000 -y 32 -i 100: 160 kB rows);
#   halo2d  the 2-D halo exchange: eight requests completed by one MPI_Waitall per iteration
#           (halo2d 8 400000).
# For each: `flowcut remap` of the trace (platform measured first by flowcut-calibrate --quick on
# the same emulated cluster, --platform, and the model it then takes) writes its Hydra file; then,
# alternating, the round-robin placement and the suggestion applied as the README says (flowcut
# run --rank-order FILE -- flowcut cluster mpiexec -f FILE) are each run and traced, RUNS times (5).
# Each run's time is what the replay predicts: from the earliest exit from MPI_Init to the last
# entry into MPI_Finalize, read from its trace by
# `flowcut remap --format json` (observed_s); every run of the suggestion is checked with `flowcut
# remap --check`. The table gives the predicted gain (with the replay's own error as its
# uncertainty) and the measured gain of the medians, with the runs' spread. It asserts nothing
# (make bench); each stretch on the cluster holds /run/flowcut-cluster/test.lock for under 5 minutes.
#
# Usage: remap-gain.sh [-o DIR] [--runs N] [--tables] BUILDDIR   (about 10 minutes)
#   --tables  with -o DIR of a finished run: prints its table again
set -u
out= runs=5 tables=0
while [ $# -gt 1 ]; do
    case $1 in
    -o) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --tables) tables=1; shift ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: remap-gain.sh [-o DIR] [--runs N] [--tables] BUILDDIR" >&2; exit 1; }
case $runs in '' | *[!0-9]* | 0) echo "remap-gain: --runs needs a positive number" >&2; exit 1 ;; esac
b=$(cd "$1" && pwd) || exit 1
name=remap-gain needs="cg halo2d"
. "$(dirname "$0")/lib-remap.sh"
[ -x "$b/calibrate/flowcut-calibrate" ] || skip "$b/calibrate/flowcut-calibrate is not built"

codes=(cg halo2d)
args_of() {
    case $1 in
    cg) echo "-x 20000 -y 32 -i 100" ;;
    halo2d) echo "8 400000" ;;
    esac
}
plat=(--platform "$work/cal.prof")

measure() {
    printf 'node0\nnode1\nnode2\nnode3\nnode0\nnode1\nnode2\nnode3\n' >"$work/rr.hosts"
    echo "remap-gain: calibrating the platform (flowcut-calibrate --quick, 8 ranks)"
    rm -rf "$work/cal.prof" "$work"/*.rr.trace "$work"/run
    mkdir -p "$work/run"
    lock
    timeout 280 "$cluster" mpiexec -n 8 "$b/calibrate/flowcut-calibrate" --quick -o "$work/cal.prof" >"$work/cal.out" 2>&1 ||
        { cat "$work/cal.out" >&2; fail "flowcut-calibrate"; }
    unlock
    echo "remap-gain: tracing each code under round robin"
    lock
    for c in "${codes[@]}"; do
        # shellcheck disable=SC2046
        timeout 300 "$flowcut" run -o "$work/$c.rr.trace" -- "$cluster" mpiexec -f "$work/rr.hosts" -n 8 \
            "$ex/$c" $(args_of $c) >"$work/$c.rr.out" 2>&1 || { cat "$work/$c.rr.out" >&2; fail "traced $c"; }
    done
    unlock
    for c in "${codes[@]}"; do
        "$flowcut" remap "${plat[@]}" --top 5 "$work/$c.rr.trace" >"$work/$c.remap.txt" 2>&1 || fail "remap $c"
        "$flowcut" remap "${plat[@]}" --format json -o "$work/$c.remap.json" "$work/$c.rr.trace" 2>/dev/null ||
            fail "remap --format json ($c)"
        "$flowcut" remap "${plat[@]}" --format hydra -o "$work/$c.S.hydra" "$work/$c.rr.trace" 2>/dev/null ||
            fail "remap --format hydra ($c)"
        sed -n '/^check:/p; /^judgement:/p; /^suggestion 1:/p' "$work/$c.remap.txt"
    done
    # Alternating runs, each traced: round robin, then the suggestion applied by its Hydra file.
    for c in "${codes[@]}"; do
        echo "remap-gain: $c: $runs alternating runs of round robin and the suggestion"
        lock
        for ((i = 1; i <= runs; i++)); do
            t=$work/run/$c.P.$i
            # shellcheck disable=SC2046
            timeout 300 "$flowcut" run -o "$t" -- "$cluster" mpiexec -f "$work/rr.hosts" -n 8 \
                "$ex/$c" $(args_of $c) >"$t.out" 2>&1 || { cat "$t.out" >&2; fail "$c round robin, run $i"; }
            t=$work/run/$c.S.$i
            # shellcheck disable=SC2046
            timeout 300 "$flowcut" run -o "$t" --rank-order "$work/$c.S.hydra" -- "$cluster" mpiexec \
                -f "$work/$c.S.hydra" -n 8 "$ex/$c" $(args_of $c) >"$t.out" 2>&1 ||
                { cat "$t.out" >&2; fail "$c suggestion, run $i"; }
        done
        unlock
        for t in "$work"/run/$c.[PS].[0-9]*; do
            case $t in *.out | *.json | *.check) continue ;; esac
            "$flowcut" remap "${plat[@]}" --local --budget 1 --top 1 --format json -o "$t.json" "$t" 2>/dev/null ||
                fail "remap --format json of $t"
        done
        for t in "$work"/run/$c.S.[0-9]*; do
            case $t in *.out | *.json | *.check) continue ;; esac
            "$flowcut" remap --check "$work/$c.S.hydra" "$t" >"$t.check" 2>&1 ||
                fail "$t: a rank ran elsewhere than the suggestion: $(cat "$t.check")"
        done
    done
}
[ $tables = 1 ] || measure

python3 - "$work" "$runs" "${codes[@]}" <<'PY'
import glob, json, os, sys
work, runs, codes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def med(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

def groups(pl):
    g = {}
    for r, n in enumerate(pl):
        g.setdefault(n, []).append(r)
    return " ".join("{%s}" % ",".join(map(str, v)) for v in g.values())

print()
print("Predicted against measured gain of the applied suggestion: 8 ranks on 4 nodes x 2 slots, 200 Mbit/s,")
print("traced under round robin; run time from MPI_Init to MPI_Finalize; %d alternating traced runs of each" % runs)
print("%-7s %-24s %-22s %-9s %-10s %-24s %-24s %s" % ("code", "suggestion", "predicted gain", "measured", "difference",
      "round robin: med [min-max]", "suggestion: med [min-max]", "gain of each pair of runs"))
for c in codes:
    r = json.load(open(os.path.join(work, c + ".remap.json")))
    s = r["suggestions"][r["judgement"]["fewest_moves"] - 1]
    pred, unc = s["gain_pct"], r["judgement"]["uncertainty_pct"]
    obs = {}
    for k in "PS":
        obs[k] = [json.load(open(f))["current"]["observed_s"]
                  for f in sorted(glob.glob(os.path.join(work, "run", "%s.%s.*.json" % (c, k))))]
    mp, ms = med(obs["P"]), med(obs["S"])
    gain = 100 * (mp - ms) / mp
    pair = sorted(100 * (p - q) / p for p, q in zip(obs["P"], obs["S"]))
    print("%-7s %-24s %+6.1f %% +- %5.1f %%    %+6.1f %%  %+6.1f pt  %7.3f [%.3f-%.3f]  %7.3f [%.3f-%.3f]  %s" % (
        c, groups(s["rank_to_node"]), pred, unc, gain, gain - pred, mp, min(obs["P"]), max(obs["P"]),
        ms, min(obs["S"]), max(obs["S"]), " ".join("%+.1f" % x for x in pair)))
PY
