#!/bin/sh
# tests/analyzer/test-report-html.sh: the HTML report (`flowcut analyze --format html`, `flowcut
# remap --format html`) opened in headless Chromium, offline. Every page must load with Chromium's
# console silent and no request of the page in Chromium's network log (a control page shows that
# both checks catch a page that logs and fetches), and its script must report no error and no
# request refused by the page's policy. The page's script writes what it drew into its #fc-check
# element; the marks are also counted as elements of the DOM Chromium built (--dump-dom). The
# expected numbers come from the traces' specs:
#   halo   golden/halo.spec: 6 inter-node flows (1>2 and 3>0 of the ring, then 0>2, 1>3, 2>0, 3>1)
#   chain  golden/chain.spec: 9 inter-node flows (five of section 5.2, three into node1, the
#          persistent send; the last send is unmatched)
#   random bench-gen-trace -n 3000 -r 8 -N 4 -s 7: its sends between ranks of different nodes, as
#          `flowcut dump` and `flowcut info --json` list them
#   a2a    one MPI_Alltoall of 1 MiB blocks over 8 ranks on 4 nodes: 48 inter-node flows, each
#          marked as a collective's
# and the scatter plots hold one point per flow for each model the CSV report has a column of; with
# a row per link (the page opened at #links), the timeline has one row per pair of nodes the
# traces' inter-node sends go between. The data the page embeds must be the JSON document's
# (intervals left out), and its hot nodes the text report's, which the summary sums by another way.
# The error statistics, the collective calls' errors, the wait states (per rank, and the call sites
# that waited most) and the placements (the conflicts each suggestion removes or shrinks, the
# judgement) must be those of the text reports, which compute them in C; with fewer than 3 network
# flows (few2) the page gives no error figure, with 3 (few3) the mean |error| worked out by hand,
# and the halo's first suggestion removes its outgoing conflict, as worked out by hand. A trace
# whose node names, host name, program name, arguments and call-site module hold <, >, quotes, &,
# </script> and <!-- must show them as text, with no script of theirs run. A long trace (over the
# page's limit of flows drawn one by one) must draw its bins and its worst intervals without an
# error. Printed to PDF, the page keeps every section (when pdftotext is there). Then a screenshot
# must not be blank. The options --remap and --format are checked first, without a browser.
# Skips (77) when Chromium is not installed or cannot start here, unless FLOWCUT_REQUIRE_CHROMIUM=1.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
gen_trace=$abs_builddir/gen-trace
bench_gen_trace=$abs_builddir/bench-gen-trace
check="$PYTHON3 $srcdir/html-check.py"
for p in "$flowcut" "$gen_trace" "$bench_gen_trace"; do
    [ -x "$p" ] || fail "$p is not built"
done
need_command "$PYTHON3"
chromium=
for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then
        chromium=$c
        break
    fi
done
cd "$work" || fail "cd $work"

# The options, which need no browser: --remap goes with --format html, and its file must exist.
mkdir opt || fail "mkdir"
"$gen_trace" opt <"$srcdir/golden/halo.spec" || fail "gen-trace opt"
"$flowcut" analyze --remap /dev/null opt >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "--remap without --format html does not exit 2"
"$flowcut" analyze --format html --remap "$work/no-such-file" -o opt.html opt 2>opt.err
[ $? -eq 1 ] && grep -q "no-such-file" opt.err || fail_later "a missing --remap file: $(cat opt.err)"
"$flowcut" analyze --format htm opt >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "an unknown format does not exit 2"

# FLOWCUT_REQUIRE_CHROMIUM=1 (for CI, which installs it) turns the skips below into failures.
no_browser() {
    [ "${FLOWCUT_REQUIRE_CHROMIUM-}" = 1 ] && fail "$1 (FLOWCUT_REQUIRE_CHROMIUM=1)"
    skip "$1"
}
[ -n "$chromium" ] || no_browser "chromium is not installed (Debian package chromium)"

# browse ARGS... PAGE: headless Chromium with a fresh profile, nothing that talks to the network
# on its own, and every host name unresolvable, so that a page that tried to fetch anything could
# not. --virtual-time-budget lets the page finish its script before the DOM is dumped. Its log
# goes to standard error. Then, whatever the page's script and policy say of themselves: Chromium's
# console (every message of a page's script, and every uncaught error, is a CONSOLE line of its
# log) must be silent, and its network log must hold no request made by the page (html-check.py
# net). browse_fail says why when either is not so, and browse returns 3 then.
browse_n=0
browse() {
    browse_n=$((browse_n + 1))
    browse_log=$work/browse$browse_n.log browse_net=$work/net$browse_n.json browse_fail=
    timeout "$FC_TEST_TIMEOUT" "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
        --host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir="$work/profile$browse_n" \
        --log-net-log="$browse_net" --enable-logging=stderr --v=0 --virtual-time-budget=10000 "$@" 2>"$browse_log"
    rc=$?
    cat "$browse_log" >&2
    [ $rc -eq 0 ] || return $rc
    if grep ':CONSOLE' "$browse_log" >"$browse_log.console"; then
        browse_fail="console: $(cat "$browse_log.console")"
    fi
    if ! $check net "$browse_net" >"$browse_net.out" 2>&1; then
        browse_fail="$browse_fail network: $(cat "$browse_net.out")"
    fi
    [ -z "$browse_fail" ] || return 3
}

# show NAME [#FRAGMENT]: NAME.html loaded, its DOM in NAME.dom; fails (later) when Chromium does
# not run or the page writes to the console or asks for anything over the network.
show() {
    browse --dump-dom "file://$work/$1.html${2-}" >"$1${2:+.links}.dom" 2>"$1${2:+.links}.log" ||
        fail_later "chromium on $1.html${2-}: ${browse_fail:-$(tail -n 3 "$1${2:+.links}.log")}"
}

# Chromium must start here at all: in a container without the kernel features it needs it fails
# before loading any page, which is a reason to skip, not a failure of the report.
printf '<!DOCTYPE html><title>t</title><p id="x">ok</p>\n' >probe.html
if ! browse --dump-dom "file://$work/probe.html" >probe.dom 2>probe.log || ! grep -q '"x">ok' probe.dom; then
    no_browser "chromium cannot run here: $(tail -n 3 probe.log | tr '\n' ' ')"
fi
# The two checks of browse must see what they look for: a page that writes to the console and
# fetches an image is refused.
printf '<!DOCTYPE html><title>t</title><script>console.error("x")</script><img src="http://flowcut.invalid/x.png">\n' >control.html
browse --dump-dom "file://$work/control.html" >control.dom 2>control.log
case $browse_fail in
*console:*network:*flowcut.invalid*) ;;
*) fail "the console and network checks miss a page that writes to the console and fetches an image: ${browse_fail:-nothing found}" ;;
esac

mkdir halo chain hostile big || fail "mkdir"
"$gen_trace" halo <"$srcdir/golden/halo.spec" || fail "gen-trace halo"
"$gen_trace" chain <"$srcdir/golden/chain.spec" || fail "gen-trace chain"
"$bench_gen_trace" -n 3000 -r 8 -N 4 -s 7 random >random.gen.txt 2>&1 || fail "bench-gen-trace: $(cat random.gen.txt)"
"$bench_gen_trace" -n 40000 -r 16 -N 8 -s 3 big >big.gen.txt 2>&1 || fail "bench-gen-trace big: $(cat big.gen.txt)"
cat >hostile.spec <<'EOF'
ranks 2
node 0 </script><script>document.body.dataset.pwned=1</script>
node 1 b"'<img/src=x/onerror=document.body.dataset.pwned=2>
program /opt/<app>/"it's"&amp;</script><script>document.body.dataset.pwned=3</script>
arg --in=<svg/onload=document.body.dataset.pwned=4>
arg '"</script><!--
host 1 h<o>st"'
module /nonexistent/lib<b>"'&x.so
site 0 1 4c0
site 1 2 5d0
ev 0 MPI_Send 10 20 1 1 1000 0 site=1
ev 1 MPI_Recv 5 30 0 1 1000 0 status site=2
EOF
"$gen_trace" hostile <hostile.spec || fail "gen-trace hostile"

# inter_sends TRACE [links]: the sends of TRACE between ranks of different nodes, from the dump's
# events and the ranks' nodes in `flowcut info --json`: the flows the matching should find; with
# "links", the number of (sending node, receiving node) pairs among them instead.
inter_sends() {
    "$flowcut" info --json "$1" >"$1.info.json" || fail "flowcut info $1"
    "$flowcut" dump "$1" >"$1.dump" || fail "flowcut dump $1"
    "$PYTHON3" - "$1.info.json" "$1.dump" "${2-}" <<'EOF'
import json, re, sys
info = json.load(open(sys.argv[1]))
node = {r["rank"]: r["node"] for r in info["rank_info"]}
n, links = 0, set()
for line in open(sys.argv[2]):
    m = re.search(r"rank=(\d+) .*kind=MPI_(Send|Isend|Ssend|Issend|Bsend|Ibsend|Rsend|Irsend) .*peer=(\d+)", line)
    if m and node[int(m.group(1))] != node[int(m.group(3))]:
        n += 1
        links.add((node[int(m.group(1))], node[int(m.group(3))]))
print(len(links) if sys.argv[3] == "links" else n)
EOF
}

# models TRACE: the models the CSV report has a predicted_ column of.
models() {
    "$flowcut" analyze --format csv "$1" | head -n 1 | tr ',' '\n' | grep -c '^predicted_'
}

# page NAME TRACE EXPECTED_FLOWS [ANALYZE OPTIONS]: the report of TRACE, with its remap, loaded;
# NAME.remap.txt is the text report of the same search, which the page's placements are checked
# against. The placements the pages show come from a replay on a stated platform of 1 GB/s (slow
# enough that the traces' large messages fight, so that a placement has conflicts to lose): a
# trace of a few flows gives self-calibration too little to fit, and the page, not the fit, is
# under test here.
line_profile gig.prof 1e-06 1e-09 1e-08 1e-12 1e9

page() {
    name=$1 trace=$2 flows=$3
    shift 3
    "$flowcut" remap --platform gig.prof --format json -o "$name.remap.json" "$trace" 2>"$name.remap.err" ||
        fail "flowcut remap $trace: $(cat "$name.remap.err")"
    "$flowcut" remap --platform gig.prof "$trace" >"$name.remap.txt" 2>"$name.remap.err" ||
        fail "flowcut remap $trace (text): $(cat "$name.remap.err")"
    "$flowcut" analyze --format html --remap "$name.remap.json" -o "$name.html" "$@" "$trace" ||
        fail "flowcut analyze --format html $trace"
    show "$name"
}

for t in halo chain random; do
    case $t in
    halo) flows=6 ;;
    chain) flows=9 ;;
    random) flows=$(inter_sends random) ;;
    esac
    nm=$(models "$t")
    [ "$nm" -ge 1 ] || fail_later "$t: no model column in the CSV report"
    page "$t" "$t" "$flows"
    # The marks counted twice: by the page's script, and as elements of the DOM Chromium built.
    $check dom "$t.dom" errors=0 violations=0 "flow-marks=$flows" "scatter-points=$((flows * nm))" \
        "count:g.fc-flow=$flows" "count:circle.fc-pt=$((flows * nm))" "count:g.fc-coll=0" \
        "placements=>=1" "heat-cells=>=1" || fail_later "$t.html (expected $flows flows, $nm models)"
    "$flowcut" analyze --format json "$t" >"$t.json" || fail "flowcut analyze --format json $t"
    "$flowcut" analyze --top 0 "$t" >"$t.txt" || fail "flowcut analyze $t"
    $check data "$t.html" "$t.json" "$t.txt" || fail_later "the data of $t.html"
    # The error statistics, the wait states (a pair of bars for each rank of `flowcut info`) and
    # the placements against the text reports, which compute them in C.
    $check errors "$t.dom" "$t.txt" "$nm" || fail_later "the error statistics of $t.html"
    "$flowcut" info --json "$t" >"$t.info.json" || fail "flowcut info $t"
    ranks=$("$PYTHON3" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["rank_info"]))' "$t.info.json")
    $check waits "$t.dom" "$t.txt" "$ranks" || fail_later "the wait states of $t.html"
    $check remap "$t.dom" "$t.remap.txt" || fail_later "the placements of $t.html"
    # The timeline with a row per link (the page opened at #links, as its "rows per link" button
    # draws it): every flow once, on as many rows as there are links with a flow.
    links=$(inter_sends "$t" links)
    show "$t" "#links"
    $check dom "$t.links.dom" errors=0 violations=0 "flow-marks=$flows" "timeline-rows=$links" ||
        fail_later "$t.html#links (expected $flows flows on $links links)"
    echo "$t: $flows flow marks ($links links), $((flows * nm)) scatter points, $(wc -c <"$t.html") bytes"
done

# The halo's placement by hand: in round 2 both ranks of node a send 400 kB to node b at once, an
# outgoing conflict (k = 2) at a on a 1 GB/s link; the best placement, a{0,2} b{1,3}, keeps those
# messages inside the nodes, and the conflict disappears.
grep -q 'data-of="1">disappear: outgoing k=2 ' halo.dom ||
    fail_later "halo.html: the conflict that the first suggestion removes is not shown to disappear"

# No error figure over fewer than 3 network flows, as in the text report. fewN: N rendezvous
# messages of 400 kB from node a to node b, each with both ends in MPI from 10 us before it to its
# end (455 us from the send's start: on the stated 1 GB/s and 1 us, 401 us of it on the wire, so a
# network flow), then one message of 8 bytes (too small for bandwidth to matter). With N = 2 the
# page must give no statistics and say why; with N = 3 it gives them: the mean |error| of the
# flowcut model is |401 - 455| / 455 = 11.9 % (no conflict: the messages follow each other).
few() {
    echo "ranks 2"
    echo "node 0 a"
    echo "node 1 b"
    i=1
    while [ $i -le "$1" ]; do
        t=$((1000 * i))
        echo "ev 0 MPI_Send $t $((t + 450)) 1 $i 400000 0"
        echo "ev 1 MPI_Recv $((t - 10)) $((t + 455)) 0 $i 400000 0 status"
        i=$((i + 1))
    done
    t=$((1000 * i))
    echo "ev 0 MPI_Send $t $((t + 2)) 1 99 8 0"
    echo "ev 1 MPI_Recv $((t - 5)) $((t + 12)) 0 99 8 0 status"
}
for n in 2 3; do
    mkdir "few$n" || fail "mkdir"
    few $n | "$gen_trace" "few$n" || fail "gen-trace few$n"
    "$flowcut" analyze --platform gig.prof --format html -o "few$n.html" "few$n" || fail "analyze few$n"
    "$flowcut" analyze --platform gig.prof --top 0 "few$n" >"few$n.txt" || fail "analyze few$n (text)"
    nm=$("$flowcut" analyze --platform gig.prof --format csv "few$n" | head -n 1 | tr ',' '\n' | grep -c '^predicted_')
    show "few$n"
    $check dom "few$n.dom" errors=0 violations=0 "count:g.fc-flow=$((n + 1))" "count:circle.fc-pt=$(((n + 1) * nm))" ||
        fail_later "few$n.html"
    case $n in
    2)
        $check errors "few$n.dom" "few$n.txt" "$nm" || fail_later "few$n.html gives error figures over 2 network flows"
        grep -q 'class="fc-no-errors">too few network flows (2) ' "few$n.dom" ||
            fail_later "few$n.html does not say that 2 network flows are too few"
        grep -q '<table class="fc-errors"' "few$n.dom" && fail_later "few$n.html shows a table of error statistics"
        # --flows all counts the 8-byte flow too: 3 flows, figures again.
        "$flowcut" analyze --platform gig.prof --flows all --format html -o few2all.html few2 || fail "analyze --flows all"
        "$flowcut" analyze --platform gig.prof --flows all --top 0 few2 >few2all.txt || fail "analyze --flows all (text)"
        show few2all
        $check errors few2all.dom few2all.txt "$nm" || fail_later "few2all.html (--flows all)"
        ;;
    3)
        $check errors "few$n.dom" "few$n.txt" "$nm" flowcut=11.9 || fail_later "the error statistics of few$n.html"
        ;;
    esac
done

# Collective flows marked: an MPI_Alltoall of 1 MiB blocks over 8 ranks on 4 nodes (2 a node) is
# run by MPICH's pairwise exchange, in which each rank sends a block to each of the 6 ranks of the
# other nodes: 48 inter-node flows, all of the collective (as test-collective-flows.sh works out).
mkdir a2a || fail "mkdir"
{
    echo "ranks 8"
    for r in 0 1 2 3 4 5 6 7; do echo "node $r n$((r / 2))"; done
    for r in 0 1 2 3 4 5 6 7; do
        echo "ev $r MPI_Alltoall $((10 + r)) 5000 -1 0 8388608 0 b2=8388608"
        echo "ev $r MPI_Finalize 6000 6001 -1 0 0 0"
    done
} | "$gen_trace" a2a || fail "gen-trace a2a"
"$flowcut" analyze --format html -o a2a.html a2a || fail "analyze a2a"
show a2a
$check dom a2a.dom errors=0 violations=0 count:g.fc-flow=48 count:g.fc-coll=48 || fail_later "a2a.html: collective flows"
# Its one call's errors, for each model, as the text report's `collective calls` table.
"$flowcut" analyze --top 0 a2a >a2a.txt || fail "analyze a2a (text)"
$check collerrors a2a.dom a2a.txt || fail_later "a2a.html: the collective calls' errors"
[ "$(grep -o '<tr class="fc-coll-errors"><td>[a-z]*</td><td class="n">1</td>' a2a.dom | wc -l)" -eq "$(models a2a)" ] ||
    fail_later "a2a.html: not one row of 1 call for each of the $(models a2a) models"

# Without predictions the page still loads, with no scatter point.
"$flowcut" analyze --format html --model none -o none.html halo || fail "analyze --model none"
show none
$check dom none.dom errors=0 violations=0 flow-marks=6 scatter-points=0 || fail_later "none.html"

# The remap page alone.
"$flowcut" remap --format html -o remap.html halo 2>remap.err || fail "flowcut remap --format html: $(cat remap.err)"
show remap
$check dom remap.dom errors=0 violations=0 "placements=>=1" || fail_later "remap.html"

# Hostile strings: text on the page, never markup or script.
page hostile hostile 1
$check dom hostile.dom errors=0 violations=0 flow-marks=1 || fail_later "hostile.html"
$check text hostile.dom '</script><script>document.body.dataset.pwned=1</script>' \
    "b\"'<img/src=x/onerror=document.body.dataset.pwned=2>" \
    "/opt/<app>/\"it's\"&amp;</script><script>document.body.dataset.pwned=3</script>" \
    "lib<b>\"'&x.so+0x4c0" "lib<b>\"'&x.so+0x5d0" \
    "--in=<svg/onload=document.body.dataset.pwned=4> '\"</script><!--" ||
    fail_later "hostile.html shows the trace's strings otherwise than as text"

# A long trace: bins and the worst intervals, and a file that stays small.
page big big 0
flows_big=$(inter_sends big)
$check dom big.dom errors=0 violations=0 "flow-marks=>=100" "placements=>=1" || fail_later "big.html"
grep -q '"sampled": true' big.html || fail_later "big.html ($flows_big flows) is not aggregated"
# Its worst intervals in full: those the JSON document's intervals rank worst, every flow of theirs
# listed and drawn (one mark per flow the page lists).
"$flowcut" analyze --format json -o big.json big || fail "analyze --format json big"
$check worst big.html big.json || fail_later "the worst intervals of big.html"
listed=$("$PYTHON3" -c 'import json, re, sys; print(len(json.loads(re.search(r"id=\"fc-data\">(.*?)</script>", open(sys.argv[1]).read(), re.S).group(1))["flows"]))' big.html)
$check dom big.dom "count:g.fc-flow=$listed" || fail_later "big.html: not one mark per flow listed ($listed)"
echo "big: $flows_big flows, $(wc -c <big.html) bytes"

# Printed (Chromium's print to PDF), the page keeps every section; read with pdftotext when
# poppler-utils is there.
if command -v pdftotext >/dev/null 2>&1; then
    browse --no-pdf-header-footer --print-to-pdf="$work/random.pdf" "file://$work/random.html" >pdf.log 2>&1 ||
        fail_later "chromium --print-to-pdf: ${browse_fail:-$(tail -n 3 pdf.log)}"
    pdftotext random.pdf - | tr -d '\f' >random.pdf.txt || fail_later "pdftotext random.pdf"
    for h in "Summary" "Timeline of the inter-node flows" "Predicted versus observed" "Traffic between nodes and hot nodes" \
        "Wait states" "Placement of ranks on nodes" "Warnings"; do
        grep -qx "$h" random.pdf.txt || fail_later "the printed page has no section \"$h\""
    done
fi

# A screenshot of the demo-like report must show something.
browse --screenshot="$work/halo.png" --window-size=1280,2000 "file://$work/random.html" >shot.log 2>&1 ||
    fail_later "chromium --screenshot: $(tail -n 3 shot.log)"
$check png halo.png || fail_later "the screenshot of random.html"
finish
