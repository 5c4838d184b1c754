#!/bin/sh
# test-tracer-pingpong.sh: blocking ping-pong on 2 ranks: every Send and Recv with its peer, tag and
# bytes, the same output traced and untraced; call sites point at the calling line, depth 4 shows
# the whole call chain in dump, and depth 0 drops them; each FLOWCUT_ZLIB_LEVEL writes chunks that
# read back whole.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example pingpong 2 40 0 8 1000

# Default depth 1: every MPI_Send is attributed to main() at the line of pingpong.c that calls it,
# found here by reading the source: the first MPI_Send( line is rank 0's, the second rank 1's.
lines=$(grep -n 'MPI_Send(' "$abs_top_srcdir/examples/pingpong.c" | cut -d: -f1 | tr '\n' ' ')
[ "$(echo $lines | wc -w)" = 2 ] || fail "expected two MPI_Send( lines in pingpong.c, found: $lines"
"$PYTHON3" - "$work/trace.dump" $lines <<'PY' || fail "MPI_Send call sites are wrong"
import re, sys
bad, count = [], 0
for l in open(sys.argv[1]):
    if " kind=MPI_Send " not in l:
        continue
    count += 1
    rank = int(re.search(r" rank=(\d+)", l).group(1))
    m = re.search(r" site=(\S+)", l)
    if not (m and re.match(r"main@(.*/)?pingpong\.c:%s$" % sys.argv[2 + rank], m.group(1))):
        bad.append((rank, m.group(1) if m else None))
if count == 0 or bad:
    print("MPI_Send sites: %d events, %d wrong, e.g. %r (expected main@pingpong.c:%s for rank 0, :%s for rank 1)"
          % (count, len(bad), bad[:3], sys.argv[2], sys.argv[3]))
    sys.exit(1)
PY

# Depth 4: dump prints each MPI_Send's whole call chain, innermost first: main at the line that
# calls it, then the frames that called main (at least one: the C library's start-up).
FC_GENV="-genv FLOWCUT_CALLSITE_DEPTH 4" run_traced "$work/d4.out" "$work/d4" 2 "$prog" 5 0
read_trace "$work/d4"
"$PYTHON3" - "$work/d4.dump" $lines <<'PY' || fail "MPI_Send call chains at depth 4 are wrong"
import re, sys
bad, count = [], 0
for l in open(sys.argv[1]):
    if " kind=MPI_Send " not in l:
        continue
    count += 1
    rank = int(re.search(r" rank=(\d+)", l).group(1))
    frames = re.search(r" site=(\S+)", l).group(1).split("<")
    if not (2 <= len(frames) <= 4 and re.match(r"main@(.*/)?pingpong\.c:%s$" % sys.argv[2 + rank], frames[0])
            and all(frames[1:])):
        bad.append((rank, frames))
if count == 0 or bad:
    print("MPI_Send chains: %d events, %d wrong, e.g. %r" % (count, len(bad), bad[:2]))
    sys.exit(1)
PY

# Depth 0 turns call sites off: no event carries one.
run_untraced "$work/d0plain.out" 2 "$prog" 5 0
FC_GENV="-genv FLOWCUT_CALLSITE_DEPTH 0" run_traced "$work/d0.out" "$work/d0" 2 "$prog" 5 0
same_output "$work/d0plain.out" "$work/d0.out"
read_trace "$work/d0"
grep -q ' site=' "$work/d0.dump" && fail "FLOWCUT_CALLSITE_DEPTH=0 still records call sites"

# FLOWCUT_WRITE_AT=100 holds full chunks back until the pool is full: with a 64 KiB pool (4 chunks
# of 256 records) and 2000 round trips (8000 records per rank) the writer must still drain it
# many times over, and with the default pool everything waits for MPI_Finalize; either way every
# event is in the trace.
for buf in 64K 4M; do
    FC_GENV="-genv FLOWCUT_WRITE_AT 100 -genv FLOWCUT_BUFFER $buf" run_traced "$work/w$buf.out" "$work/w$buf" 2 "$prog" 2000 0
    [ "$(cat "$work/w$buf.out.rc")" = 0 ] || fail "FLOWCUT_WRITE_AT=100, FLOWCUT_BUFFER=$buf: exit $(cat "$work/w$buf.out.rc")"
    [ -s "$work/w$buf.out.err" ] && fail "FLOWCUT_WRITE_AT=100, FLOWCUT_BUFFER=$buf: stderr $(head -c 500 "$work/w$buf.out.err")"
    read_trace "$work/w$buf"
    "$PYTHON3" "$srcdir/check_trace.py" pingpong "$work/w$buf.dump" "$work/w$buf.json" 2 2000 0 ||
        fail "FLOWCUT_WRITE_AT=100, FLOWCUT_BUFFER=$buf: events missing or wrong"
done

# FLOWCUT_ZLIB_LEVEL: 1 (igzip), 6 (libdeflate) and 0 (stored), with a 64 KiB pool so that the
# writer compresses many chunks during the loop: every event read back, and the EVENTS blocks
# flagged zlib (RFC 1950) exactly when compressed.
for level in 1 6 0; do
    FC_GENV="-genv FLOWCUT_ZLIB_LEVEL $level -genv FLOWCUT_BUFFER 64K" run_traced "$work/z$level.out" "$work/z$level" 2 "$prog" 2000 0
    [ -s "$work/z$level.out.err" ] && fail "FLOWCUT_ZLIB_LEVEL=$level: stderr $(head -c 500 "$work/z$level.out.err")"
    read_trace "$work/z$level"
    "$PYTHON3" "$srcdir/check_trace.py" pingpong "$work/z$level.dump" "$work/z$level.json" 2 2000 0 ||
        fail "FLOWCUT_ZLIB_LEVEL=$level: events missing or wrong"
    "$PYTHON3" - "$level" "$work/z$level"/rank-*.fct <<'PY' || fail "FLOWCUT_ZLIB_LEVEL=$level: EVENTS blocks stored wrongly"
import struct, sys, zlib
level, bad, n = int(sys.argv[1]), [], 0
for path in sys.argv[2:]:
    b = open(path, "rb").read()
    off = struct.unpack_from("<I", b, 16)[0]
    while off + 24 <= len(b):
        kind, flags, stored, raw = struct.unpack_from("<4I", b, off)
        payload = b[off + 24:off + 24 + stored]
        if kind == 2:
            data = zlib.decompress(payload) if flags & 1 else payload
            # thread and record count, uvarints under 128 here: a full chunk holds 256 records
            if len(data) != raw or (flags & 1 and stored >= raw):
                bad.append((path, off, "stream"))
            elif data[1] == 0x80 and data[2] == 0x02:
                n += 1
                if bool(flags & 1) != (level > 0):
                    bad.append((path, off, flags))
        off += 24 + stored
if n < 4 or bad:
    print("%d full EVENTS blocks, wrong: %r" % (n, bad[:3]))
    sys.exit(1)
PY
done
exit 0
