#!/bin/bash
# analyze-bench.sh: times `flowcut analyze` on synthetic traces of two lengths and prints events per
# second and peak memory for each, so that the speed and the growth of memory with trace length can
# be read off. It asserts nothing about speed.
#
# Usage: analyze-bench.sh [-n EVENTS] [-r RANKS] [-N NODES] [-c ACTIVE] [-R REPEATS] [-I]
#                         [-B BASEDIR [-P ROUNDS]] BUILDDIR
#
# bench/gen-trace (built by `make analyze-bench`) writes a trace of EVENTS events (default 10^7) over
# RANKS ranks (64) on NODES nodes (16), and one ten times shorter with the same shape. Each is
# analyzed end to end through the `flowcut` dispatcher of BUILDDIR:
#   text    the text report without predictions (`--model none`): matched, ordered and swept into
#           the report's summary as the ranks are read, nothing stored (the analysis proper);
#   csv     the CSV of every flow without predictions (`--format csv --model none -o /dev/null`),
#           written as the flows are matched and swept, nothing stored;
#   json    the complete JSON document without predictions (`--format json --model none -o
#           /dev/null`), written as the flows are matched and swept, nothing stored (its flows
#           wait in a temporary file until the intervals are written);
#   models  the default text report, with every model's prediction of every flow
#           (self-calibrated), which keeps the flows, their label histories and the intervals'
#           spans that the models need: its memory grows with the trace;
#   html    (after the table) the HTML report, with its predictions: the page's size and the time
#           it takes.
# For each run:
#   wall s, CPU s (user + system), events/s on the wall clock and per CPU second (the analyzer is
#   single-threaded, so the second is the one-core rate), and the peak resident memory.
# The text report, the analysis proper, runs REPEATS times (default 3) and its row is the run of
# least CPU time, followed by every run's CPU time: the other tenants of a shared machine only ever
# add time, by 10-25 % from one run to the next on the machines this was written on.
# With -I, valgrind's callgrind also counts the instructions of the text report of the short trace
# (through libtool --mode=execute, about 40 s a build): a figure per event that does not depend on
# the machine's load, for a change too small for the clock.
# Time and memory come from wait4(2) on the analyzer process (ru_maxrss covers the whole process,
# after the dispatcher and libtool's wrapper exec into it), through python3, which every flowcut
# build already needs. Targets: >= 10 million events/s on one core; memory bounded by the flows in
# flight plus the report, not by the trace length, so the peak of the long trace should be close to
# that of the short one. The traces are written under $TMPDIR (default /tmp) and removed at exit.
# With -B BASEDIR, the build of another version (an older commit, say) runs each command too, just
# before BUILDDIR's, on the same traces, and each row of BUILDDIR is followed by BASEDIR's and the
# ratio of their CPU times: a change is judged side by side in one run, not against figures taken
# on another day on a shared machine. On such a machine one pair of runs still varies by 10 % or
# more, which hides the few per cent a change is worth. With -P ROUNDS, the text report of the long
# trace is then run ROUNDS times by both builds at once, each pinned to a core of its own (cores
# and start order swapped each round, so that a multiple of 4 rounds balances them): the load of the
# other tenants then falls on both alike, and the geometric mean of the ratios of their CPU times,
# printed with its standard error, comes within 1-2 % in 16 rounds.
set -u

events=10000000
gen_args=()
base=
rounds=0
repeats=3
instr=0
usage() {
    echo "usage: analyze-bench.sh [-n EVENTS] [-r RANKS] [-N NODES] [-c ACTIVE] [-R REPEATS] [-I]" \
        "[-B BASEDIR [-P ROUNDS]] BUILDDIR" >&2
    exit 2
}
while [ $# -gt 1 ]; do
    case $1 in
    -n) events=$2; shift 2 ;;
    -B) base=$(cd "$2" && pwd) || usage; shift 2 ;;
    -P) rounds=$2; shift 2 ;;
    -R) repeats=$2; shift 2 ;;
    -I) instr=1; shift ;;
    -r | -N | -c) gen_args+=("$1" "$2"); shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
build=$(cd "$1" && pwd) || usage
case $events in '' | *[!0-9]*) usage ;; esac
case $rounds in '' | *[!0-9]*) usage ;; esac
case $repeats in '' | 0 | *[!0-9]*) usage ;; esac
[ "$rounds" = 0 ] || [ -n "$base" ] || usage
[ "$events" -ge 10 ] || usage

gen="$build/bench/gen-trace"
flowcut="$build/tools/flowcut"
python=${PYTHON3:-python3}
export FLOWCUT_EXEC_PATH="$build/analyzer:$build/tools"
[ -x "$gen" ] || { echo "analyze-bench: $gen is not built (make -C bench gen-trace)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/flowcut-abench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# measure OUT CMD...: runs CMD with stdout to OUT and prints "wall cpu maxrss_kib status".
measure() {
    "$python" - "$@" <<'PY'
import os, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
print("%.3f %.3f %d %d" % (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
PY
}

# best N OUT CMD...: measure, N times; prints the line of least CPU time, then every run's CPU
# time, joined by '/' ("-" when a run failed: a failure is the line printed).
best() {
    local n=$1 i line bestl= cpus= w c m r
    shift
    for ((i = 0; i < n; i++)); do
        line=$(measure "$@")
        read -r w c m r <<<"$line"
        if [ "$r" != 0 ]; then
            echo "$line -"
            return
        fi
        cpus=${cpus:+$cpus/}$c
        if [ -z "$bestl" ] || awk -v a="$c" -v b="${bestl#* }" 'BEGIN { split(b, x, " "); exit !(a < x[1]) }'; then
            bestl=$line
        fi
    done
    echo "$bestl $cpus"
}

echo "== flowcut analyze: synthetic traces (bench/gen-trace), ${gen_args[*]:-64 ranks on 16 nodes}"
declare -A nev
for size in large small; do
    n=$events
    [ $size = small ] && n=$((events / 10))
    read -r wall cpu rss rc < <(measure "$work/gen-$size.out" "$gen" -n "$n" "${gen_args[@]}" "$work/$size")
    if [ "$rc" != 0 ]; then
        cat "$work/gen-$size.out"
        echo "analyze-bench: gen-trace failed for $n events" >&2
        exit 1
    fi
    nev[$size]=$(sed -n 's/^gen-trace: \([0-9]*\) events.*/\1/p' "$work/gen-$size.out")
    bytes=$(du -sb "$work/$size" | cut -f1)
    awk -v s=$size -v e="${nev[$size]}" -v b="$bytes" -v w="$wall" 'BEGIN {
        printf "trace %-5s: %d events, %.1f MB on disk (%.2f bytes/event), generated in %.2f s\n",
               s, e, b / 1e6, b / e, w }'
done

if [ ! -x "$build/analyzer/flowcut-analyze" ]; then
    echo "SKIP: $build/analyzer/flowcut-analyze is not built; no analyzer figures"
    exit 0
fi
if [ -n "$base" ] && [ ! -x "$base/analyzer/flowcut-analyze" ]; then
    echo "analyze-bench: $base/analyzer/flowcut-analyze is not built" >&2
    exit 1
fi

printf '%-6s %-6s %11s %8s %8s %13s %13s %10s\n' trace form events "wall s" "cpu s" "events/s" \
    "ev/cpu-s" "peak MiB"
declare -A peak
failed=0
for size in large small; do
    for form in text csv json models; do
        case $form in
        text) cmd=("$flowcut" analyze --model none "$work/$size") ;;
        csv) cmd=("$flowcut" analyze --format csv --model none -o /dev/null "$work/$size") ;;
        json) cmd=("$flowcut" analyze --format json --model none -o /dev/null "$work/$size") ;;
        models) cmd=("$flowcut" analyze "$work/$size") ;;
        esac
        bcpu=
        reps=1
        [ $form = text ] && reps=$repeats
        if [ -n "$base" ]; then
            # The same command through the base build's dispatcher and analyzer, first.
            read -r bwall bcpu brss brc bruns < <(FLOWCUT_EXEC_PATH="$base/analyzer:$base/tools" \
                best $reps /dev/null "$base/tools/flowcut" "${cmd[@]:1}" 2>"$work/err")
            [ "$brc" = 0 ] || bcpu=
        fi
        read -r wall cpu rss rc runs < <(best $reps /dev/null "${cmd[@]}" 2>"$work/err")
        if [ "$rc" != 0 ]; then
            echo "analyze-bench: '${cmd[*]}' exited with $rc:" >&2
            head -5 "$work/err" >&2
            failed=1
            continue
        fi
        peak[$size.$form]=$rss
        awk -v s=$size -v f=$form -v e="${nev[$size]}" -v w="$wall" -v c="$cpu" -v m="$rss" -v r="$runs" 'BEGIN {
            printf "%-6s %-6s %11d %8.3f %8.3f %13.0f %13.0f %10.1f%s\n", s, f, e, w, c,
                   e / (w > 0 ? w : 1e-9), e / (c > 0 ? c : 1e-9), m / 1024,
                   r ~ /\// ? "  best of cpu " r : "" }'
        [ -n "$bcpu" ] || continue
        awk -v s=$size -v f=$form -v e="${nev[$size]}" -v w="$bwall" -v c="$bcpu" -v m="$brss" \
            -v nc="$cpu" -v r="$bruns" 'BEGIN {
            printf "%-6s %-6s %11s %8.3f %8.3f %13.0f %13.0f %10.1f  base; cpu x%.2f%s\n", s, f, "", w, c,
                   e / (w > 0 ? w : 1e-9), e / (c > 0 ? c : 1e-9), m / 1024, nc / (c > 0 ? c : 1e-9),
                   r ~ /\// ? "; best of cpu " r : "" }'
    done
done
for form in text csv json models; do
    l=${peak[large.$form]:-} s=${peak[small.$form]:-}
    [ -n "$l" ] && [ -n "$s" ] || continue
    target="target: flat"
    [ $form = models ] && target="kept for the models: grows with the trace"
    awk -v f=$form -v l="$l" -v s="$s" -v el="${nev[large]}" -v es="${nev[small]}" -v t="$target" 'BEGIN {
        printf "%s: peak memory x%.2f for x%.1f events (%.1f bytes per extra event); %s\n",
               f, l / s, el / es, (l - s) * 1024 / (el - es), t }'
done
echo "target: >= 10000000 events/s on one core (ev/cpu-s); memory flat (text, csv, json)"
# The HTML report (with every model's predictions, as `flowcut analyze --format html` makes it) of
# each trace: the page draws every flow only up to a few thousand, then bins and samples them, so
# that its size stays a few MB whatever the length of the trace.
for size in large small; do
    read -r wall cpu rss rc < <(measure /dev/null "$flowcut" analyze --format html -o "$work/$size.html" \
        "$work/$size" 2>"$work/err")
    if [ "$rc" != 0 ]; then
        echo "analyze-bench: the HTML report of the $size trace exited with $rc:" >&2
        head -5 "$work/err" >&2
        failed=1
        continue
    fi
    awk -v s=$size -v e="${nev[$size]}" -v b="$(wc -c <"$work/$size.html")" -v w="$wall" -v c="$cpu" -v m="$rss" 'BEGIN {
        printf "html   %-5s: %d events, page of %.2f MB, written in %.3f s wall, %.3f s cpu, peak %.1f MiB\n",
               s, e, b / 1e6, w, c, m / 1024 }'
    rm -f "$work/$size.html"
done
echo "target: the page under 5 MB for any trace"
# instructions BUILD: callgrind's count of the text report of the short trace, per event.
instructions() {
    local out="$work/cg.out" log="$work/cg.log"
    FLOWCUT_EXEC_PATH="$1/analyzer:$1/tools" "$1/libtool" --mode=execute valgrind --tool=callgrind \
        --callgrind-out-file="$out" "$1/analyzer/flowcut-analyze" --model none "$work/small" >/dev/null 2>"$log" ||
        return 1
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log" | head -1
}
if [ "$instr" = 1 ]; then
    if ! command -v valgrind >/dev/null; then
        echo "instructions: SKIP: valgrind is not installed"
    else
        ni=$(instructions "$build") || { echo "analyze-bench: callgrind failed" >&2; failed=1; }
        bi=
        [ -z "$base" ] || bi=$(instructions "$base") || bi=
        awk -v n="${ni:-0}" -v b="${bi:-0}" -v e="${nev[small]}" 'BEGIN {
            printf "instructions: text, small trace: %.1f per event (callgrind)", n / e
            if (b > 0) printf "; base %.1f, x%.3f", b / e, n / b
            printf "\n" }'
    fi
fi
[ "$rounds" -gt 0 ] || exit $failed

# paired ROUNDS -- NEWCMD... -- BASECMD...: runs both commands at once, each pinned to its own
# core, ROUNDS times, and prints each round's ratio of CPU times and their geometric mean.
paired() {
    "$python" - "$@" <<'PY'
import math, os, sys
rounds = int(sys.argv[1])
rest = sys.argv[3:]
cut = rest.index("--")
cmds = {"new": rest[:cut], "base": rest[cut + 1:]}
cpus = sorted(os.sched_getaffinity(0))
if len(cpus) < 2:
    print("paired: SKIP: one core only; the builds cannot run side by side")
    sys.exit(0)
def start(cmd, cpu):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            os.sched_setaffinity(0, {cpu})
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    return pid
logs = []
for r in range(rounds):
    order = ["new", "base"] if r % 2 == 0 else ["base", "new"]
    core = {order[0]: cpus[r // 2 % 2], order[1]: cpus[1 - r // 2 % 2]}
    pids = {start(cmds[k], core[k]): k for k in order}
    cpu, failed = {}, []
    for _ in order:  # both are waited for, so that neither outlives a failure of the other
        pid, status, ru = os.wait4(-1, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(pids[pid])
        cpu[pids[pid]] = ru.ru_utime + ru.ru_stime
    if failed:
        print("paired: the %s build's run failed" % " and ".join(failed))
        sys.exit(1)
    logs.append(math.log(cpu["new"] / cpu["base"]))
    print("paired: round %d: new %.3f s, base %.3f s, cpu x%.3f" % (r + 1, cpu["new"], cpu["base"], math.exp(logs[-1])))
mean = sum(logs) / len(logs)
sd = (sum((x - mean) ** 2 for x in logs) / (len(logs) - 1)) ** 0.5 if len(logs) > 1 else 0.0
print("paired: text, large trace: cpu x%.3f new/base (geometric mean of %d rounds; "
      "standard error x%.3f)" % (math.exp(mean), len(logs), math.exp(sd / len(logs) ** 0.5)))
PY
}
paired "$rounds" -- "$flowcut" analyze --model none "$work/large" -- \
    env FLOWCUT_EXEC_PATH="$base/analyzer:$base/tools" "$base/tools/flowcut" analyze --model none "$work/large" ||
    failed=1
exit $failed
