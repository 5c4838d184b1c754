#!/bin/sh
# test-wrappers-symbols.sh: libflowcut.so exports every wrapper mpi.spec names (MPI_X, MPI_X_c,
# mpi_x_f08_) and those renumber.h lists (the functions wrapped only to renumber ranks) and nothing
# else of MPI's, and its Fortran 2008 entry points are exactly those of MPICH's libmpichfort that
# call PMPI_X directly for an intercepted X (found in its disassembly), but for the ones renumber.h
# names as not interposed, so that no `use mpi_f08` call of an intercepted function escapes the
# tracer unannounced.
# LIBMPICHFORT names MPICH's Fortran library (default: found with ldconfig).
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
table=$abs_top_builddir/libtrace/wrap-table.h
renumber=$abs_top_srcdir/libtrace/renumber.h

for tool in nm objdump awk; do
    need_command $tool
done
[ -f "$libflowcut" ] || fail "$libflowcut not built"
[ -f "$table" ] || fail "$table not generated"

# What the spec says the library defines, and what it does define.
sed -n 's/^ *"\([A-Za-z0-9_]*\)", \\$/\1/p' "$table" >"$work/spec.1"
sed -n '/^#define FC_RENUMBER_SYMBOLS/,/^$/s/^ *"\([A-Za-z0-9_]*\)", *\\*$/\1/p' "$renumber" >>"$work/spec.1"
sed -n '/^#define FC_RENUMBER_F08_GAPS/,/^$/s/^ *"\([A-Za-z0-9_]*\)", *\\*$/\1/p' "$renumber" | sort >"$work/gaps"
grep -q '^#define FC_RENUMBER_F08_GAPS' "$renumber" || fail "no FC_RENUMBER_F08_GAPS in $renumber"
sort "$work/spec.1" >"$work/spec"
nm -D --defined-only "$libflowcut" | awk '{print $NF}' | grep -E '^(MPI_|PMPI_|mpi_|pmpi_)' | sort >"$work/lib"
[ -s "$work/spec" ] || fail "no symbols listed in $table"
if ! cmp -s "$work/spec" "$work/lib"; then
    fail "exported MPI symbols differ from mpi.spec (< spec, > library):
$(diff "$work/spec" "$work/lib")"
fi
echo "ok: $(wc -l <"$work/lib") MPI entry points exported, as mpi.spec lists them"

fort=${LIBMPICHFORT:-$(ldconfig -p 2>/dev/null | awk '/libmpichfort\.so\.12 /{print $NF; exit}')}
if [ -z "$fort" ] || [ ! -f "$fort" ]; then
    skip "libmpichfort.so.12 not found (set LIBMPICHFORT)"
fi
# The intercepted functions, PMPI_ names: MPI_X and MPI_X_c lines of the table (not f08 symbols).
sed -n 's/^ *X(MPI_\([A-Za-z0-9_]*\), .*/PMPI_\1/p' "$table" >"$work/pmpi.1"
grep '^MPI_' "$work/spec" | sed 's/^/P/' >>"$work/pmpi.1"
sort -u "$work/pmpi.1" >"$work/pmpi"
# Every f08 entry point of libmpichfort (mpi_x_f08_, and mpi_x_f08_large_ for MPI_Count or MPI_Aint
# arguments) whose own code calls one of those through the PLT.
objdump -d --no-show-raw-insn "$fort" | awk -v list="$work/pmpi" '
    BEGIN { while ((getline l < list) > 0) want[l] = 1 }
    /^[0-9a-f]+ <[^>]*>:$/ { f = $2; sub(/^</, "", f); sub(/(@@Base)?>:$/, "", f); next }
    /call.*<PMPI_[A-Za-z0-9_]*@plt>/ {
        s = $0; sub(/.*<PMPI_/, "PMPI_", s); sub(/@plt>.*/, "", s)
        if ((s in want) && f ~ /^mpi_[a-z0-9_]*_f08_(large_)?$/) print f
    }' | sort -u >"$work/bypass"
grep -E '_f08_(large_)?$' "$work/lib" | sort - "$work/gaps" >"$work/ours"
if [ ! -s "$work/bypass" ]; then
    fail "found no f08 entry point calling PMPI_ directly in $fort (disassembly format changed?)"
fi
if ! cmp -s "$work/bypass" "$work/ours"; then
    fail "f08 entry points calling PMPI_ directly (<) differ from those libflowcut defines (>):
$(diff "$work/bypass" "$work/ours")"
fi
echo "ok: the $(wc -l <"$work/ours") f08 entry points of $fort that bypass MPI_ are interposed or named in renumber.h"
exit 0
