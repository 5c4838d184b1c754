#!/bin/bash
# test-model-observe.sh: the idioms of real codes (examples/idioms.am) traced on the emulated cluster, 4
# nodes x 2 ranks at 200 Mbit/s, 8 busy ranks on the machine's cores. Each example checks its own
# results; the analysis must tell their times apart from the network's:
#   - the small-message examples (an LU-style wavefront of 40 B, a master-worker of 2.8 KB tasks,
#     a halo of 8 B completed by one Waitall) have at least 90 % of their flows classed
#     late-peer, no-progress, oversubscribed or latency, and no error statistic counts any other
#     flow than a network one;
#   - a self-calibrated platform, when there is one, has a large-message rate within a factor 1.5
#     of the link's payload rate (200 Mbit/s less the headers: 23.4 to 25 MB/s), else the models
#     are left out with a note;
#   - the halo of 1 MB messages, whose time is set by moving its bytes, has network flows and a
#     self-calibrated platform no faster than 1.5 times the link. Its 8 ranks on 2 cores drive the
#     link at about half its rate (each 1 MB flow takes some 190 ms where two on a NIC need 80),
#     so the rate it shows is that, not the link's: the check only bounds it from below by a
#     third of the link.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
for p in wavefront masterworker halowait; do
    [ -x "$ex/$p" ] || skip "$ex/$p is not built"
done
need_command "$PYTHON3"

"$cluster" up --nodes 4 --rate 200mbit >/dev/null || fail "up"
printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/hosts"
# trace NAME PROGRAM ARGS...: runs the example traced; it must say it verified its results.
trace() {
    local name=$1
    shift
    timeout 300 "$flowcut" run -o "$work/$name" -- "$flowcut" cluster mpiexec -f "$work/hosts" -n 8 "$@" \
        >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: traced run"; }
    grep -q "^$(basename "$1"): verified$" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: not verified"; }
    "$flowcut" analyze --format json -o "$work/$name.json" "$work/$name" || fail "$name: analyze"
}
trace wavefront "$ex/wavefront" 200 40 200
trace masterworker "$ex/masterworker" 300 2800 300
trace halo8 "$ex/halowait" 150 8 200
trace halo1m "$ex/halowait" 30 1000000 2000

"$PYTHON3" - "$work" <<'PY' || fail_later "the classes of the idioms' flows"
import json, sys
work = sys.argv[1]
bad = []
def load(name):
    return json.load(open("%s/%s.json" % (work, name)))
def platform_ok(name, j, low=23.4 / 1.5):
    note = j["observation"]["platform_note"]
    if j.get("platform") is None:
        print("%s: no platform: %s" % (name, note))
        if not note:
            bad.append("%s: models left out without a note" % name)
        return False
    seg = j["platform"]["inter"][-1]
    rate = 1e-6 / seg["per_byte_s"]
    print("%s: self-calibrated %.1f MB/s, latency %.1f us" % (name, rate, seg["latency_s"] * 1e6))
    if not (low <= rate <= 25 * 1.5):
        bad.append("%s: self-calibrated rate %.1f MB/s not within %.1f..%.1f MB/s" % (name, rate, low, 25 * 1.5))
    if not seg["latency_s"] > 0:
        bad.append("%s: latency %r" % (name, seg["latency_s"]))
    return True
for name in ("wavefront", "masterworker", "halo8"):
    j = load(name)
    o = j["observation"]
    c = {k: v["flows"] for k, v in o["classes"].items() if v["flows"]}
    print("%s: %d flows: %s" % (name, o["flows"], c))
    waiting = sum(c.get(k, 0) for k in ("late-peer", "no-progress", "oversubscribed", "latency"))
    if waiting < 0.9 * o["flows"]:
        bad.append("%s: only %d of %d flows waited, were oversubscribed or latency-bound" % (name, waiting, o["flows"]))
    # The error statistics count point-to-point flows (a collective's steps have inferred times).
    judged = {f["id"] for f in j["flows"] if f["observation"]["judged"] and f["collective"] is None}
    if any(f["observation"]["class"] != "network" for f in j["flows"] if f["id"] in judged):
        bad.append("%s: a statistic counts a flow that is not a network flow" % name)
    for model, e in (j.get("errors") or {}).items():
        if e["flows"] != len(judged):
            bad.append("%s: %s counts %d flows, %d network" % (name, model, e["flows"], len(judged)))
    platform_ok(name, j)
j = load("halo1m")
o = j["observation"]
print("halo1m: %d flows: %s" % (o["flows"], {k: v["flows"] for k, v in o["classes"].items() if v["flows"]}))
if o["classes"]["network"]["flows"] < 3:
    bad.append("halo1m: %d network flows" % o["classes"]["network"]["flows"])
if not platform_ok("halo1m", j, 25 / 3):
    bad.append("halo1m: no self-calibrated platform")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
finish
