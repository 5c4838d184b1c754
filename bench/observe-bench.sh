#!/bin/bash
# observe-bench.sh: the observed times of a halo exchange against the calibrated flowcut model, on
# the emulated cluster (4 nodes x 2 ranks, full duplex, all 8 busy-polling ranks on the machine's
# cores): examples/halowait with staggered sends (rank r posts its sends r x 40
# ms after its receives; even steps one MPI_Waitall, odd steps MPI_Test polling timed by the
# program). It calibrates the platform with flowcut calibrate --quick, traces RUNS runs, analyzes
# each with the profile, and prints per run: the share of the point-to-point inter-node flows that
# are `network` flows, flowcut's mean absolute error over them (the JSON report's figure), and how
# far the trace's per-request ends of the Waitall steps are from the completions the program
# measured by polling; then the medians over the runs. The link rate is low enough that a 4 MB
# message's wire time (about 1.1 s at 30 Mbit/s, 2.2 s when two share a NIC) dwarfs the ranks'
# turns at the cores. It asserts nothing (timing targets are benchmarks, not tests).
#
# Usage: observe-bench.sh [--rate RATE] [--bytes B] [--steps N] [--runs N] [--profile FILE] [-o DIR] BUILDDIR
#   --rate     link rate of the emulated cluster (default 30mbit)
#   --bytes    halo message size (default 4000000)
#   --steps    halo steps, even (default 8: 4 Waitall and 4 polled)
#   --runs     traced runs (default 5)
#   --profile  a profile to use instead of calibrating (it must be for the same rate)
#   -o DIR     keep the profile, traces and reports in DIR (default: a temporary directory)
# Needs root. Each use of the cluster holds /run/flowcut-cluster/test.lock on its own (the
# calibration, then each run), and the cluster is taken down after each.
set -u
rate=30mbit bytes=4000000 steps=8 runs=5 prof='' keep=''
usage() {
    echo "usage: observe-bench.sh [--rate RATE] [--bytes B] [--steps N] [--runs N] [--profile FILE] [-o DIR] BUILDDIR" >&2
    exit 2
}
while [ $# -gt 1 ]; do
    case $1 in
    --rate) rate=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --profile) prof=$2; shift 2 ;;
    -o) keep=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
case $steps in *[!0-9]* | '' | *[13579]) usage ;; esac
b=$(cd "$1" && pwd) || exit 1
flowcut="$b/tools/flowcut"
cluster="$b/tools/flowcut-cluster"
export FLOWCUT_EXEC_PATH="$b/analyzer:$b/calibrate:$b/tools"
export FLOWCUT_LIB="$b/libtrace/.libs/libflowcut.so"
[ "$(id -u)" -eq 0 ] || { echo "observe-bench: SKIP: the emulated cluster needs root"; exit 77; }
for f in "$b/calibrate/flowcut-calibrate" "$b/examples/halowait" "$b/analyzer/flowcut-analyze"; do
    [ -x "$f" ] || { echo "observe-bench: $f is not built" >&2; exit 1; }
done
if [ -n "$keep" ]; then
    mkdir -p "$keep" && work=$(cd "$keep" && pwd) || exit 1
else
    work=$(mktemp -d /tmp/observe-bench.XXXXXX) || exit 1
    trap 'rm -rf "$work"' EXIT
fi
. "$(dirname "$0")/lib-hold.sh"
if [ -z "$prof" ]; then
    prof=$work/quick.prof
    hold "$rate" timeout 280 "$flowcut" calibrate --quick --max-size 4M -o "$prof" -- "$flowcut" cluster mpiexec -n 8 \
        >"$work/calibrate.out" 2>&1 || { tail -n 5 "$work/calibrate.out" >&2; echo "observe-bench: calibration failed" >&2; exit 1; }
fi
printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/hosts"
echo "== halowait $steps steps of $bytes B, sends staggered 40 ms a rank, $rate, $runs runs; platform $prof =="
grep -E '^inter .* inf ' "$prof" | awk '{ printf "  calibrated: %.2f MB/s for large messages\n", 1e-6 / $5 }'
for i in $(seq 1 "$runs"); do
    rm -rf "$work/trace$i"
    hold "$rate" timeout 280 "$flowcut" run -o "$work/trace$i" -- "$flowcut" cluster mpiexec -f "$work/hosts" -n 8 \
        "$b/examples/halowait" "$steps" "$bytes" 2000 40000 "$work/t$i" >"$work/run$i.out" 2>&1 &&
        grep -q '^halowait: verified$' "$work/run$i.out" || { cat "$work/run$i.out" >&2; echo "observe-bench: run $i failed" >&2; exit 1; }
    "$flowcut" analyze --format json --platform "$prof" -o "$work/run$i.json" "$work/trace$i" ||
        { echo "observe-bench: analyze run $i failed" >&2; exit 1; }
done
python3 - "$work" "$runs" "$steps" <<'EOF'
import json, sys
from statistics import median
work, runs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
share, err, diff = [], [], []
for i in range(1, runs + 1):
    j = json.load(open("%s/run%d.json" % (work, i)))
    p2p = [f for f in j["flows"] if f["collective"] is None]
    net = [f for f in p2p if f["observation"]["class"] == "network"]
    e = j["errors"]["flowcut"]
    # The per-request ends: per rank, the median gap between the ends of its two receives in the
    # Waitall steps (the trace) against the one the program measured by polling.
    ends = {}
    for f in sorted(j["flows"] + j["intra"], key=lambda f: f["start"]):
        if f["collective"] is None:
            ends.setdefault((f["dst_rank"], f["tag"]), []).append(f["end"])
    d = g = 0.0
    for r in range(8):
        polls = [l.split() for l in open("%s/t%d.%d" % (work, i, r))]
        a, b = ends[(r, 0)], ends[(r, 1)]
        gp = median(float(p[3]) - float(p[4]) for p in polls)
        gw = median(a[s] - b[s] for s in range(0, steps, 2))
        d += abs(gw - gp) / 8
        g += abs(gp) / 8
    share.append(100 * len(net) / len(p2p))
    err.append(e["mean_abs_pct"])
    diff.append((d, g))
    print("  run %d: %d of %d flows network (%.0f %%); flowcut mean |error| %s over %d (global %s); "
          "Waitall ends %.0f ms from the polled gaps of %.0f ms (mean over the ranks)" %
          (i, len(net), len(p2p), share[-1], "%.1f %%" % e["mean_abs_pct"] if e["mean_abs_pct"] is not None else "-",
           e["flows"], "%.1f %%" % e["global_pct"] if e["global_pct"] is not None else "-", 1e3 * d, 1e3 * g))
ok = [x for x in err if x is not None]
print("  median over %d runs: network %.0f %% of the flows, flowcut mean |error| %s" %
      (runs, median(share), "%.1f %%" % median(ok) if ok else "-"))
EOF
