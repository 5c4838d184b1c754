#!/bin/sh
# tests/analyzer/test-report-members.sh: the JSON document of flowcut analyze holds every member
# docs/json-schema.md documents, whatever the options, each of its documented type; a member not
# computed is null, never left out. The members and types are read from the document's tables
# (the top level, in its order; a flow, an intra-node message, a flow's observation, the
# observation, the clock), not from the code, on three runs of one trace (gen-trace, two ranks on
# two nodes, one eager and one rendezvous flow):
#   none      --model none: the streamed document, no predictions, no observation;
#   platform  --platform (a stated line): predictions, observation and wire times; each model's
#             errors with the members their paragraph lists, withheld (too few network flows);
#   declined  no --platform on a trace of too few flows to self-calibrate: no predictions, an
#             observation without a platform.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$PYTHON3" "python3 is needed to parse the JSON"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"
schema=$abs_top_srcdir/docs/json-schema.md
[ -r "$schema" ] || fail "$schema is missing"

mkdir -p "$work/t"
"$gen_trace" "$work/t" <<'EOF' || fail "gen-trace"
ranks 2
ev 0 MPI_Send 100 110 1 0 1000 0
ev 1 MPI_Recv 600 610 0 0 1000 0
ev 0 MPI_Send 1000 3000 1 1 100000 0
ev 1 MPI_Recv 900 3000 0 1 100000 0
EOF
line_profile "$work/line.prof" 1e-05 1e-08 1e-06 1e-09 1e8
"$flowcut" analyze --format json --model none -o "$work/none.json" "$work/t" || fail_later "none: exit $?"
"$flowcut" analyze --format json --platform "$work/line.prof" -o "$work/platform.json" "$work/t" ||
    fail_later "platform: exit $?"
"$flowcut" analyze --format json -o "$work/declined.json" "$work/t" || fail_later "declined: exit $?"

"$PYTHON3" - "$schema" "$work" <<'EOF' || fail_later "the documented members"
import json, re, sys
doc = open(sys.argv[1]).read().split("\n")

def table(after):
    """The rows of the first table after the line that starts with `after`: [(names, type, meaning)]."""
    i = next(n for n, l in enumerate(doc) if l.startswith(after))
    while not doc[i].startswith("| member"):
        i += 1
    rows = []
    for l in doc[i + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split(" | ")]
        rows.append((re.findall(r"`([a-z_0-9]+)`", cells[0]), cells[1], cells[2]))
    return rows

TYPES = {"int": int, "number": (int, float), "string": str, "bool": bool, "array": list, "object": dict}
def types_of(t):
    ok = tuple(TYPES[w] for w in re.findall(r"[a-z]+", t) if w in TYPES)
    return ok, "null" in t

bad = []
def check(where, obj, rows, ordered=False, skip=()):
    names = [n for ns, _, m in rows for n in ns if not any(s in m for s in skip)]
    if ordered and list(obj) != names:
        bad.append("%s: members %s, documented %s" % (where, list(obj), names))
    elif set(obj) != set(names):
        bad.append("%s: undocumented %s, missing %s" % (where, sorted(set(obj) - set(names)), sorted(set(names) - set(obj))))
    for ns, t, m in rows:
        ok, null = types_of(t)
        for n in ns:
            if n not in obj:
                continue
            v = obj[n]
            if v is None:
                if not null:
                    bad.append("%s.%s: null, documented %s" % (where, n, t))
            elif isinstance(v, bool) and bool not in ok:
                bad.append("%s.%s: %r, documented %s" % (where, n, v, t))
            elif not isinstance(v, ok):
                bad.append("%s.%s: %r, documented %s" % (where, n, v, t))

top = table("One object, its members")
flow = table("**A flow**")
flow_obs = table("A flow's `observation`")
obs = table("**`observation`**")
clock = table("**`clock`**")
seen = {}
for run in ("none", "platform", "declined"):
    j = json.load(open("%s/%s.json" % (sys.argv[2], run)))
    check(run, j, top, ordered=True)
    check(run + ".clock", j["clock"], clock)
    for f in j["flows"]:
        check("%s.flows[%d]" % (run, f["id"]), f, flow)
        if f["observation"] is not None:
            check("%s.flows[%d].observation" % (run, f["id"]), f["observation"], flow_obs)
    for f in j["intra"]:
        check("%s.intra[%d]" % (run, f["id"]), f, flow, skip=("(flows only)",))
    if j["observation"] is not None:
        check(run + ".observation", j["observation"], obs)
    seen[run] = j
# What each run computed: null where the run has no such thing, a value where it has.
n, p, d = seen["none"], seen["platform"], seen["declined"]
if len(p["flows"]) != 2:
    bad.append("platform: %d flows, 2 expected" % len(p["flows"]))
for k in ("platform", "errors", "observation", "errors_collective"):
    if n[k] is not None:
        bad.append("none: %s is not null" % k)
if any(f["predicted"] is not None or f["observation"] is not None for f in n["flows"]):
    bad.append("none: a flow has predictions or an observation")
if any(v["predicted_error_pct"] is not None for v in n["intervals"]):
    bad.append("none: an interval has errors")
if any(n["clock"][k] is not None for k in ("contradicting_flows", "below_wire")):
    bad.append("none: the observation's clock checks are not null")
for k in ("platform", "errors", "observation"):
    if p[k] is None:
        bad.append("platform: %s is null" % k)
if p["clock"]["below_wire"] != 0 or p["clock"]["contradicting_flows"] != 0:
    bad.append("platform: clock checks %r" % p["clock"])
if any(f["observation"]["nic_busy"] is None for f in p["flows"]):
    bad.append("platform: a flow without its busy share")
if d["platform"] is not None or d["observation"] is None or not d["observation"]["platform_note"]:
    bad.append("declined: platform %r, observation %r" % (d["platform"], d["observation"]))
if d["clock"]["below_wire"] is not None or any(f["observation"]["nic_busy"] is not None for f in d["flows"]):
    bad.append("declined: wire figures without a platform")
# Each model's errors: the members the paragraph on `errors` lists in its {...}, all present; the
# platform run has fewer than 3 network flows, so every figure is null, the flows compared are
# counted and the reason is given, as the text report withholds them.
para = "\n".join(doc)
para = para[para.index("**`errors`**"):]
names = re.findall(r'"([a-z_0-9]+)"', para[para.index("{"):para.index("}") + 1])
judged = sum(f["observation"]["judged"] for f in p["flows"])
for model, e in (p["errors"] or {}).items():
    if list(e) != names:
        bad.append("platform.errors.%s: members %s, documented %s" % (model, list(e), names))
        continue
    if judged >= 3 or e["flows"] != judged or not isinstance(e["withheld"], str) or \
            any(e[k] is not None for k in names if k not in ("flows", "withheld")):
        bad.append("platform.errors.%s: %r over %d network flows" % (model, e, judged))
if not p["errors"]:
    bad.append("platform: no model's errors")
for b in bad:
    print("FAIL: " + b)
print("%d top-level, %d flow, %d clock members checked on 3 runs" % (len(top), len(flow), len(clock)))
sys.exit(1 if bad else 0)
EOF
finish
