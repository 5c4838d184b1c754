#!/bin/sh
# tests/analyzer/test-export-chrome.sh: `flowcut export --chrome-trace`, parsed as the Trace Event
# Format that Perfetto and chrome://tracing read (html-check.py chrome): one slice per MPI call that
# `flowcut info --json` counts, one flow arrow per matched message with both ends inside a slice of
# their rank, one conflict slice per run of consecutive intervals of the JSON report in which a
# node's conflict of one class stays the same, one process per node and one thread per rank in
# it, and each rank's slices its MPI calls as `flowcut dump` lists them (name, start, duration,
# call site). A trace whose node, program and call-site names hold quotes, backslashes, <, > and
# a tab must still give valid JSON with those names intact.
# The messages come from the traces' specs:
#   halo   golden/halo.spec: 8 (the ring's four, then four rendezvous messages)
#   chain  golden/chain.spec: 9 (the tenth send is unmatched)
#   random bench-gen-trace -n 3000 -r 8 -N 4 -s 7: every send is received, so its MPI_Send and
#          MPI_Isend events in `flowcut info --json`
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
gen_trace=$abs_builddir/gen-trace
bench_gen_trace=$abs_builddir/bench-gen-trace
for p in "$flowcut" "$gen_trace" "$bench_gen_trace"; do
    [ -x "$p" ] || fail "$p is not built"
done
need_command "$PYTHON3"
cd "$work" || fail "cd $work"
mkdir halo chain hostile || fail "mkdir"
"$gen_trace" halo <"$srcdir/golden/halo.spec" || fail "gen-trace halo"
"$gen_trace" chain <"$srcdir/golden/chain.spec" || fail "gen-trace chain"
cat >hostile.spec <<'EOF'
ranks 2
node 0 a"b\c</script>
node 1 x'y	z
program /opt/<app>/"it's"
module /nonexistent/lib<b>"\'&x.so
site 0 1 4c0
site 1 2 5d0
ev 0 MPI_Send 10 20 1 1 1000 0 site=1
ev 1 MPI_Recv 5 30 0 1 1000 0 status site=2
EOF
"$gen_trace" hostile <hostile.spec || fail "gen-trace hostile"
"$bench_gen_trace" -n 3000 -r 8 -N 4 -s 7 random >random.gen.txt 2>&1 || fail "bench-gen-trace: $(cat random.gen.txt)"

for t in halo chain random hostile; do
    "$flowcut" info --json "$t" >"$t.info.json" || fail "flowcut info $t"
    "$flowcut" dump "$t" >"$t.dump" || fail "flowcut dump $t"
    "$flowcut" analyze --format json "$t" >"$t.analyze.json" || fail "flowcut analyze $t"
    case $t in
    halo) messages=8 ;;
    chain) messages=9 ;;
    hostile) messages=1 ;;
    random) messages=$("$PYTHON3" -c 'import json, sys; e = json.load(open(sys.argv[1]))["events"]; print(e.get("MPI_Send", 0) + e.get("MPI_Isend", 0))' random.info.json) ;;
    esac
    "$flowcut" export --chrome-trace "$t" "$t.trace.json" >"$t.out" 2>"$t.err" ||
        { fail_later "flowcut export --chrome-trace $t: $(cat "$t.err")"; continue; }
    grep -q "$messages messages" "$t.out" || fail_later "$t: the summary line says $(cat "$t.out"), expected $messages messages"
    "$PYTHON3" "$srcdir/html-check.py" chrome "$t.trace.json" "$t.info.json" "$t.analyze.json" "$messages" "$t.dump" ||
        fail_later "$t.trace.json"
done

# Usage: one format, two operands.
"$flowcut" export --chrome-trace halo 2>/dev/null
[ $? -eq 2 ] || fail_later "export --chrome-trace with one operand does not exit 2"
"$flowcut" export --chrome-trace --otf2 halo out 2>/dev/null
[ $? -eq 2 ] || fail_later "export with two formats does not exit 2"
finish
