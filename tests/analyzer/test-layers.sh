#!/bin/sh
# tests/analyzer/test-layers.sh: the analyzer's layers depend on earlier layers only. Two checks,
# on what the build made and on what the sources say:
#   - every fc_ symbol a layer's objects use (nm: undefined) is defined by that layer or by a
#     layer before it in LAYERS;
#   - every #include "LAYER/..." of a layer's sources names that layer or an earlier one.
# The order is the one analyzer/Makefile.am documents, bottom first.
set -u
: "${FC_TOP_BUILDDIR:?run through make check}" "${FC_TOP_SRCDIR:?run through make check}"
LAYERS="util format trace otf2 match collective conflict model remap report analysis cmd"
build=$FC_TOP_BUILDDIR/analyzer
src=$FC_TOP_SRCDIR/analyzer
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is needed"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fc-layers-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0

# objects LAYER: what the build made of LAYER: its convenience library's archive (the members of
# the current sources only), or for cmd the object of each command's source.
objects() {
    if [ "$1" = cmd ]; then
        for c in "$src"/cmd/*.c; do
            c=$(basename "$c" .c)
            ls "$build/cmd/flowcut_$c-$c.o" 2>/dev/null
        done
    else
        ls "$build/$1/.libs/libfc_$1.a" 2>/dev/null
    fi
}

# Which layer defines each fc_ symbol (text or data).
: >"$scratch/defs"
for l in $LAYERS; do
    objs=$(objects "$l")
    [ -n "$objs" ] || { echo "FAIL: no objects built for layer $l" >&2; failures=$((failures + 1)); continue; }
    # shellcheck disable=SC2086
    nm --defined-only $objs 2>/dev/null | awk -v l="$l" 'NF == 3 && $2 ~ /^[TDRB]$/ && $3 ~ /^fc_/ { print $3, l }' >>"$scratch/defs"
done
dups=$(awk '{ print $1 }' "$scratch/defs" | sort | uniq -d)
[ -z "$dups" ] || { echo "FAIL: symbols defined in two layers: $dups" >&2; failures=$((failures + 1)); }

rank=0
for l in $LAYERS; do
    rank=$((rank + 1))
    echo "$l $rank" >>"$scratch/rank"
done

# Uses: every undefined fc_ symbol of a layer's objects must come from that layer or an earlier one.
for l in $LAYERS; do
    objs=$(objects "$l")
    [ -n "$objs" ] || continue
    # shellcheck disable=SC2086
    nm --undefined-only $objs 2>/dev/null | awk '$1 == "U" && $2 ~ /^fc_/ { print $2 }' | sort -u >"$scratch/uses"
    bad=$(awk -v l="$l" 'FILENAME == ARGV[1] { r[$1] = $2; next }
                          FILENAME == ARGV[2] { d[$1] = $2; next }
                          ($1 in d) && r[d[$1]] > r[l] { print $1 " (" d[$1] ")" }' \
          "$scratch/rank" "$scratch/defs" "$scratch/uses")
    if [ -n "$bad" ]; then
        echo "FAIL: layer $l uses later layers: $bad" >&2
        failures=$((failures + 1))
    fi
done

# Includes: a source of layer l includes "L/..." headers of l and earlier layers only.
for l in $LAYERS; do
    for f in "$src/$l"/*.[ch]; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([a-z0-9]*\)\/.*/\1/p' "$f" | sort -u); do
            ri=$(awk -v x="$inc" '$1 == x { print $2 }' "$scratch/rank")
            rl=$(awk -v x="$l" '$1 == x { print $2 }' "$scratch/rank")
            if [ -z "$ri" ]; then
                echo "FAIL: ${f#"$src"/} includes from $inc/, which is no layer" >&2
                failures=$((failures + 1))
            elif [ "$ri" -gt "$rl" ]; then
                echo "FAIL: ${f#"$src"/} (layer $l) includes from the later layer $inc/" >&2
                failures=$((failures + 1))
            fi
        done
    done
done

# Every source file of the analyzer sits in a layer.
for f in "$src"/*.c "$src"/*.h; do
    [ -f "$f" ] && { echo "FAIL: ${f#"$src"/} is in no layer" >&2; failures=$((failures + 1)); }
done

[ "$failures" -eq 0 ] && echo "layers: $(wc -l <"$scratch/defs") fc_ symbols in $(echo $LAYERS | wc -w) layers, no use of a later layer"
[ "$failures" -eq 0 ]
