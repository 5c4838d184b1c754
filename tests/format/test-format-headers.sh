#!/bin/sh
# tests/format/test-format-headers.sh: each public header compiles alone, as C11 and as C++11,
# warning-free, so that users can include any of them first.
set -u
src=${FC_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cc=${FC_CC:-cc}
cxx=${CXX:-g++}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for h in "$src"/include/flowcut/*.h; do
    name=flowcut/${h##*/}
    printf '#include <%s>\nint fc_header_test_anchor;\n' "$name" >"$tmp/t.c"
    if ! $cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$src/include" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
        echo "FAIL: $name does not compile alone as C11:"
        cat "$tmp/err"
        fail=1
    fi
    cp "$tmp/t.c" "$tmp/t.cc"
    if ! command -v "$cxx" >/dev/null 2>&1; then
        echo "SKIP: no C++ compiler ($cxx) for $name"
    elif ! $cxx -std=c++11 -Wall -Wextra -Werror -I"$src/include" -c "$tmp/t.cc" -o "$tmp/t.o" 2>"$tmp/err"; then
        echo "FAIL: $name does not compile alone as C++11:"
        cat "$tmp/err"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "all public headers compile alone (C11, C++11)"
exit $fail
