#!/usr/bin/env python3
"""bench.py: measures what tracing costs, in time per intercepted call and bytes per event on disk,
and prints the figures next to flowcut's targets. It asserts nothing about speed.

Usage: bench.py [--reps N] [--quick] [--no-callgrind] [-B BASEBUILD] [--only PART] [--markdown] BUILDDIR

(a) Overhead. A 0-byte ping-pong (examples/pingpong, 2 ranks) and a non-blocking message-rate loop
    (examples/nbrate, 2 ranks, Isend/Irecv/Waitall) are run untraced and traced with call sites off
    (depth 0), at depth 1 and at depth 4, alternating the four variants within each repetition (in a
    rotating order, so that drifts of the machine hit all of them alike). Each run reports its own
    time per round trip or iteration, measured inside the program between a barrier and the end of
    the loop, so start-up and trace writing at MPI_Finalize are not counted but buffering and the
    writing of full chunks during the loop are. Medians over the repetitions give:
      added ns per call = (median traced - median untraced) / calls per rank per round trip or
      iteration (2 for the ping-pong, 2 x WINDOW + 1 for nbrate). The same figure is also computed
    from each run's fastest block of iterations, which is steadier on a busy machine.
    For the ping-pong both ranks' calls lie on the critical path one after the other, and half of
    each call's added time (the part before or after the MPI call) overlaps the other rank's wait;
    so the per-call figure divides by the calls of one rank.
    The traced cost is then split, from the same repetitions, into what the application thread adds
    and what the background writer thread costs:
      app: two more variants per depth run with the writer held back (FLOWCUT_WRITE_AT=100 and a
      FLOWCUT_BUFFER that holds the whole loop), so that no chunk is encoded or compressed during
      the timed loop; (median of those - median untraced) / calls, over the whole loop.
      writer: the writer thread's CPU time per event (CLOCK_THREAD_CPUTIME_ID, which the tracer
      prints at MPI_Finalize with FLOWCUT_STATS=1) in the ordinary traced runs, and that times the
      events per call. When every core runs a busy-polling rank (as here: 2 ranks on 2 cores) the
      writers' CPU comes straight out of the loop's critical path, so the whole-loop figure is
      about app + (ranks x writer ns/call); on a node with a spare core per rank it is about app.
(c) Instructions, the figure of record (valgrind --tool=callgrind; skipped with --no-callgrind or
    when valgrind is missing): the ping-pong and nbrate -s (a window of 4 posted through helpers
    called from 4 lines each, so that deeper call sites see several chains per helper), untraced
    and traced at depths 0, 1 and 4: the instructions executed inside libflowcut and libunwind on
    the application thread per intercepted call, the writer thread's per event, their sum per call,
    bytes per event of the same workload run without valgrind, and the call-site counters. Side by
    side with the untraced run: nbrate -s on one rank, its own partner, untraced and traced at each
    depth, whose MPI never waits, so that the application thread's whole count per call is MPI's
    own work untraced and that plus what tracing adds traced. Each count is the difference of
    two runs of different lengths (start-up and MPI_Finalize cancel out), without the clock
    measurements of MPI_Init and MPI_Finalize, which wait for the other rank by polling. With
    -B BASEBUILD the tracer of another build tree runs the same programs and both rows are printed.
    --only overhead|callgrind|size|polls runs one part; --markdown also prints the table of (c) as the
    rows of docs/results.md.
    It also counts one MPI_Waitall of 8 requests, everything below the entry point included (the
    tracer and MPI), untraced and traced with FLOWCUT_REQUEST_TIMES=0 (PMPI_Waitall) and 1 (the
    default: PMPI_Waitsome steps, each request's own completion time): examples/nbrate on one rank
    with a window of 4, whose four receives and four sends to itself are complete when the call
    comes, so that the count is the call's alone, never time spent waiting.
(b) Size. Each example runs traced at two problem sizes, with at most as many ranks as the machine
    has cores (MPI ranks busy-poll: see below). For each run, the files' block headers
    (format.h) split the bytes into EVENTS blocks and everything else (file header, rank, module,
    site, communicator and clock definitions, end block), and `flowcut info --json` gives the event
    count. Reported: bytes per event (EVENTS bytes / events), the fixed bytes per rank, and, as a
    second estimate, the slope between the two sizes: (total bytes L - total bytes S) / (events L -
    events S).
    Examples written for more ranks than there are cores are also run at their own rank count,
    and those figures are printed apart, labelled oversubscribed: with more busy-polling ranks
    than cores, a rank blocked in a receive runs only when the scheduler gives it a time slice,
    so each wait lasts milliseconds of scheduler noise instead of microseconds, and the encoder
    cannot predict those durations; the bytes they cost measure the machine, not the tracer.
(d) Polling loops. examples/polling (3 ranks: a master polling MPI_Testany every 100 us, workers
    polling MPI_Iprobe in a tight loop) traced with each poll recorded (FLOWCUT_FOLD_POLLS=0) and
    with runs of polls that found nothing folded (the default): the trace's bytes, and under
    callgrind the instructions of a worker per MPI call it made, on its application thread (in
    libflowcut) and on its writer thread.
"""
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

TARGET_NS = {0: None, 1: 30, 4: 80}
TARGET_BYTES_PER_EVENT = 4.0


class Tree:
    def __init__(self, builddir):
        self.build = os.path.abspath(builddir)
        self.lib = os.path.join(self.build, "libtrace", ".libs", "libflowcut.so")
        self.flowcut = os.path.join(self.build, "tools", "flowcut")
        self.examples = os.path.join(self.build, "examples")
        self.mpiexec = os.environ.get("MPIEXEC", "mpiexec.mpich")
        srcdir = os.environ.get("abs_top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        self.env = dict(os.environ)
        self.env["FLOWCUT_EXEC_PATH"] = ":".join([os.path.join(self.build, "analyzer"),
                                                  os.path.join(self.build, "tools"), os.path.join(srcdir, "tools")])
        self.env["FLOWCUT_LIB"] = self.lib
        for k in ("FLOWCUT_DIR", "FLOWCUT_CALLSITE_DEPTH", "FLOWCUT_BUFFER", "FLOWCUT_NODE", "FLOWCUT_ZLIB_LEVEL",
                  "FLOWCUT_WRITE_AT", "FLOWCUT_STATS", "FLOWCUT_REQUEST_TIMES"):
            self.env.pop(k, None)

    def run(self, n, prog, args, trace_dir=None, depth=None, env=None, wrap=None, both=False):
        """Runs an example under mpiexec (traced when trace_dir is given, with the FLOWCUT_* settings
        in env, each rank under the command wrap when given); returns its stdout, or (stdout,
        stderr) when both is set."""
        cmd = [self.mpiexec]
        if trace_dir is not None:
            cmd += ["-genv", "LD_PRELOAD", self.lib, "-genv", "FLOWCUT_DIR", trace_dir]
            if depth is not None:
                cmd += ["-genv", "FLOWCUT_CALLSITE_DEPTH", str(depth)]
            for k, v in sorted((env or {}).items()):
                cmd += ["-genv", k, str(v)]
        cmd += ["-n", str(n)] + (wrap or []) + [os.path.join(self.examples, prog)] + [str(a) for a in args]
        p = subprocess.run(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[:500]))
        return (p.stdout, p.stderr) if both else p.stdout

    def info(self, trace_dir):
        p = subprocess.run([self.flowcut, "info", "--json", trace_dir], env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("flowcut info --json %s exited %d: %s" % (trace_dir, p.returncode, p.stderr.strip()[:500]))
        return json.loads(p.stdout)


def value_of(out, key):
    """The number after `key=` in the program's output."""
    for tok in out.split():
        if tok.startswith(key + "="):
            return float(tok.split("=", 1)[1])
    raise RuntimeError("no %s= in the output: %r" % (key, out[:300]))


# ---- (a) overhead ------------------------------------------------------------------------------

REC_BYTES = 64  # sizeof(fc__rec): the memory one event takes in the tracer's buffer


def writer_ns_per_event(err):
    """Mean over ranks of the writer thread's CPU ns per event, from the FLOWCUT_STATS lines."""
    vals = []
    for line in err.splitlines():
        if line.startswith("flowcut: rank ") and "writer thread" in line:
            toks = line.replace(",", " ").split()
            vals.append(float(toks[toks.index("per") - 2]))
    if not vals:
        raise RuntimeError("no FLOWCUT_STATS line in the output: %r" % err[:300])
    return sum(vals) / len(vals)


def overhead(tree, reps, quick):
    workloads = [
        # name, ranks, program, arguments, key of the time in the output, calls and events per rank
        # per unit (nbrate: 16 Isend + 16 Irecv + 1 Waitall, which records 32 completions)
        ("pingpong 0 B", 2, "pingpong", ["-t", 20000 if quick else 200000, 0], "usec_per_roundtrip", 2, 2),
        ("nbrate W=16", 2, "nbrate", ["-t", 2000 if quick else 20000, 16], "usec_per_iter", 33, 65),
    ]
    depths = [0, 1, 4]
    # None: untraced; ("d", k): traced at depth k; ("app", k): the same with the writer held back
    variants = [None] + [("d", k) for k in depths] + [("app", k) for k in depths]
    print("(a) added time per intercepted call, medians of %d alternating repetitions" % reps)
    print("    load average before: %.2f %.2f %.2f (other work on the machine inflates and scatters the times)"
          % os.getloadavg())
    print("    %-13s %-9s %10s %8s %10s %10s %10s %8s" % ("workload", "variant", "us/unit", "ratio", "ns/call",
                                                          "block us", "ns/call", "target"))
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    splits = []
    try:
        for name, n, prog, args, key, calls, events in workloads:
            units = args[1]
            # Room for the whole loop and then some, so that the held-back writer never has to write
            # during it (FLOWCUT_WRITE_AT=100 writes only when no chunk is free).
            held_mb = (units * events * REC_BYTES * 3 // 2 >> 20) + 8
            whole = {v: [] for v in variants}
            block = {v: [] for v in variants}
            wns = {k: [] for k in depths}
            for rep in range(reps):
                order = variants[rep % len(variants):] + variants[:rep % len(variants)]
                for v in order:
                    tdir = None if v is None else os.path.join(scratch, "t")
                    env = {"FLOWCUT_STATS": 1}
                    if v is not None and v[0] == "app":
                        env.update(FLOWCUT_WRITE_AT=100, FLOWCUT_BUFFER="%dM" % held_mb)
                    out, err = tree.run(n, prog, args, tdir, None if v is None else v[1], env, both=True)
                    whole[v].append(value_of(out, key))
                    block[v].append(value_of(out, "best_block_usec"))
                    if v is not None and v[0] == "d":
                        wns[v[1]].append(writer_ns_per_event(err))
                    if tdir:
                        shutil.rmtree(tdir, ignore_errors=True)
            base, bbase = statistics.median(whole[None]), statistics.median(block[None])
            for v in variants:
                if v is not None and v[0] != "d":
                    continue
                med, bmed = statistics.median(whole[v]), statistics.median(block[v])
                label = "untraced" if v is None else "depth %d" % v[1]
                if v is None:
                    cols = (med, "1.000", "-", bmed, "-", "-")
                else:
                    target = TARGET_NS[v[1]]
                    cols = (med, "%.3f" % (med / base), "%.1f" % ((med - base) * 1000.0 / calls), bmed,
                            "%.1f" % ((bmed - bbase) * 1000.0 / calls), "<= %d" % target if target else "-")
                print("    %-13s %-9s %10.4f %8s %10s %10.4f %10s %8s" % ((name, label) + cols))
            print("    %-13s spread of whole-loop us/unit (min-max): %s" % ("", ", ".join(
                "%s %.3f-%.3f" % ("untraced" if v is None else "d%d" % v[1], min(t), max(t))
                for v, t in whole.items() if v is None or v[0] == "d")))
            for k in depths:
                app = (statistics.median(whole[("app", k)]) - base) * 1000.0 / calls
                bapp = (statistics.median(block[("app", k)]) - bbase) * 1000.0 / calls
                w = statistics.median(wns[k])
                wcall = w * events / calls
                full = (statistics.median(whole[("d", k)]) - base) * 1000.0 / calls
                splits.append((name, k, app, bapp, w, wcall, app + n * wcall, full, TARGET_NS[k], held_mb))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("    us/unit: median time per round trip (ping-pong) or iteration (nbrate) over the whole loop;")
    print("    ns/call: (traced - untraced) / calls per rank per unit (2, resp. 2 x 16 + 1), from those medians;")
    print("    block us and the ns/call after it: the same from each run's fastest block of 1000 round trips")
    print("    (100 iterations), which other work on the machine disturbs least but which leaves out the")
    print("    rare blocks where a full buffer is compressed and written.")
    print()
    print("    the same traced cost split, from the same repetitions: what the application thread adds")
    print("    (writer held back) and what the writer thread costs")
    print("    %-13s %-9s %9s %9s %11s %11s %11s %11s %8s" % (
        "workload", "variant", "app", "app block", "writer CPU", "writer", "app+ranks", "whole loop", "target"))
    print("    %-13s %-9s %9s %9s %11s %11s %11s %11s %8s" % (
        "", "", "ns/call", "ns/call", "ns/event", "ns/call", "x writer", "ns/call", ""))
    for name, k, app, bapp, w, wcall, est, full, target, held_mb in splits:
        print("    %-13s %-9s %9.1f %9.1f %11.1f %11.1f %11.1f %11.1f %8s" % (
            name, "depth %d" % k, app, bapp, w, wcall, est, full, "<= %d" % target if target else "-"))
    print("    app: whole loop with FLOWCUT_WRITE_AT=100 and a buffer holding the loop (ping-pong %dM,"
          % splits[0][9])
    print("    nbrate %dM per rank), so that nothing is encoded or compressed until MPI_Finalize; its records"
          % splits[-1][9])
    print("    go to memory that is not reused, a little slower than the default 4M ring. writer CPU: the")
    print("    writer thread's CPU time per event (FLOWCUT_STATS) in the ordinary runs; writer ns/call: that")
    print("    times events per call (1 for the ping-pong, 65/33 for nbrate, whose Waitall records 32")
    print("    completions). app+ranks x writer: what the whole loop costs when every core runs a")
    print("    busy-polling rank, so that each rank's writer takes its CPU from the loop's critical path.")
    print("    load average after: %.2f %.2f %.2f" % os.getloadavg())


CG_WORKLOADS = [
    # name, program, arguments before the length, after it, calls per rank per unit of length
    ("pingpong", "pingpong", [], [0], 2),
    ("nbrate -s W=4", "nbrate", ["-s"], [4], 9),
]
CG_DEPTHS = (0, 1, 4)


def callgrind_table(tree, base, quick, markdown=False):
    """Prints, per workload and call-site depth, callgrind's instruction counts of rank 0: the
    application thread's instructions in libflowcut and libunwind per intercepted call, the writer
    thread's per event, their sum per call, the whole application thread's per call (MPI's own work
    included) next to the untraced run's, and the bytes per event of a run at full speed. Each count
    is the difference of two runs of different lengths, which leaves out start-up and MPI_Finalize.
    With base (another build tree), its tracer runs the same programs and both rows are printed."""
    if shutil.which("valgrind") is None:
        print("    (valgrind not found: no instruction counts)")
        return
    lengths = (1000, 3000) if quick else (4000, 16000)
    builds = [("this", tree)] + ([("base", base)] if base is not None else [])
    print()
    print("(c) instructions (callgrind, 2 ranks, rank 0, %d minus %d units of each loop: round trips or"
          % (lengths[1], lengths[0]))
    print("    iterations):")
    print("    %-14s %-5s %-8s %9s %10s %9s %9s %9s" % (
        "workload", "build", "variant", "app", "writer", "events", "sum", "B/event"))
    print("    %-14s %-5s %-8s %9s %10s %9s %9s %9s" % (
        "", "", "", "ins/call", "ins/event", "per call", "ins/call", ""))
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    rows = []
    try:
        for name, prog, pre, post, calls in CG_WORKLOADS:
            if not os.path.exists(os.path.join(tree.examples, prog)):
                print("    %-14s not built" % name)
                continue
            c0 = callgrind_run(tree, scratch, prog, pre + [lengths[0]] + post, None)
            c1 = callgrind_run(tree, scratch, prog, pre + [lengths[1]] + post, None)
            ncalls = (lengths[1] - lengths[0]) * calls
            untraced = (c1["main"] - c0["main"]) / ncalls
            print("    %-14s %-5s %-8s %s" % (name, "", "untraced", "application thread: %.0f instructions per call"
                                                       " (MPI's own work)" % untraced))
            for depth in CG_DEPTHS:
                for label, t in builds:
                    c0 = callgrind_run(t, scratch, prog, pre + [lengths[0]] + post, depth)
                    c1 = callgrind_run(t, scratch, prog, pre + [lengths[1]] + post, depth)
                    ev = c1["events"] - c0["events"]
                    nc = c1["calls"] - c0["calls"]
                    app = (c1["app"] - c0["app"]) / nc
                    writer = (c1["writer"] - c0["writer"]) / ev
                    bpe = bytes_per_event(t, scratch, prog, pre + [lengths[1] * 5] + post, depth)
                    print("    %-14s %-5s %-8s %9.0f %10.0f %9.2f %9.0f %9.2f" % (
                        name, label if base is not None else "", "depth %d" % depth, app, writer, ev / nc,
                        app + writer * ev / nc, bpe))
                    rows.append("| %s | %s%d | %.0f | %.0f | %.2f | %.0f | %.2f | %s |" % (
                        name, label + ", " if base is not None else "", depth, app, writer, ev / nc,
                        app + writer * ev / nc, bpe, unwind_cell(c1["unwinds"])))
                    if c1["unwinds"] is not None:
                        print("    %-14s %-5s %-8s %s" % ("", "", "", c1["unwinds"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("    app: instructions executed in libflowcut and libunwind on the application thread per")
    print("    intercepted call; writer: all instructions of the writer thread per event recorded (a Waitall")
    print("    records one event per completed request); sum: app + writer x events per call; untraced:")
    print("    all the application thread executes per call without the tracer, most of it MPI polling for")
    print("    its peer (it varies with how long each rank waits); B/event: EVENTS block bytes per event of")
    print("    the same workload, %d units, run without valgrind (under valgrind the recorded durations are"
          % (lengths[1] * 5))
    print("    longer and noisier). Untraced: all the application thread executes per call, MPI's own work,")
    print("    most of it polling for the peer, so that it varies with how long each rank waits (the")
    print("    difference of two runs can even come out negative); the one-rank table below counts MPI's")
    print("    work without waiting. The call-site line under a row: the rank's distinct call chains, its")
    print("    stack unwinds, and the unwinds of a chain it already knew (FLOWCUT_STATS).")
    if markdown and rows:
        print()
        print("| workload | depth | application thread, instructions/call | writer, instructions/event "
              "| events/call | both, instructions/call | bytes/event | chains / unwinds / repeated |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            print(r)
    callgrind_self(tree, quick)
    callgrind_waitall(tree, quick)


def callgrind_self(tree, quick):
    """Prints the application thread's instructions per call of nbrate -s on one rank, its own
    partner, untraced and traced at each depth: every Waitall finds its requests complete, so MPI
    never waits and the untraced count is MPI's own work, the same from run to run, beside which
    the traced runs' counts show what the tracer adds."""
    lengths = (200, 1200) if quick else (1000, 5000)
    calls = 9  # 4 Irecv, 4 Isend and a Waitall an iteration
    print()
    print("    nbrate -s W=4 on 1 rank, its own partner (no waiting: the untraced count is MPI's own work),")
    print("    %d minus %d iterations, instructions per call on the application thread:" % (lengths[1], lengths[0]))
    print("    %-10s %11s %11s %11s" % ("variant", "whole", "tracer", "added"))
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    base = None
    try:
        for depth in (None,) + CG_DEPTHS:
            c0 = callgrind_run(tree, scratch, "nbrate", ["-s", lengths[0], 4], depth, ranks=1)
            c1 = callgrind_run(tree, scratch, "nbrate", ["-s", lengths[1], 4], depth, ranks=1)
            n = (lengths[1] - lengths[0]) * calls
            whole = (c1["main"] - c0["main"]) / n
            app = (c1["app"] - c0["app"]) / n
            base = whole if base is None else base
            print("    %-10s %11.0f %11.0f %11s" % ("untraced" if depth is None else "depth %d" % depth, whole, app,
                                                   "-" if depth is None else "%+.0f" % (whole - base)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("    whole: all the application thread executes; tracer: in libflowcut and libunwind; added:")
    print("    against untraced (the tracer's part and the PMPI_Waitsome steps that replace PMPI_Waitall).")


def unwind_cell(line):
    """"chains / unwinds / repeated" from the tracer's call-site statistics line, or "-"."""
    if not line:
        return "-"
    nums = [tok for tok in line.replace(",", " ").split() if tok.isdigit()]
    return " / ".join(nums[:3]) if len(nums) >= 3 else "-"


def callgrind_waitall(tree, quick):
    """Prints the instructions of one MPI_Waitall of 8 requests, untraced and with
    FLOWCUT_REQUEST_TIMES 0 and 1, from callgrind runs of nbrate on one rank at two lengths."""
    lengths = (100, 600) if quick else (200, 1200)
    print()
    print("    MPI_Waitall of 8 requests, complete at the call (callgrind, nbrate on 1 rank, window 4,")
    print("    %d minus %d iterations), instructions per call on the application thread:" % (lengths[1], lengths[0]))
    print("    %-26s %10s %10s %10s %10s" % ("variant", "whole call", "in MPI", "tracer", "added"))
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    base = None
    try:
        for name, times in (("untraced", None), ("FLOWCUT_REQUEST_TIMES=0", "0"), ("FLOWCUT_REQUEST_TIMES=1", "1")):
            runs = [waitall_run(tree, scratch, times, iters) for iters in lengths]
            whole = (runs[1][0] - runs[0][0]) / float(lengths[1] - lengths[0])
            mpi = (runs[1][1] - runs[0][1]) / float(lengths[1] - lengths[0])
            base = whole if base is None else base
            print("    %-26s %10.0f %10.0f %10.0f %10s" % (name, whole, mpi, whole - mpi,
                                                           "-" if times is None else "%+.0f" % (whole - base)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("    whole call: MPI_Waitall with all it calls; in MPI: PMPI_Waitall, or the PMPI_Waitsome steps")
    print("    and the PMPI_Waitall of null and inactive requests; tracer: the rest; added: against untraced.")


def waitall_run(tree, scratch, times, iters):
    """(MPI_Waitall's instructions, those of the PMPI calls below it) in one callgrind run of
    nbrate on one rank, untraced when times is None, else with FLOWCUT_REQUEST_TIMES=times."""
    out = os.path.join(scratch, "cgw")
    tdir = os.path.join(scratch, "w")
    wrap = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out]
    tree.run(1, "nbrate", [iters, 4], tdir if times is not None else None,
             env={"FLOWCUT_REQUEST_TIMES": times} if times is not None else None, wrap=wrap)
    shutil.rmtree(tdir, ignore_errors=True)
    p = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    os.unlink(out)
    # Inclusive counts per function: "  1,234 (1.00%)  file:function [object]". The entry point is
    # the largest of the Waitall functions (the wrapper, or MPICH's own when untraced); the PMPI
    # calls the tracer makes are counted once each, by name.
    incl = {}
    for line in p.stdout.splitlines():
        toks = line.split()
        if len(toks) < 3 or not toks[0].replace(",", "").isdigit() or "[" not in line:
            continue
        fn = toks[-2].rsplit(":", 1)[-1]
        incl[fn] = max(incl.get(fn, 0), int(toks[0].replace(",", "")))
    whole = max(incl.get("MPI_Waitall", 0), incl.get("PMPI_Waitall", 0))
    if whole == 0:
        raise RuntimeError("callgrind: no MPI_Waitall in nbrate's profile")
    if times is None:
        return whole, whole
    mpi = incl.get("PMPI_Waitsome", 0) + incl.get("PMPI_Waitall", 0)
    return whole, mpi


def callgrind_run(tree, scratch, prog, args, depth, ranks=2):
    """Counts of rank 0 of one callgrind run (untraced when depth is None): events and calls of the
    rank, instructions of its application thread (all, and those in libflowcut and libunwind),
    instructions of its writer thread, and the call-site statistics line when the tracer printed
    one."""
    tdir = None if depth is None else os.path.join(scratch, "t")
    prefix = os.path.join(scratch, "cg")
    wrap = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=%s.%%q{PMI_RANK}" % prefix]
    _, err = tree.run(ranks, prog, args, tdir, depth, {"FLOWCUT_STATS": 1} if tdir else None, wrap=wrap, both=True)
    res = {"events": 0, "calls": 0, "app": 0, "main": 0, "writer": 0, "unwinds": None}
    if tdir is not None:
        counts = rank_events(tree, tdir, 0)
        res["events"] = sum(counts.values())
        res["calls"] = sum(v for k, v in counts.items() if k not in ("COMPLETE", "START"))
        shutil.rmtree(tdir, ignore_errors=True)
        for line in err.splitlines():
            if line.startswith("flowcut: rank 0: call sites"):
                res["unwinds"] = line.split(": ", 2)[2]
    found = thread_counts(scratch, 0, res)
    if not found or (tdir is not None and res["writer"] == 0):
        raise RuntimeError("callgrind: no main or writer thread found for rank 0")
    return res


def thread_counts(scratch, rank, res):
    """Adds to res the instructions of rank's threads in the callgrind files scratch/cg.*, which it
    removes: "main" (all of the application thread), "app" (its part in libflowcut and libunwind)
    and "writer" (the writer thread). Returns whether the application thread was found."""
    found = False
    for f in sorted(os.listdir(scratch)):
        if not f.startswith("cg."):
            continue
        path = os.path.join(scratch, f)
        if f.startswith("cg.%d-" % rank):
            with open(path) as fh:
                text = fh.read()
            # The clock measurements of MPI_Init and MPI_Finalize wait for the other rank by polling,
            # as long as valgrind makes them wait: not per-call work.
            tot = callgrind_objects(path, ("fc__clock_sync", "measure", "serve", "wait_politely"))
            if "writer_main" in text:
                res["writer"] += sum(tot.values())
            elif f.endswith("-01"):  # the main thread comes first
                found = True
                res["main"] += sum(tot.values())
                res["app"] += sum(v for o, v in tot.items() if "libflowcut" in o or "libunwind" in o)
        os.unlink(path)
    return found


def rank_events(tree, tdir, rank):
    """Events per kind of one rank of a trace, from flowcut dump."""
    p = subprocess.run([tree.flowcut, "dump", "--no-sites", "--rank", str(rank), tdir], env=tree.env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("flowcut dump %s exited %d: %s" % (tdir, p.returncode, p.stderr.strip()[:500]))
    counts = {}
    for line in p.stdout.splitlines():
        for tok in line.split():
            if tok.startswith("kind="):
                k = tok[5:]
                counts[k] = counts.get(k, 0) + 1
                break
    return counts


def bytes_per_event(tree, scratch, prog, args, depth):
    """EVENTS block bytes per event of one traced run at full speed."""
    tdir = os.path.join(scratch, "b")
    shutil.rmtree(tdir, ignore_errors=True)
    tree.run(2, prog, args, tdir, depth)
    nev = sum(tree.info(tdir).get("events", {}).values())
    ev_bytes = 0
    for f in os.listdir(tdir):
        if f.endswith(".fct"):
            ev_bytes += split_file(os.path.join(tdir, f))[0]
    shutil.rmtree(tdir, ignore_errors=True)
    return ev_bytes / nev if nev else float("nan")


def callgrind_objects(path, skip_fns=()):
    """Instructions per object (shared library or program) of one callgrind output file, read from
    the file itself: callgrind_annotate lists inlined code under its source file, not its object.
    Functions whose names start with one of skip_fns are left out (their own instructions, not
    those of what they call)."""
    names, fnames, tot, cur, fn, skip = {}, {}, {}, None, "", False
    with open(path) as f:
        for line in f:
            if skip:  # the line after calls= is the call's inclusive cost, already counted in the callee
                skip = False
                continue
            c = line[:1]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if len(parts) >= 2 and cur is not None and not fn.startswith(skip_fns):
                    tot[cur] = tot.get(cur, 0) + int(parts[1])
            elif line.startswith("calls="):
                skip = True
            elif line.startswith(("ob=", "cob=", "fn=", "cfn=")):
                key, v = line.split("=", 1)
                v = v.strip()
                table = names if key.endswith("ob") else fnames
                if v.startswith("("):  # name compression: "(id) name" defines, "(id)" refers
                    i = v.index(")")
                    if v[i + 1:].strip():
                        table[v[1:i]] = v[i + 1:].strip()
                    v = table.get(v[1:i], v)
                if key == "ob":
                    cur = v
                elif key == "fn":
                    fn = v
    return tot


# ---- (b) size on disk --------------------------------------------------------------------------

def split_file(path):
    """(bytes in EVENTS blocks, all other bytes) of one rank file, from its block headers."""
    events = other = 0
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != b"FLOWCUT\x1a":
        raise RuntimeError("%s is not a flowcut trace file" % path)
    header_size = struct.unpack_from("<I", data, 16)[0]
    other += header_size
    off = header_size
    while off + 24 <= len(data):
        kind, _flags, stored = struct.unpack_from("<III", data, off)
        size = 24 + stored
        if kind == 2:  # FC_BLK_EVENTS
            events += size
        else:
            other += size
        off += size
    other += len(data) - off  # a torn last block, if any
    return events, other


def measure_size(tree, scratch, n, prog, args):
    tdir = os.path.join(scratch, "s")
    shutil.rmtree(tdir, ignore_errors=True)
    tree.run(n, prog, args, tdir)
    info = tree.info(tdir)
    nev = sum(info.get("events", {}).values())
    ev_bytes = other = 0
    files = sorted(f for f in os.listdir(tdir) if f.endswith(".fct"))
    for f in files:
        e, o = split_file(os.path.join(tdir, f))
        ev_bytes += e
        other += o
    shutil.rmtree(tdir, ignore_errors=True)
    return nev, ev_bytes, other, len(files)


def cores():
    """CPUs this process may run on (its affinity mask), which is what its MPI ranks share."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def size_row(tree, scratch, prog, n, small, large):
    """Measures one example at two sizes; returns its table columns after the name."""
    ns, es, os_, files = measure_size(tree, scratch, n, prog, small)
    nl, el, ol, _ = measure_size(tree, scratch, n, prog, large)
    slope = ((el + ol) - (es + os_)) / (nl - ns) if nl != ns else float("nan")
    return "%5d %9d %11d %9.2f %13.0f %12.2f %9.2f" % (
        n, nl, el, el / nl if nl else float("nan"), ol / max(files, 1), slope,
        (el + ol) / nl if nl else float("nan"))


def size(tree, quick):
    scale = 1 if quick else 5
    ncores = cores()
    runs = [
        # program, ranks it is written for, arguments at the small size, at the large size
        ("pingpong", 2, [200, 0, 8], [200 * scale * 10, 0, 8]),
        ("ring", 4, [50, 4], [500 * scale, 4]),
        ("halo", 4, [50, 8, 8], [500 * scale, 8, 8]),
        ("wildcard", 4, [20], [20 * scale]),
        ("persistent", 3, [100, 4], [1000 * scale, 4]),
        ("threads", 2, [100], [1000 * scale]),
        ("nbrate", 2, [100, 8], [1000 * scale, 8]),
        ("f08", 2, [100], [1000 * scale]),
        ("fmpi", 3, [50], [500 * scale]),
        ("cxx", 2, [100, 4], [1000 * scale, 4]),
    ]
    print()
    print("(b) bytes on disk per event (call-site depth 1, default buffer), at most one rank per core (%d cores);"
          % ncores)
    print("    target <= %.0f B/event" % TARGET_BYTES_PER_EVENT)
    header = "    %-10s %5s %9s %11s %9s %13s %12s %9s" % ("example", "ranks", "events", "event bytes", "B/event",
                                                           "fixed B/rank", "slope B/ev", "total B/ev")
    print(header)
    over = []
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    try:
        for prog, n, small, large in runs:
            if not os.path.exists(os.path.join(tree.examples, prog)):
                print("    %-10s not built" % prog)
                continue
            print("    %-10s %s" % (prog, size_row(tree, scratch, prog, min(n, max(ncores, 2)), small, large)))
            if n > max(ncores, 2):
                over.append((prog, n, small, large))
        print("    B/event: EVENTS block bytes / events of the large run; fixed B/rank: all other bytes")
        print("    (header, definitions, clock, end) per rank file; slope: bytes added per event between the")
        print("    small and the large run; total B/ev: everything / events of the large run.")
        if over:
            print()
            print("    oversubscribed: the examples above at the rank count they are written for, more ranks than")
            print("    the %d cores (not held to the target):" % ncores)
            print(header)
            for prog, n, small, large in over:
                print("    %-10s %s" % (prog, size_row(tree, scratch, prog, n, small, large)))
            print("    With more busy-polling ranks than cores, a rank blocked in a receive runs only when the")
            print("    scheduler gives it a time slice, so each blocking wait lasts milliseconds of scheduler noise")
            print("    instead of microseconds. The recorded times keep full nanosecond precision, and noise does")
            print("    not compress: the extra bytes per event measure the oversubscribed machine, not the tracer.")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def polls(tree, quick):
    """(d) A polling loop traced with each poll recorded (FLOWCUT_FOLD_POLLS=0) and with runs of
    polls that found nothing folded (the default): examples/polling on 3 ranks, whose workers poll
    MPI_Iprobe in a tight loop and whose master polls MPI_Testany every 100 us. Prints the trace's
    bytes and, under callgrind, the instructions of worker rank 1 per MPI call it made (its own
    count): in libflowcut on its application thread, and on its writer thread."""
    rounds = 4 if quick else 10
    print()
    print("(d) polling loops (examples/polling, 3 ranks, %d rounds): each poll recorded, or runs folded" % rounds)
    print("    %-8s %12s %12s %14s %12s %12s" % ("polls", "trace bytes", "calls", "events rank 1",
                                                "app ins/call", "writer ins/call"))
    scratch = tempfile.mkdtemp(prefix="flowcut-bench.")
    try:
        for label, fold in (("each", "0"), ("folded", "1")):
            tdir = os.path.join(scratch, "p")
            shutil.rmtree(tdir, ignore_errors=True)
            counts = os.path.join(scratch, "counts")
            tree.run(3, "polling", [rounds * 3, counts], tdir, 1, {"FLOWCUT_FOLD_POLLS": fold})
            nbytes = sum(os.path.getsize(os.path.join(tdir, f)) for f in os.listdir(tdir) if f.endswith(".fct"))
            calls = 0
            for r in range(3):
                with open("%s.%d" % (counts, r)) as fh:
                    calls += sum(int(line.split()[1]) for line in fh)
            app = writer = float("nan")
            nev = sum(rank_events(tree, tdir, 1).values())
            if shutil.which("valgrind") is not None:
                shutil.rmtree(tdir, ignore_errors=True)
                prefix = os.path.join(scratch, "cg")
                wrap = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
                        "--callgrind-out-file=%s.%%q{PMI_RANK}" % prefix]
                tree.run(3, "polling", [rounds, counts], tdir, 1, {"FLOWCUT_FOLD_POLLS": fold}, wrap=wrap)
                with open("%s.1" % counts) as fh:
                    # its polls, and per round an MPI_Isend and an MPI_Recv; MPI_Init and MPI_Finalize
                    ncalls = sum(int(line.split()[1]) for line in fh) + 2 * rounds + 2
                cnt = {"main": 0, "app": 0, "writer": 0}
                thread_counts(scratch, 1, cnt)
                app = cnt["app"] / ncalls
                writer = cnt["writer"] / ncalls
            print("    %-8s %12d %12d %14d %12.1f %12.1f" % (label, nbytes, calls, nev, app, writer))
            shutil.rmtree(tdir, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("    trace bytes: all rank files of a run of %d rounds without valgrind; calls: the MPI calls its"
          % (rounds * 3))
    print("    three ranks counted; app and writer: instructions of rank 1 (a worker) per MPI call it made,")
    print("    in libflowcut and libunwind on its application thread and on its writer thread, in a run of")
    print("    %d rounds under callgrind (the poll counts differ from run to run: each is divided by its own)." % rounds)


def main(argv):
    reps, quick, cg, base, only, markdown, rest = 9, False, True, None, None, False, []
    it = iter(argv[1:])
    for a in it:
        if a == "--reps":
            reps = int(next(it))
        elif a == "--quick":
            quick = True
        elif a == "--callgrind":
            cg = True
        elif a == "--no-callgrind":
            cg = False
        elif a in ("-B", "--base"):
            base = next(it)
        elif a == "--markdown":
            markdown = True
        elif a == "--only":
            only = next(it)
            if only not in ("overhead", "callgrind", "size", "polls"):
                sys.stderr.write("bench: --only takes overhead, callgrind, size or polls\n")
                return 2
        else:
            rest.append(a)
    if len(rest) != 1:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    tree = Tree(rest[0])
    btree = None
    if base is not None:
        # The other build's tracer on this build's programs, so that both run the same code.
        btree = Tree(rest[0])
        btree.lib = Tree(base).lib
        btree.env["FLOWCUT_LIB"] = btree.lib
    sys.stdout.reconfigure(line_buffering=True)  # show each figure as soon as it is measured
    for path in (tree.lib, tree.flowcut) + ((btree.lib,) if btree else ()):
        if not os.path.exists(path):
            sys.stderr.write("bench: %s is missing; build the tree first (make)\n" % path)
            return 1
    try:
        if only in (None, "overhead"):
            overhead(tree, reps, quick)
        if cg and only in (None, "callgrind"):
            callgrind_table(tree, btree, quick, markdown)
        if only in (None, "size"):
            size(tree, quick)
        if only in (None, "polls"):
            polls(tree, quick)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        sys.stderr.write("bench: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
