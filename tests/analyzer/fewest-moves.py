#!/usr/bin/env python3
"""fewest-moves.py JSON PLACED: checks that the placement a launcher file expresses (PLACED: the node
of each rank, as launcher-check.py read it) is the one the judgement of `flowcut remap` asks for:
of the suggestions predicted within the replay's own error of the best (the JSON's suggestions and
judgement.uncertainty_pct), and of every renaming of each one's nodes, one that moves fewest ranks
away from their traced node (current.rank_to_node), and equal to one of those suggestions up to a
renaming of its nodes. The fewest moves are found here by trying every injective renaming of the
nodes to the next allocation's (the trace's first `nodes` nodes, then spare ones;
itertools.permutations), independently of flowcut's own assignment.

Prints `equivalent E, fewest moves M` and exits 0, or prints what is wrong and exits 1."""
import itertools
import json
import sys

d = json.load(open(sys.argv[1]))
placed = json.load(open(sys.argv[2]))
now = d["current"]["rank_to_node"]
sugg = d["suggestions"]
unc = d["judgement"]["uncertainty_pct"]
best = sugg[0]["predicted_s"]
# The JSON rounds uncertainty_pct to 0.01 %: a suggestion within that rounding of the limit is
# neither required nor excluded.
equiv = [s for s in sugg if 100 * (s["predicted_s"] - best) / best <= unc + 0.005]
border = [s for s in sugg if abs(100 * (s["predicted_s"] - best) / best - unc) <= 0.005]


def groups(pl):
    g = {}
    for r, n in enumerate(pl):
        g.setdefault(n, []).append(r)
    return sorted(g.values())


# The next allocation's nodes: the first `nodes` of the trace's (in order of first appearance by
# rank), then spare ones.
trace_nodes = list(dict.fromkeys(now))
names = (trace_nodes + ["spare-%d" % i for i in range(1, d["nodes"] + 1)])[:d["nodes"]]


def fewest(pl):
    """The fewest ranks moved away from `now` over every renaming of pl's nodes to the allocation's."""
    mine = sorted(set(pl))
    return min(sum(1 for r, n in enumerate(pl) if ren[mine.index(n)] != now[r])
               for ren in itertools.permutations(names, len(mine)))


moves = [fewest(s["rank_to_node"]) for s in equiv]
m = min(moves)
bad = []
mine = sum(1 for r in range(len(now)) if placed[r] != now[r])
if mine != m and not (border and mine == min(moves + [fewest(s["rank_to_node"]) for s in border])):
    bad.append("the file moves %d ranks; %d suggestions are equivalent and the fewest moves among them is %d"
               % (mine, len(equiv), m))
if groups(placed) not in [groups(s["rank_to_node"]) for s in equiv + border]:
    bad.append("the file's ranks share nodes as %s, as no equivalent suggestion does" % groups(placed))
for b in bad:
    print(b)
if not bad:
    print("equivalent %d, fewest moves %d" % (len(equiv), m))
sys.exit(1 if bad else 0)
