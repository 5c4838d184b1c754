#!/bin/sh
# test-tracer-faults.sh: runs examples/faults (4 ranks, each recording a known number of events and printing its
# own count) dying each way: SIGKILL of one rank (the launcher then kills the others), SIGKILL of
# every rank (also with FLOWCUT_WRITE_AT=100, which keeps every event in memory), SIGTERM to the
# launcher, a segfault, MPI_Abort; and running to its end with a full disk (a small tmpfs, as root),
# an unwritable trace directory, a symlink planted where a rank file goes, and bad settings. Each
# time the program's output and exit status must be the same as untraced, and the reader must
# recover, on every rank it can, at least the events the program says it recorded, in a trace marked
# partial whenever a rank died.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example faults
n=4
count=3000 # 6000 events a rank: two chunks written, one filling

# launch OUT DIR MODE [STOP]: runs the program, traced into DIR unless DIR is '-', stdout to OUT,
# stderr to OUT.err, exit status to OUT.rc; with STOP, waits until every rank has printed its
# count and then sends SIGTERM to the launcher.
launch() {
    out=$1 dir=$2 mode=$3 stop=${4-}
    if [ "$dir" = - ]; then
        set -- -n $n "$prog" "$mode" $count
    else
        # shellcheck disable=SC2086
        set -- -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$dir" ${FC_GENV-} -n $n "$prog" "$mode" $count
    fi
    if [ -z "$stop" ]; then
        timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" "$@" >"$out" 2>"$out.err"
        echo $? >"$out.rc"
        return
    fi
    # The output file exists before the launcher starts: the loop below reads it at once, and a
    # read of a file not yet created would end the wait early and stop the ranks before they ran.
    : >"$out"
    "$MPIEXEC" "$@" >>"$out" 2>"$out.err" &
    pid=$!
    tries=0
    while [ "$(grep -c '^faults:' "$out")" -lt $n ]; do
        tries=$((tries + 1))
        if [ $tries -gt $((FC_TEST_TIMEOUT * 10)) ]; then
            kill -KILL $pid
            fail "$mode: the ranks never printed their counts: $(cat "$out.err")"
        fi
        sleep 0.1
    done
    kill -TERM $pid
    wait $pid
    echo $? >"$out.rc"
}

# compare WHAT PLAIN TRACED [STATUSES]: the program's lines are the same, and so is the exit
# status; with STATUSES (blank-separated), each run's status is one of them instead.
compare() {
    for f in "$2" "$3"; do
        [ "$(cat "$f.rc")" = 124 ] && fail "$1: $f timed out"
        # The launcher adds its own report of a death (with process ids): keep the program's lines.
        grep '^faults:' "$f" | sort >"$f.app"
    done
    [ "$(wc -l <"$2.app")" = $n ] || fail "$1: the untraced program printed: $(cat "$2") $(cat "$2.err")"
    cmp -s "$2.app" "$3.app" || fail "$1: output differs: '$(cat "$2.app")' vs '$(cat "$3.app")'"
    if [ -z "${4-}" ]; then
        [ "$(cat "$2.rc")" = "$(cat "$3.rc")" ] ||
            fail "$1: exit status $(cat "$3.rc") traced, $(cat "$2.rc") untraced (stderr: $(head -c 2000 "$3.err"))"
        return
    fi
    for f in "$2" "$3"; do
        case " $4 " in
        *" $(cat "$f.rc") "*) ;;
        *) fail "$1: exit status $(cat "$f.rc") of $f, expected one of $4 (stderr: $(head -c 2000 "$f.err"))" ;;
        esac
    done
}

# recovered WHAT DIR OUT PARTIAL [LOST]: flowcut info and dump read DIR (exit 0); every rank but
# those listed in LOST holds at least the events its line in OUT counts, kind by kind; the trace
# is partial when PARTIAL is yes; the ranks in LOST are reported missing with their file named.
recovered() {
    "$flowcut" dump --no-sites "$2" >"$2.dump" 2>"$2.dump.err" || fail "$1: flowcut dump: $(cat "$2.dump.err")"
    "$flowcut" info --json "$2" >"$2.json" 2>"$2.json.err" || fail "$1: flowcut info: $(cat "$2.json.err")"
    "$PYTHON3" - "$1" "$2.dump" "$2.json" "$3" "$4" "${5-}" <<'PY' || fail "$1: events lost (see above)"
import collections, json, re, sys
what, dump, info, out, partial, lost = sys.argv[1:7]
lost = set(int(x) for x in lost.split(",") if x)
got = collections.Counter()
for line in open(dump):
    m = re.search(r" rank=(\d+) .*kind=(\S+)", line)
    if m:
        got[(int(m.group(1)), m.group(2))] += 1
bad = []
for line in open(out):
    m = re.match(r"faults: rank (\d+) recorded (.*)", line)
    if not m:
        continue
    rank = int(m.group(1))
    for kv in m.group(2).split():
        kind, n = kv.split("=")
        print("%s: rank %d %s: program %d, recovered %d" % (what, rank, kind, int(n), got[(rank, kind)]))
        if rank not in lost and got[(rank, kind)] < int(n):
            bad.append("rank %d %s: %d of %d" % (rank, kind, got[(rank, kind)], int(n)))
j = json.load(open(info))
if partial == "yes" and not j["partial"]:
    bad.append("the trace is not marked partial")
if partial == "no" and j["partial"]:
    bad.append("the trace is marked partial: %s" % j["ranks_partial"])
for r in lost:
    if not [m for m in j["ranks_missing"] if m["rank"] == r and m["file"]]:
        bad.append("rank %d is not reported missing with its file: %s" % (r, j["ranks_missing"]))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
}

# Deaths: each mode untraced and traced.
for mode in kill1 killall segv abort; do
    launch "$work/$mode.plain" - $mode
    launch "$work/$mode.out" "$work/$mode" $mode
    compare $mode "$work/$mode.plain" "$work/$mode.out"
    recovered $mode "$work/$mode" "$work/$mode.out" yes
done
FC_GENV="-genv FLOWCUT_WRITE_AT 100" launch "$work/inmem.out" "$work/inmem" killall
compare "killall, FLOWCUT_WRITE_AT=100" "$work/killall.plain" "$work/inmem.out"
recovered "killall, FLOWCUT_WRITE_AT=100" "$work/inmem" "$work/inmem.out" yes
launch "$work/term.plain" - hang stop
launch "$work/term.out" "$work/term" hang stop
# Hydra stopped by SIGTERM forwards it to the ranks, which die of it; whether it then exits with
# their 15, with 0 or with its own 143 depends on which of its own steps comes first (all three
# seen untraced, from the same command). Once one rank is dead, Hydra's clean-up sends SIGTERM and
# at once SIGKILL to the ranks still alive, so a rank whose SIGTERM handler took its time would die
# of SIGKILL and Hydra would exit with 9: the traced run must end as one of the untraced ones.
compare "SIGTERM to the launcher" "$work/term.plain" "$work/term.out" "0 15 143"
recovered "SIGTERM to the launcher" "$work/term" "$work/term.out" yes

# Runs to the end in spite of the tracer's troubles.
launch "$work/fin.plain" - finish
[ "$(cat "$work/fin.plain.rc")" = 0 ] || fail "faults finish failed untraced: $(cat "$work/fin.plain.err")"
# A symlink planted where rank 1's file goes: refused by the writer, and costs rank 1 only.
mkdir -m 700 "$work/planted"
echo precious >"$work/victim"
ln -s "$work/victim" "$work/planted/rank-000001.fct"
launch "$work/planted.out" "$work/planted" finish
compare "planted symlink" "$work/fin.plain" "$work/planted.out"
[ "$(cat "$work/victim")" = precious ] || fail "planted symlink: the file it points to changed"
[ "$(grep -c '^flowcut: rank 1: ' "$work/planted.out.err")" = 1 ] && [ "$(wc -l <"$work/planted.out.err")" = 1 ] ||
    fail "planted symlink: stderr is not one line of rank 1: $(cat "$work/planted.out.err")"
recovered "planted symlink" "$work/planted" "$work/planted.out" yes 1
# Bad settings: one line per rank, the defaults used, a whole trace.
FC_GENV="-genv FLOWCUT_ZLIB_LEVEL 99 -genv FLOWCUT_WRITE_AT 101" launch "$work/bad.out" "$work/bad" finish
compare "bad settings" "$work/fin.plain" "$work/bad.out"
for v in ZLIB_LEVEL WRITE_AT; do
    [ "$(grep -c "^flowcut: rank [0-9]*: bad FLOWCUT_$v" "$work/bad.out.err")" = $n ] ||
        fail "bad FLOWCUT_$v: not one warning per rank: $(cat "$work/bad.out.err")"
done
recovered "bad settings" "$work/bad" "$work/bad.out" no
# A trace directory that cannot be created, even by root: its parent is a regular file.
: >"$work/file"
launch "$work/nodir.out" "$work/file/trace" finish
compare "unwritable directory" "$work/fin.plain" "$work/nodir.out"
[ "$(grep -c '^flowcut: rank [0-9]*: ' "$work/nodir.out.err")" = $n ] ||
    fail "unwritable directory: not one warning per rank: $(cat "$work/nodir.out.err")"
# A full disk: a tmpfs of 256 KiB, too small for the rescue buffers and the trace.
if [ "$(id -u)" = 0 ] && mkdir "$work/small" && mount -t tmpfs -o size=256k flowcut-test "$work/small" 2>/dev/null; then
    at_exit 'umount "$work/small" 2>/dev/null'
    launch "$work/full.out" "$work/small/trace" finish
    compare "full disk" "$work/fin.plain" "$work/full.out"
    lines=$(grep -c '^flowcut: rank [0-9]*: ' "$work/full.out.err")
    [ "$lines" -le $n ] && [ "$(wc -l <"$work/full.out.err")" = "$lines" ] ||
        fail "full disk: more than one line per rank: $(cat "$work/full.out.err")"
    if ls "$work/small/trace"/rank-*.fct >/dev/null 2>&1; then
        "$flowcut" info --json "$work/small/trace" >"$work/full.json" 2>"$work/full.json.err" ||
            grep -q "cut inside the file header\|no rank" "$work/full.json.err" ||
            fail "full disk: flowcut info: $(cat "$work/full.json.err")"
    fi
else
    echo "full disk: not run (needs root to mount a tmpfs)"
fi
exit 0
