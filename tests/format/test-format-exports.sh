#!/bin/sh
# tests/format/test-format-exports.sh: libflowcut-analyzer.so exports its documented API and
# nothing else: every dynamic symbol it defines is declared in a public header (include/flowcut/),
# and every function declared there (not static inline) is exported.
set -u
: "${FC_TOP_SRCDIR:?run through make check}" "${FC_TOP_BUILDDIR:?run through make check}"
so=$FC_TOP_BUILDDIR/analyzer/.libs/libflowcut-analyzer.so
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is needed"; exit 77; }
[ -f "$so" ] || { echo "FAIL: $so is not built"; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fc-exports-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0

nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort -u >"$scratch/exported"
# Functions the public headers declare: "type name(" at the start of a declaration that is not
# static inline (those are compiled into the caller and never exported).
cat "$FC_TOP_SRCDIR"/include/flowcut/*.h "$FC_TOP_BUILDDIR"/include/flowcut/version.h |
    grep -v '^ *static' | grep -oE '\bfc_[a-z0-9_]+ *\(' | grep -vE '^fc__|^fc_[a-z0-9_]+_t *\(' |
    sed 's/ *($//' | sort -u >"$scratch/declared"

extra=$(comm -23 "$scratch/exported" "$scratch/declared")
missing=$(comm -13 "$scratch/exported" "$scratch/declared" | while read -r f; do
    # A name declared only as a static inline helper or a macro argument is not a library function.
    grep -qE "static inline[^;{]*\b$f *\(" "$FC_TOP_SRCDIR"/include/flowcut/*.h || echo "$f"
done)
if [ -n "$extra" ]; then
    echo "FAIL: exported but not declared in include/flowcut/: $(echo $extra)"
    failures=$((failures + 1))
fi
if [ -n "$missing" ]; then
    echo "FAIL: declared in include/flowcut/ but not exported: $(echo $missing)"
    failures=$((failures + 1))
fi
if grep -q '^fc__' "$scratch/exported"; then
    echo "FAIL: internal fc__ symbols exported: $(grep '^fc__' "$scratch/exported" | head -5 | tr '\n' ' ')"
    failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] && echo "exports: $(wc -l <"$scratch/exported") symbols, each declared in include/flowcut/"
[ "$failures" -eq 0 ]
