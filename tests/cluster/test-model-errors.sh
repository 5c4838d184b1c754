#!/bin/bash
# test-model-errors.sh: on the emulated cluster (4 nodes x 2 ranks, 200 Mbit/s, full duplex), the
# quick version of bench/models-bench.sh calibrates the platform, traces the random 30-communication
# pattern packed onto the nodes and three synthetic patterns, and predicts every flow with each
# model. Checked, on the random pattern, whose flows meet conflicts of many kinds and sizes, with
# the errors read as the report's Table 3 reads them (each communication's median observed time over
# the repetitions against its median prediction):
#   - the calibrated flowcut model errs at most half as much as the linear model, which ignores
#     contention: the pattern keeps up to 10 flows on one NIC, so linear misses most of each
#     flow's time (measured: linear 86 %, flowcut 28 %); a model that stopped pricing conflicts
#     would fall to linear's level;
#   - its mean absolute error is at most 40 % (the benchmark reports the real figure against the
#     issue's 5 % target; this bound only catches a model that has stopped working);
#   - every model predicted every inter-node flow of the trace, and its statistics count the
#     point-to-point network flows (a collective's steps have inferred times; their calls are
#     compared apart).
# And SimGrid beside them, when its SMPI is installed (Debian libsimgrid-dev, which deps.sh
# installs): the same random pattern simulated gives a time for each of its 30 communications, and
# on the pattern 0>1<2 (two 2 MiB messages into node 1 at once) SimGrid's time is within 15 % of
# 2 x 2 MiB at 200 Mbit/s, by hand 168 ms: the platform it was given has the cluster's rate and
# one NIC shared by both.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
[ -x "$abs_top_builddir/calibrate/flowcut-calibrate" ] || skip "flowcut-calibrate is not built"
need_command "$PYTHON3"
FLOWCUT_CLUSTER_LOCKED=1 bash "$abs_top_srcdir/bench/models-bench.sh" --quick --duplex full -o "$work/run" \
    "$abs_top_builddir" || fail "models-bench.sh --quick failed"
"$PYTHON3" - "$work/run/summary.json" "$work/run/full/random30/platform.json" <<'PY' || fail_later "the models' errors on the random pattern"
import json, sys
rows = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
got = {r["model"]: r for r in rows if r["case"] == "random30" and r["profile"] == "platform"}
bad = []
for m in ("flowcut", "maxrate", "fairshare", "linear"):
    if m not in got:
        bad.append("model %s did not run on the random pattern" % m)
    elif got[m]["flows"] != len([f for f in rep["flows"] if f["collective"] is None and f["observation"]["judged"]]):
        bad.append("model %s compared %d flows, %d point-to-point network flows" % (m, got[m]["flows"], len([f for f in rep["flows"] if f["collective"] is None and f["observation"]["judged"]])))
    for f in rep["flows"]:
        if m in got and not isinstance(f.get("predicted", {}).get(m), (int, float)):
            bad.append("flow %d has no %s prediction" % (f["id"], m))
            break
if "flowcut" in got and "linear" in got and got["flowcut"]["median"] and got["linear"]["median"]:
    fc, li = got["flowcut"]["median"]["mean"], got["linear"]["median"]["mean"]
    print("random pattern, per communication: flowcut mean |error| %.1f %%, linear %.1f %%" % (fc, li))
    if not fc <= li / 2:
        bad.append("flowcut (%.1f %%) is not at most half of linear (%.1f %%)" % (fc, li))
    if fc > 40:
        bad.append("flowcut mean |error| %.1f %% > 40 %%" % fc)
else:
    bad.append("no per-communication errors for flowcut and linear")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
if command -v smpirun >/dev/null; then
    "$PYTHON3" - "$work/run" <<'PY' || fail_later "SimGrid beside the models"
import json, os, re, sys
run = sys.argv[1]
rows = json.load(open(os.path.join(run, "summary-program.json")))
sg = [r for r in rows if r["model"] == "simgrid" and r["case"] == "random30" and r["duplex"] == "full"]
bad = []
if len(sg) != 1 or sg[0]["comms"] != 30:
    bad.append("SimGrid's random pattern row: %r, not 30 communications" % sg)
pat = [d for d in os.listdir(os.path.join(run, "full")) if d.startswith("pattern")
       and open(os.path.join(run, "full", d, "name")).read().strip() == "0>1<2"]
want = 2 * 2 * 1048576 * 8 / 200e6
for d in pat:
    for line in open(os.path.join(run, "full", d, "simgrid.out")):
        m = re.match(r"comm (\d+) .* bytes (\d+) median ([0-9.]+)", line)
        if m:
            t = float(m.group(3))
            print("SimGrid 0>1<2 comm %s: %.4f s, by hand %.4f s" % (m.group(1), t, want))
            if int(m.group(2)) != 2097152 or abs(t - want) > 0.15 * want:
                bad.append("SimGrid's 0>1<2 comm %s: %s bytes in %.4f s, not 2 MiB in %.4f s +- 15 %%"
                           % (m.group(1), m.group(2), t, want))
if not pat:
    bad.append("no pattern 0>1<2 was run")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
else
    echo "SimGrid's smpirun is not installed: its side of the benchmark is not checked"
fi
finish
