#!/bin/sh
# test-wrappers-symbols.sh: libflowcut.so exports every wrapper mpi.spec names (MPI_X, MPI_X_c,
# mpi_x_f08_) and nothing else of MPI's, and its Fortran 2008 entry points are exactly those of
# MPICH's libmpichfort that call PMPI_X directly for an intercepted X (found in its disassembly), so
# that no `use mpi_f08` call of an intercepted function escapes the tracer.
# Environment: top_builddir (default ../..), LIBMPICHFORT (default: found with ldconfig).
set -u
top_builddir=${top_builddir:-../..}
lib=$top_builddir/libtrace/.libs/libflowcut.so
table=$top_builddir/libtrace/wrap-table.h
tmp=${TMPDIR:-/tmp}/test-wrappers-symbols.$$
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp" || exit 99

for tool in nm objdump awk; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
[ -f "$table" ] || { echo "FAIL: $table not generated"; exit 1; }

# What the spec says the library defines, and what it does define.
sed -n 's/^ *"\([A-Za-z0-9_]*\)", \\$/\1/p' "$table" | sort >"$tmp/spec"
nm -D --defined-only "$lib" | awk '{print $NF}' | grep -E '^(MPI_|PMPI_|mpi_|pmpi_)' | sort >"$tmp/lib"
[ -s "$tmp/spec" ] || { echo "FAIL: no symbols listed in $table"; exit 1; }
if ! cmp -s "$tmp/spec" "$tmp/lib"; then
    echo "FAIL: exported MPI symbols differ from mpi.spec (< spec, > library):"
    diff "$tmp/spec" "$tmp/lib"
    exit 1
fi
echo "ok: $(wc -l <"$tmp/lib") MPI entry points exported, as mpi.spec lists them"

fort=${LIBMPICHFORT:-$(ldconfig -p 2>/dev/null | awk '/libmpichfort\.so\.12 /{print $NF; exit}')}
if [ -z "$fort" ] || [ ! -f "$fort" ]; then
    echo "SKIP: libmpichfort.so.12 not found (set LIBMPICHFORT)"
    exit 77
fi
# The intercepted functions, PMPI_ names: MPI_X lines of the table (not _c, not f08 symbols).
sed -n 's/^ *X(MPI_\([A-Za-z0-9_]*\), .*/PMPI_\1/p' "$table" | sort >"$tmp/pmpi"
# Every f08 entry point of libmpichfort whose own code calls one of those through the PLT.
objdump -d --no-show-raw-insn "$fort" | awk -v list="$tmp/pmpi" '
    BEGIN { while ((getline l < list) > 0) want[l] = 1 }
    /^[0-9a-f]+ <[^>]*>:$/ { f = $2; sub(/^</, "", f); sub(/(@@Base)?>:$/, "", f); next }
    /call.*<PMPI_[A-Za-z0-9_]*@plt>/ {
        s = $0; sub(/.*<PMPI_/, "PMPI_", s); sub(/@plt>.*/, "", s)
        if ((s in want) && f ~ /^mpi_[a-z0-9_]*_f08_$/) print f
    }' | sort -u >"$tmp/bypass"
grep '_f08_$' "$tmp/lib" >"$tmp/ours"
if [ ! -s "$tmp/bypass" ]; then
    echo "FAIL: found no f08 entry point calling PMPI_ directly in $fort (disassembly format changed?)"
    exit 1
fi
if ! cmp -s "$tmp/bypass" "$tmp/ours"; then
    echo "FAIL: f08 entry points calling PMPI_ directly (<) differ from those libflowcut defines (>):"
    diff "$tmp/bypass" "$tmp/ours"
    exit 1
fi
echo "ok: the $(wc -l <"$tmp/ours") f08 entry points of $fort that bypass MPI_ are all interposed"
exit 0
