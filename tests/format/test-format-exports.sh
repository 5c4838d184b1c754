#!/bin/sh
# tests/format/test-format-exports.sh: libflowcut-analyzer.so exports its documented API and
# nothing else: every dynamic symbol it defines is declared in a public header (include/flowcut/),
# and every function declared there (not static inline) is exported.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command nm
so=$abs_top_builddir/analyzer/.libs/libflowcut-analyzer.so
[ -f "$so" ] || fail "$so is not built"
scratch=$work

nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort -u >"$scratch/exported"
# Functions the public headers declare: "type name(" at the start of a declaration that is not
# static inline (those are compiled into the caller and never exported).
cat "$abs_top_srcdir"/include/flowcut/*.h "$abs_top_builddir"/include/flowcut/version.h |
    grep -v '^ *static' | grep -oE '\bfc_[a-z0-9_]+ *\(' | grep -vE '^fc__|^fc_[a-z0-9_]+_t *\(' |
    sed 's/ *($//' | sort -u >"$scratch/declared"

extra=$(comm -23 "$scratch/exported" "$scratch/declared")
missing=$(comm -13 "$scratch/exported" "$scratch/declared" | while read -r f; do
    # A name declared only as a static inline helper or a macro argument is not a library function.
    grep -qE "static inline[^;{]*\b$f *\(" "$abs_top_srcdir"/include/flowcut/*.h || echo "$f"
done)
[ -z "$extra" ] || fail_later "exported but not declared in include/flowcut/: $(echo $extra)"
[ -z "$missing" ] || fail_later "declared in include/flowcut/ but not exported: $(echo $missing)"
if grep -q '^fc__' "$scratch/exported"; then
    fail_later "internal fc__ symbols exported: $(grep '^fc__' "$scratch/exported" | head -5 | tr '\n' ' ')"
fi
[ "$failures" -eq 0 ] && echo "exports: $(wc -l <"$scratch/exported") symbols, each declared in include/flowcut/"
finish
