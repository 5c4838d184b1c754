#!/usr/bin/env python3
"""models-residuals.py: where the models' errors on the packed random pattern come from, read from
the runs a `models-bench.sh -o DIR` keeps (DIR/DUPLEX/random30, random30-2, ...: the program's
print-out `out` and flowcut analyze's `platform.json`). Prints, for one duplex mode:

  - the floor: each communication's median over the repetitions of one run, taken as the
    prediction of another run's (mean absolute and global error, every pair of runs), and the
    error a model that knew each communication's expected median would still make;
  - the messages of one pair of ranks in flight together: how often the later one ended first,
    together with the earlier one (within 20 ms) or after it;
  - per node and NIC direction, the bytes of a repetition and the time from its first start until
    the last of its flows through that direction ended, observed and predicted by MODEL (mean over
    the repetitions but the first), with the rates they amount to.

Usage: models-residuals.py [--model MODEL] DIR/DUPLEX
"""
import collections
import itertools
import json
import os
import re
import sys

args = sys.argv[1:]
model = "fairshare"
if len(args) == 3 and args[0] == "--model":
    model, args = args[1], args[2:]
if len(args) != 1:
    sys.exit(__doc__.split("\n\n")[-1].strip())
top = args[0]
runs = sorted(d for d in os.listdir(top) if re.fullmatch(r"random30(-\d+)?", d))
if not runs:
    sys.exit("models-residuals: no random30 runs in %s" % top)


def medians(path):
    out = {}
    for line in open(path):
        m = re.match(r"comm (\d+) .*median ([0-9.]+)", line)
        if m:
            out[int(m.group(1))] = float(m.group(2))
    return out


med = [medians(os.path.join(top, r, "out")) for r in runs]
print("the floor: one run's medians as the prediction of another's")
for a, b in itertools.permutations(range(len(runs)), 2):
    if a < b:
        errs = [abs(med[a][k] - med[b][k]) / med[b][k] * 100 for k in med[b]]
        so, sp = sum(med[b].values()), sum(med[a][k] for k in med[b])
        print("  %s as %s: mean %.1f %%, global %.1f %%" % (runs[a], runs[b], sum(errs) / len(errs),
                                                            abs(sp - so) / so * 100))
# A model that predicted each communication's expected median exactly would still err by each run's
# own deviation from it. With n runs, the mean of the other n - 1 runs' medians predicting the
# left-out run errs by that deviation and the mean's own, whose variances add: 1 + 1 / (n - 1)
# times a run's. Dividing its error by the square root of that estimates the exact model's error.
if len(runs) >= 3:
    loo = []
    for j in range(len(runs)):
        rest = [i for i in range(len(runs)) if i != j]
        errs = [abs(sum(med[i][k] for i in rest) / len(rest) - med[j][k]) / med[j][k] * 100 for k in med[j]]
        loo.append(sum(errs) / len(errs))
    scale = (1 + 1 / (len(runs) - 1)) ** 0.5
    print("  the other runs' mean as each run: mean %s %%; an exact model of the expected medians: "
          "about %.1f %% (%.1f-%.1f)" % (", ".join("%.1f" % e for e in loo), sum(loo) / len(loo) / scale,
                                         min(loo) / scale, max(loo) / scale))

print("messages of one pair of ranks in flight together (later against earlier):")
drains = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
for r in runs:
    rep = json.load(open(os.path.join(top, r, "platform.json")))
    flows = sorted((f for f in rep["flows"] if f.get("collective") is None), key=lambda f: f["start"])
    pairs = collections.defaultdict(list)
    for f in flows:
        pairs[(f["src_rank"], f["dst_rank"])].append(f)
    first = together = after = 0
    for v in pairs.values():
        for a, b in zip(v, v[1:]):
            if b["start"] < a["end"]:
                d = b["end"] - a["end"]
                first += d < -0.02
                together += abs(d) <= 0.02
                after += d > 0.02
    print("  %s: %d cases: ended first %d, together %d, after %d" % (r, first + together + after, first,
                                                                       together, after))
    # Repetitions: the program starts one every second or so; a gap of 0.3 s between two starts
    # separates them.
    reps, cur = [], []
    for f in flows:
        if cur and f["start"] - cur[-1]["start"] > 0.3:
            reps.append(cur)
            cur = []
        cur.append(f)
    reps.append(cur)
    for rp in reps[1:]:
        t0 = min(f["start"] for f in rp)
        for side, node in {(s, f[s + "_node"]) for f in rp for s in ("src", "dst")}:
            sel = [f for f in rp if f[side + "_node"] == node]
            dr = drains[(node, "out" if side == "src" else "in")]
            dr[0] += sum(f["bytes"] for f in sel) / 1e6
            dr[1] += max(f["end"] for f in sel) - t0
            dr[2] += max(f["start"] + f["predicted"][model] for f in sel) - t0
            dr[3] += 1
print("per NIC direction, all runs: MB of a repetition, until its last flow ended: observed, %s" % model)
for (node, d), (mb, eo, ep, n) in sorted(drains.items()):
    print("  %-8s %-3s %5.1f MB  observed %.3f s (%4.1f MB/s)  predicted %.3f s (%4.1f MB/s)" % (
        node, d, mb / n, eo / n, mb / eo, ep / n, mb / ep))
