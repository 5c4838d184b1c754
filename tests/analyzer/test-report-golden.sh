#!/bin/sh
# tests/analyzer/test-report-golden.sh: every report of the analyzer, byte for byte, against the
# reference outputs committed in golden/, so that no change of any figure, row, order or format
# goes unnoticed. The traces are
#   halo    golden/halo.spec: 4 ranks on 2 nodes: a ring of Irecv, Isend and Waitall with its
#           COMPLETE records, intra- and inter-node, one wildcard receive, call sites; then
#           rendezvous messages from one node to the other and back (outgoing conflicts)
#   chain   golden/chain.spec: 6 ranks on 6 nodes: section 5.2's pattern (incoming and mixed
#           conflicts), three wildcard receives of flows into one node (k up to 3), a persistent
#           send started by a Startall, an unmatched send
#   random  bench/gen-trace.c -n 3000 -r 8 -N 4 -s 7: 8 ranks on 4 nodes, 862 flows in exchange
#           and blocking rounds, eager and rendezvous, conflicts of every kind
# (gen-trace.c reads the spec files; bench-gen-trace is bench/gen-trace.c built for the tests).
# For each trace, REPORTS below lists the commands; golden/TRACE.REPORT holds what one prints on
# standard output, TRACE.REPORT.err what it prints on standard error with its exit status when
# either is not empty (no .err file: silent and 0), and outputs over 16 KiB are kept gzipped
# (TRACE.REPORT.gz) so that the references stay small. The commands run in the scratch directory
# on relative paths: no output holds a path of the machine that made it.
#
# The files in golden/ are the reference outputs: the analyzer's output on these traces as it was
# when they were last generated, checked then to be identical to the previous release's. A
# difference is a failure, shown as a diff. When an output change is intended, regenerate them
# deliberately from a build of the change and commit them with it, so that review sees what moved:
#
#     FC_GOLDEN_UPDATE=1 make -C tests/analyzer check TESTS=test-report-golden.sh
#
# which writes into the source tree's tests/analyzer/golden/ and passes.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
golden=$srcdir/golden
gen_trace=$abs_builddir/gen-trace
bench_gen_trace=$abs_builddir/bench-gen-trace
for p in "$flowcut" "$gen_trace" "$bench_gen_trace"; do
    [ -x "$p" ] || fail "$p is not built"
done
need_command gzip
update=${FC_GOLDEN_UPDATE-}
# Outputs larger than this many bytes are stored gzipped.
big=16384

# NAME|ARGUMENTS of each report; the trace's relative path comes last.
REPORTS='analyze.txt|analyze
analyze-top0.txt|analyze --top 0
analyze.json|analyze --format json --model all
analyze.csv|analyze --format csv --model all
remap.hydra|remap --format hydra --budget 300
remap.json|remap --format json
remap-local.txt|remap --local --budget 300
info.txt|info'

cd "$work" || fail "cd $work"
mkdir halo chain || fail "mkdir"
"$gen_trace" halo <"$golden/halo.spec" || fail "gen-trace halo"
"$gen_trace" chain <"$golden/chain.spec" || fail "gen-trace chain"
"$bench_gen_trace" -n 3000 -r 8 -N 4 -s 7 random >random.gen-trace.txt 2>&1 ||
    fail "bench-gen-trace: $(cat random.gen-trace.txt)"

# compare OUT REF: OUT against the reference REF (stored as REF or REF.gz; absent for an empty
# .err); in update mode, writes the reference instead.
compare() {
    out=$1 ref=$2
    if [ -n "$update" ]; then
        rm -f "$ref" "$ref.gz"
        if [ ! -s "$out" ]; then
            case $ref in *.err) return 0 ;; esac
        fi
        if [ "$(wc -c <"$out")" -gt "$big" ]; then
            gzip -n -9 <"$out" >"$ref.gz" || fail "gzip $ref.gz"
        else
            cp "$out" "$ref" || fail "cp $ref"
        fi
        return 0
    fi
    if [ -f "$ref.gz" ]; then
        gzip -dc "$ref.gz" >"$out.ref" || fail "gzip -dc $ref.gz"
    elif [ -f "$ref" ]; then
        cp "$ref" "$out.ref"
    else
        case $ref in *.err) : >"$out.ref" ;; *) fail_later "no reference ${ref#"$golden"/}"; return ;; esac
    fi
    if ! cmp -s "$out.ref" "$out"; then
        fail_later "$(basename "$out") differs from golden/$(basename "$ref") (< reference, > now):"
        diff "$out.ref" "$out" | head -n 40 >&2
    fi
}

compare random.gen-trace.txt "$golden/random.gen-trace.txt"
runs=0
for trace in halo chain random; do
    while IFS='|' read -r report args; do
        name=$trace.$report
        # shellcheck disable=SC2086 # the arguments are meant to split
        "$flowcut" $args "$trace" </dev/null >"$name" 2>"$name.err"
        st=$?
        [ "$st" -eq 0 ] || echo "exit status $st" >>"$name.err"
        compare "$name" "$golden/$name"
        compare "$name.err" "$golden/$name.err"
        runs=$((runs + 1))
    done <<EOF
$REPORTS
EOF
done

# The references must hold nothing of this machine: no scratch or build directory.
for d in "$work" "$abs_top_builddir" "$abs_top_srcdir"; do
    if grep -lF "$d" ./*.* >"$work/paths" 2>/dev/null; then
        fail_later "outputs name $d: $(tr '\n' ' ' <"$work/paths")"
    fi
done

if [ -n "$update" ]; then
    echo "wrote the references of $runs reports to $golden"
elif [ "$failures" -eq 0 ]; then
    echo "$runs reports identical to golden/"
else
    echo "if the change of output is intended: FC_GOLDEN_UPDATE=1 make -C tests/analyzer check TESTS=test-report-golden.sh" >&2
fi
finish
