#!/usr/bin/env python3
"""tests/analyzer/html-check.py: reads what headless Chromium made of a flowcut HTML report, for
test-report-html.sh.

  html-check.py dom FILE.dom KEY=VALUE...  the page's own check element (#fc-check, which its
                                           script fills once it has drawn everything) must hold
                                           data-KEY="VALUE" for each pair; VALUE may be >=N
  html-check.py text FILE.dom STRING...    each STRING must appear in the page's text (not in its
                                           markup), and no element may carry data-pwned
  html-check.py png FILE.png               the screenshot must not be blank: enough colours and
                                           enough pixels that are not the background
  html-check.py data FILE.html ANALYZE.json TEXT
                                           the data a page embeds: the members of the JSON
                                           document ANALYZE.json, the same, and the hot nodes of
                                           the text report TEXT (--top 0)
  html-check.py chrome FILE.json INFO.json ANALYZE.json MESSAGES [DUMP]
                                           a Chrome trace (Trace Event Format): one slice per MPI
                                           call that `flowcut info --json` counts, MESSAGES flow
                                           arrows each bound inside a slice of its rank, one
                                           conflict slice per run of intervals in which a node's
                                           conflict of one class stays the same in ANALYZE.json,
                                           one process per node, one thread per rank in it; with
                                           DUMP (`flowcut dump`), each rank's slices are its MPI
                                           calls there, with their times and call sites
  html-check.py dom FILE.dom count:TAG.CLASS=N ...
                                           N elements <TAG class="... CLASS ..."> in the DOM
                                           Chromium built (or .CLASS: of any tag), counted here
  html-check.py net NETLOG.json            Chromium's network log (--log-net-log) holds no
                                           request made by a page
  html-check.py errors FILE.dom TEXT MODELS [MODEL=PCT...]
                                           the error statistics beside the scatter plots: those of
                                           the text report TEXT, or none and its sentence when it
                                           gives none; mean |error| worked out by hand
  html-check.py worst FILE.html ANALYZE.json
                                           a sampled page's worst intervals: those the JSON
                                           document's intervals rank worst, their flows listed
  html-check.py collerrors FILE.dom TEXT  the errors over the collective calls, as the text
                                           report's `collective calls` table
  html-check.py remap FILE.dom REMAP.txt   the conflicts each suggestion removes or shrinks and
                                           the judgement, as the text report of `flowcut remap`
  html-check.py waits FILE.dom TEXT RANKS  the wait states of RANKS ranks and the call sites that
                                           waited most, as the text report's
Prints what it checked; exits 1 with the reasons when a check fails."""
import html.parser
import json
import struct
import sys
import zlib


# Elements whose text the checks read, by class: each one's attributes and the pieces of its text
# (one a text node, so that the cells of a table row stay apart).
CAPTURED = ("gone", "shrink", "judgement", "fc-no-errors", "fc-errors", "fc-ws-row", "fc-coll-errors")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.check = None
        self.text = []
        self.pwned = False
        self.skip = 0
        self.elements = {}  # "tag.class" and ".class": how many elements the DOM holds
        self.captured = {c: [] for c in CAPTURED}
        self.open = []  # [tag, depth of that tag, pieces] of the captured elements being read
        self.depth = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "fc-check":
            self.check = a
        if "data-pwned" in a:
            self.pwned = True
        if tag in ("script", "style"):
            self.skip += 1
        for c in (a.get("class") or "").split():
            for key in (tag + "." + c, "." + c):
                self.elements[key] = self.elements.get(key, 0) + 1
            if c in self.captured:
                pieces = []
                self.captured[c].append((a, pieces))
                self.open.append((tag, self.depth.get(tag, 0), pieces))
        self.depth[tag] = self.depth.get(tag, 0) + 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
        self.depth[tag] = self.depth.get(tag, 1) - 1
        self.open = [o for o in self.open if not (o[0] == tag and o[1] == self.depth[tag])]

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)
            for o in self.open:
                o[2].append(data)

    def texts(self, cls):
        """The text of each element of class cls, in document order."""
        return ["".join(p) for a, p in self.captured[cls]]


def load_page(path):
    p = Page()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    return p


def check_dom(path, pairs):
    p = load_page(path)
    bad = []
    if p.check is None:
        return ["no #fc-check element: the page did not load"]
    if p.check.get("data-done") != "1":
        bad.append("the page's script did not finish")
    for pair in pairs:
        key, want = pair.split("=", 1)
        if key.startswith("count:"):
            # Elements in the DOM Chromium built, counted here rather than by the page's script.
            got = str(p.elements.get(key[6:], 0))
        else:
            got = p.check.get("data-" + key)
        if want.startswith(">="):
            ok = got is not None and got.isdigit() and int(got) >= int(want[2:])
        else:
            ok = got == want
        if not ok:
            bad.append("data-%s is %r, expected %s" % (key, got, want))
    if bad and p.check.get("data-errors") not in (None, "0"):
        bad.append("the page's errors: " + "".join(p.text[-1:]))
    return bad


def check_text(path, strings):
    p = load_page(path)
    text = "".join(p.text)
    bad = ["%r does not appear as text" % s for s in strings if s not in text]
    if p.pwned:
        bad.append("a script of the trace's strings ran (data-pwned set)")
    return bad


def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("unexpected PNG colour type %d, depth %d" % (ctype, depth))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_png(path):
    w, h, bpp, rows = png_pixels(path)
    colours, ink, total = set(), 0, 0
    for y in range(0, h, 4):
        r = rows[y]
        for x in range(0, w, 4):
            px = r[x * bpp:x * bpp + 3]
            colours.add(px)
            total += 1
            if px != b"\xff\xff\xff":
                ink += 1
    print("screenshot %dx%d: %d colours, %.1f%% not white" % (w, h, len(colours), 100.0 * ink / total))
    bad = []
    if len(colours) < 16:
        bad.append("the screenshot has %d colours: blank" % len(colours))
    if ink < total // 50:
        bad.append("the screenshot is nearly all white")
    return bad


def inside(slices, ts):
    return any(t0 <= ts <= t1 for t0, t1 in slices)


def check_chrome(path, info_path, analyze_path, messages, dump_path=None):
    with open(path) as f:
        doc = json.load(f)
    with open(info_path) as f:
        info = json.load(f)
    with open(analyze_path) as f:
        an = json.load(f)
    ev = doc["traceEvents"]
    bad = []
    calls = sum(n for k, n in info["events"].items() if k.startswith("MPI_"))
    mpi = [e for e in ev if e["ph"] == "X" and e.get("cat") == "mpi"]
    if len(mpi) != calls:
        bad.append("%d MPI slices, flowcut info counts %d MPI calls" % (len(mpi), calls))
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    if len(starts) != messages or len(ends) != messages or set(starts) != set(ends):
        bad.append("%d flow starts and %d ends, expected %d of each with the same ids" % (len(starts), len(ends), messages))
    by_thread = {}
    for e in mpi:
        by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for e in list(starts.values()) + list(ends.values()):
        if not inside(by_thread.get((e["pid"], e["tid"]), []), e["ts"]):
            bad.append("flow %s (%s) at %s lies in no slice of its rank" % (e["id"], e["ph"], e["ts"]))
    for e in ends.values():
        if e.get("bp") != "e":
            bad.append("flow end %s is not bound to its enclosing slice" % e["id"])
    if any(starts[i]["ts"] > ends[i]["ts"] for i in starts if i in ends):
        bad.append("a flow arrow points back in time")
    # The conflict track merges consecutive intervals in which a node's conflict of one class stays
    # the same (k, or the number of mixed pairs): count those runs in the JSON report's intervals.
    conflicts, open_ = 0, {}
    for iv in an["intervals"]:
        now = {}
        for c in iv["conflicts"]:
            key = (c["node"], c["kind"])
            now[key] = now.get(key, 0) + 1 if c["kind"] == "mixed" else c["k"]
        for key, state in now.items():
            prev = open_.get(key)
            if prev is None or prev[0] != state or prev[1] != iv["start"]:
                conflicts += 1
        open_ = {key: (state, iv["end"]) for key, state in now.items()}
    got = len([e for e in ev if e["ph"] == "X" and e.get("cat") == "conflict"])
    if got != conflicts:
        bad.append("%d conflict slices, the JSON report's intervals make %d runs of conflicts" % (got, conflicts))
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    want = {"node " + n["name"] for n in info["nodes"]} | {"conflicts"}
    if names != want:
        bad.append("processes %s, expected %s" % (sorted(names), sorted(want)))
    # One thread per rank, named after it, in the process of its node.
    pid_of = {e["args"]["name"]: e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    for r in info["rank_info"]:
        key = (pid_of.get("node " + r["node"]), r["rank"])
        if threads.get(key) != "rank %d" % r["rank"]:
            bad.append("rank %d (node %s): thread %s is %r" % (r["rank"], r["node"], key, threads.get(key)))
    if dump_path:
        # Each rank's MPI slices in time order: the MPI calls `flowcut dump` lists for it, with the
        # same start (us), duration and call site.
        import re
        want_calls, got_calls = {}, {}
        for line in open(dump_path):
            m = re.match(r"time=(\S+) rank=(\d+) .*kind=(MPI_\w+)", line)
            if not m:
                continue
            site = re.search(r" site=(\S+)", line)
            dur = re.search(r" dur=(\S+)", line)
            want_calls.setdefault(int(m.group(2)), []).append(
                (m.group(3), round(float(m.group(1)) * 1e6, 3), round(float(dur.group(1)) * 1e6, 3) if dur else 0.0,
                 site.group(1) if site else None))
        tid_rank = {e["tid"] for e in mpi}
        for e in sorted(mpi, key=lambda e: e["ts"]):
            got_calls.setdefault(e["tid"], []).append((e["name"], round(e["ts"], 3), round(e["dur"], 3), e["args"].get("site")))
        for r in sorted(set(want_calls) | tid_rank):
            w, g = want_calls.get(r, []), got_calls.get(r, [])
            if sorted(w, key=lambda x: x[1]) != g:
                diff = [(a, b) for a, b in zip(sorted(w, key=lambda x: x[1]), g) if a != b][:3]
                bad.append("rank %d: %d MPI slices, flowcut dump lists %d calls; first differences %s" % (r, len(g), len(w), diff))
    print("%s: %d MPI slices, %d flow arrows, %d conflict slices, %d processes" % (path, len(mpi), len(starts), got, len(names)))
    return bad


def page_data(path):
    """The JSON document embedded in a page: the text of its script element fc-data."""
    import re
    with open(path, encoding="utf-8") as f:
        m = re.search(r'<script type="application/json" id="fc-data">(.*?)</script>', f.read(), re.S)
    return json.loads(m.group(1))


def check_data(path, json_path, text_path):
    """The page's data against the JSON document (the same members, intervals left out) and its
    hot nodes against the text report's, which the summary computes by another way."""
    d = page_data(path)
    with open(json_path) as f:
        doc = json.load(f)
    bad = []
    for k in doc:
        if k == "intervals":
            continue
        if k not in d:
            bad.append("the page's data has no member %s" % k)
        elif d[k] != doc[k]:
            bad.append("the page's %s differs from the JSON document's" % k)
    if "intervals" in d:
        bad.append("the page's data holds the intervals")
    names = [n["name"] for n in doc["nodes"]]
    hot = {names[h["node"]]: h for h in d["html"]["hot_nodes"]}
    section = False
    rows = 0
    for line in open(text_path):
        if line.startswith("== hot nodes"):
            section = True
            continue
        if section and line.startswith("=="):
            break
        f = line.split()
        if not section or len(f) != 5 or f[0] == "node":
            continue
        h = hot.get(f[0])
        want = [float(x) for x in f[2:]]
        got = [h["outgoing"], h["incoming"], h["mixed-in"] + h["mixed-out"]] if h else None
        rows += 1
        if got is None or any(abs(a - b) > 2e-9 for a, b in zip(got, want)):
            bad.append("hot node %s: page %s, text report %s" % (f[0], got, want))
    print("%s: data as the JSON document; %d hot nodes as the text report" % (path, rows))
    return bad


def check_net(path):
    """The requests a page made, from Chromium's network log (--log-net-log): every request the
    network stack started for a page has the page as its initiator; the browser's own (updates,
    time, accounts, which the host resolver rules make fail) have none ("not an origin")."""
    with open(path) as f:
        log = json.load(f)
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    bad, own = [], 0
    for e in log["events"]:
        p = e.get("params") or {}
        if types.get(e["type"]) != "URL_REQUEST_START_JOB" or "url" not in p:
            continue
        if p.get("initiator", "not an origin") == "not an origin":
            own += 1
        else:
            bad.append("the page requested %s (initiator %s)" % (p["url"], p.get("initiator")))
    print("%s: %d requests from the page, %d of the browser's own" % (path, len(bad), own))
    return bad


def text_section(path, title):
    """The lines of the text report's section `== title ... ==`."""
    out, inside = [], False
    for line in open(path):
        if line.startswith("== "):
            inside = line.startswith("== " + title)
            continue
        if inside:
            out.append(line.rstrip("\n"))
    return out


def seconds(text):
    """A time as the page prints it (fmtS): "12.3 us", "1.50 ms", "0 s", "-"."""
    if text == "-":
        return None
    v, unit = text.split()
    return float(v) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def check_errors(path, text_path, models, hand):
    """The error statistics beside the scatter plots against the text report's `predicted versus
    observed`: none at all, and the text report's sentence, where it gives no figure (fewer than 3
    network flows); else one table per model with the text report's figures, and the mean |error|
    of hand=MODEL=PCT pairs worked out by hand."""
    p = load_page(path)
    sec = text_section(text_path, "predicted versus observed")
    said = [l for l in sec if "to judge the models on: no error figure" in l]
    tables = p.captured["fc-errors"]
    bad = []
    if said:
        if tables:
            bad.append("the text report gives no error figure (%s), the page gives %d tables" % (said[0], len(tables)))
        if p.texts("fc-no-errors") != said:
            bad.append("the page says %r, the text report %r" % (p.texts("fc-no-errors"), said))
        if hand:
            bad.append("hand-worked errors given, but the text report gives no figure")
        print("%s: no error figure, as the text report: %s" % (path, said[0]))
        return bad
    if p.texts("fc-no-errors"):
        bad.append("the page says %r, the text report gives figures" % p.texts("fc-no-errors"))
    if len(tables) != models:
        bad.append("%d tables of error statistics, expected one for each of %d models" % (len(tables), models))
    # The table of the flows (the one under "model  flows"), not the collective calls' below it.
    text_mean, table = {}, False
    for l in sec:
        f = l.split()
        if f[:2] == ["model", "flows"]:
            table = True
        elif table and len(f) >= 3 and f[2].endswith("%") and f[1].isdigit():
            text_mean[f[0]] = float(f[2][:-1])
        elif table:
            break
    page_mean = {}
    for a, pieces in tables:
        cells = [x for x in pieces]
        if "mean |error|" in cells:
            page_mean[a.get("data-model")] = float(cells[cells.index("mean |error|") + 1].rstrip("%"))
    if page_mean != text_mean:
        bad.append("mean |error| per model: page %s, text report %s" % (page_mean, text_mean))
    for h in hand:
        m, want = h.split("=")
        if m not in page_mean or abs(page_mean[m] - float(want)) > 0.05:
            bad.append("%s: mean |error| %s on the page, %s by hand" % (m, page_mean.get(m), want))
    print("%s: %d tables of error statistics, mean |error| %s" % (path, len(tables), page_mean))
    return bad


def check_worst(path, json_path):
    """A sampled page's worst intervals: the 12 of the JSON document's intervals with the largest
    conflict degree, then the most flows, then the longest (ranked here from the intervals), each
    with its span and flow count, and every flow active in them listed in the page's flows."""
    d = page_data(path)
    with open(json_path) as f:
        ivs = json.load(f)["intervals"]
    bad = []
    key = lambda iv: (max([c["k"] for c in iv["conflicts"]] or [0]), len(iv["flows"]), iv["end"] - iv["start"])
    want = sorted((key(iv) for iv in ivs if key(iv)[0] >= 2), reverse=True)[:12]
    worst = d["html"]["worst"]
    got = sorted((key(ivs[w["index"]]) for w in worst), reverse=True)
    if got != want:
        bad.append("the worst intervals rank as %s, the JSON document's as %s" % (got[:3], want[:3]))
    listed = {f["id"] for f in d["flows"]}
    for w in worst:
        iv = ivs[w["index"]]
        if (w["start"], w["end"], w["flows"]) != (iv["start"], iv["end"], len(iv["flows"])):
            bad.append("worst interval %d: page %s, JSON %s" % (w["index"], w, (iv["start"], iv["end"], len(iv["flows"]))))
        missing = [i for i in iv["flows"] if i not in listed]
        if missing:
            bad.append("worst interval %d: flows %s not on the page" % (w["index"], missing[:5]))
    print("%s: %d worst intervals, their %d flows on the page" % (path, len(worst), sum(w["flows"] for w in worst)))
    return bad


def check_coll_errors(path, text_path):
    """The collective calls' errors: the rows of the text report's `collective calls` table."""
    p = load_page(path)
    want, table = [], False
    for l in text_section(text_path, "predicted versus observed"):
        f = l.split()
        if l.startswith("collective calls ("):
            table = True
        elif table and f[:2] == ["model", "calls"]:
            continue
        elif table and len(f) == 6 and f[1].isdigit():
            want.append(f)
        elif table:
            break
    got = [x for a, x in p.captured["fc-coll-errors"]]
    bad = [] if got == want else ["collective calls: page %s, text report %s" % (got, want)]
    print("%s: %d models' errors over the collective calls" % (path, len(got)))
    return bad


def check_remap(path, remap_text):
    """The placements' conflicts that disappear and shrink, and the judgement, against the text
    report of `flowcut remap` on the same trace and platform (the page computes them from the JSON
    document in its own script)."""
    p = load_page(path)
    want = {}
    sug = None
    judged = []
    for line in open(remap_text):
        line = line.rstrip("\n")
        if line.startswith("suggestion "):
            sug = line.split()[1].rstrip(":")
        elif sug is not None and (line.startswith("  disappear: ") or line.startswith("  shrink: ")):
            what, _, rest = line.strip().partition(": ")
            want[(what, sug)] = rest
        elif line.startswith("judgement: "):
            judged.append(line)
    bad = []
    shown = 0
    for cls in ("gone", "shrink"):
        what = "disappear" if cls == "gone" else "shrink"
        for a, pieces in p.captured[cls]:
            of = a.get("data-of")
            if of == "given":
                continue
            shown += 1
            got = "".join(pieces).partition(": ")[2]
            if want.get((what, of)) != got:
                bad.append("suggestion %s %s: page %r, text report %r" % (of, what, got, want.get((what, of))))
    n = len({k[1] for k in want})
    if shown != 2 * min(n, 3):
        bad.append("%d disappear/shrink lines on the page, expected 2 for each of %d suggestions" % (shown, min(n, 3)))
    import re
    nums = lambda ls: [float(x) for l in ls for x in re.findall(r"[-+]?\d+\.\d+|\d+", l)]
    if nums(p.texts("judgement")) != nums(judged):
        bad.append("judgement: page %r, text report %r" % (p.texts("judgement"), judged))
    print("%s: %d suggestions, disappear/shrink and judgement as the text report" % (path, n))
    return bad


def check_waits(path, text_path, ranks):
    """The wait states: one bar pair per rank, and the call sites that waited most as the text
    report's `top call sites` ranks them, with their times to the page's three digits."""
    p = load_page(path)
    bad = []
    got_ranks = p.check.get("data-wait-ranks") if p.check else None
    if got_ranks != str(ranks):
        bad.append("%s ranks in the wait states, expected %d" % (got_ranks, ranks))
    rows, inside = [], False
    for l in text_section(text_path, "wait states"):
        if l.strip() == "top call sites":
            inside = True
            continue
        f = l.split(None, 5)
        if inside and len(f) >= 6 and f[0].isdigit():
            rows.append((int(f[0]), f[5], float(f[1]), float(f[3])))
    page = []
    for a, pieces in p.captured["fc-ws-row"]:
        rank, site, ls, lr = pieces
        page.append((int(rank), site, seconds(ls), seconds(lr)))
    if len(page) != min(len(rows), 15):
        bad.append("%d call sites on the page, the text report has %d" % (len(page), len(rows)))
    for (r, s, ls, lr), (pr, ps, pls, plr) in zip(rows, page):
        near = lambda x, y: y is not None and abs(x - y) <= 0.006 * abs(x) + 1e-9
        if r != pr or s != ps or not near(ls, pls) or not near(lr, plr):
            bad.append("call site: page %s, text report %s" % ((pr, ps, pls, plr), (r, s, ls, lr)))
    print("%s: %s ranks, %d call sites as the text report" % (path, got_ranks, len(page)))
    return bad


def main():
    what, path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if what == "dom":
        bad = check_dom(path, rest)
    elif what == "text":
        bad = check_text(path, rest)
    elif what == "png":
        bad = check_png(path)
    elif what == "data":
        bad = check_data(path, rest[0], rest[1])
    elif what == "net":
        bad = check_net(path)
    elif what == "errors":
        bad = check_errors(path, rest[0], int(rest[1]), rest[2:])
    elif what == "worst":
        bad = check_worst(path, rest[0])
    elif what == "collerrors":
        bad = check_coll_errors(path, rest[0])
    elif what == "remap":
        bad = check_remap(path, rest[0])
    elif what == "waits":
        bad = check_waits(path, rest[0], int(rest[1]))
    elif what == "chrome":
        bad = check_chrome(path, rest[0], rest[1], int(rest[2]), rest[3] if len(rest) > 3 else None)
    else:
        sys.exit("html-check.py: unknown check " + what)
    for b in bad:
        print("%s: %s" % (path, b), file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
