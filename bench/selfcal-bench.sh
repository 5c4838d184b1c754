#!/bin/bash
# bench/selfcal-bench.sh: the rate self-calibration fits (`flowcut analyze` without --platform)
# against the link rate the emulated cluster sets (4 nodes x 2 ranks, full duplex, all 8
# busy-polling ranks on the machine's cores). At each rate it traces, RUNS times:
#   - halo: examples/halowait STEPS steps of BYTES (8 of 4 MB unless --steps, --bytes), sends
#     staggered 40 ms a rank, hosts packed 2 a node: every node sends two flows and receives two at
#     once, so no flow runs alone and the fit is the shared-NIC one (docs/analyze.md,
#     self-calibration);
#   - pingpong: examples/pingpong between node0 and node1 (1 kB to 4 MB, 3 round trips a size):
#     every flow runs alone;
#   - random30 (only at the rates of --random-rates, default 200mbit): examples/random30 packed
#     onto the 4 nodes (-N 4 -x 0.5 -r 3), up to 10 flows on one NIC, ranks sleeping between polls.
# and prints, per trace, the fitted large-message rate over the link's (rate / 8), the note's
# account of the fit, the network flows and each model's mean absolute error over them; with -B
# OTHERBUILD also that build's fit of the same trace. It asserts nothing.
#
# Usage: selfcal-bench.sh [--rates "20mbit 30mbit"] [--random-rates "200mbit"] [--runs N] [--steps N]
#                         [--bytes B] [-B OTHERBUILD] [-o DIR] BUILDDIR
#   --analyze  with -o DIR of a finished run: analyzes its traces again and prints the table
# Needs root. Each run holds /run/flowcut-cluster/test.lock on its own (about a minute at 20 Mbit/s),
# and the cluster is taken down after each.
set -u
rates="20mbit 30mbit 50mbit" rrates=200mbit runs=2 other='' keep='' analyze=0 steps=8 bytes=4000000
usage() {
    echo "usage: selfcal-bench.sh [--rates \"R ...\"] [--random-rates \"R ...\"] [--runs N] [--steps N] [--bytes B] [-B OTHERBUILD] [-o DIR] [--analyze] BUILDDIR" >&2
    exit 2
}
while [ $# -gt 1 ]; do
    case $1 in
    --rates) rates=$2; shift 2 ;;
    --random-rates) rrates=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    -B) other=$(cd "$2" && pwd) || exit 1; shift 2 ;;
    -o) keep=$2; shift 2 ;;
    --analyze) analyze=1; shift ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
b=$(cd "$1" && pwd) || exit 1
flowcut="$b/tools/flowcut"
cluster="$b/tools/flowcut-cluster"
export FLOWCUT_EXEC_PATH="$b/analyzer:$b/tools"
export FLOWCUT_LIB="$b/libtrace/.libs/libflowcut.so"
[ $analyze = 0 ] || [ -n "$keep" ] || usage
[ $analyze = 1 ] || [ "$(id -u)" -eq 0 ] || { echo "selfcal-bench: SKIP: the emulated cluster needs root"; exit 77; }
for f in "$b/examples/halowait" "$b/examples/pingpong" "$b/examples/random30" "$b/analyzer/flowcut-analyze"; do
    [ -x "$f" ] || { echo "selfcal-bench: $f is not built" >&2; exit 1; }
done
if [ -n "$keep" ]; then
    mkdir -p "$keep" && work=$(cd "$keep" && pwd) || exit 1
else
    work=$(mktemp -d /tmp/selfcal-bench.XXXXXX) || exit 1
    trap 'rm -rf "$work"' EXIT
fi
. "$(dirname "$0")/lib-hold.sh"
printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/halo.hosts"
printf 'node0\nnode1\n' >"$work/pp.hosts"
for rate in $rates; do
    for i in $(seq 1 "$runs"); do
        h=$work/halo.$rate.$i p=$work/pp.$rate.$i
        [ $analyze = 0 ] || break
        rm -rf "$h" "$p"
        hold "$rate" timeout 280 "$flowcut" run -o "$h" -- "$flowcut" cluster mpiexec -f "$work/halo.hosts" -n 8 \
            "$b/examples/halowait" "$steps" "$bytes" 2000 40000 >"$h.out" 2>&1 &&
            grep -q '^halowait: verified$' "$h.out" || { cat "$h.out" >&2; echo "selfcal-bench: halo $rate $i failed" >&2; exit 1; }
        hold "$rate" timeout 280 "$flowcut" run -o "$p" -- "$flowcut" cluster mpiexec -f "$work/pp.hosts" -n 2 \
            "$b/examples/pingpong" 3 1000 100000 1000000 4000000 >"$p.out" 2>&1 ||
            { cat "$p.out" >&2; echo "selfcal-bench: pingpong $rate $i failed" >&2; exit 1; }
    done
done
for rate in $rrates; do
    for i in $(seq 1 "$runs"); do
        r=$work/random.$rate.$i
        [ $analyze = 0 ] || break
        rm -rf "$r"
        hold "$rate" timeout 280 "$flowcut" run -o "$r" -- "$flowcut" cluster mpiexec -n 8 \
            "$b/examples/random30" -N 4 -x 0.5 -r 3 >"$r.out" 2>&1 ||
            { cat "$r.out" >&2; echo "selfcal-bench: random30 $rate $i failed" >&2; exit 1; }
    done
done
for rate in $(echo $rates $rrates | tr ' ' '\n' | sort -u); do
    for i in $(seq 1 "$runs"); do
        for t in "$work/halo.$rate.$i" "$work/pp.$rate.$i" "$work/random.$rate.$i"; do
            [ -d "$t" ] || continue
            "$flowcut" analyze --format json -o "$t.json" "$t" || { echo "selfcal-bench: analyze $t failed" >&2; exit 1; }
            if [ -n "$other" ]; then
                FLOWCUT_EXEC_PATH="$other/analyzer:$other/tools" "$other/tools/flowcut" analyze --format json \
                    -o "$t.other.json" "$t" || { echo "selfcal-bench: $other: analyze $t failed" >&2; exit 1; }
            fi
        done
    done
done
python3 - "$work" "$(echo $rates $rrates | tr ' ' '\n' | sort -u | tr '\n' ' ')" "$runs" <<'EOF'
import json, os, re, sys
work, rates, runs = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])

def fit(path):
    """The fitted large-message rate (bytes/s) and the note, or (None, note) when declined."""
    if not os.path.exists(path):
        return None, None
    p = json.load(open(path))["platform"]
    if p is None:
        return None, "declined"
    return 1 / p["inter"][-1]["per_byte_s"], p["note"]

def link(rate):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate)
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] / 8

print("%-8s %-9s %3s %10s %9s %12s  %s" % ("rate", "trace", "run", "link MB/s", "fit MB/s", "fit / link", "other build: fit MB/s (fit / link)"))
for rate in rates:
    for kind in ("halo", "pp", "random"):
        for i in range(1, runs + 1):
            base = "%s/%s.%s.%d" % (work, kind, rate, i)
            if not os.path.exists(base + ".json"):
                continue
            r, note = fit(base + ".json")
            o, _ = fit(base + ".other.json")
            L = link(rate)
            print("%-8s %-9s %3d %10.3f %9s %12s  %s" % (
                rate, {"halo": "halo", "pp": "pingpong", "random": "random30"}[kind], i, L / 1e6,
                "%.3f" % (r / 1e6) if r else "-", "%.3f" % (r / L) if r else "-",
                "%.3f (%.3f)" % (o / 1e6, o / L) if o else "-"))
            print("    %s" % note)
            j = json.load(open(base + ".json"))
            errs = " ".join("%s %s" % (m, "%.1f %%" % e["mean_abs_pct"] if e["mean_abs_pct"] is not None else "-")
                            for m, e in j["errors"].items())
            print("    network flows %d of %d; mean |error| over them: %s" % (
                j["observation"]["classes"]["network"]["flows"], len(j["flows"]), errs or "-"))
EOF
