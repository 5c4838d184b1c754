#!/bin/sh
# tests/analyzer/test-analyzer-layers.sh: the analyzer's layers depend on earlier layers only. Two
# checks, on what the build made and on what the sources say:
#   - every fc_ symbol a layer's objects use (nm: undefined) is defined by that layer or by a
#     layer before it in LAYERS;
#   - every #include "LAYER/..." of a layer's sources names that layer or an earlier one.
# The order is the one analyzer/Makefile.am documents, bottom first.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
LAYERS="util format trace otf2 match collective conflict model remap report analysis cmd"
build=$abs_top_builddir/analyzer
src=$abs_top_srcdir/analyzer
need_command nm "nm (binutils) is needed"

# objects LAYER: what the build made of LAYER: its convenience library's archive (the members of
# the current sources only), or for cmd the object of each command's source.
objects() {
    if [ "$1" = cmd ]; then
        ls "$build/cmd/.libs/libfc_cmd.a" 2>/dev/null
        for c in "$src"/cmd/*.c; do
            c=$(basename "$c" .c)
            ls "$build/cmd/flowcut_$c-$c.o" 2>/dev/null
        done
    else
        ls "$build/$1/.libs/libfc_$1.a" 2>/dev/null
    fi
}

# Which layer defines each fc_ symbol (text or data).
: >"$work/defs"
for l in $LAYERS; do
    objs=$(objects "$l")
    [ -n "$objs" ] || { fail_later "no objects built for layer $l"; continue; }
    # shellcheck disable=SC2086
    nm --defined-only $objs 2>/dev/null | awk -v l="$l" 'NF == 3 && $2 ~ /^[TDRB]$/ && $3 ~ /^fc_/ { print $3, l }' >>"$work/defs"
done
dups=$(awk '{ print $1 }' "$work/defs" | sort | uniq -d)
[ -z "$dups" ] || fail_later "symbols defined in two layers: $dups"

rank=0
for l in $LAYERS; do
    rank=$((rank + 1))
    echo "$l $rank" >>"$work/rank"
done

# Uses: every undefined fc_ symbol of a layer's objects must come from that layer or an earlier one.
for l in $LAYERS; do
    objs=$(objects "$l")
    [ -n "$objs" ] || continue
    # shellcheck disable=SC2086
    nm --undefined-only $objs 2>/dev/null | awk '$1 == "U" && $2 ~ /^fc_/ { print $2 }' | sort -u >"$work/uses"
    bad=$(awk -v l="$l" 'FILENAME == ARGV[1] { r[$1] = $2; next }
                          FILENAME == ARGV[2] { d[$1] = $2; next }
                          ($1 in d) && r[d[$1]] > r[l] { print $1 " (" d[$1] ")" }' \
          "$work/rank" "$work/defs" "$work/uses")
    [ -z "$bad" ] || fail_later "layer $l uses later layers: $bad"
done

# The writers consume results: report/ runs no stage (matching, feeding or sweeping the flows,
# building intervals); the pipelines of analysis/ hand it what it writes.
objs=$(objects report)
# shellcheck disable=SC2086
stages=$(nm --undefined-only $objs 2>/dev/null |
    awk '$1 == "U" && $2 ~ /^fc__(match_stream|match_trace|feed_|sweep_flows|sweep_new|intervals_build)/ { print $2 }' | sort -u)
if [ -n "$stages" ]; then
    echo "FAIL: report/ runs stages itself: $(echo $stages)" >&2
    failures=$((failures + 1))
fi

# Includes: a source of layer l includes "L/..." headers of l and earlier layers only.
for l in $LAYERS; do
    for f in "$src/$l"/*.[ch]; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([a-z0-9]*\)\/.*/\1/p' "$f" | sort -u); do
            ri=$(awk -v x="$inc" '$1 == x { print $2 }' "$work/rank")
            rl=$(awk -v x="$l" '$1 == x { print $2 }' "$work/rank")
            if [ -z "$ri" ]; then
                fail_later "${f#"$src"/} includes from $inc/, which is no layer"
            elif [ "$ri" -gt "$rl" ]; then
                fail_later "${f#"$src"/} (layer $l) includes from the later layer $inc/"
            fi
        done
    done
done

# The analyzer's own types carry the internal prefix: a type named fc_ (one underscore) defined in
# analyzer/ must be one of the public headers' (include/flowcut/), never an internal one that looks
# public.
public=$(cat "$abs_top_srcdir"/include/flowcut/*.h | grep -oE '\bfc_[a-z0-9_]+\b' | sort -u)
for t in $(cat "$src"/*/*.h | grep -oE '(\}|typedef [a-z0-9_ ]+|enum|struct) +fc_[a-z0-9_]+' | grep -oE 'fc_[a-z0-9_]+$' |
           grep -v '^fc__' | sort -u); do
    echo "$public" | grep -qx "$t" || fail_later "analyzer/ defines the type $t with the public prefix (internal types are fc__)"
done

# Every source file of the analyzer sits in a layer.
for f in "$src"/*.c "$src"/*.h; do
    [ -f "$f" ] && fail_later "${f#"$src"/} is in no layer"
done

[ "$failures" -eq 0 ] && echo "layers: $(wc -l <"$work/defs") fc_ symbols in $(echo $LAYERS | wc -w) layers, no use of a later layer"
finish
