#!/usr/bin/env python3
"""gen-wrappers.py: turns mpi.spec into the MPI wrappers of libflowcut (C) and a table for the tests.

Usage: gen-wrappers.py --c SPEC OUT.c       the wrappers: MPI_X, MPI_X_c, mpi_x_f08_
       gen-wrappers.py --table SPEC OUT.h   FC_WRAP_TABLE(X): one X(name, kind, large, f08) a line

Every wrapper has one shape (STYLE.md): fc__enter; when it refuses, PMPI_X straight away; else
timestamp, PMPI_X, timestamp, one typed record function, fc__leave, PMPI's result unchanged. The
body lives in a static always-inline function taking the entry point's frame address
(__builtin_frame_address(0), which also makes the compiler keep a frame record there: the caller's
frame pointer and return address, see fc__site in internal.h), so that the C entry point and the
Fortran 2008 entry point share it and both record the application's call site.
The spec's markers (STATUS, STATUSES, BEFORE, REQS, FREEING, WIDE, STEPS) become plain local
variables declared before the first timestamp and, for the status markers, one restoring statement
after the record; nothing is hidden in macros.
Every communicator argument reaches PMPI through fc__wc (renumber.h), which hands MPI the
renumbered world where the program passes MPI_COMM_WORLD; the record functions get the program's
own handle. The init shape calls fc__renumber_init once MPI is up, before tracing starts.
A function flagged `steps` (MPI_Waitall) is completed by fc__steps_X, which calls PMPI in steps
to learn when each request completes, while FLOWCUT_REQUEST_TIMES is on (fc__req_times) and
fc__steps_ready_X accepts the arguments, and by PMPI_X itself otherwise: the one place where the
wrapper's call is not PMPI_X alone, written out as a branch of its own in the wrapper. The steps
keep their own copies of the handles and statuses and write the COMPLETE records as requests
complete (so fc__steps_X takes the thread and the call), so that branch neither copies nor marks
the application's arrays (REQS and STATUSES record NULL there, STEPS what the steps left).

Python 3 standard library only; the output depends on the spec alone, so builds are reproducible.
"""
import re
import sys

MARKERS = ("STATUS", "STATUSES", "BEFORE", "REQS", "FREEING")
SHAPES = ("init", "finalize", "abort")
KNOWN_FLAGS = ("large", "f08", "steps") + SHAPES
F08_WEIGHTS = ("weights", "sourceweights", "destweights")
RESERVED = ("t", "call", "fc_fp", "ierror")


class SpecError(Exception):
    pass


def split_top(text):
    """Splits text at the commas that are not inside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Param:
    """One C parameter: text is its declaration with COUNT/DISPL left in."""

    def __init__(self, text):
        m = re.match(r"^(.*?)\b(\w+)\s*(\[\])?$", text.strip())
        if not m or not m.group(1).strip():
            raise SpecError("cannot parse parameter %r" % text)
        self.text = text.strip()
        self.base_type = m.group(1).strip()
        self.name = m.group(2)
        self.array = bool(m.group(3))
        if self.name in RESERVED or self.name.startswith("fc_"):
            raise SpecError("parameter name %r is reserved by the generator" % self.name)

    def decl(self, large):
        return widen(self.text, large)

    def ctype(self, large):
        """The parameter's C type as a cast can name it (arrays become pointers)."""
        t = widen(self.base_type, large)
        return t + " *" if self.array else t

    def is_pointer(self):
        return self.array or self.base_type.endswith("*")


def widen(text, large):
    text = re.sub(r"\bCOUNT\b", "MPI_Count" if large else "int", text)
    return re.sub(r"\bDISPL\b", "MPI_Aint" if large else "int", text)


class Func:
    def __init__(self, lineno, line):
        self.lineno = lineno
        left, sep, params = line.partition(":")
        if not sep:
            raise SpecError("missing ':' before the parameters")
        m = re.match(r"^(\w+)\s+(\S+)\s+(\w+)\((.*)\)\s*$", left.strip())
        if not m:
            raise SpecError("expected NAME FLAGS RECORD(ARGS)")
        self.name, flags, self.record, args = m.groups()
        self.flags = [] if flags == "-" else flags.split(",")
        for f in self.flags:
            if f not in KNOWN_FLAGS:
                raise SpecError("unknown flag %r" % f)
        self.args = split_top(args)
        self.params = [Param(p) for p in split_top(params)]
        names = [p.name for p in self.params]
        for a in self.args:
            mm = re.match(r"^(\w+)\((.*)\)$", a)
            if mm and mm.group(1) in MARKERS:
                inner = split_top(mm.group(2))
                if inner[0] not in names:
                    raise SpecError("%s(%s): no parameter named %s" % (mm.group(1), inner[0], inner[0]))
        shapes = [f for f in self.flags if f in SHAPES]
        if len(shapes) > 1:
            raise SpecError("more than one shape")
        self.shape = shapes[0] if shapes else "call"
        # STEPS names what fc__steps_X noted, so it belongs to the functions completed in steps.
        if ("STEPS" in self.args) != self.has("steps"):
            raise SpecError("the STEPS argument and the steps flag go together")
        if self.has("steps") and (self.shape != "call" or self.has("large")):
            raise SpecError("steps applies to a plain call without a _c variant")

    def has(self, flag):
        return flag in self.flags


def parse(path):
    funcs, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                fn = Func(lineno, line)
            except SpecError as e:
                raise SpecError("%s:%d: %s" % (path, lineno, e))
            if fn.name in seen:
                raise SpecError("%s:%d: MPI_%s appears twice" % (path, lineno, fn.name))
            seen.add(fn.name)
            funcs.append(fn)
    if not funcs:
        raise SpecError("%s: no functions" % path)
    return funcs


def steps_record_args(fn):
    """The record arguments of a call completed in steps: REQS and STATUSES NULL (the steps hold
    their own copies), STEPS what the steps noted, the others as written."""
    out = []
    for a in fn.args:
        m = re.match(r"^(\w+)\((.*)\)$", a)
        if a == "STEPS":
            out.append("fc_steps")
        elif m and m.group(1) in ("REQS", "STATUSES"):
            out.append("NULL")
        elif m and m.group(1) in MARKERS:
            raise SpecError("%s: %s with the steps flag" % (fn.name, m.group(1)))
        else:
            out.append(a)
    return out


def lower_args(fn, large):
    """Returns (pre-call declarations, PMPI arguments, record arguments, post-record statements)."""
    pre, subst, rec, post = [], {}, [], []
    for a in fn.args:
        m = re.match(r"^(\w+)\((.*)\)$", a)
        if a == "WIDE":
            rec.append("1" if large else "0")
            continue
        if a == "STEPS":
            rec.append("NULL")  # PMPI ran the call whole
            continue
        if not m or m.group(1) not in MARKERS:
            rec.append(a)
            continue
        marker, inner = m.group(1), split_top(m.group(2))
        p = inner[0]
        if marker == "STATUS":
            pre.append("MPI_Status fc_st_%s;" % p)
            pre.append("int fc_src_%s = 0;" % p)
            pre.append("MPI_Status *fc_%s = fc__wrap_status(%s, &fc_st_%s, &fc_src_%s);" % (p, p, p, p))
            post.append("fc__wrap_status_done(%s, fc_src_%s);" % (p, p))
            subst[p] = "fc_" + p
            rec.append("fc_" + p)
        elif marker == "STATUSES":
            pre.append("MPI_Status *fc_%s = fc__wrap_statuses(%s, %s);" % (p, p, inner[1]))
            post.append("fc__wrap_statuses_done(%s, %s);" % (p, inner[1]))
            subst[p] = "fc_" + p
            rec.append("fc_" + p)
        elif marker == "BEFORE":
            pre.append("__typeof__(*%s) fc_b_%s = %s ? *%s : (__typeof__(*%s))0;" % (p, p, p, p, p))
            rec.append("fc_b_" + p)
        elif marker == "REQS":
            pre.append("const MPI_Request *fc_r_%s = fc__wrap_reqs(%s, %s);" % (p, p, inner[1]))
            rec.append("fc_r_" + p)
        elif marker == "FREEING":
            pre.append("uint32_t fc_f_%s = fc__wrap_freeing(%s);" % (p, p))
            rec.append("fc_f_" + p)
    call = [subst.get(p.name, pmpi_arg(p)) for p in fn.params]
    return pre, call, rec, post


def pmpi_arg(p):
    """The argument PMPI gets for parameter p: a communicator goes through fc__wc (renumber.h), so
    that MPI sees the renumbered world where the program passes MPI_COMM_WORLD; the record
    functions keep the program's own handle."""
    return "fc__wc(%s)" % p.name if p.base_type == "MPI_Comm" and not p.array else p.name


def variants(fn):
    yield fn.name, False
    if fn.has("large"):
        yield fn.name + "_c", True


def body(fn, cname, large, out):
    params = ", ".join([p.decl(large) for p in fn.params] + ["void *fc_fp"])
    plain = ", ".join(pmpi_arg(p) for p in fn.params)
    kind = "FC_EV_MPI_" + fn.name
    w = out.append
    w("static inline __attribute__((always_inline)) int fc_w_%s(%s)" % (cname, params))
    w("{")
    if fn.shape == "init":
        # Tracing cannot start before MPI does: no guard on entry, the runtime starts afterwards.
        w("    fc__call call = {.kind = %s};" % kind)
        w("    call.t0 = fc__now();")
        w("    call.rc = PMPI_%s(%s);" % (cname, plain))
        w("    call.t1 = fc__now();")
        w("    if (call.rc != MPI_SUCCESS)")
        w("        return call.rc;")
        w("    fc__renumber_init();")
        if any(p.name == "provided" for p in fn.params):
            w("    int fc_provided = *provided;")
        else:
            w("    int fc_provided = MPI_THREAD_SINGLE;")
            w("    PMPI_Query_thread(&fc_provided);")
        w("    fc__init_after(FC_INIT_MPI_INIT, fc_provided);")
        w("    fc__thread *t = fc__enter();")
        w("    if (t) {")
        w("        call.site = fc__site(t, fc_fp);")
        w("        fc__rec_%s(t, &call%s);" % (fn.record, "".join(", " + a for a in fn.args)))
        w("        fc__leave(t);")
        w("    }")
        w("    return call.rc;")
    elif fn.shape in ("finalize", "abort"):
        # The trace is closed by the hook, so the event is recorded first; PMPI runs last.
        hook = "fc__finalize_before" if fn.shape == "finalize" else "fc__abort_before"
        w("    fc__thread *t = fc__enter();")
        w("    if (t) {")
        w("        fc__call call = {.kind = %s, .rc = MPI_SUCCESS};" % kind)
        w("        call.t0 = fc__now();")
        w("        call.t1 = fc__now();")
        w("        call.site = fc__site(t, fc_fp);")
        w("        fc__rec_%s(t, &call%s);" % (fn.record, "".join(", " + a for a in fn.args)))
        w("        fc__leave(t);")
        w("    }")
        w("    %s();" % hook)
        w("    return PMPI_%s(%s);" % (cname, plain))
    else:
        pre, call_args, rec, post = lower_args(fn, large)
        w("    fc__thread *t = fc__enter();")
        w("    if (!t)")
        w("        return PMPI_%s(%s);" % (cname, plain))
        # Every field is set below, so no initializer clears the struct first.
        w("    fc__call call;")
        w("    call.kind = %s;" % kind)
        if fn.has("steps"):
            # The steps keep their own copies of the handles and of the statuses as MPI wrote them,
            # so the application's arrays are neither copied nor marked: REQS and STATUSES record
            # NULL, and the record function takes what the steps noted.
            w("    if (fc__req_times && fc__steps_ready_%s(%s)) {" % (cname, plain))
            w("        const fc__steps *fc_steps = NULL;")
            w("        call.t0 = fc__now();")
            w("        call.rc = fc__steps_%s(%s);" % (cname, ", ".join(["t", "&call"] + [p.name for p in fn.params] +
                                                                       ["&fc_steps"])))
            w("        call.t1 = fc__now();")
            w("        call.site = fc__site_fast(t, fc_fp);")
            w("        fc__rec_%s(t, &call%s);" % (fn.record, "".join(", " + a for a in steps_record_args(fn))))
            w("        fc__leave(t);")
            w("        return call.rc;")
            w("    }")
        for line in pre:
            w("    " + line)
        w("    call.t0 = fc__now();")
        w("    call.rc = PMPI_%s(%s);" % (cname, ", ".join(call_args)))
        w("    call.t1 = fc__now();")
        w("    call.site = fc__site_fast(t, fc_fp);")
        w("    fc__rec_%s(t, &call%s);" % (fn.record, "".join(", " + a for a in rec)))
        for line in post:
            w("    " + line)
        w("    fc__leave(t);")
        w("    return call.rc;")
    w("}")
    w("")
    w("FC__EXPORT int MPI_%s(%s)" % (cname, ", ".join(p.decl(large) for p in fn.params) or "void"))
    w("{")
    w("    return fc_w_%s(%s);" % (cname, ", ".join([p.name for p in fn.params] + ["__builtin_frame_address(0)"])))
    w("}")
    w("")


def f08_name(fn):
    return "mpi_%s_f08_" % fn.name.lower()


def f08_entry(fn, out):
    """The Fortran 2008 entry point: every argument by reference, then the optional ierror."""
    fparams, cargs, pre, post = [], [], [], []
    for p in fn.params:
        ctype = p.ctype(False)
        if p.name in ("argc", "argv"):
            cargs.append("NULL")  # mpi_init_f08_ passes no command line, as MPICH's does
        elif ctype == "MPI_Status *" and not p.array:
            fparams.append("MPI_F08_status *%s" % p.name)
            cargs.append("fc__f08_status(%s)" % p.name)
        elif p.base_type == "MPI_Status" and p.array:
            fparams.append("MPI_F08_status *%s" % p.name)
            cargs.append("fc__f08_statuses(%s)" % p.name)
        elif p.name == "flag":
            # A Fortran LOGICAL gets 1 or 0 whatever true value C returns, as MPICH's binding does.
            fparams.append("MPI_Fint *flag")
            pre.append("int fc_flag = 0;")
            cargs.append("&fc_flag")
            post.append("*flag = fc_flag != 0;")
        elif p.name in F08_WEIGHTS:
            fparams.append("const MPI_Fint *%s" % p.name)
            cargs.append("fc__f08_weights(%s)" % p.name)
        elif p.is_pointer():
            const = "const " if ctype.startswith("const ") else ""
            fparams.append("%sMPI_Fint *%s" % (const, p.name))
            cargs.append("(%s)%s" % (ctype, p.name))
        else:
            fparams.append("const MPI_Fint *%s" % p.name)
            cargs.append("(%s)*%s" % (ctype, p.name))
    fparams.append("MPI_Fint *ierror")
    proto = "FC__EXPORT void %s(%s)" % (f08_name(fn), ", ".join(fparams))
    w = out.append
    w(proto + ";")
    w(proto)
    w("{")
    for line in pre:
        w("    " + line)
    w("    int rc = fc_w_%s(%s);" % (fn.name, ", ".join(cargs + ["__builtin_frame_address(0)"])))
    for line in post:
        w("    " + line)
    w("    if (ierror)")
    w("        *ierror = rc;")
    w("}")
    w("")


PRELUDE = """\
/* wrappers.c: the MPI entry points of libflowcut, generated by gen-wrappers.py from mpi.spec.
 * Do not edit: change the spec or the generator. */
#include "record.h"
#include "renumber.h"

#define FC__EXPORT __attribute__((visibility("default")))

/* The Fortran 2008 entry points hand MPI_Fint handles and MPI_F08_status structures straight to the
 * C functions, as MPICH's own do; that holds while these layouts agree. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is a C int");
_Static_assert(sizeof(MPI_Comm) == sizeof(MPI_Fint) && sizeof(MPI_Request) == sizeof(MPI_Fint) &&
                   sizeof(MPI_Message) == sizeof(MPI_Fint) && sizeof(MPI_Datatype) == sizeof(MPI_Fint) &&
                   sizeof(MPI_Info) == sizeof(MPI_Fint) && sizeof(MPI_Group) == sizeof(MPI_Fint),
               "MPICH handles are integers the size of MPI_Fint");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "f08 status has the C layout");
_Static_assert(__builtin_offsetof(MPI_F08_status, MPI_SOURCE) == __builtin_offsetof(MPI_Status, MPI_SOURCE) &&
                   __builtin_offsetof(MPI_F08_status, MPI_TAG) == __builtin_offsetof(MPI_Status, MPI_TAG) &&
                   __builtin_offsetof(MPI_F08_status, MPI_ERROR) == __builtin_offsetof(MPI_Status, MPI_ERROR) &&
                   __builtin_offsetof(MPI_F08_status, count_lo) == __builtin_offsetof(MPI_Status, count_lo),
               "f08 status fields sit where the C ones do");

"""


def gen_c(funcs):
    out = [PRELUDE]
    for fn in funcs:
        out.append("/* ---- MPI_%s (mpi.spec line %d) ---- */\n" % (fn.name, fn.lineno))
        lines = []
        for cname, large in variants(fn):
            body(fn, cname, large, lines)
        if fn.has("f08"):
            f08_entry(fn, lines)
        out.append("\n".join(lines))
    return "\n".join(out)


def gen_table(funcs):
    out = ["/* wrap-table.h: generated by gen-wrappers.py from mpi.spec; do not edit.",
           " * FC_WRAP_TABLE(X): X(name, kind, large, f08) for each intercepted MPI function;",
           " * FC_WRAP_SYMBOLS: every symbol the wrappers define, as strings. */",
           "#ifndef FLOWCUT_WRAP_TABLE_H", "#define FLOWCUT_WRAP_TABLE_H",
           "#define FC_WRAP_TABLE(X) \\"]
    for fn in funcs:
        out.append("    X(MPI_%s, FC_EV_MPI_%s, %d, %d) \\" %
                   (fn.name, fn.name, int(fn.has("large")), int(fn.has("f08"))))
    out.append("")
    syms = []
    for fn in funcs:
        syms += ['"MPI_%s"' % c for c, _ in variants(fn)]
        if fn.has("f08"):
            syms.append('"%s"' % f08_name(fn))
    out.append("#define FC_WRAP_SYMBOLS \\")
    out += ["    %s, \\" % s for s in syms]
    out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 4 or argv[1] not in ("--c", "--table"):
        sys.stderr.write("usage: gen-wrappers.py --c|--table SPEC OUT\n")
        return 2
    try:
        funcs = parse(argv[2])
    except (OSError, SpecError) as e:
        sys.stderr.write("gen-wrappers.py: %s\n" % e)
        return 1
    text = gen_c(funcs) if argv[1] == "--c" else gen_table(funcs)
    tmp = argv[3] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    import os
    os.replace(tmp, argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
