#!/bin/sh
# fuzz.sh: builds the fuzz targets with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, makes their seed corpora (seeds.sh) and runs each for FUZZ_SECONDS.
# A crash is saved in WORK/crashes/TARGET/ and makes the script fail; copy it into
# tests/fuzz/regress/TARGET/ with the fix, so that `make check` replays it from then on. A crash
# inside the OTF2 library is kept in WORK/library-crashes/TARGET/ instead, and does not fail.
#
# usage: fuzz.sh SRCDIR BUILDDIR TARGET...   (as `make fuzz` calls it)
# Environment: FUZZ_CC (clang), FUZZ_SECONDS (60), FUZZ_WORK (BUILDDIR/tests/fuzz/fuzz-work, kept
# between runs so that the corpora grow), FUZZ_JOBS (targets run at once, 1), FUZZ_NICE (niceness,
# 0), FUZZ_BUILD_ONLY (1: build and make seeds only), and the library flags of configure.
set -u
src=$1 build=$2
shift 2
CC=${FUZZ_CC:-clang}
secs=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-$build/tests/fuzz/fuzz-work}
jobs=${FUZZ_JOBS:-1}
command -v "$CC" >/dev/null 2>&1 || { echo "fuzz.sh: $CC not found (Debian package clang)" >&2; exit 1; }
mkdir -p "$work/obj" "$work/bin" "$work/corpus" "$work/crashes" "$work/logs" || exit 1

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=gnu11 -O1 -g $san -fsanitize=fuzzer-no-link -D_GNU_SOURCE -I$build/include -I$src/include -I$src/analyzer ${OTF2_CFLAGS-}"
libs="${OTF2_LIBS--lopen-trace-format2} ${METIS_LIBS--lmetis} ${DEFLATE_LIBS--ldeflate} ${ZLIB_LIBS--lz} -lm"

# compile SRC OBJ [EXTRA FLAGS]: only when SRC or a header is newer than OBJ.
compile() {
    s=$1 o=$2
    shift 2
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ -n "$(find "$src/analyzer" "$src/include" "$src/tests/fuzz" -newer "$o" -name '*.[ch]' | head -n 1)" ]; then
        # shellcheck disable=SC2086
        "$CC" $cflags "$@" -c "$s" -o "$o" || { echo "fuzz.sh: cannot compile $s" >&2; exit 1; }
    fi
}

# Every layer of analyzer/Makefile.am's LAYERS, and the HTML page the build generates.
layers=$(sed -n '/^LAYERS = /,/[^\\]$/p' "$src/analyzer/Makefile.am" | grep -o '[a-z0-9]*/libfc_' | sed 's,/libfc_,,')
[ -n "$layers" ] || { echo "fuzz.sh: no LAYERS in $src/analyzer/Makefile.am" >&2; exit 1; }
[ -f "$build/analyzer/report/html-page.c" ] || { echo "fuzz.sh: build the analyzer first (make)" >&2; exit 1; }
objs=
for layer in $layers; do
    for f in "$src/analyzer/$layer"/*.c; do
        o=$work/obj/$layer-$(basename "$f" .c).o
        compile "$f" "$o"
        objs="$objs $o"
    done
done
compile "$build/analyzer/report/html-page.c" "$work/obj/report-html-page.o"
objs="$objs $work/obj/report-html-page.o"
compile "$src/analyzer/cmd/cli.c" "$work/obj/cmd-cli.o"
compile "$src/tests/fuzz/fuzz-util.c" "$work/obj/fuzz-util.o"
for c in info dump analyze export remap; do
    compile "$src/tests/fuzz/cmd-$c.c" "$work/obj/fuzz-cmd-$c.o"
done

for t in "$@"; do
    compile "$src/tests/fuzz/$t.c" "$work/obj/$t.o"
    extra=
    [ "$t" = fuzz-cli ] && extra="$work/obj/cmd-cli.o $(for c in info dump analyze export remap; do printf '%s ' "$work/obj/fuzz-cmd-$c.o"; done)"
    # shellcheck disable=SC2086
    "$CC" $san -fsanitize=fuzzer "$work/obj/$t.o" "$work/obj/fuzz-util.o" $extra $objs $libs -o "$work/bin/$t" ||
        { echo "fuzz.sh: cannot link $t" >&2; exit 1; }
done

FC_GEN=${FC_GEN:-$build/tests/analyzer/gen-trace} FLOWCUT=${FLOWCUT:-$build/tools/flowcut} \
    FLOWCUT_EXEC_PATH="$build/analyzer:$build/tools:$src/tools" \
    sh "$src/tests/fuzz/seeds.sh" "$src" "$work/seeds"
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# run TARGET: fuzzes for $secs seconds; the figures of the run go to logs/TARGET.log.
run() {
    t=$1
    mkdir -p "$work/corpus/$t" "$work/crashes/$t"
    start=$(date +%s)
    # Debian's OTF2 library leaks the archive it fails to open (tests/otf2/lsan.supp), and asks
    # calloc for whatever count a damaged anchor file gives (tens of GB), then fills it: a machine
    # without that memory refuses the request with NULL, which the library reports as an error.
    # ASan refuses any request over 1 GB the same way, so that fuzzing goes on past it.
    limit=
    [ "$t" = fuzz-otf2 ] && limit=-malloc_limit_mb=1048576
    LSAN_OPTIONS="suppressions=$src/tests/otf2/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=1024${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    nice -n "${FUZZ_NICE:-0}" "$work/bin/$t" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 $limit \
        -close_fd_mask=3 -artifact_prefix="$work/crashes/$t/" -print_final_stats=1 \
        "$work/corpus/$t" "$work/seeds/$t" "$src/tests/fuzz/regress/$t" >"$work/logs/$t.log" 2>&1
    rc=$?
    # A crash inside the OTF2 library itself (the first frame past the allocator in its .so) is
    # the library's, not flowcut's: flowcut reads archives in a child process (fc__otf2_isolate),
    # so users get one error line for such input. Kept apart for a report upstream, not a failure.
    # AddressSanitizer's own "CHECK failed" in its allocator means a chunk's header was overwritten
    # by code it does not instrument (flowcut's writes are all checked, so they would have been
    # reported at the write). Under fuzz-otf2 the uninstrumented code that writes to the heap
    # differently from fuzz-trace (which drives the same zlib and libdeflate calls) is libotf2; the
    # report is the library's when one of its frames is on the failing free's stack.
    if [ $rc -ne 0 ] && awk '/ERROR: (Address|UndefinedBehavior|Leak)Sanitizer/ { e = 1; next }
            /AddressSanitizer: CHECK failed: asan_allocator/ { c = 1; next }
            c && /^ *#[0-9]+ / && /libopen-trace-format2/ { print; exit }
            e && /^ *#[0-9]+ / { if ($0 ~ /__interceptor_|in (malloc|calloc|realloc|free) /) next; print; exit }' \
            "$work/logs/$t.log" | grep -q 'libopen-trace-format2'; then
        mkdir -p "$work/library-crashes/$t"
        mv "$work/crashes/$t"/crash-* "$work/library-crashes/$t/" 2>/dev/null
        echo "$t: an input crashed inside the OTF2 library (flowcut isolates it in a child process): kept in $work/library-crashes/$t"
        rc=0
    fi
    # The CPU time of this subshell's children (the fuzzer), user plus system: on a shared machine
    # under FUZZ_NICE it can be well below the wall-clock seconds.
    # (times runs in this shell: in a pipe or $(...) it would count a subshell's children.)
    times >"$work/logs/$t.times"
    cpu=$(tail -n 1 "$work/logs/$t.times" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } printf "%.0f", t }')
    echo "$t: exit $rc, $(($(date +%s) - start)) s, $cpu s of CPU, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/logs/$t.log" | grep -o '[0-9]*$') runs, corpus $(ls "$work/corpus/$t" | wc -l)"
    return $rc
}

status=0
set -- "$@"
while [ $# -gt 0 ]; do
    pids=
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
        run "$1" &
        pids="$pids $!"
        shift
        i=$((i + 1))
    done
    for p in $pids; do
        wait "$p" || status=1
    done
done
# libFuzzer also saves inputs slower than 10 s (slow-unit-*): worth a look, not a failure.
found=$(find "$work/crashes" -type f ! -name 'slow-unit-*' | wc -l)
echo "fuzz.sh: $found crash inputs in $work/crashes"
[ "$found" = 0 ] || status=1
exit $status
