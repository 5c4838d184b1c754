#!/bin/sh
# test-tracer-pcollthreads.sh: persistent collectives created on one thread and run on another
# (pcollthreads.c under MPI_THREAD_MULTIPLE: the main thread creates 40 MPI_Allreduce_init
# requests, a worker thread starts them with MPI_Startall and completes each with MPI_Wait and a
# status, 4 times, and every other time starts the first alone and completes it with
# MPI_Waitall). MPICH leaves in such a request's status the envelope of a message its schedule
# received; a collective's completion has none, so each COMPLETE of these requests must carry no
# status, peer, tag or bytes. The program's output is the same traced and untraced, and each rank's
# trace holds 40 inits on the main thread and, on the worker, 40 x 4 + 2 = 162 completions of
# their requests.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$MPIEXEC"
prog=$abs_builddir/pcollthreads
[ -x "$prog" ] || fail "$prog not built"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -n 4 "$prog" 40 4 >"$work/plain" 2>&1 || fail "untraced: $(cat "$work/plain")"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/t" \
    -n 4 "$prog" 40 4 >"$work/traced" 2>"$work/traced.err" || fail "traced: $(cat "$work/traced.err")"
grep -q "^pcollthreads: ranks=4 ncoll=40 iters=4 checksum=[0-9]*$" "$work/plain" ||
    fail "unexpected output: $(cat "$work/plain")"
cmp -s "$work/plain" "$work/traced" || fail "output differs traced: $(cat "$work/traced")"
"$flowcut" dump --no-sites "$work/t" >"$work/dump" 2>"$work/dump.err" || fail "dump: $(cat "$work/dump.err")"
"$PYTHON3" - "$work/dump" <<'PY' || fail "completions of persistent collectives started on another thread"
import sys
from collections import defaultdict
inits = defaultdict(set)        # rank -> requests of MPI_Allreduce_init
completes = defaultdict(list)   # rank -> the COMPLETE records of those requests
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    r = int(f["rank"])
    if f["kind"] == "MPI_Allreduce_init":
        if f["thread"] != "0":
            sys.exit("init on thread %s: %s" % (f["thread"], line.strip()))
        inits[r].add(f["req"])
    elif f["kind"] == "COMPLETE" and f.get("req") in inits[r]:
        completes[r].append(f)
errors = []
for r in range(4):
    if len(inits[r]) != 40:
        errors.append("rank %d: %d distinct init requests, want 40" % (r, len(inits[r])))
    c = completes[r]
    if len(c) != 40 * 4 + 2:
        errors.append("rank %d: %d completions of them, want 162" % (r, len(c)))
    bad = [f for f in c if f["thread"] != "1" or "status" in f.get("flags", "").split(",") or
           any(k in f for k in ("peer", "tag", "bytes"))]
    if bad:
        errors.append("rank %d: %d of %d completions with an envelope, first: %r" % (r, len(bad), len(c), bad[0]))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
PY
echo "pcollthreads: 162 completions a rank of collectives started off their thread, none with an envelope"
