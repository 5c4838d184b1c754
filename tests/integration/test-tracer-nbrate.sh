#!/bin/sh
# test-tracer-nbrate.sh: the message-rate loop whose posts go through helpers called from several lines
# (nbrate -s, as a halo exchange posts to each neighbour): the same output traced and untraced; at
# depth 4 each helper's MPI call is recorded with as many call chains as there are lines calling
# the helper, read from the source, and each chain is unwound once, however many iterations run.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example nbrate
iters=300
run_untraced "$work/plain.out" 2 "$prog" -s $iters 4
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "nbrate -s failed untraced: $(cat "$work/plain.out.err")"
FC_GENV="-genv FLOWCUT_CALLSITE_DEPTH 4 -genv FLOWCUT_STATS 1" run_traced "$work/d4.out" "$work/d4" 2 "$prog" -s $iters 4
same_output "$work/plain.out" "$work/d4.out"
read_trace "$work/d4"

# The lines of nbrate.c that call each helper inside the loop (not the helper's definition).
recv_lines=$(grep -n '^ *\(if .*\)\?post_recv(rbuf' "$abs_top_srcdir/examples/nbrate.c" | cut -d: -f1 | tr '\n' ',')
send_lines=$(grep -n '^ *\(if .*\)\?post_send(sbuf' "$abs_top_srcdir/examples/nbrate.c" | cut -d: -f1 | tr '\n' ',')
"$PYTHON3" - "$work/d4.dump" "$iters" "$recv_lines" "$send_lines" <<'PY' || fail "nbrate -s call chains at depth 4 are wrong"
import re, sys
dump, iters = sys.argv[1], int(sys.argv[2])
want = {"MPI_Irecv": ("post_recv", sorted(int(x) for x in sys.argv[3].split(",") if x)),
        "MPI_Isend": ("post_send", sorted(int(x) for x in sys.argv[4].split(",") if x))}
for kind, (helper, lines) in want.items():
    if len(lines) != 4:
        print("expected 4 lines calling %s in nbrate.c, found %r" % (helper, lines))
        sys.exit(1)
seen = {(k, r): {} for k in want for r in (0, 1)}
for l in open(dump):
    m = re.search(r" rank=(\d+) thread=\d+ kind=(\S+) ", l)
    if not m or m.group(2) not in want:
        continue
    site = re.search(r" site=(\S+)", l).group(1)
    d = seen[(m.group(2), int(m.group(1)))]
    d[site] = d.get(site, 0) + 1
bad = []
for (kind, rank), sites in sorted(seen.items()):
    helper, lines = want[kind]
    got = []
    for site, n in sites.items():
        frames = site.split("<")
        a = re.match(r"%s@(.*/)?nbrate\.c:\d+$" % helper, frames[0])
        b = re.match(r"main@(.*/)?nbrate\.c:(\d+)$", frames[1]) if len(frames) > 1 else None
        if not (a and b and n == iters):
            bad.append((kind, rank, site, n))
        else:
            got.append(int(b.group(2)))
    if sorted(got) != lines:
        bad.append((kind, rank, "callers at lines %r, expected %r" % (sorted(got), lines)))
if bad:
    print("wrong chains: %r" % bad[:4])
    sys.exit(1)
PY

# Each distinct chain is unwound once: the stats line of each rank counts no repeated unwind and
# no more unwinds than chains (the calls of the loop and the few before and after it).
for r in 0 1; do
    line=$(grep "^flowcut: rank $r: call sites: " "$work/d4.out.err") || fail "rank $r printed no call-site counts"
    set -- $(echo "$line" | sed 's/.*call sites: \([0-9]*\) chains, \([0-9]*\) unwinds, \([0-9]*\) repeated.*/\1 \2 \3/')
    [ "$#" = 3 ] || fail "cannot read: $line"
    [ "$3" = 0 ] || fail "rank $r: $3 repeated unwinds ($line)"
    [ "$2" -le "$1" ] || fail "rank $r: more unwinds than chains ($line)"
    [ "$1" -ge 9 ] || fail "rank $r: fewer chains than the loop's 4 + 4 + 1 ($line)"
done

# Depth 1: the helper's own line is the call site, one per helper.
FC_GENV="-genv FLOWCUT_CALLSITE_DEPTH 1" run_traced "$work/d1.out" "$work/d1" 2 "$prog" -s $iters 4
same_output "$work/plain.out" "$work/d1.out"
read_trace "$work/d1"
n=$(grep ' kind=MPI_Irecv ' "$work/d1.dump" | sed 's/.* site=//' | sort -u | wc -l)
[ "$n" = 1 ] || fail "depth 1: $n call sites for MPI_Irecv, expected the one line in post_recv"
exit 0
