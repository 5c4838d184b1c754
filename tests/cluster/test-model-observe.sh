#!/bin/bash
# test-model-observe.sh: the idioms of real codes (examples/idioms.am) traced on the emulated cluster, 4
# nodes x 2 ranks at 200 Mbit/s, 8 busy ranks on the machine's cores. Each example checks its own
# results; the analysis must tell their times apart from the network's:
#   - the small-message examples (an LU-style wavefront of 40 B, a master-worker of 2.8 KB tasks,
#     a halo of 8 B completed by one Waitall) have at least 90 % of their flows classed
#     late-peer, no-progress, oversubscribed or latency, and no error statistic counts any other
#     flow than a network one (nor, in their text reports, is an error figure given over fewer than
#     3 network flows);
#   - a self-calibrated platform, when there is one, has a large-message rate within a factor 1.5
#     of the link's payload rate (200 Mbit/s less the headers: 23.4 to 25 MB/s), else the models
#     are left out with a note;
#   - the halo of 1 MB messages with staggered sends (rank r posts its sends r x 40 ms after its
#     receives), its even steps completed by one MPI_Waitall and its odd ones by polling MPI_Test
#     on each request with the program noting when each receive completed: per rank, the time
#     between the ends of its two receives in the Waitall steps (the trace's per-request
#     completions) is the one the program measured in the polled steps, within half of what it
#     measured on average (ends that all fell at the Waitall's exit would differ by all of it);
#     the polled steps' ends in the trace are the program's to 2 ms; most Waitall steps' two
#     receives end apart;
#   - the halo's classes follow the NICs' load: with the link's stated platform, each flow's
#     nic_busy is the share its busier NIC direction was kept busy, recomputed here by brute force
#     from the flows' bytes and times; a network flow has one of at least 0.75, and on this
#     oversubscribed machine a flow of less (not waiting, not latency-bound) is oversubscribed.
#     The figures of the models over the network flows are printed for the record
#     (docs/results.md).
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
trace halo1m "$ex/halowait" 16 1000000 2000 40000 "$work/halo1m.t"
line_profile "$work/link.prof" 5e-05 4.184e-08 1e-06 1e-09 2.39e7
"$flowcut" analyze --format json --platform "$work/link.prof" -o "$work/halo1m.link.json" "$work/halo1m" ||
    fail "halo1m: analyze with the link's platform"

# The text reports of the small-message examples: the observed-times section names the classes
# that took their time, and the predictions section gives an error figure only over 3 network
# flows or more (the count it states), else says there are too few or none.
for name in wavefront masterworker halo8; do
    "$flowcut" analyze "$work/$name" >"$work/$name.txt" || fail_later "$name: text report"
    sed -n '/^== observed times/,/^== /p' "$work/$name.txt" >"$work/$name.obs"
    grep -Eq '^(late-peer|oversubscribed|no-progress|latency) ' "$work/$name.obs" ||
        fail_later "$name: the text report's observed times name no waiting or oversubscribed class: $(cat "$work/$name.obs")"
    sed -n '/^== predicted versus observed/,/^== [^p]/p' "$work/$name.txt" >"$work/$name.pred"
    if grep -q '%' "$work/$name.pred"; then
        n=$(sed -n 's/^(each figure over the \([0-9]*\) network flows.*/\1/p' "$work/$name.pred")
        [ -n "$n" ] && [ "$n" -ge 3 ] ||
            fail_later "$name: an error figure over too few or other than network flows: $(cat "$work/$name.pred")"
    elif [ -s "$work/$name.pred" ] && ! grep -Eq '^(too few network flows|no network flow)' "$work/$name.pred"; then
        fail_later "$name: no error figure and no reason given: $(cat "$work/$name.pred")"
    elif [ ! -s "$work/$name.pred" ] && ! grep -q '^no platform: ' "$work/$name.obs"; then
        fail_later "$name: no predictions and no reason given: $(cat "$work/$name.obs")"
    fi
    echo "$name: text report: $(grep -E '^(late-peer|oversubscribed|latency|network|no-progress) ' "$work/$name.obs" |
        awk '{ printf "%s%s %s flows (%s)", (NR > 1 ? ", " : ""), $1, $2, $3 }'); $(grep -h -E '^(too few|no network|\(each figure|no platform)' \
        "$work/$name.pred" "$work/$name.obs" | head -n 1 | cut -c 1-100)"
done

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
platform_ok("halo1m", j, 25 / 3)

# Per-request completion against MPI_Test polling. The receives of rank r: tag 0 from its right
# neighbour, tag 1 from its left, one per step in step order (intra- and inter-node alike).
from statistics import median
ends = {}
for f in sorted(j["flows"] + j["intra"], key=lambda f: f["start"]):
    if f["collective"] is None:
        ends.setdefault((f["dst_rank"], f["tag"]), []).append(f["end"])
diff_sum = gap_sum = 0.0
apart = waitall_steps = 0
for r in range(8):
    polls = [l.split() for l in open("%s/halo1m.t.%d" % (work, r))]
    a, b = ends.get((r, 0), []), ends.get((r, 1), [])
    if len(a) != 16 or len(b) != 16 or len(polls) != 8:
        bad.append("halo1m: rank %d: %d and %d receives traced, %d polled steps" % (r, len(a), len(b), len(polls)))
        continue
    gap_poll = [float(p[3]) - float(p[4]) for p in polls]
    gap_traced_poll = [a[s] - b[s] for s in range(1, 16, 2)]
    gap_wait = [a[s] - b[s] for s in range(0, 16, 2)]
    worst = max(abs(x - y) for x, y in zip(gap_poll, gap_traced_poll))
    if worst > 2e-3:
        bad.append("halo1m: rank %d: the polled ends in the trace differ from the program's by %.1f ms" % (r, 1e3 * worst))
    mp, mw = median(gap_poll), median(gap_wait)
    print("halo1m: rank %d: receives end %+.1f ms apart in the Waitall steps, %+.1f ms polled" % (r, 1e3 * mw, 1e3 * mp))
    diff_sum += abs(mw - mp)
    gap_sum += abs(mp)
    apart += sum(abs(g) > 1e-3 for g in gap_wait)
    waitall_steps += len(gap_wait)
print("halo1m: mean |difference| %.1f ms against a mean |gap| of %.1f ms; %d of %d Waitall steps end apart" %
      (1e3 * diff_sum / 8, 1e3 * gap_sum / 8, apart, waitall_steps))
if not diff_sum < 0.5 * gap_sum:
    bad.append("halo1m: the Waitall's per-request ends differ from the polled completions by %.1f ms on average"
               % (1e3 * diff_sum / 8))
if apart < 0.5 * waitall_steps:
    bad.append("halo1m: only %d of %d Waitall steps end their receives apart" % (apart, waitall_steps))

# The classes against the NICs' load, recomputed: the bytes through the flow's source's outgoing
# and destination's incoming direction over its life, every flow at its average rate, over what
# 23.9 MB/s moves in that time (full duplex: the link profile's mixed cuts are 0).
jl = load("halo1m.link")
fl = [f for f in jl["flows"] if f["observed"] > 0]
def through(f, node, side):
    tot = 0.0
    for g in fl:
        if g[side] == node:
            lo, hi = max(f["start"], g["start"]), min(f["end"], g["end"])
            if hi > lo:
                tot += g["bytes"] * (hi - lo) / g["observed"]
    return tot
for f in fl:
    busy = max(through(f, f["src_node"], "src_node"), through(f, f["dst_node"], "dst_node")) / (f["observed"] * 2.39e7)
    ob = f["observation"]
    if abs(busy - ob["nic_busy"]) > 1e-3 * max(1, busy):
        bad.append("halo1m: flow %d: nic_busy %.4f, recomputed %.4f" % (f["id"], ob["nic_busy"], busy))
        break
    if ob["class"] == "network" and busy < 0.75:
        bad.append("halo1m: flow %d is a network flow with its NICs %.0f %% busy" % (f["id"], 100 * busy))
        break
    if ob["class"] not in ("oversubscribed", "late-peer", "no-progress", "latency", "below-wire") and busy < 0.75:
        bad.append("halo1m: flow %d (%s) on idle NICs is not oversubscribed" % (f["id"], ob["class"]))
        break
busy = sorted(f["observation"]["nic_busy"] for f in fl)
print("halo1m, the link's platform: NICs busy %.2f (median) of the flows' time; classes %s" %
      (busy[len(busy) // 2], {k: v["flows"] for k, v in jl["observation"]["classes"].items() if v["flows"]}))
for model, e in (jl["errors"] or {}).items():
    print("halo1m, the link's platform: %s mean |error| %s over %d network flows" %
          (model, "%.1f %%" % e["mean_abs_pct"] if e["mean_abs_pct"] is not None else "-", e["flows"]))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
finish
