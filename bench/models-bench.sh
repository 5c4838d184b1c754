#!/bin/bash
# models-bench.sh: validates the contention models on the emulated cluster, as issue 5 asks:
# calibrates the platform on 4 nodes x 2 ranks with flowcut-calibrate, traces the random
# 30-communication pattern packed onto those nodes (examples/random30 -N 4) and the report's
# synthetic patterns (examples/pattern), analyzes each trace with the profile and every model, and
# prints each model's errors (Martinasso & Mehaut's Table 3: mean absolute, global, p95 and worst
# flow error). Beside them it runs the same programs under SimGrid's SMPI (smpicc, smpirun; Debian
# libsimgrid-dev), on a star of the same nodes whose links have the cluster's rate (SPLITDUPLEX for
# a full-duplex NIC, SHARED for a half-duplex one), and sets every predictor's per-communication
# times against the program's own timings on the emulated cluster. It also traces the collective examples (examples/fft, cg, bcastmix), whose traffic is
# in collectives, with 2 ranks a node and with 1, and prints each model's errors over their
# collective calls' durations. It asserts nothing; tests/cluster/test-model-errors.sh runs the
# quick version and checks it. When the profile holds a connection record, each trace is analyzed
# again with the profile less that record (rows "noconn": every message a flow of its own), less
# its connection-ends record (rows "noends": a serial connection's messages one at a time), and
# less its opposite records (rows "noopp"), so each record's effect is read on the same runs.
#
# Usage: models-bench.sh [--quick] [--duplex full|half|both] [--rate RATE] [--runs N] [-o DIR] BUILDDIR
#   --quick   a small version (quick calibration, half-size messages, one repetition, fewer patterns)
#   --runs N  traced runs of the random pattern, each of its repetitions (default 3, 1 with --quick):
#             its figures are also given as the median over the runs
#   --duplex  NIC mode of the emulated cluster (default both: the table for each)
#   -o DIR    keep the profiles, traces and JSON reports in DIR (default: a temporary directory,
#             removed at exit); DIR/summary.json then holds every error figure, and
#             DIR/summary-program.json those against the programs' own timings (SimGrid's too)
# Without SimGrid its rows are left out, with a line saying so.
# Needs root (the emulated cluster). Holds /run/flowcut-cluster/test.lock unless the caller
# already does (FLOWCUT_CLUSTER_LOCKED=1), and always takes the cluster down.
set -u

quick=0 duplexes="full half" rate=200mbit keep= runs=
usage() {
    echo "usage: models-bench.sh [--quick] [--duplex full|half|both] [--rate RATE] [--runs N] [-o DIR] BUILDDIR" >&2
    exit 2
}
while [ $# -gt 1 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --duplex)
        case $2 in full | half) duplexes=$2 ;; both) duplexes="full half" ;; *) usage ;; esac
        shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --runs)
        case $2 in [1-9]) runs=$2 ;; *) usage ;; esac
        shift 2 ;;
    -o) keep=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
b=$(cd "$1" && pwd) || exit 1
src=$(cd "$(dirname "$0")/.." && pwd) || exit 1
flowcut="$b/tools/flowcut"
cluster="$b/tools/flowcut-cluster"
calibrate="$b/calibrate/flowcut-calibrate"
export FLOWCUT_EXEC_PATH="$b/analyzer:$b/tools"
export FLOWCUT_LIB="$b/libtrace/.libs/libflowcut.so"
[ "$(id -u)" -eq 0 ] || { echo "models-bench: SKIP: the emulated cluster needs root"; exit 77; }
for f in "$calibrate" "$b/examples/random30" "$b/examples/pattern" "$b/analyzer/flowcut-analyze" \
    "$b/examples/fft" "$b/examples/cg" "$b/examples/bcastmix"; do
    [ -x "$f" ] || { echo "models-bench: $f is not built" >&2; exit 1; }
done

if [ -n "$keep" ]; then
    mkdir -p "$keep" || exit 1
    work=$(cd "$keep" && pwd)
else
    work=$(mktemp -d /tmp/flowcut-models.XXXXXX)
fi
cleanup() {
    "$cluster" down >/dev/null 2>&1
    [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
if [ "${FLOWCUT_CLUSTER_LOCKED:-0}" != 1 ]; then
    mkdir -p /run/flowcut-cluster
    exec 9>/run/flowcut-cluster/test.lock
    flock -w 900 9 || { echo "models-bench: could not get /run/flowcut-cluster/test.lock" >&2; exit 1; }
fi

# Messages of 1-4 MiB take 40-170 ms alone at 200 Mbit/s: far above the CPU noise of 8 busy
# ranks on 2 cores, short enough for the whole run to take minutes.
if [ $quick = 1 ]; then
    # --quick alone stops at 1 MiB, below the sizes whose slope the flows follow: keep 4 MiB.
    cal_flags=(--quick --max-size 4M) scale=0.5 reps=3 patterns=("0>1<2" "1<0>2" "0>1>2")
else
    cal_flags=() scale=1 reps=5 patterns=("0>1<2" "1<0>2" "0>1>2" "0>1>2>3" "0>1<2<3" "1<0>2>3" "0>1<2>3")
fi
[ -n "$runs" ] || { [ $quick = 1 ] && runs=1 || runs=3; }
pbytes=$(awk -v s=$scale 'BEGIN { printf "%d", 4 * 1048576 * s }')

fail() {
    echo "models-bench: $*" >&2
    exit 1
}

# SimGrid's SMPI builds the examples from their sources; it simulates on one core, in seconds.
simgrid=0
if command -v smpicc >/dev/null && command -v smpirun >/dev/null; then
    mkdir -p "$work/smpi"
    for p in random30 pattern; do
        smpicc -O2 -o "$work/smpi/$p" "$src/examples/$p.c" >"$work/smpi/$p.cc.out" 2>&1 ||
            { cat "$work/smpi/$p.cc.out" >&2; fail "smpicc $p.c failed"; }
    done
    simgrid=1
else
    echo "models-bench: SimGrid's smpicc/smpirun not found (Debian libsimgrid-dev): no SimGrid rows"
fi

# platform_xml DUPLEX OUT: SimGrid's platform of the emulated cluster: a star of 4 nodes,
# each with one link of the cluster's rate to a crossbar (a <cluster> without backbone), as the
# veth pairs to the bridge; SPLITDUPLEX for a full-duplex NIC, SHARED for a half-duplex one. The
# emulated links add no delay of their own: 10 us per link stands for the stack's, far below the
# transfers' times (a calibrated intercept can be milliseconds of fitting noise, which SimGrid would
# charge to every message). The ranks of a node talk through a fast loopback, as through MPICH's
# shared memory.
platform_xml() {
    local policy=SPLITDUPLEX bps
    [ "$1" = half ] && policy=SHARED
    # The cluster's own reading of the rate, in bits per second, from its state file.
    bps=$(sed -n 's/^bps=//p' "${FLOWCUT_CLUSTER_STATEDIR:-/run/flowcut-cluster}/state")
    [ -n "$bps" ] || fail "the cluster's state gives no rate"
    cat >"$2" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="flowcut" prefix="node" radical="0-3" suffix="" speed="1Gf" bw="${bps}bps"
           lat="10us" sharing_policy="$policy" loopback_bw="4GBps" loopback_lat="1us"/>
</platform>
EOF
}

# simulate NAME HOSTFILE NP PROGRAM ARGS...: runs the SMPI build of PROGRAM on the platform of this
# duplex mode; its output, with the same "comm ... median T" lines, goes to NAME/simgrid.out.
simulate() {
    local name=$1 hosts=$2 np=$3 prog=$4 dir="$work/$duplex/$1"
    shift 4
    [ $simgrid = 1 ] || return 0
    if [ -z "$hosts" ]; then
        hosts="$dir/smpi-hosts"
        for ((r = 0; r < np; r++)); do echo "node$((r / 2))"; done >"$hosts"
    fi
    # The programs' computation is not the network's: SMPI counts none of it
    # (smpi/simulate-computation:no); their sleeps between polls advance the simulated clock.
    timeout 300 smpirun -platform "$work/$duplex/platform.xml" -hostfile "$hosts" -np "$np" \
        --cfg=smpi/simulate-computation:no --log=root.thresh:warning \
        "$work/smpi/$prog" "$@" >"$dir/simgrid.out" 2>"$dir/simgrid.err" ||
        { cat "$dir/simgrid.err" >&2; fail "SimGrid run of $name failed"; }
}

# trace NAME HOSTFILE NP PROGRAM ARGS...: traces one run and analyzes it with the profile.
trace() {
    local name=$1 hosts=$2 np=$3 dir="$work/$duplex/$1"
    shift 3
    mkdir -p "$dir"
    timeout 600 "$flowcut" run -o "$dir/trace" -- "$flowcut" cluster mpiexec ${hosts:+-f "$hosts"} -n "$np" "$@" \
        >"$dir/out" 2>&1 || { cat "$dir/out" >&2; fail "traced run of $name failed"; }
    timeout 300 "$flowcut" analyze --platform "$work/$duplex/profile" --format json -o "$dir/platform.json" \
        "$dir/trace" 2>"$dir/err" || { cat "$dir/err" >&2; fail "analyze $name failed"; }
    timeout 300 "$flowcut" analyze --format json -o "$dir/self.json" "$dir/trace" 2>"$dir/self.err" ||
        { cat "$dir/self.err" >&2; fail "analyze $name (self-calibrated) failed"; }
    # The same profile without its connection record ("noconn"): every message a flow of its own,
    # as before the calibration measured the order of a connection's messages.
    if grep -q '^connection ' "$work/$duplex/profile"; then
        grep -v '^connection ' "$work/$duplex/profile" >"$work/$duplex/profile-noconn"
        timeout 300 "$flowcut" analyze --platform "$work/$duplex/profile-noconn" --format json \
            -o "$dir/noconn.json" "$dir/trace" 2>"$dir/noconn.err" ||
            { cat "$dir/noconn.err" >&2; fail "analyze $name (without the connection record) failed"; }
    fi
    # Without its connection-ends record ("noends"): a serial connection's messages move one at
    # a time, where with it they move side by side and end in the order they started.
    if grep -q '^connection-ends ' "$work/$duplex/profile"; then
        grep -v '^connection-ends ' "$work/$duplex/profile" >"$work/$duplex/profile-noends"
        timeout 300 "$flowcut" analyze --platform "$work/$duplex/profile-noends" --format json \
            -o "$dir/noends.json" "$dir/trace" 2>"$dir/noends.err" ||
            { cat "$dir/noends.err" >&2; fail "analyze $name (without the connection-ends record) failed"; }
    fi
    # Without its opposite records ("noopp"): no message waits for a full opposite direction.
    if grep -q '^opposite ' "$work/$duplex/profile"; then
        grep -v '^opposite ' "$work/$duplex/profile" >"$work/$duplex/profile-noopp"
        timeout 300 "$flowcut" analyze --platform "$work/$duplex/profile-noopp" --format json \
            -o "$dir/noopp.json" "$dir/trace" 2>"$dir/noopp.err" ||
            { cat "$dir/noopp.err" >&2; fail "analyze $name (without the opposite records) failed"; }
    fi
}

for duplex in $duplexes; do
    mkdir -p "$work/$duplex"
    "$cluster" up --nodes 4 --rate "$rate" --duplex "$duplex" >/dev/null || fail "cluster up --duplex $duplex"
    t0=$(date +%s)
    timeout 900 "$cluster" mpiexec -n 8 "$calibrate" "${cal_flags[@]}" -o "$work/$duplex/profile" \
        >"$work/$duplex/calibrate.out" 2>&1 ||
        { cat "$work/$duplex/calibrate.out" >&2; fail "flowcut-calibrate failed"; }
    echo "== $duplex duplex, $rate: calibrated in $(($(date +%s) - t0)) s =="
    grep -v '^#' "$work/$duplex/profile" | grep -E '^(inter|cut|maxrate|eager|late-joiner|connection|opposite)' | sed 's/^/  /'
    platform_xml "$duplex" "$work/$duplex/platform.xml"
    # The random pattern N times (directories random30, random30-2, ...): TCP shares the NICs
    # differently from run to run. SimGrid is deterministic: one simulation, set against each run.
    for ((run = 1; run <= runs; run++)); do
        r30=random30
        [ $run = 1 ] || r30=random30-$run
        trace $r30 "" 8 "$b/examples/random30" -N 4 -x "$scale" -r "$reps"
        echo random30 >"$work/$duplex/$r30/name"
        if [ $run = 1 ]; then
            simulate random30 "" 8 random30 -N 4 -x "$scale" -r "$reps"
        elif [ -f "$work/$duplex/random30/simgrid.out" ]; then
            cp "$work/$duplex/random30/simgrid.out" "$work/$duplex/$r30/simgrid.out"
        fi
    done
    i=0
    for pat in "${patterns[@]}"; do
        "$b/examples/pattern" --hosts "$pat" >"$work/$duplex/hosts$i" || fail "pattern --hosts $pat"
        trace "pattern$i" "$work/$duplex/hosts$i" "$(wc -l <"$work/$duplex/hosts$i")" \
            "$b/examples/pattern" -s "$pbytes" -r "$reps" "$pat"
        echo "$pat" >"$work/$duplex/pattern$i/name"
        simulate "pattern$i" "$work/$duplex/hosts$i" "$(wc -l <"$work/$duplex/hosts$i")" \
            pattern -s "$pbytes" -r "$reps" "$pat"
        i=$((i + 1))
    done
    # The collective examples, 2 ranks a node: their flows are the steps of MPICH's algorithms.
    printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/$duplex/hosts-coll"
    fftn=$(awk -v s=$scale 'BEGIN { printf "%d", 2048 * s }')
    trace fft "$work/$duplex/hosts-coll" 8 "$b/examples/fft" -n "$fftn" -r "$reps"
    trace cg "$work/$duplex/hosts-coll" 8 "$b/examples/cg" -x 8192 -y 16 -i 400
    trace bcastmix "$work/$duplex/hosts-coll" 8 "$b/examples/bcastmix" -b "$pbytes" -s 64 -r "$reps"
    # The same on one rank a node (fft-1, cg-1, bcastmix-1): 4 ranks polling on the machine's cores
    # instead of 8, to set the collectives' error with fewer busy ranks beside the one with 8
    # (docs/results.md).
    printf 'node0\nnode1\nnode2\nnode3\n' >"$work/$duplex/hosts-coll1"
    trace fft-1 "$work/$duplex/hosts-coll1" 4 "$b/examples/fft" -n "$fftn" -r "$reps"
    trace cg-1 "$work/$duplex/hosts-coll1" 4 "$b/examples/cg" -x 8192 -y 16 -i 400
    trace bcastmix-1 "$work/$duplex/hosts-coll1" 4 "$b/examples/bcastmix" -b "$pbytes" -s 64 -r "$reps"
done

# The tables: one row per (duplex, case, profile, model); summary.json keeps them all. Two
# readings of the errors: per flow, as flowcut analyze reports them (one run's noise included),
# and per communication as the report's Table 3 compares them: each communication's median
# observed time over the repetitions against its median prediction (the first repetition, which
# also opens the connections, left out).
python3 - "$work" $duplexes <<'PY'
import json, os, re, statistics, sys
work, duplexes = sys.argv[1], sys.argv[2:]
rows = []
MODELS = ("flowcut", "maxrate", "fairshare", "linear")

def program_times(path):
    """The program's own per-communication medians: {comm number: (src, dst, bytes, seconds)}."""
    out = {}
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"comm (\d+) (\d+)>(\d+) bytes (\d+) .*median ([0-9.]+)", line)
            if m:
                out[int(m.group(1))] = tuple(int(x) for x in m.group(2, 3, 4)) + (float(m.group(5)),)
    return out

def stats(pairs):
    """Mean absolute, global, p95 and worst relative error (%) of (predicted, observed) pairs."""
    pairs = [(p, o) for p, o in pairs if o > 0]
    if not pairs:
        return None
    errs = sorted(abs(p - o) / o * 100 for p, o in pairs)
    so, sp = sum(o for _, o in pairs), sum(p for p, _ in pairs)
    p95 = errs[min(len(errs) - 1, max(0, -(-95 * len(errs) // 100) - 1))]
    return dict(comms=len(errs), mean=sum(errs) / len(errs), glob=abs(sp - so) / so * 100, p95=p95, max=errs[-1])

def model_by_program(rep, model, case, prog):
    """Each communication's median prediction (the first repetition left out, as the program leaves
    it out) against the program's own median time."""
    pairs = []
    for k, (a, b, n, t) in prog.items():
        if case == "random30":  # ranks; communication k carries tag k - 1
            fl = [f for f in rep["flows"] if f.get("collective") is None and f["tag"] == k - 1
                  and f["src_rank"] == a and f["dst_rank"] == b]
        else:  # nodes; arrow k is carried by ranks 2k and 2k + 1
            fl = [f for f in rep["flows"] if f.get("collective") is None and f["src_rank"] == 2 * k
                  and f["dst_rank"] == 2 * k + 1]
        fl.sort(key=lambda f: f["start"])
        fl = fl[1:] if len(fl) > 1 else fl
        pr = [f["predicted"][model] for f in fl if isinstance(f.get("predicted", {}).get(model), (int, float))]
        if pr:
            pairs.append((statistics.median(pr), t))
    return stats(pairs)

prog_rows = []

def by_comm(rep, model, case):
    """Per-communication errors of the medians over repetitions (Table 3's reading)."""
    groups = {}
    for f in rep["flows"]:
        if f.get("collective") is not None:
            continue  # a collective's steps: inferred times, compared per call below
        # random30 -N tags each communication with its number; pattern tags with the repetition.
        key = (f["src_rank"], f["dst_rank"], f["bytes"], f["tag"] if case == "random30" else None)
        groups.setdefault(key, []).append(f)
    errs, so, sp = [], 0.0, 0.0
    for fl in groups.values():
        fl.sort(key=lambda f: f["start"])
        fl = fl[1:] if len(fl) > 1 else fl
        o = statistics.median(f["observed"] for f in fl)
        pr = statistics.median(f["predicted"][model] for f in fl)
        if o > 0:
            errs.append(abs(pr - o) / o * 100)
            so += o
            sp += pr
    if not errs:
        return None
    errs.sort()
    p95 = errs[min(len(errs) - 1, max(0, -(-95 * len(errs) // 100) - 1))]
    return dict(comms=len(errs), mean=sum(errs) / len(errs), glob=abs(sp - so) / so * 100, p95=p95, max=errs[-1])

coll_rows = []
for d in duplexes:
    for case in sorted(os.listdir(os.path.join(work, d))):
        cdir = os.path.join(work, d, case)
        if not os.path.isdir(cdir):
            continue
        if case.replace("-1", "") in ("fft", "cg", "bcastmix"):
            for prof in ("platform", "self"):
                rep = json.load(open(os.path.join(cdir, prof + ".json")))
                for model, e in (rep.get("errors_collective") or {}).items():
                    coll_rows.append(dict(duplex=d, case=case, per_node=1 if case.endswith("-1") else 2,
                                          profile=prof, model=model, calls=e["calls"],
                                          mean=e["mean_abs_pct"], glob=e["global_pct"], p95=e["p95_abs_pct"],
                                          max=e["max_abs_pct"]))
            continue
        name = open(os.path.join(cdir, "name")).read().strip() if os.path.exists(os.path.join(cdir, "name")) else case
        prog = program_times(os.path.join(cdir, "out"))
        sim = program_times(os.path.join(cdir, "simgrid.out"))
        if prog and sim:
            e = stats([(sim[k][3], prog[k][3]) for k in prog if k in sim])
            if e:
                prog_rows.append(dict(duplex=d, case=name, run=case, profile="rate", model="simgrid", **e))
        for prof in ("platform", "noconn", "noends", "noopp", "self"):
            if not os.path.exists(os.path.join(cdir, prof + ".json")):
                continue
            rep = json.load(open(os.path.join(cdir, prof + ".json")))
            if rep.get("errors") is not None and prog:
                for model in MODELS:
                    e = model_by_program(rep, model, name, prog)
                    if e:
                        prog_rows.append(dict(duplex=d, case=name, run=case, profile=prof, model=model, **e))
            if rep.get("errors") is None:
                # No platform: self-calibration refused these flows; analyze said why on stderr.
                err = os.path.join(cdir, prof + ".err")
                why = open(err).read().strip().replace("\n", "; ") if os.path.exists(err) else ""
                print("%s %s %s: no predictions%s" % (d, name, prof, (" (" + why + ")") if why else ""))
                continue
            for model, e in rep["errors"].items():
                rows.append(dict(duplex=d, case=name, run=case, profile=prof, model=model, flows=e["flows"],
                                 mean=e["mean_abs_pct"], glob=e["global_pct"], p95=e["p95_abs_pct"],
                                 max=e["max_abs_pct"], worst=e["worst_flow"],
                                 median=by_comm(rep, model, name)))
json.dump(rows, open(os.path.join(work, "summary.json"), "w"), indent=1)
json.dump(coll_rows, open(os.path.join(work, "summary-collective.json"), "w"), indent=1)
json.dump(prog_rows, open(os.path.join(work, "summary-program.json"), "w"), indent=1)
print("\n%-6s %-10s %-9s %-10s %5s %8s %8s %8s %8s %6s" % ("duplex", "case", "profile", "model", "flows",
      "mean%", "global%", "p95%", "max%", "worst"))
for r in rows:
    f = lambda x: "%8.1f" % x if x is not None else "       -"
    print("%-6s %-10s %-9s %-10s %5d %s %s %s %s %6s" % (r["duplex"], r["run"], r["profile"], r["model"],
          r["flows"], f(r["mean"]), f(r["glob"]), f(r["p95"]), f(r["max"]), r["worst"]))
print("\nper communication, median over repetitions against median prediction (Table 3's reading):")
print("%-6s %-10s %-9s %-10s %5s %8s %8s %8s %8s" % ("duplex", "case", "profile", "model", "comms",
      "mean%", "global%", "p95%", "max%"))
for r in rows:
    m = r["median"]
    if m:
        print("%-6s %-10s %-9s %-10s %5d %8.1f %8.1f %8.1f %8.1f" % (r["duplex"], r["run"], r["profile"],
              r["model"], m["comms"], m["mean"], m["glob"], m["p95"], m["max"]))
# All flows of all cases together, per duplex and model, with the calibrated profile: the figures
# the issue's targets speak of.
print("\nall cases, calibrated profile, per flow (mean over cases of each statistic; the random pattern's first run):")
for d in duplexes:
    for m in ("flowcut", "maxrate", "fairshare", "linear"):
        sel = [r for r in rows if r["duplex"] == d and r["model"] == m and r["profile"] == "platform"
               and r["run"] == r["case"]]
        if sel:
            avg = lambda k: sum(r[k] for r in sel if r[k] is not None) / len(sel)
            print("  %-5s %-10s mean %5.1f%%  global %5.1f%%  p95 %5.1f%%  max %5.1f%%" %
                  (d, m, avg("mean"), avg("glob"), avg("p95"), avg("max")))
print("all cases, calibrated profile, per communication (medians; mean over cases):")
for d in duplexes:
    for m in ("flowcut", "maxrate", "fairshare", "linear"):
        sel = [r["median"] for r in rows if r["duplex"] == d and r["model"] == m and r["profile"] == "platform"
               and r["median"] and r["run"] == r["case"]]
        if sel:
            avg = lambda k: sum(x[k] for x in sel) / len(sel)
            print("  %-5s %-10s mean %5.1f%%  global %5.1f%%  p95 %5.1f%%  max %5.1f%%" %
                  (d, m, avg("mean"), avg("glob"), avg("p95"), avg("max")))
# Every predictor against the program's own timings (each communication's median over the
# repetitions, as the program prints it): flowcut's models from the trace, SimGrid from its
# simulation of the same program on the cluster's rate ("rate": SPLITDUPLEX links for full duplex,
# SHARED for half duplex).
print("\nper communication against the program's own timings (medians over repetitions), flowcut's models and SimGrid:")
print("%-6s %-10s %-9s %-10s %5s %8s %8s %8s %8s" % ("duplex", "case", "profile", "model", "comms",
      "mean%", "global%", "p95%", "max%"))
order = {m: i for i, m in enumerate(MODELS + ("simgrid",))}
prog_rows.sort(key=lambda r: (r["duplex"], r["run"], order[r["model"]], r["profile"]))
for r in prog_rows:
    print("%-6s %-10s %-9s %-10s %5d %8.1f %8.1f %8.1f %8.1f" % (r["duplex"], r["run"], r["profile"],
          r["model"], r["comms"], r["mean"], r["glob"], r["p95"], r["max"]))
# The issue's figures: the random pattern, each statistic's median over the traced runs.
print("random pattern against the program's own timings, median over its runs of each statistic:")
for d in duplexes:
    for m in MODELS + ("simgrid",):
        for prof in ("platform", "noconn", "noends", "noopp", "self", "rate"):
            sel = [r for r in prog_rows if r["duplex"] == d and r["case"] == "random30" and r["model"] == m
                   and r["profile"] == prof]
            if sel:
                med = lambda k: statistics.median(r[k] for r in sel)
                print("  %-5s %-10s %-9s runs %d  mean %5.1f%%  global %5.1f%%  p95 %5.1f%%   (runs' means: %s)" % (
                      d, m, prof, len(sel), med("mean"), med("glob"), med("p95"),
                      " ".join("%.1f" % r["mean"] for r in sel)))
# The collective examples: each collective call's predicted duration (its messages replayed under
# the model from the ranks' entries) against the observed one (first entry to last exit).
print("\ncollective calls of the collective examples (fft, cg, bcastmix; -1: one rank a node): predicted against "
      "observed duration")
print("%-6s %-10s %-9s %-10s %5s %8s %8s %8s %8s" % ("duplex", "case", "profile", "model", "calls",
      "mean%", "global%", "p95%", "max%"))
f = lambda x: "%8.1f" % x if x is not None else "       -"
for r in coll_rows:
    print("%-6s %-10s %-9s %-10s %5d %s %s %s %s" % (r["duplex"], r["case"], r["profile"], r["model"], r["calls"],
          f(r["mean"]), f(r["glob"]), f(r["p95"]), f(r["max"])))
print("mean absolute error of the predicted collective durations, calibrated profile (mean over the examples),")
print("with 2 ranks a node (8 ranks) and 1 rank a node (4 ranks) on the machine's cores:")
for d in duplexes:
    for per_node in (2, 1):
        for m in ("flowcut", "maxrate", "fairshare", "linear"):
            sel = [r for r in coll_rows if r["duplex"] == d and r["model"] == m and r["profile"] == "platform"
                   and r["per_node"] == per_node and r["mean"] is not None]
            if sel:
                print("  %-5s %d a node %-10s mean |err| %5.1f%%  (%s)" % (d, per_node, m,
                      sum(r["mean"] for r in sel) / len(sel), ", ".join("%s %.1f%%" % (r["case"], r["mean"]) for r in sel)))
PY
# How near any model can come on these runs: one run's medians as another's, and the error of a model
# exact in expectation (models-residuals.py, whose first lines these are).
if [ "$runs" -ge 3 ]; then
    for duplex in $duplexes; do
        echo "== $duplex duplex: the random pattern's runs against each other =="
        python3 "$src/bench/models-residuals.py" "$work/$duplex" | sed -n '1,/^messages of one pair/p' | sed '$d'
    done
fi
