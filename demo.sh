#!/bin/sh
# demo.sh: the main job end to end on one machine, as root: installs what is missing, builds,
# brings up an emulated 4-node cluster, traces an MPI example across it, prints the analysis, and
# writes it as an HTML page whose path it prints.
set -u
cd "$(dirname "$0")" || exit 1
src=$(pwd)
. ./deps.sh
fc_install_deps || exit 1
build=${FLOWCUT_DEMO_BUILD:-build-demo}
( fc_build "$build" ) || { echo "flowcut: build failed" >&2; exit 1; }
b=$(cd "$build" && pwd)
export FLOWCUT_EXEC_PATH="$b/analyzer:$b/tools:$src/tools"
export FLOWCUT_LIB="$b/libtrace/.libs/libflowcut.so"
flowcut="$b/tools/flowcut"
out=${FLOWCUT_DEMO_OUT:-$src/demo-trace}

if [ "$(id -u)" != 0 ]; then
    echo "flowcut: the emulated cluster needs root (network namespaces and tc); run: sudo ./demo.sh" >&2
    exit 1
fi
rm -rf "$out"
trap '"$flowcut" cluster down >/dev/null 2>&1' EXIT INT TERM
"$flowcut" cluster up --nodes 4 --rate 200mbit || exit 1
# The binomial broadcast of the Martinasso & Mehaut report (section 6.3) under its mapping B: ranks
# 0-7 on four dual-core nodes, placed so that the tree's last step crosses nodes and conflicts.
hosts=$out.hosts
"$b/examples/bcast" --hosts B >"$hosts" || exit 1
"$flowcut" run -o "$out" -- "$flowcut" cluster mpiexec -f "$hosts" -n 8 "$b/examples/bcast" || exit 1
echo
"$flowcut" info "$out" || exit 1
echo
"$flowcut" analyze "$out" || exit 1
# The placement the replay finds better, and the Hydra machinefile to run it with next time.
echo
"$flowcut" remap "$out" || exit 1
echo
echo "== machinefile for the next run (flowcut remap --format hydra) =="
"$flowcut" remap --format hydra "$out" 2>/dev/null
# The same analysis as one page to open in a browser (offline), with the placement search beside it.
echo
"$flowcut" remap --format json -o "$out.remap.json" "$out" 2>/dev/null || exit 1
"$flowcut" analyze --format html --remap "$out.remap.json" -o "$out.html" "$out" || exit 1
echo "== the report as a page: $out.html (open it in any browser; it fetches nothing) =="
