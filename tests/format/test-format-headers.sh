#!/bin/sh
# tests/format/test-format-headers.sh: each public header compiles alone, as C11 and as C++11,
# warning-free, so that users can include any of them first.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
src=$abs_top_srcdir
cc=${FC_CC:-cc}
cxx=${CXX:-g++}
# version.h is made by configure, in the build tree.
for h in "$src"/include/flowcut/*.h "$abs_top_builddir"/include/flowcut/version.h; do
    name=flowcut/${h##*/}
    printf '#include <%s>\nint fc_header_test_anchor;\n' "$name" >"$work/t.c"
    if ! $cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$abs_top_builddir/include" -I"$src/include" -c "$work/t.c" -o "$work/t.o" 2>"$work/err"; then
        fail_later "$name does not compile alone as C11: $(cat "$work/err")"
    fi
    cp "$work/t.c" "$work/t.cc"
    if ! command -v "$cxx" >/dev/null 2>&1; then
        echo "note: no C++ compiler ($cxx): $name not compiled as C++11"
    elif ! $cxx -std=c++11 -Wall -Wextra -Werror -I"$abs_top_builddir/include" -I"$src/include" -c "$work/t.cc" -o "$work/t.o" 2>"$work/err"; then
        fail_later "$name does not compile alone as C++11: $(cat "$work/err")"
    fi
done
[ "$failures" -eq 0 ] && echo "all public headers compile alone (C11, C++11)"
finish
